package org.tidal.conformance;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.tidal.conformance.ConformanceReport.Outcome;
import org.tidal.conformance.ConformanceReport.Result;

/** The comparison of the two runs, on synthetic Surefire reports. */
public class ConformanceReportTest {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  private static final String PASS = "";
  private static final String FAIL =
      "<failure message=\"expected:&lt;1&gt; but was:&lt;2&gt;\" type=\"java.lang.AssertionError\">"
          + "java.lang.AssertionError: expected:&lt;1&gt; but was:&lt;2&gt;\n"
          + "\tat org.junit.Assert.fail(Assert.java:88)</failure>";
  private static final String ERROR =
      "<error type=\"java.lang.NullPointerException\">java.lang.NullPointerException\n"
          + "\tat org.example.Foo.bar(Foo.java:12)\n</error>";
  private static final String SKIP = "<skipped message=\"not applicable\"/>";

  /** Writes a Surefire report of class {@code className} with the given method/body pairs. */
  private static void report(File dir, String className, String... methodsAndBodies)
      throws IOException {
    StringBuilder xml = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.append("<testsuite name=\"").append(className).append("\">\n");
    for (int i = 0; i < methodsAndBodies.length; i += 2) {
      xml.append("  <testcase name=\"")
          .append(methodsAndBodies[i])
          .append("\" classname=\"")
          .append(className)
          .append("\" time=\"0.1\">")
          .append(methodsAndBodies[i + 1])
          .append("<system-out>log</system-out></testcase>\n");
    }
    xml.append("</testsuite>\n");
    Files.writeString(
        dir.toPath().resolve("TEST-" + className + ".xml"), xml, StandardCharsets.UTF_8);
  }

  private File stock;
  private File tidal;

  private ConformanceReport compare(String notApplicable) throws IOException {
    Path na = tmp.newFile().toPath();
    Files.writeString(na, notApplicable, StandardCharsets.UTF_8);
    return ConformanceReport.compare(
        ConformanceReport.readReports(stock.toPath()),
        ConformanceReport.readReports(tidal.toPath()),
        ConformanceReport.readNotApplicable(na));
  }

  private void dirs() throws IOException {
    stock = tmp.newFolder("stock");
    tidal = tmp.newFolder("tidal");
  }

  @Test
  public void readsOutcomesKeyedBySimpleClassName() throws IOException {
    dirs();
    report(stock, "org.apache.x.TestA", "t1", PASS, "t2", FAIL, "t3", ERROR, "t4", SKIP);
    Map<String, Map<String, Result>> results = ConformanceReport.readReports(stock.toPath());
    Map<String, Result> a = results.get("TestA");
    assertEquals(Outcome.PASSED, a.get("t1").outcome());
    assertEquals(Outcome.FAILED, a.get("t2").outcome());
    assertEquals("java.lang.AssertionError: expected:<1> but was:<2>", a.get("t2").detail());
    assertEquals(Outcome.FAILED, a.get("t3").outcome());
    assertEquals(
        "java.lang.NullPointerException: at org.example.Foo.bar(Foo.java:12)",
        a.get("t3").detail());
    assertEquals(Outcome.SKIPPED, a.get("t4").outcome());
  }

  @Test
  public void allPassingConforms() throws IOException {
    dirs();
    report(stock, "org.apache.x.TestA", "t1", PASS, "t2[0]", PASS);
    report(tidal, "org.tidal.y.TestA", "t1", PASS, "t2[0]", PASS);
    ConformanceReport r = compare("");
    assertTrue(r.text(), r.conforms());
    assertTrue(r.text(), r.text().contains(String.format("%-32s %6s %8s %8s", "total", 2, 2, 2)));
  }

  @Test
  public void passUnderStockFailUnderTidalFails() throws IOException {
    dirs();
    report(stock, "org.apache.x.TestA", "t1", PASS, "t2", PASS);
    report(tidal, "org.tidal.y.TestA", "t1", PASS, "t2", FAIL);
    ConformanceReport r = compare("");
    assertFalse(r.text(), r.conforms());
    assertEquals(1, r.errors().size());
    assertTrue(r.errors().get(0), r.errors().get(0).contains("TestA#t2"));
    assertTrue(r.text(), r.text().contains("TestA#t2  [failed] java.lang.AssertionError"));
  }

  @Test
  public void passUnderStockSkippedOrAbsentUnderTidalFails() throws IOException {
    dirs();
    report(stock, "org.apache.x.TestA", "t1", PASS, "t2", PASS);
    report(stock, "org.apache.x.TestB", "t1", PASS);
    report(tidal, "org.tidal.y.TestA", "t1", SKIP);
    ConformanceReport r = compare("");
    assertFalse(r.text(), r.conforms());
    assertEquals(r.text(), 3, r.errors().size());
    assertTrue(r.text(), r.text().contains("TestA#t2  [absent]"));
    assertTrue(r.text(), r.text().contains("TestB#t1  [absent]"));
    assertTrue(r.text(), r.text().contains("TestA#t1  [skipped]"));
  }

  @Test
  public void classLevelFailureExplainsTheTestsItKept() throws IOException {
    dirs();
    report(stock, "org.apache.x.TestA", "t1", PASS);
    report(tidal, "org.tidal.y.TestA", "", ERROR);
    ConformanceReport r = compare("");
    assertFalse(r.text(), r.conforms());
    assertTrue(
        r.text(),
        r.text()
            .contains(
                "TestA#t1  [absent] its class failed before it ran: "
                    + "java.lang.NullPointerException"));
    assertTrue(r.text(), r.text().contains(String.format("%-32s %6s %8s %8s", "TestA", 1, 1, 0)));
  }

  /**
   * Surefire's rerun: a test that passes on the rerun passes, and is listed with its first failure;
   * one that fails every try stays failed.
   */
  @Test
  public void aRerunPassIsListedAndARerunFailureStillFails() throws IOException {
    dirs();
    report(stock, "org.apache.x.TestA", "t1", PASS, "t2", PASS);
    String flaky = ERROR.replace("error", "flakyError");
    report(
        tidal,
        "org.tidal.y.TestA",
        "t1",
        flaky,
        "t2",
        ERROR + ERROR.replace("error", "rerunError"));
    ConformanceReport r = compare("");
    assertEquals(
        Outcome.PASSED,
        ConformanceReport.readReports(tidal.toPath()).get("TestA").get("t1").outcome());
    assertEquals(1, r.errors().size());
    assertTrue(r.errors().get(0), r.errors().get(0).contains("TestA#t2"));
    assertTrue(r.text(), r.text().contains("Passed on the rerun only (not counted): 1"));
    assertTrue(
        r.text(), r.text().contains("TestA#t1  tidal, first try: java.lang.NullPointerException"));
  }

  @Test
  public void failingUnderBothIsReportedNotCounted() throws IOException {
    dirs();
    report(stock, "org.apache.x.TestA", "t1", PASS, "t2", FAIL);
    report(tidal, "org.tidal.y.TestA", "t1", PASS, "t2", ERROR);
    ConformanceReport r = compare("");
    assertTrue(r.text(), r.conforms());
    assertTrue(r.text(), r.text().contains("Fail under both (not counted against Tidal): 1"));
    assertTrue(r.text(), r.text().contains("TestA#t2  stock: java.lang.AssertionError"));
  }

  @Test
  public void notApplicableIsExcludedFromCounts() throws IOException {
    dirs();
    report(stock, "org.apache.x.TestA", "t1", PASS, "t2[0]", PASS, "t2[1]", PASS);
    report(stock, "org.apache.x.TestB", "t1", PASS);
    report(tidal, "org.tidal.y.TestA", "t1", PASS, "t2[0]", FAIL, "t2[1]", SKIP);
    ConformanceReport r =
        compare("# comment\n\nTestA#t2   casts to CapacityScheduler\nTestB  own\n");
    assertTrue(r.text(), r.conforms());
    assertTrue(r.text(), r.text().contains(String.format("%-32s %6s %8s %8s", "TestA", 1, 1, 1)));
    assertTrue(r.text(), r.text().contains(String.format("%-32s %6s %8s %8s", "total", 1, 1, 1)));
    assertTrue(r.text(), r.text().contains("TestA#t2: casts to CapacityScheduler"));
    assertTrue(r.text(), r.text().contains("TestB: own"));
    assertTrue(r.text(), r.text().contains("Not applicable to a third-party scheduler: 3 tests"));
  }

  @Test
  public void parameterSuffixNarrowsAnEntry() throws IOException {
    dirs();
    report(stock, "org.apache.x.TestA", "t2[0]", PASS, "t2[1]", PASS);
    report(tidal, "org.tidal.y.TestA", "t2[0]", FAIL, "t2[1]", FAIL);
    ConformanceReport r = compare("TestA#t2[0] CapacityScheduler path\n");
    assertFalse(r.text(), r.conforms());
    assertEquals(
        r.text(), List.of("TestA#t2[1] passes under stock but is failed under Tidal"), r.errors());
  }

  @Test
  public void staleNotApplicableEntryFails() throws IOException {
    dirs();
    report(stock, "org.apache.x.TestA", "t1", PASS, "t2", PASS);
    report(tidal, "org.tidal.y.TestA", "t1", PASS, "t2", PASS);
    ConformanceReport r = compare("TestA#t2 was thought to cast\n");
    assertFalse(r.text(), r.conforms());
    assertEquals(r.text(), 1, r.errors().size());
    assertTrue(r.errors().get(0), r.errors().get(0).contains("TestA#t2 passes under Tidal"));
  }

  @Test
  public void entryNamingNoTestOfARunClassIsStale() throws IOException {
    dirs();
    report(stock, "org.apache.x.TestA", "t1", PASS);
    report(tidal, "org.tidal.y.TestA", "t1", PASS);
    // TestZ did not run (e.g. -Dtest=TestA): its entry is not judged.
    ConformanceReport r = compare("TestA#gone renamed\nTestZ#t1 other class\n");
    assertFalse(r.text(), r.conforms());
    assertEquals(r.text(), 1, r.errors().size());
    assertTrue(r.errors().get(0), r.errors().get(0).contains("TestA#gone (line 1)"));
    assertTrue(r.text(), r.text().contains("TestZ#t1: other class (not run here)"));
  }

  @Test
  public void passingOnlyUnderTidalIsReportedNotCounted() throws IOException {
    dirs();
    report(stock, "org.apache.x.TestA", "t1", FAIL);
    report(tidal, "org.tidal.y.TestA", "t1", PASS);
    ConformanceReport r = compare("");
    assertTrue(r.text(), r.conforms());
    assertTrue(r.text(), r.text().contains("Pass under Tidal only: 1"));
  }

  @Test
  public void entryWithoutReasonIsRejected() throws IOException {
    dirs();
    report(stock, "org.apache.x.TestA", "t1", PASS);
    try {
      compare("TestA#t1\n");
      fail("an entry without a reason was accepted");
    } catch (IllegalArgumentException expected) {
      assertTrue(expected.getMessage(), expected.getMessage().contains("no reason given"));
    }
  }

  @Test
  public void mainThrowsOnARegression() throws IOException {
    dirs();
    report(stock, "org.apache.x.TestA", "t1", PASS);
    report(tidal, "org.tidal.y.TestA", "t1", FAIL);
    Path na = tmp.newFile("na.txt").toPath();
    try {
      ConformanceReport.main(new String[] {stock.toString(), tidal.toString(), na.toString()});
      fail("a regression did not fail");
    } catch (IllegalStateException expected) {
      assertTrue(expected.getMessage(), expected.getMessage().contains("TestA#t1"));
    }
  }
}

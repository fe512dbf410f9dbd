package org.tidal.yarn.tez;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.List;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * The one DAG-hints schema ({@code rust/core/schema/dag-hints.schema.json}) against the shared
 * fixtures and against what the Tez plugin sends. The Rust core parses the same fixtures, so a
 * document the schema and the parser disagree on shows up on one side or the other.
 */
public class TestDagHintsSchema {
  /** Where the build puts the schema directory (see the surefire configuration). */
  static final String SCHEMA_DIR_PROPERTY = "tidal.hints.schema.dir";

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static File schemaDir;
  private static Schema schema;

  @BeforeClass
  public static void loadSchema() throws IOException {
    String dir = System.getProperty(SCHEMA_DIR_PROPERTY);
    assertNotNull("system property " + SCHEMA_DIR_PROPERTY + " names the schema directory", dir);
    schemaDir = new File(dir);
    try (InputStream in = new FileInputStream(new File(schemaDir, "dag-hints.schema.json"))) {
      schema = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(in);
    }
  }

  private static List<Error> errors(JsonNode document) {
    return schema.validate(document);
  }

  private static List<Error> errors(String json) throws IOException {
    return errors(MAPPER.readTree(json));
  }

  private static File[] fixtures(String kind) {
    File[] files = new File(schemaDir, "fixtures/" + kind).listFiles((d, n) -> n.endsWith(".json"));
    assertNotNull("no fixtures/" + kind + " under " + schemaDir, files);
    assertTrue("fixtures/" + kind + " is empty", files.length > 0);
    Arrays.sort(files);
    return files;
  }

  @Test
  public void everyValidFixtureIsAccepted() throws IOException {
    for (File file : fixtures("valid")) {
      List<Error> errors = errors(MAPPER.readTree(file));
      assertTrue(file.getName() + ": " + errors, errors.isEmpty());
    }
  }

  /** Each invalid fixture breaks exactly one rule, at the place its name points to. */
  @Test
  public void everyInvalidFixtureIsRejectedForOneRule() throws IOException {
    for (File file : fixtures("invalid")) {
      List<Error> errors = errors(MAPPER.readTree(file));
      assertEquals(file.getName() + ": " + errors, 1, errors.size());
    }
  }

  /** Resource names as the parser reads them: any case, '-' or '_', surrounding whitespace. */
  @Test
  public void demandNamesTakeTheParsersSpellings() throws IOException {
    String document =
        "{\"version\":1,\"stages\":[{\"id\":\"s\",\"tasks\":1,\"duration_ms\":1,"
            + "\"demand\":{\"%s\":1}}]}";
    for (String name :
        new String[] {"memory_mb", "memory-mb", "MEMORY", "mem", " Vcores\\t", "cpu", "CPUS"}) {
      assertTrue(name, errors(String.format(document, name)).isEmpty());
    }
    for (String name : new String[] {"tpu", "mem_mb", "memorymb", "v cores", "net_mbps"}) {
      assertFalse(name, errors(String.format(document, name)).isEmpty());
    }
  }

  /** A null list is an absent one, but a document must still carry stages or progress. */
  @Test
  public void nullListsCountAsAbsent() throws IOException {
    assertTrue(errors("{\"version\":1,\"stages\":null,\"progress\":[]}").isEmpty());
    assertEquals(1, errors("{\"version\":1,\"stages\":null,\"progress\":null}").size());
  }

  /** What the Tez plugin sends, from the plan alone to a running DAG, is what the core reads. */
  @Test
  public void theTezPluginsDocumentsMatchTheSchema() throws IOException {
    TezDagHints hints =
        new TezDagHints(TestTezDagHints.plan(), 30000, TezDagHints.Scheme.NATURAL_ORDER);
    assertTrue(errors(hints.toJson(0)).toString(), errors(hints.toJson(0)).isEmpty());

    hints.setTasks("Map 2", 6);
    hints.taskStarted(0, 0, 1000);
    hints.taskStarted(0, 1, 1000);
    hints.taskFinished(0, 0, 1000, 4000, true);
    hints.taskStarted(1, 0, 2000);
    hints.taskFinished(1, 0, 2000, 2500, false);
    JsonNode running = MAPPER.readTree(hints.toJson(5000));
    assertEquals(running.toString(), 1, running.path("progress").size());
    assertTrue(errors(running).toString(), errors(running).isEmpty());

    TezDagHints distance = new TezDagHints(TestTezDagHints.plan(), 1, TezDagHints.Scheme.DISTANCE);
    assertTrue(errors(distance.toJson(0)).toString(), errors(distance.toJson(0)).isEmpty());
  }
}

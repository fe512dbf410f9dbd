package org.tidal.yarn.view;

import java.io.ByteArrayOutputStream;
import java.time.Instant;
import java.util.Locale;
import java.util.function.LongUnaryOperator;
import javax.xml.stream.XMLOutputFactory;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamWriter;
import org.tidal.yarn.config.TidalConfig;

/**
 * The RM's {@code /cluster/scheduler} page for Tidal: the queue tree with used, fair and guaranteed
 * bars, each queue's class, burst phase and deadline and why admission control classed it so.
 *
 * <p>Written with the JDK's XMLStreamWriter, which escapes every text and attribute, rather than
 * Hadoop 2.7's Hamlet: Hamlet closes elements with a method named {@code _}, which Java 9 and later
 * compilers and this build's formatter refuse.
 */
public final class SchedulerPage {
  private static final XMLOutputFactory XML = XMLOutputFactory.newInstance();

  private static final String STYLE =
      "body{font-family:sans-serif;margin:1em 2em}"
          + "ul.queues{list-style:none;padding-left:1.5em}"
          + ".queue{border:1px solid #ccc;border-radius:4px;padding:.5em;margin:.5em 0}"
          + ".bar{position:relative;width:30em;height:1.2em;background:#eee;margin:2px 0}"
          + ".bar .fill{position:absolute;top:0;left:0;bottom:0}"
          + ".bar span{position:relative;padding-left:.3em;font-size:.85em}"
          + ".used .fill{background:#7cb5ec}.fair .fill{background:#90ed7d}"
          + ".guaranteed .fill{background:#f7a35c}"
          + ".class-hard{color:#a00}.class-soft{color:#a60}.class-rejected{color:#666}"
          + ".reason{color:#555;font-size:.85em}";

  private final XMLStreamWriter out;
  private final LongUnaryOperator wallClock;

  private SchedulerPage(XMLStreamWriter out, LongUnaryOperator wallClock) {
    this.out = out;
    this.wallClock = wallClock;
  }

  /** The page as UTF-8 bytes; {@code wallClock} maps core times to the wall clock. */
  public static byte[] render(QueueStatus status, LongUnaryOperator wallClock)
      throws XMLStreamException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    XMLStreamWriter out = XML.createXMLStreamWriter(bytes, "UTF-8");
    out.writeDTD("<!DOCTYPE html>");
    new SchedulerPage(out, wallClock).page(status);
    out.close();
    return bytes.toByteArray();
  }

  private void page(QueueStatus status) throws XMLStreamException {
    out.writeStartElement("html");
    out.writeStartElement("head");
    out.writeEmptyElement("meta");
    out.writeAttribute("charset", "UTF-8");
    element("title", "Tidal scheduler");
    element("style", STYLE);
    out.writeEndElement();
    out.writeStartElement("body");
    element("h1", "Tidal scheduler");
    out.writeStartElement("p");
    link("/cluster", "Cluster");
    out.writeCharacters(" | ");
    link("/cluster/apps", "Applications");
    out.writeCharacters(" | ");
    link("/cluster/nodes", "Nodes");
    out.writeCharacters(" | ");
    link("/tidal/dashboard", "Tidal dashboard");
    out.writeEndElement();
    element(
        "p",
        String.format(
            Locale.ROOT,
            "Policy %s, inside queues %s; %d nodes, %d MB and %d vcores.",
            status.policy,
            status.appPolicy,
            status.nodes,
            status.cluster.memoryMb,
            status.cluster.vcores));
    out.writeStartElement("ul");
    out.writeAttribute("class", "queues");
    out.writeStartElement("li");
    out.writeStartElement("div");
    out.writeAttribute("class", "queue");
    element("h2", TidalConfig.ROOT_QUEUE);
    bar("used", status.used().dominantShareOf(status.cluster));
    out.writeEndElement();
    children(status, TidalConfig.ROOT_QUEUE);
    out.writeEndElement();
    out.writeEndElement();
    out.writeEndElement();
    out.writeEndElement();
  }

  /** The queues under {@code parent} as a list, each parent with its own list below it. */
  private void children(QueueStatus status, String parent) throws XMLStreamException {
    out.writeStartElement("ul");
    out.writeAttribute("class", "queues");
    for (QueueStatus.Leaf child : status.children(parent)) {
      out.writeStartElement("li");
      leaf(child, status.cluster);
      if (!child.leaf) {
        children(status, child.name);
      }
      out.writeEndElement();
    }
    out.writeEndElement();
  }

  private void leaf(QueueStatus.Leaf leaf, QueueStatus.Amount cluster) throws XMLStreamException {
    out.writeStartElement("div");
    out.writeAttribute("class", "queue");
    out.writeAttribute("id", leaf.name);
    element("h3", leaf.name);
    out.writeStartElement("p");
    out.writeCharacters(leaf.type.toUpperCase(Locale.ROOT) + ", weight " + leaf.weight + ", ");
    out.writeStartElement("span");
    out.writeAttribute("class", "class-" + leaf.admissionClass);
    out.writeCharacters(leaf.admissionClass);
    out.writeEndElement();
    out.writeCharacters(
        String.format(
            Locale.ROOT,
            "; %d apps, %d containers running, %d pending",
            leaf.apps,
            leaf.runningContainers,
            leaf.pendingContainers));
    out.writeEndElement();
    bar("used", leaf.dominantShare);
    bar("fair", leaf.fairShare);
    Double guaranteed = leaf.guaranteedShare(cluster);
    if (guaranteed != null) {
      bar("guaranteed", guaranteed.doubleValue());
    }
    element("p", String.format(Locale.ROOT, "Long-term share %.1f%%", leaf.longTermShare * 100));
    if (leaf.burst != null) {
      element("p", burst(leaf.burst));
    }
    if (leaf.admissionReason != null && !leaf.admissionReason.isEmpty()) {
      out.writeStartElement("p");
      out.writeAttribute("class", "reason");
      out.writeCharacters("Admission: " + leaf.admissionReason);
      out.writeEndElement();
    }
    out.writeEndElement();
  }

  private String burst(QueueStatus.Burst burst) {
    StringBuilder text = new StringBuilder("Burst ").append(burst.phase);
    if (burst.startedMs != null) {
      text.append(", started ").append(time(burst.startedMs));
    }
    if (burst.deadlineAtMs != null) {
      text.append(", deadline ").append(time(burst.deadlineAtMs));
    }
    return text.append(
            String.format(
                Locale.ROOT,
                "; %d bursts, %d met their deadline",
                burst.burstsStarted,
                burst.burstsMetDeadline))
        .toString();
  }

  private String time(long coreMs) {
    return Instant.ofEpochMilli(wallClock.applyAsLong(coreMs)).toString();
  }

  /** A bar filled to {@code share} of its width (clamped to 0-100%), labelled with the share. */
  private void bar(String kind, double share) throws XMLStreamException {
    double percent = Math.max(0, Math.min(100, share * 100));
    out.writeStartElement("div");
    out.writeAttribute("class", "bar " + kind);
    out.writeStartElement("div");
    out.writeAttribute("class", "fill");
    out.writeAttribute("style", String.format(Locale.ROOT, "width:%.1f%%", percent));
    out.writeCharacters("");
    out.writeEndElement();
    element("span", String.format(Locale.ROOT, "%s %.1f%%", kind, share * 100));
    out.writeEndElement();
  }

  private void link(String href, String text) throws XMLStreamException {
    out.writeStartElement("a");
    out.writeAttribute("href", href);
    out.writeCharacters(text);
    out.writeEndElement();
  }

  private void element(String name, String text) throws XMLStreamException {
    out.writeStartElement(name);
    out.writeCharacters(text);
    out.writeEndElement();
  }
}

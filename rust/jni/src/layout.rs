//! The layout of the records both sides of the bridge encode, declared once: the ask records of
//! `TidalNative.allocate`, the decision records a heartbeat writes into its exchange buffer, the
//! settings array, the values their fields take, and the version that names the whole contract.
//!
//! Each constant is a Rust `pub const` and an entry of [`TABLE`]. The Java side's
//! `WireLayout.java` is generated from that table by [`java_source`]
//! (`cargo run -p tidal-jni --bin java-layout -- --write`), and a test fails while the committed
//! file differs from what it generates, so a change here cannot land with Java still reading the
//! old layout. Changing a value changes the contract: bump [`BRIDGE_VERSION`] with it.
//!
//! Doc comments here become the Java constants' javadoc: `` [`NAME`] `` of a constant here becomes
//! `{@link #NAME}`, `` `TidalNative.method` `` (or `NativeLoader`) a link to that Java member, any
//! other `` `code` `` `{@code code}`; a blank line starts a new paragraph.

use jni::sys::jint;
use tidal_core::ids::LocationId;
use tidal_core::{DecisionKind, Locality};

/// One layout constant: its group (the record or value set it belongs to), name, value and doc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Constant {
    pub group: &'static str,
    pub name: &'static str,
    pub value: i64,
    /// The doc comment's lines, each with the leading space `///` leaves.
    pub doc: &'static str,
}

/// Declares each constant as a `pub const` of its Rust type and records it in [`TABLE`], in order.
/// Values are literals, so the const and its table entry cannot differ.
macro_rules! layout {
    ($(group $group:literal { $($(#[doc = $doc:literal])* $name:ident: $ty:ty = $value:literal;)* })*) => {
        $($($(#[doc = $doc])* pub const $name: $ty = $value;)*)*

        /// Every layout constant, in declaration order.
        pub const TABLE: &[Constant] = &[$($(Constant {
            group: $group,
            name: stringify!($name),
            value: $value,
            doc: concat!($($doc, "\n"),*),
        },)*)*];
    };
}

layout! {
    group "bridge" {
        /// The version of the contract between the native library and the Java shim: the native
        /// methods of `TidalNative` and this layout. `NativeLoader` refuses a library whose number
        /// differs from the jar's, because a jar and a library from different builds would pass
        /// arguments the other side reads as other types and crash the JVM. Bump it in the Rust
        /// table whenever a native method or a layout value changes (a test holds it to a
        /// fingerprint of both).
        BRIDGE_VERSION: jint = 7;
    }
    group "location" {
        /// Location id of the YARN "any" resource name (`ResourceRequest.ANY`).
        ANY_LOCATION: LocationId = 0;
    }
    group "ask" {
        /// Longs per ask record passed to `TidalNative.allocate`.
        ASK_STRIDE: usize = 8;
        /// Ask record field: the priority of the request.
        ASK_PRIORITY: usize = 0;
        /// Ask record field: the location id of the request's resource name (a host, a rack or
        /// [`ANY_LOCATION`]).
        ASK_LOCATION: usize = 1;
        /// Ask record field: how many containers are outstanding at the priority and location; it
        /// replaces the earlier count, as in YARN.
        ASK_NUM_CONTAINERS: usize = 2;
        /// Ask record field: whether the containers may be placed away from the location: 1 yes,
        /// 0 no.
        ASK_RELAX_LOCALITY: usize = 3;
        /// Ask record field: the memory of each container in MB.
        ASK_MEMORY_MB: usize = 4;
        /// Ask record field: the virtual cores of each container.
        ASK_VCORES: usize = 5;
        /// Ask record field: the GPUs (`yarn.io/gpu`) of each container.
        ASK_GPUS: usize = 6;
        /// Ask record field: the FPGAs (`yarn.io/fpga`) of each container.
        ASK_FPGAS: usize = 7;
    }
    group "decision" {
        /// Longs per decision record written by `TidalNative.nodeHeartbeat`.
        DECISION_STRIDE: usize = 9;
        /// Decision record field: the allocation id of the container to start (0 for a
        /// reservation made or ended).
        DEC_ALLOCATION_ID: usize = 0;
        /// Decision record field: the key of the application attempt.
        DEC_APP_KEY: usize = 1;
        /// Decision record field: the priority of the ask it serves.
        DEC_PRIORITY: usize = 2;
        /// Decision record field: how close to its data the container is placed, a `LOCALITY_`
        /// value.
        DEC_LOCALITY: usize = 3;
        /// Decision record field: the memory of the container in MB.
        DEC_MEMORY_MB: usize = 4;
        /// Decision record field: the virtual cores of the container.
        DEC_VCORES: usize = 5;
        /// Decision record field: what to do, a `KIND_` value.
        DEC_KIND: usize = 6;
        /// Decision record field: the GPUs of the container.
        DEC_GPUS: usize = 7;
        /// Decision record field: the FPGAs of the container.
        DEC_FPGAS: usize = 8;
    }
    group "kind" {
        /// Value of the [`DEC_KIND`] field: start a container.
        KIND_START: i64 = 0;
        /// Value of the [`DEC_KIND`] field: reserve the node for the ask (no allocation id).
        KIND_RESERVE: i64 = 1;
        /// Value of the [`DEC_KIND`] field: end the app's reservation on the node without a
        /// container.
        KIND_UNRESERVE: i64 = 2;
    }
    group "locality" {
        /// Value of the [`DEC_LOCALITY`] field: on a host the ask named.
        LOCALITY_NODE: i64 = 0;
        /// Value of the [`DEC_LOCALITY`] field: on a rack the ask named.
        LOCALITY_RACK: i64 = 1;
        /// Value of the [`DEC_LOCALITY`] field: anywhere else.
        LOCALITY_OFF_SWITCH: i64 = 2;
    }
    group "settings" {
        /// Longs in the settings array passed to `TidalNative.create` and
        /// `TidalNative.reconfigure`.
        SETTINGS_LEN: usize = 8;
        /// Settings field: the memory of YARN's minimum allocation in MB.
        SET_MIN_MEMORY_MB: usize = 0;
        /// Settings field: the virtual cores of YARN's minimum allocation.
        SET_MIN_VCORES: usize = 1;
        /// Settings field: the memory of YARN's maximum allocation in MB.
        SET_MAX_MEMORY_MB: usize = 2;
        /// Settings field: the virtual cores of YARN's maximum allocation.
        SET_MAX_VCORES: usize = 3;
        /// Settings field: the most containers one heartbeat assigns.
        SET_MAX_ASSIGN_PER_HEARTBEAT: usize = 4;
        /// Settings field, the bridge's own (not a core setting): whether the instance allows
        /// fault injection (`TidalNative.armHeartbeatPanic`): 1 on, 0 off. Read by
        /// `TidalNative.create` only; `TidalNative.reconfigure` ignores it.
        SET_FAULT_INJECTION: usize = 5;
        /// Settings field: whether nodes are reserved for asks larger than their free space: 1 on,
        /// 0 off.
        SET_RESERVE_CONTAINERS: usize = 6;
        /// Settings field: the AM share of the queues the queue file gives none, in parts per
        /// million (-1: none).
        SET_DEFAULT_MAX_AM_SHARE_PPM: usize = 7;
    }
}

/// The value of the [`DEC_KIND`] field for a decision of `kind`.
pub const fn kind_value(kind: DecisionKind) -> i64 {
    match kind {
        DecisionKind::Start => KIND_START,
        DecisionKind::Reserve => KIND_RESERVE,
        DecisionKind::Unreserve => KIND_UNRESERVE,
    }
}

/// The value of the [`DEC_LOCALITY`] field for a decision placed at `locality`.
pub const fn locality_value(locality: Locality) -> i64 {
    match locality {
        Locality::NodeLocal => LOCALITY_NODE,
        Locality::RackLocal => LOCALITY_RACK,
        Locality::OffSwitch => LOCALITY_OFF_SWITCH,
    }
}

// The core's own name for the "any" location is the one Java sends.
const _: () = assert!(ANY_LOCATION == tidal_core::ids::ANY);

/// Where the generated Java class lives, from the repository root.
pub const JAVA_PATH: &str = "java/common/src/main/java/org/tidal/yarn/bridge/WireLayout.java";

/// The command that regenerates [`JAVA_PATH`] from the repository root.
pub const JAVA_COMMAND: &str = "cargo run -p tidal-jni --bin java-layout -- --write";

/// google-java-format's line limit, which the generated text keeps to.
const JAVA_COLUMNS: usize = 100;

/// Java classes a `` `Class` `` or `` `Class.member` `` code span of a doc comment links to.
const JAVA_CLASSES: [&str; 2] = ["TidalNative", "NativeLoader"];

const CLASS_DOC: &str = "\
The layout of the records {@link TidalNative} passes across JNI in long arrays and in the heartbeat \
exchange buffer: ask records, decision records and the settings array, the values their fields \
take, and the version of the contract between the jar and the native library. The Rust bridge \
reads and writes the same records by the same names.";

/// The text of `WireLayout.java`: every constant of [`TABLE`] as a `public static final int` with
/// its doc as javadoc, laid out as google-java-format lays it out, so the Java build's format
/// check accepts it unchanged.
pub fn java_source() -> String {
    let mut out = String::new();
    out.push_str("// Generated from rust/jni/src/layout.rs by\n");
    out.push_str(&format!("//   {JAVA_COMMAND}\n"));
    out.push_str("// Do not edit it by hand: change the table there and regenerate; a test of tidal-jni fails\n");
    out.push_str("// while this file differs from what the table generates.\n");
    out.push_str("package org.tidal.yarn.bridge;\n\n");
    out.push_str(&javadoc(0, &[CLASS_DOC.to_string()]));
    out.push_str("public final class WireLayout {\n");
    for c in TABLE {
        let value =
            i32::try_from(c.value).unwrap_or_else(|_| panic!("{} = {} does not fit a Java int", c.name, c.value));
        out.push_str(&javadoc(2, &java_paragraphs(c.doc)));
        out.push_str(&format!("  public static final int {} = {value};\n\n", c.name));
    }
    out.push_str("  private WireLayout() {}\n}\n");
    out
}

/// A doc comment's paragraphs (separated by blank lines) as javadoc text, each on one line.
fn java_paragraphs(doc: &str) -> Vec<String> {
    let mut paragraphs = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for line in doc.lines().map(str::trim).chain(std::iter::once("")) {
        if line.is_empty() {
            if !current.is_empty() {
                paragraphs.push(java_inline(&current.join(" ")));
                current.clear();
            }
        } else {
            current.push(line);
        }
    }
    paragraphs
}

/// Rust doc markup to javadoc: `` [`NAME`] `` and `` `Class.member` `` links, other code spans
/// `{@code}`, and HTML's special characters escaped outside them.
fn java_inline(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('`') {
        let (before, link) = match rest[..open].strip_suffix('[') {
            Some(before) => (before, true),
            None => (&rest[..open], false),
        };
        out.push_str(&escape_html(before));
        let after = &rest[open + 1..];
        let close = after.find('`').unwrap_or_else(|| panic!("unclosed code span in doc `{text}`"));
        let code = &after[..close];
        rest = &after[close + 1..];
        assert!(!code.contains(['{', '}', '@']), "code span `{code}` cannot be written in javadoc");
        if link {
            rest = rest.strip_prefix(']').unwrap_or_else(|| panic!("unclosed link [`{code}` in doc `{text}`"));
            assert!(TABLE.iter().any(|c| c.name == code), "[`{code}`] names no layout constant");
            out.push_str(&format!("{{@link #{code}}}"));
        } else {
            let (class, member) = code.split_once('.').map_or((code, None), |(c, m)| (c, Some(m)));
            match member {
                _ if !JAVA_CLASSES.contains(&class) => out.push_str(&format!("{{@code {code}}}")),
                Some(member) => out.push_str(&format!("{{@link {class}#{member}}}")),
                None => out.push_str(&format!("{{@link {class}}}")),
            }
        }
    }
    out.push_str(&escape_html(rest));
    out
}

fn escape_html(text: &str) -> String {
    assert!(!text.contains(['@', '{', '}']) && !text.contains("*/"), "doc text `{text}` cannot be written in javadoc");
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// A javadoc comment indented by `indent` spaces, its words filled to [`JAVA_COLUMNS`]: on one
/// line when a single paragraph fits, else one ` * ` line per filled line and `<p>` opening each
/// paragraph after the first.
fn javadoc(indent: usize, paragraphs: &[String]) -> String {
    let pad = " ".repeat(indent);
    if let [only] = paragraphs {
        let line = format!("{pad}/** {only} */");
        if line.len() <= JAVA_COLUMNS {
            return line + "\n";
        }
    }
    let width = JAVA_COLUMNS - indent - " * ".len();
    let mut out = format!("{pad}/**\n");
    for (i, paragraph) in paragraphs.iter().enumerate() {
        let paragraph = if i == 0 {
            paragraph.clone()
        } else {
            out.push_str(&format!("{pad} *\n"));
            format!("<p>{paragraph}")
        };
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            if !line.is_empty() && line.len() + 1 + word.len() > width {
                out.push_str(&format!("{pad} * {line}\n"));
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        out.push_str(&format!("{pad} * {line}\n"));
    }
    out.push_str(&format!("{pad} */\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(name: &str) -> Vec<Constant> {
        TABLE.iter().copied().filter(|c| c.group == name).collect()
    }

    /// The fields of a record group (all but its length, `len`) are each an offset of the record,
    /// once.
    fn assert_record(name: &str, len: &str, value: usize) {
        let mut offsets: Vec<i64> = group(name).iter().filter(|c| c.name != len).map(|c| c.value).collect();
        offsets.sort_unstable();
        assert_eq!(offsets, (0..value as i64).collect::<Vec<_>>(), "{name} record offsets");
    }

    #[test]
    fn every_record_field_has_its_own_offset_within_the_record() {
        assert_record("ask", "ASK_STRIDE", ASK_STRIDE);
        assert_record("decision", "DECISION_STRIDE", DECISION_STRIDE);
        assert_record("settings", "SETTINGS_LEN", SETTINGS_LEN);
    }

    #[test]
    fn names_are_unique_and_values_are_java_ints() {
        let mut names: Vec<_> = TABLE.iter().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TABLE.len());
        assert!(TABLE.iter().all(|c| i32::try_from(c.value).is_ok() && !c.doc.trim().is_empty()));
    }

    #[test]
    fn kinds_and_localities_are_the_cores_and_distinct() {
        let kinds = [DecisionKind::Start, DecisionKind::Reserve, DecisionKind::Unreserve];
        let localities = [Locality::NodeLocal, Locality::RackLocal, Locality::OffSwitch];
        assert_eq!(kinds.map(kind_value), [0, 1, 2]);
        assert_eq!(localities.map(locality_value), [0, 1, 2]);
        // The values the core's discriminants gave before the layout named them.
        assert!(kinds.iter().all(|&k| kind_value(k) == k as i64));
        assert!(localities.iter().all(|&l| locality_value(l) == l as i64));
    }

    #[test]
    fn doc_markup_becomes_javadoc() {
        assert_eq!(
            java_inline("See [`DEC_KIND`], `TidalNative.create`, `NativeLoader` and `a < b` & more < less."),
            "See {@link #DEC_KIND}, {@link TidalNative#create}, {@link NativeLoader} and {@code a < b} &amp; \
             more &lt; less."
        );
        assert_eq!(java_paragraphs(" One\n two.\n\n Three.\n"), ["One two.", "Three."]);
    }

    #[test]
    fn javadoc_fills_lines_and_collapses_to_one_line_when_it_fits() {
        assert_eq!(javadoc(2, &["Short.".to_string()]), "  /** Short. */\n");
        let long = "word ".repeat(30);
        let text = javadoc(2, &[long.trim().to_string(), "Next.".to_string()]);
        assert!(text.lines().all(|l| l.len() <= JAVA_COLUMNS), "{text}");
        assert!(text.starts_with("  /**\n   * word word"), "{text}");
        assert!(text.ends_with("   *\n   * <p>Next.\n   */\n"), "{text}");
    }
}

//! A run's dashboard as one standalone HTML page: the ResourceManager's dashboard (the same
//! page and assets, built into this binary) with its stylesheets and scripts inlined and the
//! run's status and history documents embedded as `window.TIDAL_DATA`, so the page opens from
//! a file with nothing to fetch.

use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;
use std::path::Path;

/// The core's status document at the end of a run, in the run's directory.
pub const STATUS_FILE: &str = "status.json";
/// The core's history document, in the run's directory.
pub const HISTORY_FILE: &str = "history.json";
/// The page `tidal-sim report` writes unless told otherwise, in the run's directory.
pub const REPORT_FILE: &str = "report.html";

const PAGE: &str = include_str!("../../../java/common/src/main/resources/org/tidal/yarn/web/dashboard.html");

/// Where the page's data script goes.
const DATA_MARKER: &str = "<!-- tidal-data -->";

/// Each asset's tag in the page, the element its contents go into, and its contents.
const ASSETS: [(&str, &str, &str); 4] = [
    (
        r#"<link rel="stylesheet" href="static/uPlot.min.css">"#,
        "style",
        include_str!("../../../java/common/src/main/resources/org/tidal/yarn/web/static/uPlot.min.css"),
    ),
    (
        r#"<link rel="stylesheet" href="static/dashboard.css">"#,
        "style",
        include_str!("../../../java/common/src/main/resources/org/tidal/yarn/web/static/dashboard.css"),
    ),
    (
        r#"<script src="static/uPlot.iife.min.js"></script>"#,
        "script",
        include_str!("../../../java/common/src/main/resources/org/tidal/yarn/web/static/uPlot.iife.min.js"),
    ),
    (
        r#"<script src="static/dashboard.js"></script>"#,
        "script",
        include_str!("../../../java/common/src/main/resources/org/tidal/yarn/web/static/dashboard.js"),
    ),
];

/// Replaces the one occurrence of `from` in `page`.
fn replace_once(page: &str, from: &str, to: &str) -> Result<String> {
    match page.matches(from).count() {
        1 => Ok(page.replacen(from, to, 1)),
        n => bail!("the dashboard page has {n} occurrences of '{from}', expected one"),
    }
}

/// The page with every asset inlined and `data` (status, history and title) embedded.
pub fn render(status: &Value, history: &Value, title: &str) -> Result<String> {
    let mut page = PAGE.to_string();
    for (tag, element, contents) in ASSETS {
        // The contents must not end their own element early.
        if contents.to_ascii_lowercase().contains(&format!("</{element}")) {
            bail!("the asset of '{tag}' contains '</{element}' and cannot be inlined");
        }
        page = replace_once(&page, tag, &format!("<{element}>\n{contents}\n</{element}>"))?;
    }
    let data = serde_json::json!({ "status": status, "history": history, "title": title });
    // '<' only occurs inside JSON strings, where \u003c means the same: nothing in the data can
    // close the script element or open a comment in it.
    let data = serde_json::to_string(&data)?.replace('<', "\\u003c");
    page = replace_once(&page, DATA_MARKER, &format!("<script>window.TIDAL_DATA = {data};</script>"))?;
    Ok(page)
}

/// Reads one of a run's JSON documents, checking that it is an object with `fields` as arrays.
fn read_document(dir: &Path, name: &str, fields: &[&str]) -> Result<Value> {
    let path = dir.join(name);
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!("cannot read {} (is {} the output directory of a tidal-sim run?)", path.display(), dir.display())
    })?;
    let value: Value = serde_json::from_str(&text).with_context(|| format!("{}: not valid JSON", path.display()))?;
    for field in fields {
        if !value.get(field).is_some_and(Value::is_array) {
            return Err(anyhow!("{}: no '{field}' array", path.display()));
        }
    }
    Ok(value)
}

/// Writes the dashboard page of the run in `dir` to `out`.
pub fn write_report(dir: &Path, out: &Path) -> Result<()> {
    let status = read_document(dir, STATUS_FILE, &["queues"])?;
    let history = read_document(dir, HISTORY_FILE, &["samples", "bursts", "admissions"])?;
    let run = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let name = run.file_name().map_or_else(|| run.display().to_string(), |n| n.to_string_lossy().into_owned());
    let title = format!("Tidal simulation: {name} ({})", status["policy"].as_str().unwrap_or("unknown policy"));
    let page = render(&status, &history, &title)?;
    std::fs::write(out, page).with_context(|| format!("cannot write {}", out.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_has_every_tag_and_the_marker_once() {
        let page = render(&serde_json::json!({"queues": []}), &serde_json::json!({"samples": []}), "t").unwrap();
        assert!(!page.contains(DATA_MARKER));
        for (tag, _, _) in ASSETS {
            assert!(!page.contains(tag), "{tag} inlined");
        }
        assert_eq!(page.matches("window.TIDAL_DATA = ").count(), 1);
    }

    #[test]
    fn embedded_strings_cannot_end_the_script() {
        let hostile = serde_json::json!({"queues": [{"name": "</script><script>alert(1)</script><!--"}]});
        let page = render(&hostile, &serde_json::json!({}), "</script>").unwrap();
        let data = &page[page.find("window.TIDAL_DATA = ").unwrap()..];
        let data = &data[..data.find("</script>").unwrap()];
        assert!(!data.contains('<'), "{data}");
        // The escaped document reads back as the original.
        let json = data.trim_start_matches("window.TIDAL_DATA = ").trim_end_matches(';');
        let back: Value = serde_json::from_str(json).unwrap();
        assert_eq!(back["status"], hostile);
        assert_eq!(back["title"], "</script>");
    }
}

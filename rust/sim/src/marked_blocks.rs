//! Generated tables inside hand-written Markdown pages.
//!
//! A page marks each generated table with a pair of comments:
//!
//! ```text
//! <!-- generated: NAME -->
//! ...the table...
//! <!-- end generated -->
//! ```
//!
//! [`rewrite`] replaces what lies between them with what a renderer gives for `NAME`, keeping
//! the prose around them; [`stale`] names every block whose text differs, so a test can fail
//! when a page drifts from the results it was generated from.

use anyhow::{bail, Context, Result};
use std::path::Path;

const BEGIN: &str = "<!-- generated: ";
const BEGIN_END: &str = " -->";
const END: &str = "<!-- end generated -->";

/// One marked block of a page: its name and the byte range of its body.
struct Block<'a> {
    name: &'a str,
    body: std::ops::Range<usize>,
}

fn blocks(doc: &str) -> Result<Vec<Block<'_>>> {
    let mut v = Vec::new();
    let mut at = 0;
    let line = |pos: usize| doc[..pos].lines().count() + 1;
    loop {
        let next = doc[at..].find(BEGIN).map_or(doc.len(), |i| at + i);
        if let Some(stray) = doc[at..next].find(END) {
            bail!("line {}: '{END}' without a block", line(at + stray));
        }
        if next == doc.len() {
            break;
        }
        let start = next;
        let name_start = start + BEGIN.len();
        let close = doc[name_start..]
            .find(BEGIN_END)
            .with_context(|| format!("line {}: unterminated '{BEGIN}' marker", line(start)))?;
        let name = doc[name_start..name_start + close].trim();
        let body_start = name_start + close + BEGIN_END.len();
        let body_start = body_start + usize::from(doc[body_start..].starts_with('\n'));
        let end = doc[body_start..]
            .find(END)
            .with_context(|| format!("line {}: block '{name}' has no '{END}'", line(start)))?;
        if let Some(nested) = doc[body_start..body_start + end].find(BEGIN) {
            bail!("line {}: block '{name}' is not closed before the next block", line(body_start + nested));
        }
        v.push(Block { name, body: body_start..body_start + end });
        at = body_start + end + END.len();
    }
    Ok(v)
}

/// `doc` with every marked block's body replaced by `render(name)`.
pub fn rewrite(doc: &str, render: impl Fn(&str) -> Result<String>) -> Result<String> {
    let mut out = String::with_capacity(doc.len());
    let mut at = 0;
    for b in blocks(doc)? {
        out.push_str(&doc[at..b.body.start]);
        out.push_str(&render(b.name)?);
        at = b.body.end;
    }
    out.push_str(&doc[at..]);
    Ok(out)
}

/// The names of the blocks whose body differs from `render(name)` (empty: the page agrees). A
/// page without blocks is an error.
pub fn stale(doc: &str, render: impl Fn(&str) -> Result<String>) -> Result<Vec<String>> {
    let found = blocks(doc)?;
    if found.is_empty() {
        bail!("no '{BEGIN}NAME{BEGIN_END}' blocks");
    }
    let mut v = Vec::new();
    for b in found {
        if doc[b.body.clone()] != render(b.name)? {
            v.push(b.name.to_string());
        }
    }
    Ok(v)
}

/// [`rewrite`] on a file; returns the names of the blocks that changed.
pub fn rewrite_file(page: &Path, render: impl Fn(&str) -> Result<String>) -> Result<Vec<String>> {
    let doc = std::fs::read_to_string(page).with_context(|| format!("cannot read {}", page.display()))?;
    let changed = stale(&doc, &render).with_context(|| page.display().to_string())?;
    let new = rewrite(&doc, &render).with_context(|| page.display().to_string())?;
    if new != doc {
        std::fs::write(page, new).with_context(|| format!("cannot write {}", page.display()))?;
    }
    Ok(changed)
}

/// [`stale`] on a file: an error naming every stale block, the results they come from and the
/// command that regenerates them.
pub fn check_file(
    page: &Path,
    results: &Path,
    regenerate: &str,
    render: impl Fn(&str) -> Result<String>,
) -> Result<()> {
    let doc = std::fs::read_to_string(page).with_context(|| format!("cannot read {}", page.display()))?;
    let stale = stale(&doc, render).with_context(|| page.display().to_string())?;
    if !stale.is_empty() {
        bail!(
            "{}: generated block(s) differ from {}: {}; regenerate with `{regenerate}`",
            page.display(),
            results.display(),
            stale.join(", "),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(name: &str) -> Result<String> {
        match name {
            "a" => Ok("| a |\n".into()),
            _ => bail!("unknown generated block '{name}'"),
        }
    }

    #[test]
    fn rewriting_fills_blocks_keeps_prose_and_is_idempotent() {
        let doc = "prose\n<!-- generated: a -->\nold\n<!-- end generated -->\nend\n";
        let new = rewrite(doc, render).unwrap();
        assert_eq!(new, "prose\n<!-- generated: a -->\n| a |\n<!-- end generated -->\nend\n");
        assert_eq!(stale(doc, render).unwrap(), ["a"]);
        assert_eq!(stale(&new, render).unwrap(), Vec::<String>::new());
        assert_eq!(rewrite(&new, render).unwrap(), new);
    }

    #[test]
    fn bad_markers_are_errors() {
        let err = rewrite("<!-- generated: a -->\nno end\n", render).unwrap_err().to_string();
        assert!(err.contains("block 'a' has no '<!-- end generated -->'"), "{err}");
        let err = stale("<!-- generated: a -->\n<!-- end generated -->\n<!-- end generated -->\n", render)
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 3: '<!-- end generated -->' without a block"), "{err}");
        let err = stale("no blocks\n", render).unwrap_err().to_string();
        assert!(err.contains("no '<!-- generated: NAME -->' blocks"), "{err}");
        let err = stale("<!-- generated: b -->\n<!-- end generated -->\n", render).unwrap_err().to_string();
        assert!(err.contains("unknown generated block 'b'"), "{err}");
    }
}

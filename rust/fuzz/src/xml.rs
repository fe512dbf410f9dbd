//! XML inputs: a seed document as a token stream, edited by generated insertions, removals,
//! replacements and duplications, and written back as text. Names and values come from a
//! vocabulary (the seeds' own names and values, the policy names, numbers at the edges) or are
//! arbitrary strings; `Raw` tokens go out unescaped, so malformed XML is generated too.

use bolero::generator::TypeGenerator;
use std::sync::OnceLock;
use tidal_core::config::{AppPolicyKind, PolicyKind};
use tidal_core::ResourceKind;

#[derive(Clone, Debug, PartialEq)]
pub enum Token {
    Open(String),
    Attr(String, String),
    Text(String),
    Close,
    Raw(String),
}

/// A name: one of the vocabulary's (by index) or any string.
#[derive(Debug, TypeGenerator)]
pub enum Name {
    Known(u16),
    Other(String),
}

/// A text or attribute value.
#[derive(Debug, TypeGenerator)]
pub enum Value {
    Known(u16),
    Int(i64),
    Float(f64),
    Other(String),
}

#[derive(Debug, TypeGenerator)]
pub enum GenToken {
    Open(Name),
    Attr(Name, Value),
    Text(Value),
    Close,
    Raw(String),
}

#[derive(Debug, TypeGenerator)]
pub enum Edit {
    Insert {
        at: u16,
        token: GenToken,
    },
    Remove {
        at: u16,
        len: u8,
    },
    Replace {
        at: u16,
        token: GenToken,
    },
    /// Repeats a run of tokens in place (a second `<queue>`, an attribute given twice).
    Duplicate {
        at: u16,
        len: u8,
    },
}

/// One generated document: seed `base` (modulo the seeds; one past them is the empty
/// document) with `edits` applied in order.
#[derive(Debug, TypeGenerator)]
pub struct XmlCase {
    pub base: u16,
    pub edits: Vec<Edit>,
}

/// Names and values the generator picks from.
pub struct Vocabulary {
    pub names: Vec<String>,
    pub values: Vec<String>,
}

impl Vocabulary {
    /// Every element and attribute name and every value in `docs`, the policy, app-policy and
    /// resource names, and numbers that sit on the edges of the grammar's ranges.
    pub fn of(docs: &[String]) -> Vocabulary {
        let mut names: Vec<String> = ["tidal", "queue", "name"].iter().map(|s| s.to_string()).collect();
        names.extend(ResourceKind::ALL.iter().map(|k| k.name().to_string()));
        let mut values: Vec<String> = PolicyKind::ALL.iter().map(|k| k.name().to_string()).collect();
        values.extend(AppPolicyKind::ALL.iter().map(|k| k.name().to_string()));
        for edge in [
            "",
            " ",
            "0",
            "1",
            "-1",
            "0.5",
            "1e308",
            "1e309",
            "-0",
            "NaN",
            "inf",
            "9223372036854775807",
            "1099511627777",
            "lq",
            "tq",
            "root",
            "root.x",
            "a b",
        ] {
            values.push(edge.to_string());
        }
        for d in docs {
            let Ok(doc) = roxmltree::Document::parse(d) else { continue };
            for n in doc.descendants() {
                if n.is_element() {
                    names.push(n.tag_name().name().to_string());
                    for a in n.attributes() {
                        names.push(a.name().to_string());
                        values.push(a.value().to_string());
                    }
                } else if let Some(t) = n.text().filter(|t| !t.trim().is_empty() && n.is_text()) {
                    values.push(t.trim().to_string());
                }
            }
        }
        names.sort();
        names.dedup();
        values.sort();
        values.dedup();
        Vocabulary { names, values }
    }

    fn name(&self, n: &Name) -> String {
        match n {
            Name::Known(i) => self.names[*i as usize % self.names.len()].clone(),
            Name::Other(s) => s.clone(),
        }
    }

    fn value(&self, v: &Value) -> String {
        match v {
            Value::Known(i) => self.values[*i as usize % self.values.len()].clone(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => f.to_string(),
            Value::Other(s) => s.clone(),
        }
    }

    fn token(&self, t: &GenToken) -> Token {
        match t {
            GenToken::Open(n) => Token::Open(self.name(n)),
            GenToken::Attr(n, v) => Token::Attr(self.name(n), self.value(v)),
            GenToken::Text(v) => Token::Text(self.value(v)),
            GenToken::Close => Token::Close,
            GenToken::Raw(s) => Token::Raw(s.clone()),
        }
    }
}

/// The queue files' vocabulary, built once.
pub fn vocabulary() -> &'static Vocabulary {
    static V: OnceLock<Vocabulary> = OnceLock::new();
    V.get_or_init(|| Vocabulary::of(crate::seeds::queue_files()))
}

/// A document's elements, attributes and texts in document order.
pub fn tokenize(xml: &str) -> Vec<Token> {
    fn walk(n: roxmltree::Node, out: &mut Vec<Token>) {
        if n.is_element() {
            out.push(Token::Open(n.tag_name().name().to_string()));
            out.extend(n.attributes().map(|a| Token::Attr(a.name().to_string(), a.value().to_string())));
            for c in n.children() {
                walk(c, out);
            }
            out.push(Token::Close);
        } else if n.is_text() {
            let text = n.text().unwrap_or("");
            // Text on both sides of a comment (which is dropped) is one text once rendered.
            match out.last_mut() {
                Some(Token::Text(before)) => before.push_str(text),
                _ => out.push(Token::Text(text.to_string())),
            }
        }
    }
    let mut out = Vec::new();
    if let Ok(doc) = roxmltree::Document::parse(xml) {
        walk(doc.root_element(), &mut out);
    }
    out
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Writes tokens as XML: attributes go into the open tag before them (or become text when
/// there is none), `Close` ends the innermost open element, and open elements are closed at
/// the end.
pub fn render(tokens: &[Token]) -> String {
    let mut out = String::new();
    let mut open: Vec<&str> = Vec::new();
    let mut in_tag = false;
    let end_tag = |out: &mut String, in_tag: &mut bool| {
        if std::mem::take(in_tag) {
            out.push('>');
        }
    };
    for t in tokens {
        match t {
            Token::Open(n) => {
                end_tag(&mut out, &mut in_tag);
                out.push('<');
                out.push_str(n);
                open.push(n);
                in_tag = true;
            }
            Token::Attr(a, v) if in_tag => out.push_str(&format!(" {a}=\"{}\"", escape(v))),
            Token::Attr(a, v) => out.push_str(&escape(&format!("{a}={v}"))),
            Token::Text(s) => {
                end_tag(&mut out, &mut in_tag);
                out.push_str(&escape(s));
            }
            Token::Close => {
                end_tag(&mut out, &mut in_tag);
                if let Some(n) = open.pop() {
                    out.push_str(&format!("</{n}>"));
                }
            }
            Token::Raw(s) => {
                end_tag(&mut out, &mut in_tag);
                out.push_str(s);
            }
        }
    }
    end_tag(&mut out, &mut in_tag);
    while let Some(n) = open.pop() {
        out.push_str(&format!("</{n}>"));
    }
    out
}

/// Applies the case's edits to its seed among `seeds` and renders the result.
pub fn build(case: &XmlCase, seeds: &[String], vocabulary: &Vocabulary) -> String {
    let base = case.base as usize % (seeds.len() + 1);
    let mut tokens = seeds.get(base).map_or_else(Vec::new, |s| tokenize(s));
    for e in &case.edits {
        let at = |i: u16, extra: usize| i as usize % (tokens.len() + extra);
        match e {
            Edit::Insert { at: i, token } => {
                let i = at(*i, 1);
                tokens.insert(i, vocabulary.token(token));
            }
            Edit::Remove { at: i, len } if !tokens.is_empty() => {
                let i = at(*i, 0);
                let end = (i + *len as usize % 8 + 1).min(tokens.len());
                tokens.drain(i..end);
            }
            Edit::Replace { at: i, token } if !tokens.is_empty() => {
                let i = at(*i, 0);
                tokens[i] = vocabulary.token(token);
            }
            Edit::Duplicate { at: i, len } if !tokens.is_empty() && tokens.len() < 4096 => {
                let i = at(*i, 0);
                let end = (i + *len as usize % 32 + 1).min(tokens.len());
                let run: Vec<Token> = tokens[i..end].to_vec();
                tokens.splice(end..end, run);
            }
            _ => {}
        }
    }
    render(&tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_render_back_to_the_same_document() {
        for seed in crate::seeds::queue_files() {
            let tokens = tokenize(seed);
            assert!(tokens.len() > 2);
            assert_eq!(tokenize(&render(&tokens)), tokens, "{seed}");
        }
    }

    #[test]
    fn edits_apply_to_the_token_stream() {
        let v = Vocabulary::of(&[]);
        let seeds = vec!["<tidal><queue name=\"a\"/></tidal>".to_string()];
        let open = GenToken::Open(Name::Other("weight".into()));
        let case =
            XmlCase { base: 0, edits: vec![Edit::Insert { at: 4, token: open }, Edit::Duplicate { at: 1, len: 2 }] };
        assert_eq!(
            build(&case, &seeds, &v),
            "<tidal><queue name=\"a\"></queue><queue name=\"a\"></queue><weight></weight></tidal>"
        );
    }
}

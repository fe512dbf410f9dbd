//! JSON inputs: a seed document edited at generated paths (set, add or remove a member or an
//! element), then optionally cut short so that malformed JSON is generated too.

use bolero::generator::TypeGenerator;
use serde_json::{Map, Value};
use std::sync::OnceLock;

/// A scalar: one of the vocabulary's (the seeds' keys, strings and numbers), or any.
#[derive(Debug, TypeGenerator)]
pub enum Scalar {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Known(u16),
    Other(String),
}

#[derive(Debug, TypeGenerator)]
pub enum GenValue {
    Scalar(Scalar),
    Array(Vec<Scalar>),
    Object(Vec<(Scalar, Scalar)>),
}

/// Each step of `path` picks a member or element of the value reached so far, or (one past
/// the last) a new one.
#[derive(Debug, TypeGenerator)]
pub enum Edit {
    Set { path: Vec<u8>, value: GenValue },
    Remove { path: Vec<u8> },
}

#[derive(Debug, TypeGenerator)]
pub struct JsonCase {
    pub base: u16,
    pub edits: Vec<Edit>,
    /// Keep only this many bytes of the text (rounded down to a character boundary).
    pub truncate: Option<u16>,
}

/// Keys and values the generator picks from.
pub struct Vocabulary {
    values: Vec<Value>,
}

impl Vocabulary {
    pub fn of(docs: &[String]) -> Vocabulary {
        fn walk(v: &Value, out: &mut Vec<Value>) {
            match v {
                Value::Object(m) => {
                    for (k, x) in m {
                        out.push(Value::String(k.clone()));
                        walk(x, out);
                    }
                }
                Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
                other => out.push(other.clone()),
            }
        }
        let mut values = Vec::new();
        for d in docs {
            if let Ok(v) = serde_json::from_str::<Value>(d) {
                walk(&v, &mut values);
            }
        }
        values.sort_by_key(|v| v.to_string());
        values.dedup();
        values.push(Value::from(u64::MAX));
        values.push(Value::from(-1));
        Vocabulary { values }
    }

    fn scalar(&self, s: &Scalar) -> Value {
        match s {
            Scalar::Null => Value::Null,
            Scalar::Bool(b) => Value::Bool(*b),
            Scalar::Int(i) => Value::from(*i),
            Scalar::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Scalar::Known(i) => self.values[*i as usize % self.values.len()].clone(),
            Scalar::Other(s) => Value::String(s.clone()),
        }
    }

    fn key(&self, s: &Scalar) -> String {
        match self.scalar(s) {
            Value::String(k) => k,
            other => other.to_string(),
        }
    }

    fn value(&self, v: &GenValue) -> Value {
        match v {
            GenValue::Scalar(s) => self.scalar(s),
            GenValue::Array(a) => Value::Array(a.iter().map(|s| self.scalar(s)).collect()),
            GenValue::Object(m) => {
                Value::Object(m.iter().map(|(k, v)| (self.key(k), self.scalar(v))).collect::<Map<_, _>>())
            }
        }
    }
}

/// The hints fixtures' vocabulary, built once.
pub fn vocabulary() -> &'static Vocabulary {
    static V: OnceLock<Vocabulary> = OnceLock::new();
    V.get_or_init(|| Vocabulary::of(crate::seeds::hints()))
}

/// The container at `path` (all steps but the last) and the key or index the last step picks.
enum Slot<'a> {
    Member(&'a mut Map<String, Value>, String),
    Element(&'a mut Vec<Value>, usize),
}

fn slot<'a>(root: &'a mut Value, path: &[u8], v: &Vocabulary) -> Option<Slot<'a>> {
    let (&last, steps) = path.split_last()?;
    let mut at = root;
    for &s in steps {
        at = match at {
            Value::Object(m) if !m.is_empty() => {
                let k = m.keys().nth(s as usize % m.len()).cloned()?;
                m.get_mut(&k)?
            }
            Value::Array(a) if !a.is_empty() => {
                let n = a.len();
                &mut a[s as usize % n]
            }
            _ => return None,
        };
    }
    match at {
        Value::Object(m) => {
            let i = last as usize % (m.len() + 1);
            let key = m.keys().nth(i).cloned().unwrap_or_else(|| v.key(&Scalar::Known(last as u16)));
            Some(Slot::Member(m, key))
        }
        Value::Array(a) => {
            let i = last as usize % (a.len() + 1);
            Some(Slot::Element(a, i))
        }
        _ => None,
    }
}

/// Applies the case's edits to its seed among `seeds` and writes the result.
pub fn build(case: &JsonCase, seeds: &[String], v: &Vocabulary) -> String {
    let base = case.base as usize % (seeds.len() + 1);
    let mut doc = seeds.get(base).and_then(|s| serde_json::from_str(s).ok()).unwrap_or(Value::Object(Map::new()));
    for e in &case.edits {
        match e {
            Edit::Set { path, value } if path.is_empty() => doc = v.value(value),
            Edit::Set { path, value } => match slot(&mut doc, path, v) {
                Some(Slot::Member(m, k)) => {
                    m.insert(k, v.value(value));
                }
                Some(Slot::Element(a, i)) if i == a.len() => a.push(v.value(value)),
                Some(Slot::Element(a, i)) => a[i] = v.value(value),
                None => {}
            },
            Edit::Remove { path } => match slot(&mut doc, path, v) {
                Some(Slot::Member(m, k)) => {
                    m.remove(&k);
                }
                Some(Slot::Element(a, i)) if i < a.len() => {
                    a.remove(i);
                }
                _ => {}
            },
        }
    }
    let mut text = doc.to_string();
    if let Some(n) = case.truncate {
        let mut n = (n as usize).min(text.len());
        while !text.is_char_boundary(n) {
            n -= 1;
        }
        text.truncate(n);
    }
    text
}

/// Checks that a field path an error names (`stages[3].demand.vcores`) indexes an element the
/// document's top-level array has.
pub fn assert_field_exists(field: &str, doc: &str) {
    let Ok(root) = serde_json::from_str::<Value>(doc) else { return };
    let first = field.split('.').next().unwrap_or("");
    let Some((name, index)) = first.split_once('[') else { return };
    let Ok(i) = index.trim_end_matches(']').parse::<usize>() else { return };
    let len = root.get(name).and_then(Value::as_array).map_or(0, Vec::len);
    assert!(i < len, "error names {field}, but the document's {name} has {len} elements:\n{doc}");
}

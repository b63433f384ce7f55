//! Reading a result back through its typed document. A file of another version or tool that lacks
//! a field, or holds another type in it, is refused with one sentence naming the field by its
//! path (`summary.devices[2].alpha`), never read as zeros.

use std::fmt;

use serde::de::DeserializeOwned;
use serde_json::Value;

/// Why a result could not be read as its typed document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    /// The field's path from the document's top, e.g. `summary.tx.new_order.count`; empty for
    /// the document itself.
    pub path: String,
    /// What serde found there, e.g. "missing field" or "invalid type: string, expected f64".
    pub reason: String,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "does not have the shape of an oltplab.result/1 document ({}): it was written by another oltplab version or another tool; re-run the measurement with this oltplab", self.reason)
        } else {
            write!(f, "has no readable field `{}` ({}): it was written by another oltplab version or another tool; re-run the measurement with this oltplab", self.path, self.reason)
        }
    }
}

impl std::error::Error for ReadError {}

/// `v` as the typed document `T`, or the field that stops it.
pub fn read_value<T: DeserializeOwned>(v: &Value) -> Result<T, ReadError> {
    // Straight from the value: numbers keep every bit (text would be parsed again).
    let first = match T::deserialize(v) {
        Ok(t) => return Ok(t),
        Err(e) => e,
    };
    // Through text, so that serde's error carries a position the path is found from.
    let text = serde_json::to_string(v).unwrap_or_default();
    match serde_json::from_str::<T>(&text) {
        Err(e) => Err(error_at(&text, &e)),
        Ok(_) => Err(ReadError {
            path: String::new(),
            reason: first.to_string(),
        }),
    }
}

/// The member `key` of `root` as the typed `T` (e.g. a kind's `summary`), the error's path from
/// `root`.
pub fn read_at<T: DeserializeOwned>(root: &Value, key: &str) -> Result<T, ReadError> {
    let Some(v) = root.get(key) else {
        return Err(ReadError {
            path: key.to_string(),
            reason: "missing".into(),
        });
    };
    read_value(v).map_err(|e| ReadError {
        path: if e.path.is_empty() {
            key.to_string()
        } else {
            format!("{key}.{}", e.path)
        },
        reason: e.reason,
    })
}

/// `text` (JSON) as the typed document `T`, or the field that stops it.
pub fn read_str<T: DeserializeOwned>(text: &str) -> Result<T, ReadError> {
    serde_json::from_str(text).map_err(|e| error_at(text, &e))
}

fn error_at(text: &str, e: &serde_json::Error) -> ReadError {
    let message = e.to_string();
    let message = match message.rsplit_once(" at line ") {
        Some((m, _)) => m.to_string(),
        None => message,
    };
    let offset = offset_of(text, e.line(), e.column());
    let mut path = path_at(&text[..offset.min(text.len())]);
    // serde names a missing field but stops at the end of the object that lacks it. (Not so
    // inside a `#[serde(flatten)]` struct, which serde reads from a buffer: read such a type's
    // flattened part on its own, as the report reads a device summary.)
    let reason = match missing_field(&message) {
        Some(field) => {
            path.push(Step::Key(field.to_string()));
            "missing".to_string()
        }
        None => message,
    };
    ReadError {
        path: render(&path),
        reason,
    }
}

fn missing_field(message: &str) -> Option<&str> {
    message.strip_prefix("missing field `")?.strip_suffix('`')
}

/// The byte offset of serde_json's (1-based line, column) position.
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let mut offset = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            return offset + column;
        }
        offset += l.len();
    }
    text.len()
}

#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

enum Frame {
    /// The key being read or last read, and whether the next string is a key.
    Object {
        key: Option<String>,
        expect_key: bool,
    },
    Array {
        index: usize,
    },
}

/// The path of the value being read where `prefix` (of valid JSON text) ends.
fn path_at(prefix: &str) -> Vec<Step> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut chars = prefix.chars();
    while let Some(c) = chars.next() {
        match c {
            '{' => stack.push(Frame::Object {
                key: None,
                expect_key: true,
            }),
            '[' => stack.push(Frame::Array { index: 0 }),
            '}' | ']' => {
                stack.pop();
            }
            ',' => match stack.last_mut() {
                Some(Frame::Object { expect_key, .. }) => *expect_key = true,
                Some(Frame::Array { index }) => *index += 1,
                None => {}
            },
            '"' => {
                let mut s = String::new();
                let mut escaped = false;
                for c in chars.by_ref() {
                    match (escaped, c) {
                        (true, _) => {
                            s.push(c);
                            escaped = false;
                        }
                        (false, '\\') => escaped = true,
                        (false, '"') => break,
                        (false, _) => s.push(c),
                    }
                }
                if let Some(Frame::Object { key, expect_key }) = stack.last_mut() {
                    if *expect_key {
                        *key = Some(s);
                        *expect_key = false;
                    }
                }
            }
            _ => {}
        }
    }
    stack
        .into_iter()
        .filter_map(|f| match f {
            Frame::Object { key, .. } => key.map(Step::Key),
            Frame::Array { index } => Some(Step::Index(index)),
        })
        .collect()
}

fn render(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        alpha: f64,
        name: String,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Outer {
        devices: Vec<Inner>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Doc {
        kind: String,
        summary: Outer,
    }

    fn err(v: Value) -> ReadError {
        read_value::<Doc>(&v).unwrap_err()
    }

    #[test]
    fn a_missing_field_is_named_by_its_path() {
        let e = err(serde_json::json!({"kind": "study", "summary": {"devices": [
            {"alpha": 0.5, "name": "a"}, {"alfa": 0.5, "name": "b"}]}}));
        assert_eq!(e.path, "summary.devices[1].alpha", "{e}");
        assert_eq!(e.reason, "missing");
        let e = err(serde_json::json!({"kind": "study"}));
        assert_eq!(e.path, "summary", "{e}");
    }

    #[test]
    fn a_field_of_another_type_is_named_by_its_path() {
        let e = err(serde_json::json!({"kind": "study", "summary": {"devices": [
            {"alpha": "0.5", "name": "a, \"b\" {c}"}]}}));
        assert_eq!(e.path, "summary.devices[0].alpha", "{e}");
        assert!(e.reason.contains("invalid type"), "{e}");
        // Brackets and quotes inside strings do not move the path.
        let e = err(serde_json::json!({"kind": "study", "summary": {"devices": [
            {"name": "a, \"b\" [{c", "alpha": true}]}}));
        assert_eq!(e.path, "summary.devices[0].alpha", "{e}");
        assert!(e.to_string().contains("`summary.devices[0].alpha`"), "{e}");
    }
}

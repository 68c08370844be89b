//! Carrying an agent's own config file back out of the sandbox: a
//! three-way merge of the copy the sandbox wrote (`ours`) against the file
//! as it was when the run started (`base`), applied to the real file as it
//! is now (`theirs`, which a host-side agent may have changed meanwhile).
//! Only changes the file's [`Carry`] rule allows are applied; every other
//! change is refused and named, so the caller can report it. Pure: texts
//! in, text and refusals out.
//!
//! The edits keep the real file's layout: JSON is changed by replacing,
//! appending or removing the members that changed in `jsonc-parser`'s CST
//! (comments and whitespace kept; an object that gains a member is laid out
//! one member per line), TOML through `toml_edit`. A value the agent wrote
//! is re-rendered (JSON) or taken whole from its copy (TOML).

use jsonc_parser::cst::{CstInputValue, CstObject, CstObjectProp};
use serde_json::Value;

use crate::integration::jsonc;

/// A key path: one segment per level; `*` in a pattern matches any key.
pub type Pattern = &'static [&'static str];

/// One key path of a [`Carry`] rule, with why it is there.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub key: Pattern,
    pub why: &'static str,
}

/// Which changes go back to the real file.
#[derive(Debug, Clone, Copy)]
pub enum Carry {
    /// Everything but these keys (and what lies under them): for files the
    /// agent fills with its own bookkeeping, where the program-starting
    /// keys are few and known.
    AllBut(&'static [Rule]),
    /// Only these keys: for files that are mostly the user's settings,
    /// where anything unknown could start a program.
    Only(&'static [Rule]),
}

/// The file's syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Toml,
}

/// A change not carried back: the key path as written in the file, and
/// why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub key: String,
    pub why: &'static str,
}

/// The outcome: the new text of the real file (`None`: leave it as it is)
/// and what was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    pub text: Option<String>,
    pub refused: Vec<Refused>,
}

/// Why a merge could not be made; the caller names the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    #[error("the file as it was at the start is not valid {0:?}: {1}")]
    Base(Format, String),
    #[error("the sandbox's copy is not valid {0:?}: {1}")]
    Ours(Format, String),
    #[error("the real file is no longer valid {0:?}: {1}")]
    Theirs(Format, String),
}

/// What to do with a changed value at `path`.
#[derive(Debug, PartialEq, Eq)]
enum Decision {
    Carry,
    Refuse(&'static str),
    /// Look at each key below it.
    Descend,
    /// Refused, but named by the keys below it that changed, where it is
    /// an object on both sides.
    RefuseEach(&'static str),
}

fn matches(pattern: Pattern, path: &[String]) -> bool {
    pattern.len() <= path.len() && pattern.iter().zip(path).all(|(p, k)| *p == "*" || p == k)
}

/// Whether some rule lies strictly below `path`.
fn leads_to_rule(rules: &[Rule], path: &[String]) -> bool {
    rules.iter().any(|r| {
        r.key.len() > path.len() && r.key.iter().zip(path).all(|(p, k)| *p == "*" || p == k)
    })
}

fn decide(carry: Carry, path: &[String]) -> Decision {
    match carry {
        Carry::AllBut(rules) => {
            if let Some(r) = rules.iter().find(|r| matches(r.key, path)) {
                Decision::Refuse(r.why)
            } else if leads_to_rule(rules, path) {
                Decision::Descend
            } else {
                Decision::Carry
            }
        }
        Carry::Only(rules) => {
            if rules.iter().any(|r| matches(r.key, path)) {
                Decision::Carry
            } else if path.is_empty() || leads_to_rule(rules, path) {
                Decision::Descend
            } else {
                Decision::RefuseEach("not a key nerdr knows to be safe to carry back")
            }
        }
    }
}

/// One change to apply: set `path` to the agent's value, or remove it.
#[derive(Debug, Clone, PartialEq)]
struct Change {
    path: Vec<String>,
    value: Option<Value>,
}

/// The changes from `base` to `ours` that `carry` allows, and those it
/// refuses.
fn diff(
    carry: Carry,
    path: &mut Vec<String>,
    base: Option<&Value>,
    ours: Option<&Value>,
    changes: &mut Vec<Change>,
    refused: &mut Vec<Refused>,
) {
    if base == ours {
        return;
    }
    let decision = match decide(carry, path) {
        // Agents write defaults (`"mcpServers": {}`, `"allowedTools": []`)
        // for every new project: nothing to start, nothing to report.
        Decision::Refuse(_) | Decision::RefuseEach(_) if blank(ours) && blank(base) => {
            Decision::Carry
        }
        d => d,
    };
    match decision {
        Decision::Carry => changes.push(Change {
            path: path.clone(),
            value: ours.cloned(),
        }),
        Decision::Refuse(why) => refused.push(Refused {
            key: show(path),
            why,
        }),
        Decision::RefuseEach(why) => {
            let empty = serde_json::Map::new();
            match (as_obj(base, &empty), as_obj(ours, &empty)) {
                (Some(b), Some(o)) => diff_keys(carry, path, b, o, changes, refused),
                _ => refused.push(Refused {
                    key: show(path),
                    why,
                }),
            }
        }
        Decision::Descend => {
            let empty = serde_json::Map::new();
            let (Some(b), Some(o)) = (as_obj(base, &empty), as_obj(ours, &empty)) else {
                // A container a protected key lives in was replaced by
                // something else (or the other way round).
                refused.push(Refused {
                    key: show(path),
                    why: "holds keys that start programs, and its kind changed",
                });
                return;
            };
            diff_keys(carry, path, b, o, changes, refused);
        }
    }
}

/// An object as itself, a missing value as `empty`, anything else `None`.
fn as_obj<'a>(
    v: Option<&'a Value>,
    empty: &'a serde_json::Map<String, Value>,
) -> Option<&'a serde_json::Map<String, Value>> {
    match v {
        None => Some(empty),
        Some(Value::Object(m)) => Some(m),
        Some(_) => None,
    }
}

/// `diff` for each key either object holds, in order.
fn diff_keys(
    carry: Carry,
    path: &mut Vec<String>,
    b: &serde_json::Map<String, Value>,
    o: &serde_json::Map<String, Value>,
    changes: &mut Vec<Change>,
    refused: &mut Vec<Refused>,
) {
    let mut keys: Vec<&String> = b.keys().chain(o.keys()).collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        path.push(k.clone());
        diff(carry, path, b.get(k), o.get(k), changes, refused);
        path.pop();
    }
}

/// Missing, or a value that names nothing: null, false, 0, "", {}, [].
fn blank(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) | Some(Value::Bool(false)) => true,
        Some(Value::Number(n)) => n.as_f64() == Some(0.0),
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(Value::Object(o)) => o.is_empty(),
        Some(Value::Bool(true)) => false,
    }
}

/// A key path as a reader finds it: `projects["/home/u/p"].mcpServers`.
pub fn show(path: &[String]) -> String {
    let mut s = String::new();
    for k in path {
        let plain = !k.is_empty()
            && k.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if plain {
            if !s.is_empty() {
                s.push('.');
            }
            s.push_str(k);
        } else {
            s.push_str(&format!("[{}]", Value::String(k.clone())));
        }
    }
    if s.is_empty() {
        "(the whole file)".into()
    } else {
        s
    }
}

/// Merge the sandbox's changes back. `base` and `theirs` are `None` for a
/// file that did not exist.
pub fn merge(
    format: Format,
    carry: Carry,
    base: Option<&str>,
    ours: &str,
    theirs: Option<&str>,
) -> Result<Merged, MergeError> {
    let value = |t: Option<&str>| -> Result<Value, String> {
        match t {
            None => Ok(Value::Object(Default::default())),
            Some(t) => parse_value(format, t),
        }
    };
    let b = value(base).map_err(|e| MergeError::Base(format, e))?;
    let o = value(Some(ours)).map_err(|e| MergeError::Ours(format, e))?;
    value(theirs).map_err(|e| MergeError::Theirs(format, e))?;
    let (mut changes, mut refused) = (Vec::new(), Vec::new());
    diff(
        carry,
        &mut Vec::new(),
        Some(&b),
        Some(&o),
        &mut changes,
        &mut refused,
    );
    if changes.is_empty() {
        return Ok(Merged {
            text: None,
            refused,
        });
    }
    let text = match format {
        Format::Json => {
            let mut text = theirs.unwrap_or("{}\n").to_string();
            for c in &changes {
                text = json_set(&text, &c.path, c.value.as_ref())
                    .map_err(|e| MergeError::Theirs(format, e))?;
            }
            text
        }
        Format::Toml => toml_apply(theirs.unwrap_or(""), ours, &changes)
            .map_err(|e| MergeError::Theirs(format, e))?,
    };
    Ok(Merged {
        text: Some(text),
        refused,
    })
}

fn parse_value(format: Format, text: &str) -> Result<Value, String> {
    match format {
        Format::Json => {
            if text.trim().is_empty() {
                return Ok(Value::Object(Default::default()));
            }
            serde_json::from_str(text).map_err(|e| e.to_string())
        }
        Format::Toml => {
            let t: toml::Table = toml::from_str(text).map_err(|e| e.to_string())?;
            serde_json::to_value(t).map_err(|e| e.to_string())
        }
    }
}

/// `text` with the member at `path` set to `value` (or removed), the rest
/// untouched.
fn json_set(text: &str, path: &[String], value: Option<&Value>) -> Result<String, String> {
    let root = jsonc::parse_cst(text).map_err(|e| e.to_string())?;
    let mut node = root.value().ok_or("it holds no JSON value")?;
    // The member whose value `node` is; `None` for the document's value.
    let mut holder: Option<CstObjectProp> = None;
    for (i, key) in path.iter().enumerate() {
        let Some(obj) = node.as_object() else {
            // Not an object where the agent's value goes: put one there.
            let Some(v) = value else {
                return Ok(text.to_string());
            };
            let new = input(&nest(&path[i..], v));
            match &holder {
                Some(member) => member.set_value(new),
                None => root.set_value(new),
            }
            return Ok(root.to_string());
        };
        match last_member(&obj, key) {
            Some(member) if i + 1 == path.len() => {
                match value {
                    Some(v) => member.set_value(input(v)),
                    None => member.remove(),
                }
                return Ok(root.to_string());
            }
            Some(member) => {
                node = member.value().ok_or("a member without a value")?;
                holder = Some(member);
            }
            None => {
                let Some(v) = value else {
                    return Ok(text.to_string());
                };
                obj.append(key, input(&nest(&path[i + 1..], v)));
                return Ok(root.to_string());
            }
        }
    }
    // An empty path: the whole document.
    Ok(match value {
        Some(v) => {
            let unit = root.single_indent_text().unwrap_or_else(|| "  ".into());
            format!("{}\n", render(v, &unit))
        }
        None => "{}\n".into(),
    })
}

/// The member named `key`; the last one if it is repeated, as `JSON.parse`
/// does (the CST's own `get` finds the first).
fn last_member(obj: &CstObject, key: &str) -> Option<CstObjectProp> {
    obj.properties()
        .into_iter()
        .rev()
        .find(|p| p.decoded_name().as_deref() == Some(key))
}

/// `{"a": {"b": v}}` for the path `a.b`.
fn nest(path: &[String], v: &Value) -> Value {
    path.iter().rev().fold(v.clone(), |acc, k| {
        let mut m = serde_json::Map::new();
        m.insert(k.clone(), acc);
        Value::Object(m)
    })
}

/// A value as the CST takes it, to lay out like the file around it.
fn input(v: &Value) -> CstInputValue {
    match v {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(a) => CstInputValue::Array(a.iter().map(input).collect()),
        Value::Object(o) => {
            CstInputValue::Object(o.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

/// A whole document, indented one `unit` per level.
fn render(v: &Value, unit: &str) -> String {
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    serde::Serialize::serialize(v, &mut ser).expect("a JSON value serializes");
    String::from_utf8(buf).expect("serde_json writes UTF-8")
}

/// `theirs` with each change applied, the values taken whole from `ours`.
fn toml_apply(theirs: &str, ours: &str, changes: &[Change]) -> Result<String, String> {
    use toml_edit::{DocumentMut, Item, Table};
    let mut doc: DocumentMut = theirs
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string())?;
    let ours: DocumentMut = ours
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string())?;
    for c in changes {
        let Some((last, parents)) = c.path.split_last() else {
            return Ok(ours.to_string());
        };
        let mut src: Option<&Item> = Some(ours.as_item());
        for k in &c.path {
            src = src.and_then(|i| i.as_table_like()).and_then(|t| t.get(k));
        }
        let mut dst = doc.as_item_mut();
        for k in parents {
            let t = dst
                .as_table_like_mut()
                .ok_or_else(|| format!("`{}` is not a table", show(parents)))?;
            if t.get(k).is_none() {
                let mut new = Table::new();
                new.set_implicit(true);
                t.insert(k, Item::Table(new));
            }
            dst = t.get_mut(k).expect("just made");
        }
        let t = dst
            .as_table_like_mut()
            .ok_or_else(|| format!("`{}` is not a table", show(parents)))?;
        match src {
            Some(item) => match (t.get_mut(last), item) {
                // Replace the value in place: the key, and the comments
                // around the old value, stay.
                (Some(Item::Value(old)), Item::Value(new)) => {
                    let decor = old.decor().clone();
                    *old = new.clone();
                    *old.decor_mut() = decor;
                }
                _ => {
                    t.insert(last, item.clone());
                }
            },
            None => {
                t.remove(last);
            }
        }
    }
    Ok(doc.to_string())
}

#[cfg(test)]
#[path = "config_merge_tests.rs"]
mod tests;

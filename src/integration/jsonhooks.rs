//! Hooks in a JSON settings file whose `hooks` object maps event names to
//! arrays (claude's `settings.json`, copilot's hook files). Adds nerdr's
//! entries through `jsonc-parser`'s CST, which keeps the comments and layout
//! and formats what it appends like the surrounding file, and finds and
//! removes them again by the command they run. Pure: text in, text out.
//!
//! Still written by hand, because the CST does not say it: which bytes an
//! install added (`edit::insertions` compares the text before and after;
//! blank lines the CST dropped are kept, and an edit that changed any other
//! byte of the user's is refused), and the refusals that name the key a
//! file has in the wrong shape.

use jsonc_parser::cst::{CstArray, CstInputValue, CstNode, CstObject, CstRootNode};
use serde_json::Value;

use super::edit::{self, EditError, Insertion, Plan, Planned};
use super::jsonc;
use super::{command, COMMAND_PREFIX};

/// One agent's hook layout.
pub struct Target {
    /// Members a new file starts with, before `hooks`.
    pub preamble: &'static [(&'static str, i64)],
    /// The agent's event names, each with the nerdr event it reports.
    pub events: &'static [(&'static str, &'static str)],
    /// When each element of `hooks.EVENT` is a group holding its own array of
    /// hooks under this key (claude's matcher groups).
    pub group: Option<&'static str>,
    /// The member of a hook object that holds its shell command.
    pub command_key: &'static str,
    /// The element nerdr appends to `hooks.EVENT` for a command, its keys in
    /// the order written.
    pub entry: fn(&str) -> CstInputValue,
    /// A top-level member holding one command object nerdr sets when the
    /// file has none (claude's `statusLine`), with the nerdr event it runs.
    /// One the user set is left as it is: the agent runs only one.
    pub single: Option<(&'static str, &'static str)>,
}

/// What an install appended: the key paths of the containers it created and
/// the agent's events that got a hook.
#[derive(Default)]
struct Added {
    created: Vec<Vec<String>>,
    events: Vec<String>,
}

/// An object value with its keys in the order given.
pub fn obj<const N: usize>(members: [(&str, CstInputValue); N]) -> CstInputValue {
    CstInputValue::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

impl Target {
    fn hooks_object(&self) -> CstInputValue {
        CstInputValue::Object(
            self.events
                .iter()
                .map(|(ev, nerdr_ev)| (ev.to_string(), self.event_array(nerdr_ev)))
                .collect(),
        )
    }

    fn event_array(&self, nerdr_ev: &str) -> CstInputValue {
        CstInputValue::Array(vec![(self.entry)(&command(nerdr_ev))])
    }

    /// Key paths of everything a `hooks` member made from nothing holds.
    fn all_created(&self) -> Vec<Vec<String>> {
        let mut created = vec![vec!["hooks".to_string()]];
        created.extend(
            self.events
                .iter()
                .map(|(e, _)| vec!["hooks".to_string(), e.to_string()]),
        );
        created
    }

    fn hook_is_nerdrs(&self, hook: &Value) -> bool {
        hook.get(self.command_key)
            .and_then(Value::as_str)
            .is_some_and(|c| c.starts_with(COMMAND_PREFIX))
    }

    /// The hook objects an element of `hooks.EVENT` holds.
    fn hooks_in<'v>(&self, element: &'v Value) -> Vec<&'v Value> {
        match self.group {
            None => vec![element],
            Some(key) => element
                .get(key)
                .and_then(Value::as_array)
                .map(|a| a.iter().collect())
                .unwrap_or_default(),
        }
    }

    /// Whether an element of `hooks.EVENT` already runs exactly `cmd`.
    fn runs(&self, element: &Value, cmd: &str) -> bool {
        self.hooks_in(element)
            .iter()
            .any(|h| h.get(self.command_key).and_then(Value::as_str) == Some(cmd))
    }

    /// Whether any element anywhere in `hooks` runs a nerdr hook.
    pub fn contains_nerdrs(&self, text: &str) -> Result<bool, EditError> {
        let root = parse(text)?;
        let Some(value) = root.value() else {
            return Ok(false);
        };
        root_object(&value)?;
        let hooks = value.to_serde_value();
        let events = hooks
            .as_ref()
            .and_then(|v| v.get("hooks"))
            .and_then(Value::as_object);
        let single = hooks.as_ref().is_some_and(|v| self.single_is_nerdrs(v));
        Ok(single
            || events.is_some_and(|events| {
                events.values().filter_map(Value::as_array).any(|arr| {
                    arr.iter()
                        .any(|el| self.hooks_in(el).iter().any(|h| self.hook_is_nerdrs(h)))
                })
            }))
    }

    /// Whether the text holds nothing but what a new file starts with, so a
    /// file nerdr created can go.
    pub fn is_bare(&self, text: &str) -> bool {
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(m)) => {
                m.len() == self.preamble.len()
                    && self
                        .preamble
                        .iter()
                        .all(|(k, n)| m.get(*k).and_then(Value::as_i64) == Some(*n))
            }
            _ => text.trim().is_empty(),
        }
    }

    /// The insertions that add nerdr's hooks to `before` (`None`: no file).
    pub fn plan_install(&self, before: Option<&str>) -> Result<Planned, EditError> {
        let text = before.unwrap_or("");
        let root = parse(text)?;
        let Added { created, events } = match root.value() {
            // No file, or nothing but blanks and comments in it.
            None => {
                let top = root.object_value_or_set();
                for (key, n) in self.preamble {
                    top.append(key, CstInputValue::Number(n.to_string()));
                }
                top.append("hooks", self.hooks_object());
                let mut added = self.all_added();
                self.add_single(&top, &mut added);
                added
            }
            Some(value) => {
                let top = root_object(&value)?;
                let mut added = self.add_hooks(top.clone())?;
                self.add_single(&top, &mut added);
                added
            }
        };
        if events.is_empty() {
            return Ok(Planned::Already);
        }
        let inserts = insertions_keeping_layout(text, &root.to_string())?;
        Ok(Planned::Plan(Plan {
            inserts,
            created,
            events,
        }))
    }

    /// Sets the single member when the file has none; counts it as an
    /// event added.
    fn add_single(&self, top: &CstObject, added: &mut Added) {
        let Some((key, nerdr_ev)) = self.single else {
            return;
        };
        if last_member(top, key).is_some() {
            return;
        }
        top.append(
            key,
            obj([
                ("type", CstInputValue::String("command".into())),
                (self.command_key, CstInputValue::String(command(nerdr_ev))),
            ]),
        );
        added.created.push(vec![key.to_string()]);
        added.events.push(key.to_string());
    }

    /// Whether the single member of `top` (a parsed file) is nerdr's.
    fn single_is_nerdrs(&self, top: &Value) -> bool {
        self.single
            .and_then(|(key, _)| top.get(key))
            .is_some_and(|v| self.is_our_single(v))
    }

    /// Whether `member` is exactly the single member install writes. One
    /// changed since, even only by a command added after nerdr's, is the
    /// person's now: uninstall keeps it and names it.
    fn is_our_single(&self, member: &Value) -> bool {
        let Some((_, nerdr_ev)) = self.single else {
            return false;
        };
        let ours = serde_json::json!({"type": "command", self.command_key: command(nerdr_ev)});
        *member == ours
    }

    /// The command of the single member someone else set, if any (for
    /// saying it was left alone).
    pub fn single_of_others(&self, text: &str) -> Option<String> {
        let (key, _) = self.single?;
        let v = jsonc::parse_value(text).ok()??;
        let member = v.get(key)?;
        if self.is_our_single(member) {
            return None;
        }
        Some(
            member
                .get(self.command_key)
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| member.to_string()),
        )
    }

    /// What a `hooks` member made from nothing adds.
    fn all_added(&self) -> Added {
        Added {
            created: self.all_created(),
            events: self.events.iter().map(|(e, _)| e.to_string()).collect(),
        }
    }

    /// Appends what is missing to the root object.
    fn add_hooks(&self, top: CstObject) -> Result<Added, EditError> {
        let Some(hooks) = last_member(&top, "hooks") else {
            top.append("hooks", self.hooks_object());
            return Ok(self.all_added());
        };
        let hooks = hooks.as_object().ok_or_else(|| EditError::Shape {
            key: "hooks".into(),
            found: jsonc::describe_cst(&hooks).into(),
            expected: "an object of event names",
        })?;
        let mut added = Added::default();
        for (ev, nerdr_ev) in self.events {
            let cmd = command(nerdr_ev);
            let Some(existing) = last_member(&hooks, ev) else {
                hooks.append(ev, self.event_array(nerdr_ev));
                added
                    .created
                    .push(vec!["hooks".to_string(), ev.to_string()]);
                added.events.push(ev.to_string());
                continue;
            };
            let arr = existing.as_array().ok_or_else(|| EditError::Shape {
                key: format!("hooks.{ev}"),
                found: jsonc::describe_cst(&existing).into(),
                expected: "an array of hooks",
            })?;
            if arr
                .elements()
                .iter()
                .any(|el| value_of(el).is_some_and(|v| self.runs(&v, &cmd)))
            {
                continue;
            }
            arr.append((self.entry)(&cmd));
            added.events.push(ev.to_string());
        }
        Ok(added)
    }

    /// `text` without nerdr's hooks (found by the command they run), and
    /// without the containers in `created` once they are empty. For a file
    /// changed since the install; whitespace around a removed entry may
    /// differ from before the install, nothing else does.
    pub fn remove(&self, text: &str, created: &[Vec<String>]) -> Result<String, EditError> {
        let root = parse(text)?;
        let Some(value) = root.value() else {
            return Ok(text.to_string());
        };
        let top = root_object(&value)?;
        if let Some(hooks) = last_member(&top, "hooks").and_then(|h| h.as_object()) {
            for member in hooks.properties() {
                if let Some(arr) = member.array_value() {
                    self.remove_entries(&arr);
                }
            }
        }
        if let Some((key, _)) = self.single {
            for member in top.properties() {
                let ours = member.decoded_name().as_deref() == Some(key)
                    && member
                        .value()
                        .and_then(|v| value_of(&v))
                        .is_some_and(|v| self.is_our_single(&v));
                if ours {
                    member.remove();
                }
            }
        }
        remove_empty_created(&top, created);
        Ok(root.to_string())
    }

    /// Takes nerdr's elements out of one `hooks.EVENT` array: whole when
    /// they run nothing else, else nerdr's hooks out of a shared group.
    fn remove_entries(&self, arr: &CstArray) {
        for el in arr.elements() {
            let Some(v) = value_of(&el) else {
                continue;
            };
            let hooks_here = self.hooks_in(&v);
            let ours = hooks_here.iter().filter(|h| self.hook_is_nerdrs(h)).count();
            if ours == 0 {
                continue;
            }
            if ours == hooks_here.len() {
                el.remove();
                continue;
            }
            // A group that also runs someone else's hooks: take ours out of it.
            let inner = self
                .group
                .and_then(|key| el.as_object()?.get(key)?.array_value());
            for hook in inner.map(|a| a.elements()).unwrap_or_default() {
                if value_of(&hook).is_some_and(|h| self.hook_is_nerdrs(&h)) {
                    hook.remove();
                }
            }
        }
    }
}

/// What the CST added to `before` to make `after`, as insertions into the
/// user's text. The CST drops blank lines just inside an object or array it
/// appends to; those bytes are the user's, so they stay, and the text with
/// them must still be JSON that means what the CST's does. A token of the
/// user's the CST changed refuses the edit.
fn insertions_keeping_layout(before: &str, after: &str) -> Result<Vec<Insertion>, EditError> {
    let old_tokens = jsonc::tokens(before).map_err(|e| EditError::Syntax {
        what: e.to_string(),
    })?;
    // The CST's text not being JSON would be the CST's fault; still refuse.
    let new_tokens = jsonc::tokens(after).map_err(|_| EditError::Reformat)?;
    let inserts =
        edit::insertions((before, &old_tokens), (after, &new_tokens)).ok_or(EditError::Reformat)?;
    let ours = edit::apply(before, &inserts);
    if ours != after {
        let same = match (jsonc::parse_value(&ours), jsonc::parse_value(after)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        if !same {
            return Err(EditError::Reformat);
        }
    }
    Ok(inserts)
}

fn parse(text: &str) -> Result<CstRootNode, EditError> {
    jsonc::parse_cst(text).map_err(|e| EditError::Syntax {
        what: e.to_string(),
    })
}

fn root_object(value: &CstNode) -> Result<CstObject, EditError> {
    value.as_object().ok_or_else(|| EditError::Shape {
        key: "(the top level)".into(),
        found: jsonc::describe_cst(value).into(),
        expected: "an object",
    })
}

/// The value of member `key`; the last one if it is repeated, as
/// `JSON.parse` does (the CST's own `get` finds the first).
fn last_member(obj: &CstObject, key: &str) -> Option<CstNode> {
    obj.properties()
        .into_iter()
        .rev()
        .find(|p| p.decoded_name().as_deref() == Some(key))?
        .value()
}

/// The element's value, or `None` when it holds comments (then it is not
/// one nerdr wrote).
fn value_of(node: &CstNode) -> Option<Value> {
    jsonc::value_without_comments(&node.to_string())
}

/// Drops the members at the key paths nerdr created that are empty now,
/// deepest first, so a parent emptied by its child's removal goes too.
fn remove_empty_created(top: &CstObject, created: &[Vec<String>]) {
    let mut paths: Vec<&Vec<String>> = created.iter().collect();
    paths.sort_by_key(|p| std::cmp::Reverse(p.len()));
    for path in paths {
        let Some((last, parents)) = path.split_last() else {
            continue;
        };
        let mut parent = Some(top.clone());
        for key in parents {
            parent = parent.and_then(|p| last_member(&p, key)?.as_object());
        }
        let Some(parent) = parent else {
            continue;
        };
        let Some(member) = parent
            .properties()
            .into_iter()
            .rev()
            .find(|p| p.decoded_name().as_deref() == Some(last))
        else {
            continue;
        };
        let empty = match member.value() {
            Some(v) => match (v.as_object(), v.as_array()) {
                (Some(o), _) => o.properties().is_empty(),
                (_, Some(a)) => a.elements().is_empty(),
                _ => false,
            },
            None => false,
        };
        if empty {
            member.remove();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_kept_must_leave_the_csts_meaning() {
        // What the diff keeps of the user's whitespace would land inside
        // the new string ("a \tb"): insertions, but not the same JSON.
        let (before, after) = ("[\n \t]", "[\"a b\"]");
        let tokens = |t| jsonc::tokens(t).unwrap();
        assert!(edit::insertions((before, &tokens(before)), (after, &tokens(after))).is_some());
        assert_eq!(
            insertions_keeping_layout(before, after),
            Err(EditError::Reformat)
        );
        // A token of the user's changed.
        assert_eq!(
            insertions_keeping_layout("[1]", "[2, 1]"),
            Ok(vec![Insertion {
                at: 1,
                text: "2, ".into()
            }])
        );
        assert_eq!(
            insertions_keeping_layout("[1]", "[2]"),
            Err(EditError::Reformat)
        );
        assert_eq!(
            insertions_keeping_layout("[1 /* c */]", "[1, 2]"),
            Err(EditError::Reformat)
        );
        let msg = EditError::Reformat.to_string();
        assert!(msg.contains("then run this command again"), "{msg}");
    }
}

//! Hooks in a JSON settings file whose `hooks` object maps event names to
//! arrays (claude's `settings.json`, copilot's hook files). Adds nerdr's
//! entries by insertion, laid out like the surrounding file, and finds and
//! removes them again by the command they run. Pure: text in, text out.

use serde_json::Value;

use super::edit::{EditError, Insertion, Plan, Planned};
use super::jsonspan::{self, indent_at, indent_unit, removal_range, Container, Member, Node};
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
    /// The element nerdr appends to `hooks.EVENT` for a command.
    pub entry: fn(&str) -> J,
}

/// A JSON value that renders with its keys in the order written.
#[derive(Debug, Clone)]
pub enum J {
    Obj(Vec<(String, J)>),
    Arr(Vec<J>),
    Str(String),
    Num(i64),
}

impl J {
    pub fn obj<const N: usize>(members: [(&str, J); N]) -> J {
        J::Obj(
            members
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }

    /// Rendered as the file would have it: `pretty` lays members out one per
    /// line, `indent` deeper by `unit` per level; the first line is not
    /// indented (the caller has placed it).
    pub fn render(&self, indent: &str, unit: &str, pretty: bool) -> String {
        let (open, close, items): (&str, &str, Vec<String>) = match self {
            J::Str(s) => return Value::String(s.clone()).to_string(),
            J::Num(n) => return n.to_string(),
            J::Obj(ms) => {
                let inner = format!("{indent}{unit}");
                let items = ms
                    .iter()
                    .map(|(k, v)| {
                        format!(
                            "{}: {}",
                            Value::String(k.clone()),
                            v.render(&inner, unit, pretty)
                        )
                    })
                    .collect();
                ("{", "}", items)
            }
            J::Arr(vs) => {
                let inner = format!("{indent}{unit}");
                (
                    "[",
                    "]",
                    vs.iter().map(|v| v.render(&inner, unit, pretty)).collect(),
                )
            }
        };
        if items.is_empty() {
            format!("{open}{close}")
        } else if pretty {
            let sep = format!(",\n{indent}{unit}");
            format!(
                "{open}\n{indent}{unit}{}\n{indent}{close}",
                items.join(&sep)
            )
        } else {
            format!("{open}{}{close}", items.join(", "))
        }
    }
}

impl Target {
    /// The whole text of a new settings file.
    pub fn fresh(&self) -> String {
        let mut members: Vec<(String, J)> = self
            .preamble
            .iter()
            .map(|(k, n)| (k.to_string(), J::Num(*n)))
            .collect();
        members.push(("hooks".into(), self.hooks_object(self.events)));
        format!("{}\n", J::Obj(members).render("", "  ", true))
    }

    fn hooks_object(&self, events: &[(&str, &str)]) -> J {
        J::Obj(
            events
                .iter()
                .map(|(ev, nerdr_ev)| {
                    (
                        ev.to_string(),
                        J::Arr(vec![(self.entry)(&command(nerdr_ev))]),
                    )
                })
                .collect(),
        )
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
        let Some(root) = parse(text)? else {
            return Ok(false);
        };
        let Some(hooks) = root_object(text, &root)?.get("hooks") else {
            return Ok(false);
        };
        let Some(hooks) = hooks.value.as_object() else {
            return Ok(false);
        };
        Ok(hooks.items.iter().any(|m| {
            m.value.as_array().is_some_and(|a| {
                a.items.iter().any(|el| {
                    value_of(text, el)
                        .is_some_and(|v| self.hooks_in(&v).iter().any(|h| self.hook_is_nerdrs(h)))
                })
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
        let all_events = || {
            self.events
                .iter()
                .map(|(e, _)| e.to_string())
                .collect::<Vec<_>>()
        };
        let Some(root) = parse(text)? else {
            // No file, or nothing but blanks and comments in it.
            return Ok(Planned::Plan(Plan {
                inserts: vec![Insertion {
                    at: 0,
                    text: self.fresh(),
                }],
                created: self.all_created(),
                events: all_events(),
            }));
        };
        let root_obj = root_object(text, &root)?;
        let unit = indent_unit(text, &root);
        let pretty = is_pretty(text, root_obj);
        let Some(hooks) = root_obj.get("hooks") else {
            let l = layout(text, root_obj, &unit, pretty);
            let member = format!(
                "\"hooks\": {}",
                self.hooks_object(self.events)
                    .render(&l.indent, &unit, l.pretty)
            );
            return Ok(Planned::Plan(Plan {
                inserts: vec![l.insertion(&[member])],
                created: self.all_created(),
                events: all_events(),
            }));
        };
        let hooks_obj = hooks.value.as_object().ok_or_else(|| EditError::Shape {
            key: "hooks".into(),
            found: hooks.value.describe(text).into(),
            expected: "an object of event names",
        })?;
        let mut inserts = Vec::new();
        let mut created = Vec::new();
        let mut events = Vec::new();
        let mut new_members = Vec::new();
        let hooks_layout = layout(text, hooks_obj, &unit, pretty);
        for (ev, nerdr_ev) in self.events {
            let cmd = command(nerdr_ev);
            let Some(existing) = hooks_obj.get(ev) else {
                let arr = J::Arr(vec![(self.entry)(&cmd)]);
                new_members.push(format!(
                    "{}: {}",
                    Value::String(ev.to_string()),
                    arr.render(&hooks_layout.indent, &unit, hooks_layout.pretty)
                ));
                created.push(vec!["hooks".to_string(), ev.to_string()]);
                events.push(ev.to_string());
                continue;
            };
            let arr = existing.value.as_array().ok_or_else(|| EditError::Shape {
                key: format!("hooks.{ev}"),
                found: existing.value.describe(text).into(),
                expected: "an array of hooks",
            })?;
            if arr
                .items
                .iter()
                .any(|el| value_of(text, el).is_some_and(|v| self.runs(&v, &cmd)))
            {
                continue;
            }
            let l = layout(text, arr, &unit, pretty);
            let entry = (self.entry)(&cmd).render(&l.indent, &unit, l.pretty);
            inserts.push(l.insertion(&[entry]));
            events.push(ev.to_string());
        }
        if !new_members.is_empty() {
            inserts.push(hooks_layout.insertion(&new_members));
        }
        if inserts.is_empty() {
            return Ok(Planned::Already);
        }
        inserts.sort_by_key(|i| i.at);
        Ok(Planned::Plan(Plan {
            inserts,
            created,
            events,
        }))
    }

    /// `text` without nerdr's hooks (found by the command they run), and
    /// without the containers in `created` once they are empty. For a file
    /// changed since the install; whitespace around a removed entry may
    /// differ from before the install, nothing else does.
    pub fn remove(&self, text: &str, created: &[Vec<String>]) -> Result<String, EditError> {
        let mut text = text.to_string();
        // One removal per container per round, so two cuts never overlap;
        // each round removes something, so this ends.
        loop {
            let Some(root) = parse(&text)? else {
                return Ok(text);
            };
            let root_obj = root_object(&text, &root)?;
            let mut cuts = self.entry_cuts(&text, root_obj);
            if cuts.is_empty() {
                cuts = empty_created_cuts(root_obj, created);
            }
            if cuts.is_empty() {
                return Ok(text);
            }
            cuts.sort_by_key(|r| std::cmp::Reverse(r.start));
            for r in cuts {
                text.replace_range(r, "");
            }
        }
    }

    fn entry_cuts(&self, text: &str, root: &Container<Member>) -> Vec<std::ops::Range<usize>> {
        let mut cuts = Vec::new();
        let Some(hooks) = root.get("hooks").and_then(|m| m.value.as_object()) else {
            return cuts;
        };
        for member in &hooks.items {
            let Some(arr) = member.value.as_array() else {
                continue;
            };
            for (i, el) in arr.items.iter().enumerate() {
                let Some(v) = value_of(text, el) else {
                    continue;
                };
                let hooks_here = self.hooks_in(&v);
                let ours: Vec<usize> = (0..hooks_here.len())
                    .filter(|&j| self.hook_is_nerdrs(hooks_here[j]))
                    .collect();
                if ours.is_empty() {
                    continue;
                }
                if ours.len() == hooks_here.len() {
                    cuts.push(removal_range(arr, i));
                    break;
                }
                // A group that also runs someone else's hooks: take ours out of it.
                let inner = self
                    .group
                    .and_then(|key| el.as_object()?.get(key)?.value.as_array());
                if let Some(inner) = inner {
                    cuts.push(removal_range(inner, ours[0]));
                    break;
                }
            }
        }
        cuts
    }
}

fn parse(text: &str) -> Result<Option<Node>, EditError> {
    jsonspan::parse(text).map_err(|e| EditError::Syntax {
        what: e.to_string(),
    })
}

fn root_object<'n>(text: &str, root: &'n Node) -> Result<&'n Container<Member>, EditError> {
    root.as_object().ok_or_else(|| EditError::Shape {
        key: "(the top level)".into(),
        found: root.describe(text).into(),
        expected: "an object",
    })
}

/// The element's value, or `None` when it holds comments (then it is not
/// one nerdr wrote).
fn value_of(text: &str, node: &Node) -> Option<Value> {
    serde_json::from_str(&text[node.start..node.end]).ok()
}

/// Whether the root's members sit on lines of their own (an empty root
/// counts as laid out, the common way to grow one).
fn is_pretty(text: &str, root: &Container<Member>) -> bool {
    root.items
        .first()
        .is_none_or(|m| text[root.open..m.key_start].contains('\n'))
}

/// How new items are written into one container.
struct Layout {
    at: usize,
    /// One item per line (else inline).
    pretty: bool,
    indent: String,
    lead: String,
    sep: String,
    tail: String,
}

impl Layout {
    fn insertion(&self, items: &[String]) -> Insertion {
        Insertion {
            at: self.at,
            text: format!("{}{}{}", self.lead, items.join(&self.sep), self.tail),
        }
    }
}

/// New items go after the last item (or inside the empty brackets), one per
/// line at the last item's indentation when the container is laid out that
/// way, else inline.
fn layout<T: jsonspan::Spanned>(
    text: &str,
    c: &Container<T>,
    unit: &str,
    doc_pretty: bool,
) -> Layout {
    if let Some(last) = c.items.last() {
        let prev_end = match c.items.len() {
            1 => c.open + 1,
            n => c.items[n - 2].span_end(),
        };
        let pretty = text[prev_end..last.span_start()].contains('\n');
        let indent = indent_at(text, last.span_start()).to_string();
        let sep = if pretty {
            format!(",\n{indent}")
        } else {
            ", ".to_string()
        };
        return Layout {
            at: last.span_end(),
            pretty,
            lead: sep.clone(),
            sep,
            tail: String::new(),
            indent,
        };
    }
    let outer = indent_at(text, c.open);
    let indent = format!("{outer}{unit}");
    if !doc_pretty {
        return Layout {
            at: c.open + 1,
            pretty: false,
            indent,
            lead: String::new(),
            sep: ", ".into(),
            tail: String::new(),
        };
    }
    let inside_has_line = text[c.open + 1..c.close].contains('\n');
    Layout {
        at: c.open + 1,
        pretty: true,
        lead: format!("\n{indent}"),
        sep: format!(",\n{indent}"),
        tail: if inside_has_line {
            String::new()
        } else {
            format!("\n{outer}")
        },
        indent,
    }
}

/// Cuts that drop containers nerdr created and that are empty now, deepest
/// first, one per parent.
fn empty_created_cuts(
    root: &Container<Member>,
    created: &[Vec<String>],
) -> Vec<std::ops::Range<usize>> {
    let mut paths: Vec<&Vec<String>> = created.iter().collect();
    paths.sort_by_key(|p| std::cmp::Reverse(p.len()));
    let mut cuts: Vec<std::ops::Range<usize>> = Vec::new();
    let mut parents_cut: Vec<&[String]> = Vec::new();
    for path in paths {
        let Some((last, parent_path)) = path.split_last() else {
            continue;
        };
        if parents_cut.contains(&parent_path) {
            continue;
        }
        let mut parent = root;
        let mut found = true;
        for key in parent_path {
            match parent.get(key).and_then(|m| m.value.as_object()) {
                Some(o) => parent = o,
                None => {
                    found = false;
                    break;
                }
            }
        }
        if !found {
            continue;
        }
        let Some(index) = parent.items.iter().rposition(|m| &m.key == last) else {
            continue;
        };
        let empty = match &parent.items[index].value.kind {
            jsonspan::Kind::Object(o) => o.items.is_empty(),
            jsonspan::Kind::Array(a) => a.items.is_empty(),
            jsonspan::Kind::Scalar => false,
        };
        if empty {
            cuts.push(removal_range(parent, index));
            parents_cut.push(parent_path);
        }
    }
    // A parent and its child are never both cut in one round: the child's
    // cut would sit inside the parent's.
    cuts.sort_by_key(|r| r.start);
    let mut kept: Vec<std::ops::Range<usize>> = Vec::new();
    for r in cuts {
        if kept.last().is_none_or(|k| k.end <= r.start) {
            kept.push(r);
        }
    }
    kept
}

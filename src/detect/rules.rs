//! One agent's screen rules: the TOML format (one file per agent, built in
//! or the user's `$XDG_CONFIG_HOME/nerdr/detect/NAME.toml`) parsed and
//! checked into a [`RuleSet`]. Parsing is pure over the name, the path to
//! name in messages and the text; reading the file is `super::load`'s.
//!
//! The file is walked through `toml_edit`'s spanned document rather than
//! serde, so every error can name the line and the key it is about, an
//! unknown key (a typo) is an error, and regexes are compiled once, here.

use std::ops::Range;
use std::path::PathBuf;
use std::time::Duration;

use toml_edit::{ImDocument, Item, Table};

use super::rule_fields::{key_span, kind, line_of, Ctx, Fields};
use super::RulesError;

/// How long output must be quiet before a screen that looks idle counts,
/// when the file does not say (`quiet_ms`).
pub const DEFAULT_QUIET: Duration = Duration::from_millis(1500);
const MAX_QUIET_MS: i64 = 600_000;

/// The state a matching rule yields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleState {
    Working,
    Blocked,
    Idle,
    Done,
    /// Leave the state as it is (the screen cannot tell, e.g. a transcript
    /// viewer is open).
    Unchanged,
}

impl RuleState {
    const NAMES: [(&'static str, RuleState); 5] = [
        ("working", RuleState::Working),
        ("blocked", RuleState::Blocked),
        ("idle", RuleState::Idle),
        ("done", RuleState::Done),
        ("unchanged", RuleState::Unchanged),
    ];

    #[cfg(test)]
    pub fn as_str(self) -> &'static str {
        Self::NAMES.iter().find(|(_, s)| *s == self).unwrap().0
    }
}

/// The part of the screen a rule looks at. Every region is a list of
/// non-empty rows (blank rows never match anything).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    /// The last N non-empty rows.
    LastLines(usize),
    /// The rows below the last horizontal rule (a row of ─ ━ - ═ only);
    /// nothing when the screen has no rule.
    AfterRule,
    Screen,
    Title,
}

/// What a rule looks for in its region: any of some substrings, or a
/// regex (multi-line: `^` and `$` match at each row).
#[derive(Debug, Clone)]
pub enum Matcher {
    Contains(Vec<String>),
    Regex(regex::Regex),
}

impl PartialEq for Matcher {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Matcher::Contains(a), Matcher::Contains(b)) => a == b,
            (Matcher::Regex(a), Matcher::Regex(b)) => a.as_str() == b.as_str(),
            _ => false,
        }
    }
}

impl Matcher {
    /// The byte range of the first match in `text`.
    pub fn find(&self, text: &str) -> Option<Range<usize>> {
        match self {
            Matcher::Contains(needles) => needles
                .iter()
                .find_map(|n| text.find(n.as_str()).map(|at| at..at + n.len())),
            Matcher::Regex(re) => re.find(text).map(|m| m.range()),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub name: String,
    pub state: RuleState,
    pub priority: i64,
    pub region: Region,
    pub matcher: Matcher,
    /// The rule does not match when its region matches this.
    pub unless: Option<Matcher>,
    /// Whether a captured screen shows this rule matching.
    pub verified: bool,
    /// Its match says the agent hit its plan's limit (`limit = true`): the
    /// window offers to switch the tab to another agent.
    pub limit: bool,
    /// The line of its `[[rule]]` header, for messages.
    pub line: usize,
}

/// One agent's rules, loaded and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleSet {
    /// The name `detect = "NAME"` selects (or the built-in agent's name).
    pub name: String,
    /// Where the rules came from: `None` for the built-in file.
    pub file: Option<PathBuf>,
    quiet: Duration,
    /// Highest priority first; equal priorities in file order.
    rules: Vec<Rule>,
}

impl RuleSet {
    /// The rules in the order they are tried.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Whether a rule says `idle`: whether the screen can tell the agent
    /// waits at its prompt (`core::first_prompt` settles for a quiet
    /// screen where it cannot).
    pub fn tells_idle(&self) -> bool {
        self.rules.iter().any(|r| r.state == RuleState::Idle)
    }

    /// How long output must be quiet before an idle-looking screen counts.
    pub fn quiet(&self) -> Duration {
        self.quiet
    }

    /// Where the rules came from, for messages: the user's file, or
    /// `built-in NAME.toml`.
    pub fn source(&self) -> String {
        match &self.file {
            Some(p) => p.display().to_string(),
            None => format!("built-in {}.toml", self.name),
        }
    }
}

const TOP_KEYS: &[&str] = &["agent", "quiet_ms", "verified_with", "rule"];
const RULE_KEYS: &[&str] = &[
    "name",
    "state",
    "priority",
    "region",
    "lines",
    "contains",
    "regex",
    "not_contains",
    "not_regex",
    "verified",
    "limit",
];
const REGIONS: &str = "last_lines, after_rule, screen, title";

/// Parse one rules file. `file` is where it was read from (`None`: built
/// in); `shown` is how messages name it.
pub fn parse(
    name: &str,
    file: Option<PathBuf>,
    shown: &str,
    text: &str,
) -> Result<RuleSet, RulesError> {
    let at = |span: Option<Range<usize>>| Ctx {
        shown,
        line: span.map_or(1, |s| line_of(text, s.start)),
    };
    let doc = ImDocument::parse(text).map_err(|e| {
        at(e.span()).err(format!(
            "not valid TOML: {}; fix the file or remove it to use the built-in rules",
            e.message().trim_end()
        ))
    })?;
    let root = doc.as_table();
    for (key, item) in root.iter() {
        if !TOP_KEYS.contains(&key) {
            return Err(at(key_span(root, key, item)).err(format!(
                "unknown key `{key}` (the keys are {}; rules go in [[rule]] tables)",
                TOP_KEYS.join(", ")
            )));
        }
    }
    let top = Fields {
        table: root,
        text,
        shown,
        rule: None,
    };
    // Informational keys: checked, not kept.
    top.string("agent")?;
    let quiet = match top.integer("quiet_ms")? {
        None => DEFAULT_QUIET,
        Some((ms, _)) if (1..=MAX_QUIET_MS).contains(&ms) => Duration::from_millis(ms as u64),
        Some((ms, span)) => {
            return Err(top.key_err(
                "quiet_ms",
                span,
                format!("{ms} is out of range: give milliseconds from 1 to {MAX_QUIET_MS}"),
            ))
        }
    };
    top.strings("verified_with", true)?;

    let tables =
        match root.get("rule") {
            None => return Err(at(Some(0..0)).err(
                "no rules: add at least one [[rule]] table (see `nerdr explain` and the README's \
                 \"Agent states\")"
                    .into(),
            )),
            Some(Item::ArrayOfTables(a)) => a,
            Some(item) => {
                return Err(at(key_span(root, "rule", item)).err(
                    "key `rule`: write each rule as a [[rule]] table (an array of tables)".into(),
                ))
            }
        };
    let mut rules = Vec::new();
    for (index, table) in tables.iter().enumerate() {
        let rule = parse_rule(table, text, shown, index)?;
        if let Some(prev) = rules.iter().find(|r: &&Rule| r.name == rule.name) {
            return Err(Ctx {
                shown,
                line: rule.line,
            }
            .err(format!(
                "rule \"{}\": key `name`: the name is already used by the rule on line {}; \
                 give each rule its own name",
                rule.name, prev.line
            )));
        }
        rules.push(rule);
    }
    // Stable: equal priorities keep their order in the file.
    rules.sort_by_key(|r| std::cmp::Reverse(r.priority));
    Ok(RuleSet {
        name: name.to_owned(),
        file,
        quiet,
        rules,
    })
}

fn parse_rule(table: &Table, text: &str, shown: &str, index: usize) -> Result<Rule, RulesError> {
    let header_line = table.span().map_or(1, |s| line_of(text, s.start));
    let mut f = Fields {
        table,
        text,
        shown,
        rule: None,
    };
    let here = |f: &Fields, msg: String| {
        Ctx {
            shown,
            line: header_line,
        }
        .err(format!("{}{msg}", f.rule_prefix()))
    };
    let name = match f.string("name")? {
        Some(n) if !n.trim().is_empty() => n,
        Some(_) => return Err(f.key_err("name", f.span("name"), "the name is empty".into())),
        None => {
            return Err(here(
                &f,
                format!(
                    "rule #{}: key `name` is missing: give the rule a unique name",
                    index + 1
                ),
            ))
        }
    };
    f.rule = Some(name.clone());
    for (key, item) in table.iter() {
        if !RULE_KEYS.contains(&key) {
            return Err(f.key_err(
                key,
                key_span(table, key, item),
                format!("unknown key (a rule's keys are {})", RULE_KEYS.join(", ")),
            ));
        }
    }
    let state = match f.string("state")? {
        None => {
            return Err(here(
                &f,
                "key `state` is missing: say working, blocked, idle, done or unchanged".into(),
            ))
        }
        Some(s) => match RuleState::NAMES.iter().find(|(n, _)| *n == s) {
            Some((_, st)) => *st,
            None => {
                return Err(f.key_err(
                    "state",
                    f.span("state"),
                    format!("\"{s}\" is not one of working, blocked, idle, done, unchanged"),
                ))
            }
        },
    };
    let priority = f.integer("priority")?.map_or(0, |(p, _)| p);
    let lines = f.integer("lines")?;
    let region = match f.string("region")?.as_deref() {
        None => {
            return Err(here(
                &f,
                format!("key `region` is missing: say one of {REGIONS}"),
            ))
        }
        Some("last_lines") => {
            match lines {
                Some((n, _)) if n >= 1 => Region::LastLines(n as usize),
                Some((n, span)) => {
                    return Err(f.key_err(
                        "lines",
                        span,
                        format!("{n} is not a number of lines: give 1 or more"),
                    ))
                }
                None => return Err(f.key_err(
                    "region",
                    f.span("region"),
                    "\"last_lines\" needs `lines = N` (how many non-empty rows from the bottom)"
                        .into(),
                )),
            }
        }
        Some(other) => {
            let region = match other {
                "after_rule" => Region::AfterRule,
                "screen" => Region::Screen,
                "title" => Region::Title,
                _ => {
                    return Err(f.key_err(
                        "region",
                        f.span("region"),
                        format!("\"{other}\" is not one of {REGIONS}"),
                    ))
                }
            };
            if let Some((_, span)) = lines {
                return Err(f.key_err(
                    "lines",
                    span,
                    format!("only region = \"last_lines\" takes `lines` (this rule's region is \"{other}\"); remove it"),
                ));
            }
            region
        }
    };
    let matcher = match f.matcher("contains", "regex")? {
        Some(m) => m,
        None => {
            return Err(here(
                &f,
                "has nothing to match: give `contains` (a string or an array of strings) or \
                 `regex`"
                    .into(),
            ))
        }
    };
    let unless = f.matcher("not_contains", "not_regex")?;
    let flag = |key: &str| match table.get(key) {
        None => Ok(false),
        Some(item) => item.as_bool().ok_or_else(|| {
            f.key_err(
                key,
                f.span(key),
                format!("expected true or false, found {}", kind(item)),
            )
        }),
    };
    let verified = flag("verified")?;
    let limit = flag("limit")?;
    Ok(Rule {
        name,
        state,
        priority,
        region,
        matcher,
        unless,
        verified,
        limit,
        line: header_line,
    })
}

/// Kept beside [`Matcher`] (not in `rule_fields`) so the field reader
/// does not depend on the rule format.
impl Fields<'_> {
    /// Exactly one of `contains_key` (strings) and `regex_key`, or neither.
    fn matcher(&self, contains_key: &str, regex_key: &str) -> Result<Option<Matcher>, RulesError> {
        let contains = self.strings(contains_key, false)?;
        let regex = self.string(regex_key)?;
        match (contains, regex) {
            (Some(_), Some(_)) => Err(self.key_err(
                regex_key,
                self.span(regex_key),
                format!("give either `{contains_key}` or `{regex_key}`, not both"),
            )),
            (Some((list, _)), None) => Ok(Some(Matcher::Contains(list))),
            (None, Some(re)) => regex::RegexBuilder::new(&re)
                .multi_line(true)
                .build()
                .map(|r| Some(Matcher::Regex(r)))
                .map_err(|e| {
                    self.key_err(
                        regex_key,
                        self.span(regex_key),
                        format!("not a valid regular expression: {e}"),
                    )
                }),
            (None, None) => Ok(None),
        }
    }
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;

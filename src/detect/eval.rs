//! The pure evaluator: which rule of a [`RuleSet`] a screen matches. Rules
//! are tried highest priority first (equal priorities in file order); the
//! first whose region matches, and whose `not_` clause does not, wins.

use super::region::{region_text, RegionText};
use super::rules::{Region, RuleSet, RuleState};
use super::ScreenView;

/// The rule a screen matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub rule: String,
    pub state: RuleState,
    /// The rows (or the title) the match touched.
    pub lines: Vec<String>,
    /// A `limit = true` rule: the agent hit its plan's limit.
    pub limit: bool,
}

pub fn evaluate(rules: &RuleSet, screen: &ScreenView) -> Option<Hit> {
    // Rules share regions; cut each one once per look.
    let mut cut: Vec<(Region, RegionText)> = Vec::new();
    for rule in rules.rules() {
        let i = match cut.iter().position(|(r, _)| *r == rule.region) {
            Some(i) => i,
            None => {
                cut.push((rule.region, region_text(rule.region, screen)));
                cut.len() - 1
            }
        };
        let region = &cut[i].1;
        let Some(m) = rule.matcher.find(&region.text) else {
            continue;
        };
        if rule
            .unless
            .as_ref()
            .is_some_and(|u| u.find(&region.text).is_some())
        {
            continue;
        }
        return Some(Hit {
            rule: rule.name.clone(),
            state: rule.state,
            lines: region.lines(&m),
            limit: rule.limit,
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::rules::parse;

    fn rules(text: &str) -> RuleSet {
        parse("t", None, "t.toml", text).unwrap()
    }

    fn screen(rows: &[&str], title: &str) -> ScreenView {
        ScreenView {
            rows: rows.iter().map(|r| r.to_string()).collect(),
            title: title.into(),
        }
    }

    const RULES: &str = r#"
[[rule]]
name = "prompt"
state = "idle"
region = "last_lines"
lines = 2
contains = ["? for shortcuts", "Type a message"]

[[rule]]
name = "permission"
state = "blocked"
priority = 100
region = "after_rule"
regex = '^\s*Do you want to (proceed|make this edit)\?'

[[rule]]
name = "spinner title"
state = "working"
priority = 50
region = "title"
regex = '^[\x{2800}-\x{28FF}]'

[[rule]]
name = "transcript"
state = "unchanged"
priority = 100
region = "screen"
contains = "Showing detailed transcript"
not_contains = "Do you want to proceed?"

[[rule]]
name = "second prompt"
state = "done"
region = "last_lines"
lines = 2
contains = "? for shortcuts"
"#;

    #[test]
    fn the_highest_priority_match_wins_and_ties_go_to_file_order() {
        let r = rules(RULES);
        let rule = "──────────";
        // (rows, title, expected rule or none, expected lines)
        type Case<'a> = (
            &'a [&'a str],
            &'a str,
            Option<(&'a str, RuleState)>,
            &'a [&'a str],
        );
        let cases: &[Case] = &[
            (
                &["hello", "  ? for shortcuts"],
                "✳ x",
                Some(("prompt", RuleState::Idle)),
                &["  ? for shortcuts"],
            ),
            // "prompt" and "second prompt" both match: the earlier wins.
            (
                &["a", "b", "? for shortcuts"],
                "",
                Some(("prompt", RuleState::Idle)),
                &["? for shortcuts"],
            ),
            // Out of the last two non-empty rows: no match.
            (&["? for shortcuts", "a", "", "b"], "", None, &[]),
            (
                &[
                    "x",
                    rule,
                    " Do you want to proceed?",
                    " ❯ 1. Yes",
                    "? for shortcuts",
                ],
                "✳ x",
                Some(("permission", RuleState::Blocked)),
                &[" Do you want to proceed?"],
            ),
            // Above the last rule: not in the region.
            (
                &[" Do you want to proceed?", rule, "? for shortcuts"],
                "",
                Some(("prompt", RuleState::Idle)),
                &["? for shortcuts"],
            ),
            (
                &["x", "? for shortcuts"],
                "⠐ Working",
                Some(("spinner title", RuleState::Working)),
                &["⠐ Working"],
            ),
            (
                &["Showing detailed transcript", "? for shortcuts"],
                "⠐",
                Some(("transcript", RuleState::Unchanged)),
                &["Showing detailed transcript"],
            ),
            // not_contains: the transcript rule steps aside, the spinner wins.
            (
                &["Showing detailed transcript", "Do you want to proceed?"],
                "⠐",
                Some(("spinner title", RuleState::Working)),
                &["⠐"],
            ),
            (
                &["Type a message"],
                "",
                Some(("prompt", RuleState::Idle)),
                &["Type a message"],
            ),
            (&[], "", None, &[]),
        ];
        for (rows, title, want, lines) in cases {
            let got = evaluate(&r, &screen(rows, title));
            match want {
                None => assert_eq!(got, None, "{rows:?} {title:?}"),
                Some((name, state)) => {
                    let hit = got.unwrap_or_else(|| panic!("no match for {rows:?} {title:?}"));
                    assert_eq!(
                        (hit.rule.as_str(), hit.state),
                        (*name, *state),
                        "{rows:?} {title:?}"
                    );
                    assert_eq!(hit.lines, *lines, "{rows:?} {title:?}");
                }
            }
        }
    }

    #[test]
    fn a_regex_sees_rows_as_lines_and_can_span_them() {
        let r = rules(
            r#"
[[rule]]
name = "two rows"
state = "blocked"
region = "screen"
regex = '(?s)Allow\?\n.*Yes'
[[rule]]
name = "anchored"
state = "idle"
region = "screen"
regex = '^› '
"#,
        );
        let hit = evaluate(&r, &screen(&["Allow?", "  1. Yes"], "")).unwrap();
        assert_eq!(
            (hit.rule.as_str(), hit.lines),
            (
                "two rows",
                vec!["Allow?".to_string(), "  1. Yes".to_string()]
            )
        );
        let hit = evaluate(&r, &screen(&["out", "› Ask", "x"], "")).unwrap();
        assert_eq!(
            (hit.rule.as_str(), hit.lines),
            ("anchored", vec!["› Ask".to_string()])
        );
        assert_eq!(evaluate(&r, &screen(&["x › Ask"], "")), None);
    }

    /// The built-in claude and codex rules flag their plan-limit lines
    /// (the window offers a switch), and a turn running below one is
    /// still working, not the limit.
    #[test]
    fn the_built_in_limit_rules_flag_the_limit_lines() {
        let hit = |agent: &str, rows: &[&str]| {
            let rules = crate::detect::builtin::builtin(agent).unwrap();
            evaluate(&rules, &screen(rows, "")).map(|h| (h.rule, h.state, h.limit))
        };
        let limit = Some(("plan limit".to_string(), RuleState::Done, true));
        #[rustfmt::skip]
        let rows: &[(&str, &[&str], bool)] = &[
            ("claude", &["⎿  Claude usage limit reached. Your limit will reset at 5pm.", "───", "❯\u{a0}"], true),
            ("claude", &["⎿  5-hour limit reached ∙ resets 5pm", "───", "❯"], true),
            ("claude", &["⎿  You've hit your limit · resets 5pm", "───", "❯"], true),
            ("claude", &["● the rate of change is limited", "───", "❯"], false),
            ("codex", &["■ You've hit your usage limit. Upgrade to Pro or try again in 2 hours.", "› Ask"], true),
            ("codex", &["• the limit of x is 0", "› Ask"], false),
        ];
        for (agent, screen, want) in rows {
            let got = hit(agent, screen);
            match want {
                true => assert_eq!(got, limit, "{agent}: {screen:?}"),
                false => assert!(!got.is_some_and(|g| g.2), "{agent}: {screen:?}"),
            }
        }
        // A new turn under the old line: working wins.
        let busy = hit(
            "claude",
            &[
                "⎿  Claude usage limit reached.",
                "✻ Thinking…",
                "───",
                "❯",
                "esc to interrupt",
            ],
        );
        assert_eq!(busy.map(|b| (b.1, b.2)), Some((RuleState::Working, false)));
    }
}

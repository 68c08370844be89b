use super::*;

fn parse_t(text: &str) -> Result<RuleSet, RulesError> {
    parse("claude", None, "~/.config/nerdr/detect/claude.toml", text)
}

const RULE: &str =
    "[[rule]]\nname = \"x\"\nstate = \"idle\"\nregion = \"screen\"\ncontains = \"y\"\n";

#[test]
fn a_whole_file_parses_into_rules_in_the_order_they_are_tried() {
    let r = parse_t(
        r#"agent = "claude"
quiet_ms = 900
verified_with = ["a", "b"]

[[rule]]
name = "low"
state = "idle"
region = "last_lines"
lines = 3
contains = ["? for shortcuts", "x"]
verified = true

[[rule]]
name = "high"
state = "blocked"
priority = 100
region = "after_rule"
regex = 'Do you want'
not_contains = "esc to interrupt"

[[rule]]
name = "low too"
state = "unchanged"
region = "title"
contains = "t"
not_regex = '^u'
"#,
    )
    .unwrap();
    assert_eq!(r.name, "claude");
    assert_eq!(r.file, None);
    assert_eq!(r.quiet(), Duration::from_millis(900));
    let names: Vec<&str> = r.rules().iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        ["high", "low", "low too"],
        "priority first, then file order"
    );
    let high = &r.rules()[0];
    assert_eq!(
        (high.state, high.priority, high.region),
        (RuleState::Blocked, 100, Region::AfterRule)
    );
    assert!(matches!(&high.matcher, Matcher::Regex(re) if re.as_str() == "Do you want"));
    assert_eq!(
        high.unless,
        Some(Matcher::Contains(vec!["esc to interrupt".into()]))
    );
    assert!(!high.verified, "verified defaults to false");
    assert_eq!(high.line, 13);
    let low = &r.rules()[1];
    assert_eq!(
        (low.priority, low.region, low.verified),
        (0, Region::LastLines(3), true)
    );
    assert_eq!(
        low.matcher,
        Matcher::Contains(vec!["? for shortcuts".into(), "x".into()])
    );
    assert_eq!(r.rules()[2].state, RuleState::Unchanged);
    // Defaults.
    let d = parse_t(RULE).unwrap();
    assert_eq!(d.quiet(), DEFAULT_QUIET);
    assert_eq!(d.source(), "built-in claude.toml");
}

#[test]
fn every_error_names_the_file_the_line_and_the_key() {
    let f = "~/.config/nerdr/detect/claude.toml";
    // (the file's text, the start of the message after "FILE:")
    let cases: &[(&str, &str)] = &[
        ("agent = \"claude\"\n[[rule]\n", "2: not valid TOML: "),
        ("agent = 3\n", "1: key `agent`: expected a string, found an integer"),
        ("\nagnet = \"claude\"\n", "2: unknown key `agnet` (the keys are agent, quiet_ms, verified_with, rule;"),
        ("agent = \"claude\"\n", "1: no rules: add at least one [[rule]] table"),
        ("rule = \"x\"\n", "1: key `rule`: write each rule as a [[rule]] table"),
        ("quiet_ms = 0\n", "1: key `quiet_ms`: 0 is out of range: give milliseconds from 1 to 600000"),
        ("quiet_ms = \"1500\"\n", "1: key `quiet_ms`: expected an integer, found a string"),
        ("verified_with = [1]\n", "1: key `verified_with`: expected a string or an array of strings, found an array holding an integer"),
        ("[[rule]]\nstate = \"idle\"\n", "1: rule #1: key `name` is missing: give the rule a unique name"),
        ("[[rule]]\nname = \" \"\n", "2: key `name`: the name is empty"),
        ("[[rule]]\nname = \"x\"\n\nprority = 3\n", "4: rule \"x\": key `prority`: unknown key (a rule's keys are name, state,"),
        ("[[rule]]\nname = \"x\"\nregion = \"screen\"\n", "1: rule \"x\": key `state` is missing: say working, blocked, idle, done or unchanged"),
        ("[[rule]]\nname = \"x\"\nstate = \"sleeping\"\n", "3: rule \"x\": key `state`: \"sleeping\" is not one of working, blocked, idle, done, unchanged"),
        ("[[rule]]\nname = \"x\"\nstate = \"idle\"\n", "1: rule \"x\": key `region` is missing: say one of last_lines, after_rule, screen, title"),
        (
            "agent = \"claude\"\n\n[[rule]]\nname = \"x\"\nstate = \"idle\"\n\n\n\n\n\n\nregion = \"bottom\"\n",
            "12: rule \"x\": key `region`: \"bottom\" is not one of last_lines, after_rule, screen, title",
        ),
        ("[[rule]]\nname = \"x\"\nstate = \"idle\"\nregion = \"last_lines\"\n", "4: rule \"x\": key `region`: \"last_lines\" needs `lines = N`"),
        ("[[rule]]\nname = \"x\"\nstate = \"idle\"\nregion = \"last_lines\"\nlines = 0\n", "5: rule \"x\": key `lines`: 0 is not a number of lines: give 1 or more"),
        ("[[rule]]\nname = \"x\"\nstate = \"idle\"\nlines = 3\nregion = \"title\"\n", "4: rule \"x\": key `lines`: only region = \"last_lines\" takes `lines`"),
        ("[[rule]]\nname = \"x\"\nstate = \"idle\"\nregion = \"screen\"\n", "1: rule \"x\": has nothing to match: give `contains`"),
        ("[[rule]]\nname = \"x\"\nstate = \"idle\"\nregion = \"screen\"\ncontains = \"a\"\nregex = \"b\"\n", "6: rule \"x\": key `regex`: give either `contains` or `regex`, not both"),
        ("[[rule]]\nname = \"x\"\nstate = \"idle\"\nregion = \"screen\"\nregex = \"(a\"\n", "5: rule \"x\": key `regex`: not a valid regular expression: "),
        ("[[rule]]\nname = \"x\"\nstate = \"idle\"\nregion = \"screen\"\ncontains = \"\"\n", "5: rule \"x\": key `contains`: an empty string matches every screen; remove it"),
        ("[[rule]]\nname = \"x\"\nstate = \"idle\"\nregion = \"screen\"\ncontains = []\n", "5: rule \"x\": key `contains`: the array is empty"),
        ("[[rule]]\nname = \"x\"\nstate = \"idle\"\nregion = \"screen\"\ncontains = 7\n", "5: rule \"x\": key `contains`: expected a string or an array of strings, found an integer"),
        ("[[rule]]\nname = \"x\"\nstate = \"idle\"\nregion = \"screen\"\ncontains = \"a\"\nnot_contains = \"b\"\nnot_regex = \"c\"\n", "7: rule \"x\": key `not_regex`: give either `not_contains` or `not_regex`, not both"),
        ("[[rule]]\nname = \"x\"\nstate = \"idle\"\nregion = \"screen\"\ncontains = \"a\"\nnot_regex = \"[\"\n", "6: rule \"x\": key `not_regex`: not a valid regular expression"),
        ("[[rule]]\nname = \"x\"\nstate = \"idle\"\nregion = \"screen\"\ncontains = \"a\"\npriority = \"high\"\n", "6: rule \"x\": key `priority`: expected an integer, found a string"),
        ("[[rule]]\nname = \"x\"\nstate = \"idle\"\nregion = \"screen\"\ncontains = \"a\"\nverified = \"yes\"\n", "6: rule \"x\": key `verified`: expected true or false, found a string"),
        ("[[rule]]\nname = \"x\"\nstate = \"idle\"\nregion = \"screen\"\ncontains = \"a\"\n[rule.sub]\n", "6: rule \"x\": key `sub`: unknown key"),
        (
            "[[rule]]\nname = \"x\"\nstate = \"idle\"\nregion = \"screen\"\ncontains = \"a\"\n[[rule]]\nname = \"x\"\nstate = \"idle\"\nregion = \"screen\"\ncontains = \"b\"\n",
            "6: rule \"x\": key `name`: the name is already used by the rule on line 1; give each rule its own name",
        ),
    ];
    for (text, want) in cases {
        let e = parse_t(text).expect_err(text).message;
        let want = format!("{f}:{want}");
        assert!(
            e.starts_with(&want),
            "for {text:?}\n  got:  {e}\n  want: {want}..."
        );
    }
}

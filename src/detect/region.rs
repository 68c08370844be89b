//! The part of a screen a rule looks at ([`Region`]), cut from a
//! [`ScreenView`] as one text (rows joined by `\n`, blank rows left out) so
//! a substring or a regex can span rows, and mapped back to the rows a
//! match touched, for `nerdr explain`.

use std::ops::Range;

use super::rules::Region;
use super::ScreenView;

/// Characters a horizontal rule is drawn with.
const RULE_CHARS: &[char] = &['─', '━', '-', '═'];
/// A row is a horizontal rule when it is at least this many rule
/// characters and nothing else: shorter runs (`--`, `---` in prose) are
/// text.
const MIN_RULE_LEN: usize = 8;

/// A region's text and where each of its rows lies in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionText {
    pub text: String,
    rows: Vec<Range<usize>>,
}

impl RegionText {
    fn of<'a>(rows: impl Iterator<Item = &'a str>) -> Self {
        let mut text = String::new();
        let mut ranges = Vec::new();
        for row in rows.filter(|r| !r.trim().is_empty()) {
            if !text.is_empty() {
                text.push('\n');
            }
            let start = text.len();
            text.push_str(row);
            ranges.push(start..text.len());
        }
        RegionText { text, rows: ranges }
    }

    /// The rows a byte range of the text touches (an empty match: its row).
    pub fn lines(&self, m: &Range<usize>) -> Vec<String> {
        self.rows
            .iter()
            .filter(|r| {
                if m.is_empty() {
                    r.start <= m.start && m.start <= r.end
                } else {
                    r.start < m.end && m.start < r.end
                }
            })
            .map(|r| self.text[r.clone()].to_owned())
            .collect()
    }
}

/// Whether a row is a horizontal rule.
pub fn is_rule(row: &str) -> bool {
    let t = row.trim();
    t.chars().count() >= MIN_RULE_LEN && t.chars().all(|c| RULE_CHARS.contains(&c))
}

pub fn region_text(region: Region, screen: &ScreenView) -> RegionText {
    let rows = screen.rows.iter().map(String::as_str);
    match region {
        Region::Screen => RegionText::of(rows),
        Region::Title => RegionText::of(std::iter::once(screen.title.as_str())),
        Region::LastLines(n) => {
            let non_empty: Vec<&str> = rows.filter(|r| !r.trim().is_empty()).collect();
            let skip = non_empty.len().saturating_sub(n);
            RegionText::of(non_empty[skip..].iter().copied())
        }
        Region::AfterRule => match screen.rows.iter().rposition(|r| is_rule(r)) {
            Some(at) => RegionText::of(screen.rows[at + 1..].iter().map(String::as_str)),
            None => RegionText::of(std::iter::empty()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(rows: &[&str], title: &str) -> ScreenView {
        ScreenView {
            rows: rows.iter().map(|r| r.to_string()).collect(),
            title: title.into(),
        }
    }

    #[test]
    fn each_region_cuts_its_rows() {
        let s = screen(
            &[
                "top",
                "",
                "────────────",
                "❯ hi",
                "",
                "──────────",
                "  ? for shortcuts",
                "",
            ],
            "✳ Claude Code",
        );
        let cases: &[(Region, &str)] = &[
            (
                Region::Screen,
                "top\n────────────\n❯ hi\n──────────\n  ? for shortcuts",
            ),
            (Region::Title, "✳ Claude Code"),
            (Region::LastLines(1), "  ? for shortcuts"),
            (Region::LastLines(2), "──────────\n  ? for shortcuts"),
            (
                Region::LastLines(99),
                "top\n────────────\n❯ hi\n──────────\n  ? for shortcuts",
            ),
            (Region::AfterRule, "  ? for shortcuts"),
        ];
        for (region, want) in cases {
            assert_eq!(region_text(*region, &s).text, *want, "{region:?}");
        }
        // No rule on the screen: an empty region.
        assert_eq!(
            region_text(Region::AfterRule, &screen(&["a", "b"], "")).text,
            ""
        );
        // A rule on the last row: nothing below it.
        assert_eq!(
            region_text(Region::AfterRule, &screen(&["a", "══════════"], "")).text,
            ""
        );
        // An empty title is an empty region.
        assert_eq!(region_text(Region::Title, &screen(&["a"], "")).text, "");
    }

    #[test]
    fn rules_are_long_runs_of_rule_characters_only() {
        let cases: &[(&str, bool)] = &[
            ("────────", true),
            ("  ━━━━━━━━━━  ", true),
            ("--------", true),
            ("════════════", true),
            ("-─-─-─-─", true),
            ("───────", false),
            ("---", false),
            ("──── Tips ────", false),
            ("╭────────╮", false),
            ("", false),
        ];
        for (row, want) in cases {
            assert_eq!(is_rule(row), *want, "{row:?}");
        }
    }

    #[test]
    fn a_match_maps_back_to_the_rows_it_touches() {
        let r = region_text(Region::Screen, &screen(&["one", "", "two", "three"], ""));
        assert_eq!(r.text, "one\ntwo\nthree");
        let at = |s: &str| {
            let i = r.text.find(s).unwrap();
            i..i + s.len()
        };
        assert_eq!(r.lines(&at("ne")), vec!["one"]);
        assert_eq!(r.lines(&at("e\ntw")), vec!["one", "two"]);
        assert_eq!(r.lines(&at("three")), vec!["three"]);
        assert_eq!(r.lines(&(4..4)), vec!["two"]);
    }
}

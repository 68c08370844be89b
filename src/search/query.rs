//! The words searched for, how they are found in a message, and the
//! snippet a result shows. Pure: text in, counts and strings out.
//!
//! A query is words separated by spaces; `"two words"` in double quotes is
//! one term. Matching ignores case (Unicode lower case) and finds a term
//! anywhere in a word (`pars` finds `parser`), as `grep -i` would.

/// The terms of a query, lower-cased, each once, in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Terms {
    terms: Vec<String>,
}

/// The most terms a query may have: each is looked for in every file.
pub const MAX_TERMS: usize = 16;

impl Terms {
    /// The terms of `query`, or what is wrong with it.
    pub fn parse(query: &str) -> Result<Terms, String> {
        let mut terms: Vec<String> = Vec::new();
        for (i, part) in query.split('"').enumerate() {
            let quoted = i % 2 == 1;
            let words: Vec<&str> = match quoted {
                true => vec![part.trim()],
                false => part.split_whitespace().collect(),
            };
            for w in words {
                let w = w.split_whitespace().collect::<Vec<_>>().join(" ");
                let w = w.to_lowercase();
                if !w.is_empty() && !terms.contains(&w) {
                    terms.push(w);
                }
            }
        }
        if terms.is_empty() {
            return Err("nothing to search for: give one or more words, e.g. \
                        `nerdr search flaky test` (or `\"an exact phrase\"`)"
                .into());
        }
        if terms.len() > MAX_TERMS {
            return Err(format!(
                "{} words to search for; at most {MAX_TERMS}: leave out the common ones",
                terms.len()
            ));
        }
        Ok(Terms { terms })
    }

    pub fn all(&self) -> &[String] {
        &self.terms
    }

    pub fn count(&self) -> usize {
        self.terms.len()
    }

    /// How often each term occurs in `text`, in the terms' order.
    pub fn counts(&self, text: &str) -> Vec<usize> {
        let lower = text.to_lowercase();
        self.terms
            .iter()
            .map(|t| lower.matches(t.as_str()).count())
            .collect()
    }

    /// The terms whose bytes can be looked for in a raw log line, ASCII
    /// letters folded: those JSON writes as they are (no `"`, `\` or
    /// control characters, which it escapes) and whose case ASCII folding
    /// covers. `None` when some term is not such: every line must then be
    /// read as JSON.
    pub fn raw_needles(&self) -> Option<Vec<Vec<u8>>> {
        let plain = |t: &str| {
            t.chars()
                .all(|c| c.is_ascii() && !c.is_ascii_control() && c != '"' && c != '\\')
        };
        self.terms
            .iter()
            .map(|t| plain(t).then(|| t.as_bytes().to_vec()))
            .collect()
    }
}

/// The most characters a snippet shows.
pub const SNIPPET: usize = 160;

/// `text` as one line around its first match of any term: runs of white
/// space made one space, cut to about [`SNIPPET`] characters with `…`
/// where it was cut, control and invisible characters made visible
/// (`crate::printable`). A text with no match shows its start.
pub fn snippet(text: &str, terms: &Terms) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let chars: Vec<char> = flat.chars().collect();
    let at = match flat.is_ascii() {
        // Bytes are chars: the first match of any term, ASCII folded
        // (a term with other letters cannot match ASCII text).
        true => {
            let low = flat.to_ascii_lowercase();
            terms
                .all()
                .iter()
                .filter_map(|t| low.find(t.as_str()))
                .min()
        }
        false => first_match(&chars, terms),
    };
    let at = at.unwrap_or(0);
    // A third of the room before the match, the rest after it.
    let start = match chars.len() <= SNIPPET {
        true => 0,
        false => at.saturating_sub(SNIPPET / 3).min(chars.len() - SNIPPET),
    };
    let end = (start + SNIPPET).min(chars.len());
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.extend(&chars[start..end]);
    if end < chars.len() {
        out.push('…');
    }
    crate::printable::printable(&out)
}

/// The first char index of `chars` where some term starts, matched char
/// by char against their lower case (a char may lower to several).
fn first_match(chars: &[char], terms: &Terms) -> Option<usize> {
    let lower: Vec<String> = chars.iter().map(|c| c.to_lowercase().collect()).collect();
    (0..chars.len()).find(|&i| {
        terms.all().iter().any(|t| {
            let mut rest = t.as_str();
            for l in &lower[i..] {
                match rest.strip_prefix(l.as_str()) {
                    Some(r) => rest = r,
                    None => return rest.is_empty(),
                }
                if rest.is_empty() {
                    return true;
                }
            }
            rest.is_empty()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_is_words_and_quoted_phrases_lower_cased_each_once() {
        #[rustfmt::skip]
        let rows: &[(&str, &[&str])] = &[
            ("flaky test", &["flaky", "test"]),
            ("  Flaky   TEST flaky ", &["flaky", "test"]),
            ("\"race  condition\" lock", &["race condition", "lock"]),
            ("lock \"unclosed quote", &["lock", "unclosed quote"]),
            ("Ünïcode ÉTÉ", &["ünïcode", "été"]),
        ];
        for (query, want) in rows {
            let got = Terms::parse(query).unwrap();
            assert_eq!(got.all(), *want, "{query:?}");
        }
        for empty in ["", "   ", "\"\"", "\" \""] {
            let e = Terms::parse(empty).unwrap_err();
            assert!(e.contains("nothing to search for"), "{empty:?}: {e}");
        }
        let many = (0..=MAX_TERMS).map(|i| format!("w{i}")).collect::<Vec<_>>();
        let e = Terms::parse(&many.join(" ")).unwrap_err();
        assert!(e.contains("at most 16"), "{e}");
    }

    #[test]
    fn terms_are_counted_in_any_case_and_inside_words() {
        let t = Terms::parse("parser LOCK").unwrap();
        assert_eq!(t.counts("The Parser's lock, the parsers' locks"), [2, 2]);
        assert_eq!(t.counts("nothing here"), [0, 0]);
        let t = Terms::parse("\"flaky test\"").unwrap();
        assert_eq!(t.counts("a Flaky Test and a flaky  test"), [1]);
    }

    #[test]
    fn only_terms_json_writes_as_they_are_are_looked_for_in_raw_lines() {
        #[rustfmt::skip]
        let rows: &[(&str, bool)] = &[
            ("parser lock", true),
            ("\"two words\"", true),
            ("bell\u{7}", false),
            ("back\\slash", false),
            ("café", false),
        ];
        for (query, raw) in rows {
            let t = Terms::parse(query).unwrap();
            assert_eq!(t.raw_needles().is_some(), *raw, "{query:?}");
        }
    }

    #[test]
    fn a_snippet_is_one_line_around_the_first_match_and_printable() {
        let t = Terms::parse("needle").unwrap();
        assert_eq!(snippet("a\n\n NEEDLE  here", &t), "a NEEDLE here");
        let long = format!("{} needle {}", "x".repeat(300), "y".repeat(300));
        let s = snippet(&long, &t);
        assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
        assert!(s.contains("needle"), "{s}");
        assert_eq!(s.chars().count(), SNIPPET + 2, "{s}");
        // Near the start: no cut before it.
        let s = snippet(&format!("needle {}", "z".repeat(400)), &t);
        assert!(s.starts_with("needle") && s.ends_with('…'), "{s}");
        // Near the end: the last SNIPPET characters.
        let s = snippet(&format!("{} needle", "z".repeat(400)), &t);
        assert!(s.starts_with('…') && s.ends_with("needle"), "{s}");
        // Control and invisible characters are shown, never passed on.
        let s = snippet("needle \x1b[31mred\u{202e}", &t);
        assert!(!s.contains('\x1b') && !s.contains('\u{202e}'), "{s:?}");
        assert!(s.contains("\\u{1b}[31mred\\u{202e}"), "{s:?}");
        // A lower-casing that changes length still finds the match.
        let t = Terms::parse("i̇stanbul").unwrap();
        let s = snippet(&format!("{} İstanbul", "w".repeat(300)), &t);
        assert!(s.ends_with("İstanbul"), "{s}");
        // No match (a phrase across a cut line): the start.
        let t = Terms::parse("absent").unwrap();
        assert_eq!(snippet("short text", &t), "short text");
    }
}

//! "Did you mean": the word a person most likely meant when they mistyped
//! one (`shh` for the agent `sh`, `bash1` for the tab `bash-1`). Pure.

/// The candidate closest to `word`, if one is close enough to be what was
/// meant and no other is as close: one edit away (a swap of two
/// neighbours is one), two for a word of 5 characters or more, never as
/// many as the word has, so a short word does not "mean" any other short
/// word (`amp` is not `agy`).
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let len = word.chars().count();
    let most = match len {
        0 | 1 => 0,
        2..=4 => 1,
        _ => 2,
    };
    let mut best: Option<(usize, &str)> = None;
    let mut tied = false;
    for c in candidates {
        let d = strsim::damerau_levenshtein(word, c);
        if d == 0 || d > most {
            continue;
        }
        match best {
            Some((b, other)) if d == b && other != c => tied = true,
            Some((b, _)) if d >= b => {}
            _ => {
                best = Some((d, c));
                tied = false;
            }
        }
    }
    best.filter(|_| !tied).map(|(_, c)| c)
}

/// `closest` as words to put after the word an error names:
/// ` (did you mean `sh`?)`, or nothing.
pub fn hint<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, candidates)
        .map(|c| format!(" (did you mean `{c}`?)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closest_word_if_close_and_alone() {
        let agents = ["claude", "codex", "opencode", "sh", "bash", "agy"];
        let tabs = ["bash-1", "bash-2", "review-bash-1-0ea3"];
        #[rustfmt::skip]
        let rows: &[(&str, &[&str], Option<&str>)] = &[
            ("shh", &agents, Some("sh")),
            ("cluade", &agents, Some("claude")),
            ("codx", &agents, Some("codex")),
            ("opncode", &agents, Some("opencode")),
            // An exact word is no typo.
            ("sh", &agents, None),
            // Too far from anything.
            ("emacs", &agents, None),
            // A short word is not near every other short word.
            ("x", &agents, None),
            ("zz", &agents, None),
            ("amp", &agents, None),
            ("clde", &agents, None),
            ("cld", &agents, None),
            ("bash1", &tabs, Some("bash-1")),
            ("bsh-2", &tabs, Some("bash-2")),
            // As close to two: no guess.
            ("bash-3", &tabs, None),
            ("", &tabs, None),
            ("anything", &[], None),
        ];
        for (word, candidates, want) in rows {
            assert_eq!(closest(word, candidates.iter().copied()), *want, "{word:?}");
        }
    }

    #[test]
    fn a_hint_reads_as_a_clause() {
        assert_eq!(hint("shh", ["sh", "bash"]), " (did you mean `sh`?)");
        assert_eq!(hint("emacs", ["sh"]), "");
    }
}

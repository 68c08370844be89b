//! "Did you mean": the word a person most likely meant when they mistyped
//! one (`shh` for the agent `sh`, `bash1` for the tab `bash-1`). Pure.

/// The candidates closest to `word`, if they are close enough to be what
/// was meant: one edit away (a swap of two neighbours is one), two for a
/// word of 5 characters or more, never as many as the word has, so a short
/// word does not "mean" any other short word (`amp` is not `agy`). Several
/// equally close ones are all returned (`bash` for `bash-1` and `bash-2`),
/// at most [`MOST_TIED`], in the order given; more than that is no guess.
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let len = word.chars().count();
    let most = match len {
        0 | 1 => 0,
        2..=4 => 1,
        _ => 2,
    };
    let mut best: Option<usize> = None;
    let mut found: Vec<&str> = Vec::new();
    for c in candidates {
        let d = strsim::damerau_levenshtein(word, c);
        if d == 0 || d > most || best.is_some_and(|b| d > b) {
            continue;
        }
        if best != Some(d) {
            best = Some(d);
            found.clear();
        }
        if !found.contains(&c) {
            found.push(c);
        }
    }
    if found.len() > MOST_TIED {
        found.clear();
    }
    found
}

/// How many equally close words a guess names before it is no guess.
pub const MOST_TIED: usize = 3;

/// Words quoted and joined for a question: `` `a` ``, `` `a` or `b` ``,
/// `` `a`, `b` or `c` ``; `None` for no words.
pub fn either(words: &[&str]) -> Option<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("`{w}`")).collect();
    match quoted.split_last() {
        None => None,
        Some((last, [])) => Some(last.clone()),
        Some((last, rest)) => Some(format!("{} or {last}", rest.join(", "))),
    }
}

/// `nearest` as words to put after the word an error names:
/// ` (did you mean `sh`?)`, or nothing.
pub fn hint<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    either(&nearest(word, candidates))
        .map(|c| format!(" (did you mean {c}?)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one candidate `nearest` finds, if it finds exactly one.
    fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
        match nearest(word, candidates).as_slice() {
            [one] => Some(one),
            _ => None,
        }
    }

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
            // As close to two: no single guess.
            ("bash-3", &tabs, None),
            ("", &tabs, None),
            ("anything", &[], None),
        ];
        for (word, candidates, want) in rows {
            assert_eq!(closest(word, candidates.iter().copied()), *want, "{word:?}");
        }
    }

    #[test]
    fn equally_close_words_are_all_offered_up_to_a_few() {
        let tabs = ["bash-1", "bash-2", "bash-2", "review-bash-1-0ea3"];
        let many = ["bash-1", "bash-2", "bash-3", "bash-4"];
        #[rustfmt::skip]
        let rows: &[(&str, &[&str], &[&str])] = &[
            ("bash-3", &tabs, &["bash-1", "bash-2"]),
            ("bash-", &tabs, &["bash-1", "bash-2"]),
            ("bash1", &tabs, &["bash-1"]),
            // A closer word wins over earlier, farther ones.
            ("bash-22", &["bash-1", "bash-2"], &["bash-2"]),
            // Too many to be a guess.
            ("bash-5", &many, &[]),
            ("emacs", &tabs, &[]),
        ];
        for (word, candidates, want) in rows {
            assert_eq!(nearest(word, candidates.iter().copied()), *want, "{word:?}");
        }
    }

    #[test]
    fn a_hint_reads_as_a_clause() {
        assert_eq!(hint("shh", ["sh", "bash"]), " (did you mean `sh`?)");
        assert_eq!(
            hint("bash-3", ["bash-1", "bash-2"]),
            " (did you mean `bash-1` or `bash-2`?)"
        );
        assert_eq!(hint("emacs", ["sh"]), "");
        assert_eq!(either(&["a", "b", "c"]).unwrap(), "`a`, `b` or `c`");
        assert_eq!(either(&[]), None);
    }
}

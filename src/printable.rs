//! Text nerdr did not write (a repository's paths and lines, an agent's
//! tab name, a reviewer's review) made safe to show a person or to type
//! into another agent: one function, [`printable`], used wherever such
//! text leaves nerdr, so there is one list of what must not pass as it
//! is. A leaf module: the wire (`protocol`), the reviews (`review`) and
//! the window all use it without depending on each other.

/// Characters a terminal shows as nothing, or that reorder what is shown:
/// bidirectional marks and overrides, zero-width and other format
/// characters, line and paragraph separators, variation selectors, Unicode
/// tag characters (which can carry invisible instructions to a model), and
/// private-use characters.
fn hidden(c: char) -> bool {
    matches!(c,
        '\u{00ad}' | '\u{034f}' | '\u{061c}' | '\u{115f}' | '\u{1160}' | '\u{17b4}'
        | '\u{17b5}' | '\u{180b}'..='\u{180f}' | '\u{200b}'..='\u{200f}'
        | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{206f}' | '\u{3164}'
        | '\u{fe00}'..='\u{fe0f}' | '\u{feff}' | '\u{ffa0}' | '\u{fff0}'..='\u{fffb}'
        | '\u{e000}'..='\u{f8ff}' | '\u{e0000}'..='\u{e0fff}'
        | '\u{f0000}'..='\u{10ffff}')
}

/// Text from elsewhere (a repository, an agent) made safe to show on a
/// person's terminal: control characters and the characters [`hidden`]
/// lists become visible escapes.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || hidden(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn control_and_bidi_characters_become_visible() {
        for (raw, shown) in [
            ("npm ci", "npm ci"),
            ("a\rb", "a\\rb"),
            ("x\u{1b}[2Ky", "x\\u{1b}[2Ky"),
            ("tab\there", "tab\\there"),
            ("\u{9b}31m", "\\u{9b}31m"),
            ("ab\u{202e}cd", "ab\\u{202e}cd"),
            ("zero\u{200b}width", "zero\\u{200b}width"),
            ("tag\u{e0041}\u{e0042}", "tag\\u{e0041}\\u{e0042}"),
            ("line\u{2028}sep", "line\\u{2028}sep"),
            ("bom\u{feff}", "bom\\u{feff}"),
            ("pua\u{e000}", "pua\\u{e000}"),
            ("caf\u{e9} \u{1f600}", "caf\u{e9} \u{1f600}"),
        ] {
            assert_eq!(printable(raw), shown, "{raw:?}");
        }
    }

    /// Every character of each class a review's text could hide behind:
    /// each comes out as its escape, and the escape passes as it is.
    #[test]
    fn every_character_of_each_hidden_class_is_escaped() {
        let classes: &[(&str, &[std::ops::RangeInclusive<u32>])] = &[
            ("bidi embeddings and overrides", &[0x202a..=0x202e]),
            ("bidi isolates", &[0x2066..=0x2069]),
            ("zero-width and direction marks", &[0x200b..=0x200f]),
            ("line and paragraph separators", &[0x2028..=0x2029]),
            ("byte order mark", &[0xfeff..=0xfeff]),
            ("C0 controls, escape, newline and tab", &[0x00..=0x1f]),
            ("delete and C1 controls", &[0x7f..=0x9f]),
        ];
        for (class, ranges) in classes {
            for c in ranges.iter().cloned().flatten() {
                let c = char::from_u32(c).unwrap();
                let shown = printable(&format!("a{c}b"));
                assert_eq!(
                    shown,
                    format!("a{}b", c.escape_default()),
                    "{class}: U+{:04X}",
                    c as u32
                );
                assert!(
                    shown.chars().all(|c| c.is_ascii_graphic()),
                    "{class}: {shown}"
                );
                assert_eq!(printable(&shown), shown, "{class}: escaped once only");
            }
        }
    }
}

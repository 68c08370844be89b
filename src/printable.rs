//! Text nerdr did not write (a repository's paths and lines, an agent's
//! tab name, a reviewer's review) made safe to show a person
//! ([`printable`]) or to type into another agent ([`typeable`]), used
//! wherever such text leaves nerdr, so there is one list of what must not
//! pass as it is. A leaf module: the wire (`protocol`), the reviews
//! (`review`) and the window all use it without depending on each other.
//!
//! [`typeable`] finds escape sequences with the `vte` crate's parser (the
//! one `alacritty_terminal`, nerdr's screen model, is built on), so a
//! sequence is dropped whole exactly as a terminal would take it whole:
//! dropping only the ESC byte would leave its tail (`[201~`, an OSC's
//! text) to be typed.

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

/// `value` as pretty JSON safe to print on a person's terminal: serde
/// escapes C0 controls but passes C1 controls (a terminal may take U+009B
/// as CSI) and the characters [`hidden`] lists (a bidi override reorders
/// what a reader sees) raw; they are written as `\uXXXX` escapes, which
/// any JSON reader decodes to the same text. Only strings hold non-ASCII
/// characters, so escaping them in the output keeps it valid JSON.
pub fn json<T: serde::Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    serde_json::to_string_pretty(value).map(|t| json_text(&t))
}

/// JSON text already written (one line of `--json` lines) escaped as
/// [`json`] does.
pub fn json_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if (c.is_control() && !c.is_ascii()) || hidden(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Text from one agent made safe to type into another agent's terminal
/// (a spinoff's task and result, a handoff): every escape sequence (CSI,
/// OSC, DCS and the rest, the end of a bracketed paste among them) is
/// dropped whole, and so is every other control character (C0 such as
/// ^C, ^D, ^U, ^Z and a lone carriage return, DEL, C1) and every
/// character [`hidden`] lists; newlines and tabs stay. What is left is
/// text the receiving program can only take as text.
pub fn typeable(text: &str) -> String {
    struct Kept(String);
    impl vte::Perform for Kept {
        fn print(&mut self, c: char) {
            if !c.is_control() && !hidden(c) {
                self.0.push(c);
            }
        }
        fn execute(&mut self, byte: u8) {
            if matches!(byte, b'\n' | b'\t') {
                self.0.push(byte as char);
            }
        }
    }
    let mut kept = Kept(String::with_capacity(text.len()));
    vte::Parser::new().advance(&mut kept, text.as_bytes());
    kept.0
}

#[cfg(test)]
mod tests {
    use super::{json, printable, typeable};

    #[test]
    fn json_escapes_c1_and_hidden_characters_and_reads_back_the_same() {
        for (raw, shown) in [
            ("plain caf\u{e9}", "plain caf\u{e9}"),
            ("csi \u{9b}31m", "csi \\u009b31m"),
            ("rlo \u{202e}txt.exe", "rlo \\u202etxt.exe"),
            ("tag \u{e0041}", "tag \\udb40\\udc41"),
            ("c0 \u{1b}[2J", "c0 \\u001b[2J"),
        ] {
            let out = json(&serde_json::json!({ "t": raw })).unwrap();
            assert!(out.contains(shown), "{raw:?}: {out}");
            assert!(
                out.chars().all(|c| c.is_ascii() || !c.is_control()),
                "{out}"
            );
            let back: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(back["t"], raw, "{out}");
        }
    }

    #[test]
    fn typeable_drops_whole_sequences_and_controls_keeping_newline_and_tab() {
        for (raw, typed) in [
            ("npm ci", "npm ci"),
            ("two\nlines\tand a tab", "two\nlines\tand a tab"),
            ("caf\u{e9} \u{1f600}", "caf\u{e9} \u{1f600}"),
            // The end of a bracketed paste, then keys.
            ("a\u{1b}[201~rm -rf x\r", "arm -rf x"),
            ("a\u{1b}[200~b", "ab"),
            // Cursor moves, erasing, colours, a private mode.
            ("x\u{1b}[2K\u{1b}[1;1Hy", "xy"),
            ("\u{1b}[31mred\u{1b}[0m", "red"),
            ("\u{1b}[?2004lz", "z"),
            // OSC (a title, a clipboard write), ended by BEL or ST.
            ("a\u{1b}]0;title\u{7}b", "ab"),
            ("a\u{1b}]52;c;cm0gLXJm\u{1b}\\b", "ab"),
            // DCS, and a two-byte escape (meta keys, keypad modes).
            ("a\u{1b}P1$tq\u{1b}\\b", "ab"),
            ("a\u{1b}#b", "a"),
            ("a\u{1b}=b", "ab"),
            // A sequence cut off at the end.
            ("tail\u{1b}[12", "tail"),
            ("lone\u{1b}", "lone"),
            // C0: ^C ^D ^U ^Z, a lone carriage return, backspace, bell.
            ("a\u{3}b\u{4}c\u{15}d\u{1a}e", "abcde"),
            ("echo hi\rrm", "echo hirm"),
            ("a\u{8}\u{7}b\u{0}", "ab"),
            // DEL, C1 (CSI as one character, NEL).
            ("a\u{7f}b", "ab"),
            ("\u{9b}31mx\u{85}y", "31mxy"),
            // What a terminal shows as nothing.
            ("ab\u{202e}cd\u{200b}e\u{e0041}", "abcde"),
        ] {
            assert_eq!(typeable(raw), typed, "{raw:?}");
        }
    }

    /// No control character of any class passes, alone or around text.
    #[test]
    fn typeable_lets_no_control_character_through() {
        for c in (0u32..=0x9f).filter_map(char::from_u32) {
            let typed = typeable(&format!("a{c}b"));
            let kept = matches!(c, '\n' | '\t');
            assert!(
                typed.chars().all(|t| !t.is_control() || (kept && t == c)),
                "U+{:04X}: {typed:?}",
                c as u32
            );
            assert!(typed.starts_with('a'), "U+{:04X}: {typed:?}", c as u32);
        }
    }

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

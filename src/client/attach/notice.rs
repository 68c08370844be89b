//! Telling the person's terminal that a tab needs them: the escape
//! sequence of a desktop notification, chosen for the terminal the window
//! runs in, and wrapped for tmux when the window runs inside tmux. Pure:
//! the window reads the environment once and hands the facts in.
//!
//! Terminals disagree on the sequence; writing every kind would show two
//! notifications in a terminal that reads two of them, so one is chosen by
//! the terminal's name:
//!
//! | sequence | read by |
//! |---|---|
//! | OSC 777 `ESC ] 777 ; notify ; title ; body BEL` | Ghostty, WezTerm, foot, rxvt-unicode (its notify extension), VTE terminals with Fedora's notification patch (GNOME Terminal, Ptyxis, Tilix on Fedora) |
//! | OSC 99 `ESC ] 99 ; ; text ESC \` | kitty |
//! | OSC 9 `ESC ] 9 ; text BEL` (anything else) | iTerm2, and terminals that copied it; others ignore it |
//!
//! Inside tmux (`TMUX` set) the sequence is sent through tmux's
//! passthrough, `ESC P tmux; ... ESC \` with each ESC doubled, which tmux
//! forwards to the outer terminal only with `allow-passthrough on`.
//!
//! The text comes from the core and names the agent, which a config file
//! names: control characters go (a BEL or ST would end the sequence early
//! and the rest would be typed on the person's screen), and so does `;`
//! in OSC 777, whose fields it separates.

/// A desktop-notification escape sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Osc {
    Nine,
    SevenSevenSeven,
    NinetyNine,
}

/// What the window knows of the terminal it draws on, from its
/// environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Terminal {
    /// Every name the environment gives the terminal, lower case:
    /// `TERM`, `TERM_PROGRAM`, `LC_TERMINAL`, and the terminals whose own
    /// variable is set (`KITTY_WINDOW_ID` gives "kitty", ...).
    pub names: String,
    /// `TMUX` is set: the window runs inside tmux.
    pub tmux: bool,
}

/// Variables a terminal sets in its programs' environment, by terminal.
/// They survive in a tmux server started from that terminal, where
/// `TERM` and `TERM_PROGRAM` name tmux.
const OWN_VARS: &[(&str, &str)] = &[
    ("KITTY_WINDOW_ID", "kitty"),
    ("WEZTERM_PANE", "wezterm"),
    ("GHOSTTY_RESOURCES_DIR", "ghostty"),
    ("VTE_VERSION", "vte"),
    ("ITERM_SESSION_ID", "iterm"),
];

impl Terminal {
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Self {
        let mut names: Vec<String> = ["TERM", "TERM_PROGRAM", "LC_TERMINAL"]
            .iter()
            .filter_map(|k| var(k))
            .collect();
        for (k, name) in OWN_VARS {
            if var(k).is_some_and(|v| !v.is_empty()) {
                names.push(name.to_string());
            }
        }
        Terminal {
            names: names.join(" ").to_lowercase(),
            tmux: var("TMUX").is_some_and(|v| !v.is_empty()),
        }
    }

    pub fn osc(&self) -> Osc {
        const WITH_777: &[&str] = &["ghostty", "wezterm", "foot", "rxvt", "vte"];
        if self.names.contains("kitty") {
            Osc::NinetyNine
        } else if WITH_777.iter().any(|t| self.names.contains(t)) {
            Osc::SevenSevenSeven
        } else {
            Osc::Nine
        }
    }

    /// The bytes that ask the terminal to show `text` as a notification.
    pub fn notification(&self, text: &str) -> Vec<u8> {
        let seq = sequence(self.osc(), "nerdr", text);
        if self.tmux {
            tmux_wrap(&seq).into_bytes()
        } else {
            seq.into_bytes()
        }
    }
}

/// Longest text sent, in characters: a notification is a line, and the
/// text is the core's, but a long agent name should not make a screenful.
const MAX_TEXT: usize = 200;

fn clean(text: &str, drop: &[char]) -> String {
    text.chars()
        .filter(|c| !c.is_control())
        .map(|c| if drop.contains(&c) { ',' } else { c })
        .take(MAX_TEXT)
        .collect()
}

pub fn sequence(osc: Osc, title: &str, body: &str) -> String {
    match osc {
        Osc::SevenSevenSeven => format!(
            "\x1b]777;notify;{};{}\x07",
            clean(title, &[';']),
            clean(body, &[';'])
        ),
        // One line with the title in front. For OSC 9 this also keeps the
        // text from starting with digits and `;`, which ConEmu and Windows
        // Terminal read as a command of theirs (`9;4;` is progress).
        Osc::Nine => format!("\x1b]9;{}: {}\x07", clean(title, &[]), clean(body, &[])),
        Osc::NinetyNine => format!("\x1b]99;;{}: {}\x1b\\", clean(title, &[]), clean(body, &[])),
    }
}

/// `seq` through tmux's passthrough: a DCS for tmux, each ESC inside
/// doubled.
pub fn tmux_wrap(seq: &str) -> String {
    format!("\x1bPtmux;{}\x1b\\", seq.replace('\x1b', "\x1b\x1b"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terminal(vars: &[(&str, &str)]) -> Terminal {
        Terminal::from_env(|k| {
            vars.iter()
                .find(|(name, _)| *name == k)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn the_sequence_follows_the_terminal() {
        #[rustfmt::skip]
        let rows: &[(&[(&str, &str)], Osc)] = &[
            (&[("TERM", "xterm-256color")], Osc::Nine),
            (&[("TERM", "xterm-256color"), ("TERM_PROGRAM", "iTerm.app")], Osc::Nine),
            (&[("TERM", "xterm-ghostty"), ("TERM_PROGRAM", "ghostty")], Osc::SevenSevenSeven),
            (&[("TERM", "xterm-256color"), ("TERM_PROGRAM", "WezTerm")], Osc::SevenSevenSeven),
            (&[("TERM", "foot")], Osc::SevenSevenSeven),
            (&[("TERM", "rxvt-unicode-256color")], Osc::SevenSevenSeven),
            (&[("TERM", "xterm-256color"), ("VTE_VERSION", "7600")], Osc::SevenSevenSeven),
            (&[("TERM", "xterm-kitty")], Osc::NinetyNine),
            // Inside tmux, TERM and TERM_PROGRAM name tmux; the outer
            // terminal's own variable still tells it.
            (&[("TERM", "tmux-256color"), ("TERM_PROGRAM", "tmux"), ("TMUX", "/s,1,0"),
               ("KITTY_WINDOW_ID", "3")], Osc::NinetyNine),
            (&[("TERM", "screen"), ("TMUX", "/s,1,0"), ("WEZTERM_PANE", "0")], Osc::SevenSevenSeven),
            (&[("TERM", "screen"), ("TMUX", "/s,1,0")], Osc::Nine),
            (&[("VTE_VERSION", "")], Osc::Nine),
            (&[], Osc::Nine),
        ];
        for (vars, want) in rows {
            assert_eq!(terminal(vars).osc(), *want, "{vars:?}");
        }
    }

    #[test]
    fn sequences_and_the_tmux_wrapping() {
        let text = "claude in tab ab12 needs you";
        #[rustfmt::skip]
        let rows: &[(&[(&str, &str)], &str)] = &[
            (&[("TERM", "xterm")], "\x1b]9;nerdr: claude in tab ab12 needs you\x07"),
            (&[("TERM", "foot")], "\x1b]777;notify;nerdr;claude in tab ab12 needs you\x07"),
            (&[("TERM", "xterm-kitty")], "\x1b]99;;nerdr: claude in tab ab12 needs you\x1b\\"),
            (&[("TERM", "screen"), ("TMUX", "/tmp/t,1,0")],
             "\x1bPtmux;\x1b\x1b]9;nerdr: claude in tab ab12 needs you\x07\x1b\\"),
            (&[("TERM", "screen"), ("TMUX", "/tmp/t,1,0"), ("KITTY_WINDOW_ID", "1")],
             "\x1bPtmux;\x1b\x1b]99;;nerdr: claude in tab ab12 needs you\x1b\x1b\\\x1b\\"),
        ];
        for (vars, want) in rows {
            let got = terminal(vars).notification(text);
            assert_eq!(String::from_utf8(got).unwrap(), *want, "{vars:?}");
        }
    }

    #[test]
    fn the_text_cannot_end_the_sequence_early() {
        let evil = "a\x07b\x1b\\c\u{9c}d;e\r\nf";
        assert_eq!(
            sequence(Osc::SevenSevenSeven, "t;x", evil),
            "\x1b]777;notify;t,x;ab\\cd,ef\x07"
        );
        assert_eq!(sequence(Osc::Nine, "t", evil), "\x1b]9;t: ab\\cd;ef\x07");
        assert_eq!(
            sequence(Osc::NinetyNine, "t", evil),
            "\x1b]99;;t: ab\\cd;ef\x1b\\"
        );
        let long = "x".repeat(1000);
        assert_eq!(
            sequence(Osc::Nine, "t", &long).len(),
            "\x1b]9;t: \x07".len() + MAX_TEXT
        );
    }
}

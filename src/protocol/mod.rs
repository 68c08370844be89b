//! Wire formats between nerdr's processes. One module per message family,
//! encode and decode side by side:
//! - [`api`]: the requests every command sends, shared by both sockets,
//!   each tied to its reply type in [`replies`];
//! - [`frame`]: length-prefixed frames on the client socket;
//! - [`handshake`]: the client socket's versioned hello and key proof;
//! - [`hook`]: newline-delimited JSON on the hook socket;
//! - [`holder`]: core ↔ holder, versioned; [`handover`]: its frozen part,
//!   by which any build takes over from any other.
//!
//! Bump [`PROTOCOL_VERSION`] when any of these change incompatibly.

pub mod api;
pub mod frame;
pub mod handover;
pub mod handshake;
pub mod holder;
pub mod hook;
pub mod listing;
pub mod outbox;
pub mod quiet;
pub mod replies;
pub mod spinoffs;
pub mod work;

/// Version of the client-socket protocol, sent in the hello. 2: a window's
/// data frames are painted differences, not the program's output.
pub const PROTOCOL_VERSION: u32 = 2;

/// Largest frame (client and holder sockets), in bytes. A redraw of the
/// largest screen allowed ([`MAX_ROWS`] x [`MAX_COLS`], every cell coloured)
/// and a scroll-mode history of the whole output log fit; anything larger is
/// an error that closes that one connection.
pub const MAX_FRAME: usize = 32 << 20;

/// Largest hook-socket line: requests from programs are small.
pub const MAX_LINE: usize = 1 << 20;

/// Terminal sizes beyond these are clamped: a screen model's memory grows
/// with rows x columns, and no window is larger.
pub const MAX_ROWS: u16 = 500;
pub const MAX_COLS: u16 = 1000;

/// A requested terminal size, clamped to what nerdr serves.
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

pub fn clamp_size(rows: u16, cols: u16) -> (u16, u16) {
    (rows.clamp(2, MAX_ROWS), cols.clamp(2, MAX_COLS))
}

#[cfg(test)]
mod printable_tests {
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
}

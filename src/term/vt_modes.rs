//! Private modes alacritty_terminal 0.26 leaves out or does otherwise
//! than tmux and xterm:
//!
//! - 1048 saves the cursor when set and restores it when reset, as DECSC
//!   and DECRC do (xterm; vttest 11.8.7.4 checks it). The crate ignores it.
//! - DECCOLM (3), which cannot change a window's width, homes the cursor
//!   and clears the screen in the pen's background and keeps the scroll
//!   region, as tmux 3.3a does. The crate also resets the region, out of
//!   sight of the copy a snapshot needs (`mirror::State::region`).

use alacritty_terminal::term::Term;
use alacritty_terminal::vte::ansi::{ClearMode, Handler, NamedPrivateMode, PrivateMode};

use super::mirror::Events;

/// Apply `mode` set or reset when it is one of these; whether it was.
pub(super) fn private(term: &mut Term<Events>, mode: &PrivateMode, set: bool) -> bool {
    match mode {
        PrivateMode::Named(NamedPrivateMode::ColumnMode) => {
            term.goto(0, 0);
            term.clear_screen(ClearMode::All);
        }
        PrivateMode::Unknown(1048) if set => term.save_cursor_position(),
        PrivateMode::Unknown(1048) => term.restore_cursor_position(),
        _ => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::term::Screen;

    fn fed(bytes: &[u8]) -> Screen {
        let mut s = Screen::new(6, 20);
        s.process(bytes);
        s
    }

    #[test]
    fn mode_1048_saves_and_restores_the_cursor() {
        // vttest 11.8.7.4: saved by 1048 on the main screen, restored
        // there after the alternate screen saved its own.
        let s = fed(b"\x1b[2;5H\x1b[?1048h\x1b[5;9H\x1b[?1048l");
        assert_eq!(s.cursor(), (1, 4));
        let s = fed(b"\x1b[2;5H\x1b7\x1b[3;7H\x1b[?1048h\x1b[?1047h\x1b[5;7H\x1b7\x1b[?1047l\x1b8\x1b[?1048l");
        assert_eq!(s.cursor(), (2, 6));
    }

    #[test]
    fn column_mode_clears_and_homes_but_keeps_the_region() {
        // As tmux: the region stays, so a line feed at its bottom scrolls
        // only the region; origin mode homes to the region's top.
        let s = fed(b"keep\x1b[2;4r\x1b[?6h\x1b[44m\x1b[?3h");
        assert_eq!(s.cursor(), (1, 0));
        assert_eq!(s.text(None), "");
        let s = fed(b"\x1b[2;4r\x1b[?3l\x1b[4;1Hc\r\nd\x1b[6;1Hlast\x1b[5;1Hfive");
        assert_eq!(s.text(None), "\n\nc\nd\nfive\nlast");
        // The pen's background fills the cleared screen.
        let s = fed(b"\x1b[44m\x1b[?3h");
        let frame = s.frame();
        assert!(frame.cells().iter().all(|c| c.bg
            == alacritty_terminal::vte::ansi::Color::Named(
                alacritty_terminal::vte::ansi::NamedColor::Blue
            )));
    }
}

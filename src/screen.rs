//! What the holder still uses of the old screen-model helpers until it
//! stops parsing (issue 17): everything else moved into `term`, and this
//! module goes with the holder's own parser.

/// Lines of history the holder's screen model keeps: none, since scroll
/// mode replays the tab's output log instead (see `core::outlog`).
pub const SCROLLBACK: usize = 0;

/// The holder's resize of its `vt100` model: `term::Screen::resize`'s.
pub fn resize_screen(p: &mut vt100::Parser, rows: u16, cols: u16) {
    let (old_rows, _) = p.screen().size();
    let (crow, ccol) = p.screen().cursor_position();
    if rows < old_rows && crow >= rows && !p.screen().alternate_screen() {
        let shift = crow - rows + 1;
        let mut seq = format!("\x1b[r\x1b[{old_rows};1H");
        seq.push_str(&"\n".repeat(shift as usize));
        seq.push_str(&format!("\x1b[{};{}H", crow - shift + 1, ccol + 1));
        p.process(seq.as_bytes());
    }
    p.set_size(rows, cols);
}

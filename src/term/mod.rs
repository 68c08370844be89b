//! The screen model of a terminal tab: the one emulator every byte of a
//! program's output goes through, and what the rest of nerdr reads of it.
//!
//! This is the only module that knows which emulator parses the bytes.
//! The core keeps one [`Screen`] per tab; the holder keeps only bytes that
//! rebuild one ([`Screen::snapshot`] plus what came after); a window gets
//! painted differences ([`paint`]) and parses nothing.
//!
//! Interface first (issue 17): backed by `vt100` until the complete
//! emulator replaces it behind the same functions.

/// A terminal screen fed by a program's output.
pub struct Screen {
    parser: vt100::Parser,
    replies: Vec<u8>,
}

/// What a screen shows at one moment, to paint the difference from it.
#[derive(Clone)]
pub struct Frame {
    screen: vt100::Screen,
}

impl Screen {
    pub fn new(rows: u16, cols: u16) -> Self {
        Screen {
            parser: vt100::Parser::new(rows.max(1), cols.max(1), 0),
            replies: Vec::new(),
        }
    }

    /// Feed the program's output.
    pub fn process(&mut self, bytes: &[u8]) {
        self.parser.process(bytes);
    }

    /// What the program asked of its terminal since the last call (device
    /// attributes, cursor position, ...), answered: bytes to write to the
    /// program's input. Empty when it asked nothing.
    pub fn take_replies(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.replies)
    }

    /// Resize the way a terminal does: when rows go, the lines above the
    /// cursor go first, so the cursor's line and the newest output stay.
    pub fn resize(&mut self, rows: u16, cols: u16) {
        let p = &mut self.parser;
        let (rows, cols) = (rows.max(1), cols.max(1));
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

    /// (rows, cols).
    pub fn size(&self) -> (u16, u16) {
        self.parser.screen().size()
    }

    /// (row, col), from 0.
    pub fn cursor(&self) -> (u16, u16) {
        self.parser.screen().cursor_position()
    }

    pub fn alternate_screen(&self) -> bool {
        self.parser.screen().alternate_screen()
    }

    /// The title the program set (OSC 0/2).
    pub fn title(&self) -> String {
        self.parser.screen().title().to_string()
    }

    /// The visible rows as text, each with its trailing blanks cut.
    pub fn rows_text(&self) -> Vec<String> {
        let screen = self.parser.screen();
        let (_, cols) = screen.size();
        screen
            .rows(0, cols)
            .map(|r| r.trim_end().to_string())
            .collect()
    }

    /// The screen as a reader sees it: trailing blank rows cut, and only
    /// the last `lines` rows when given.
    pub fn text(&self, lines: Option<usize>) -> String {
        let mut rows = self.rows_text();
        while rows.last().is_some_and(|r| r.is_empty()) {
            rows.pop();
        }
        if let Some(n) = lines {
            let skip = rows.len().saturating_sub(n);
            rows.drain(..skip);
        }
        rows.join("\n")
    }

    /// Bytes that, fed to `Screen::new(self.size())`, give this screen back
    /// exactly: both screens when the alternate one is shown, modes, title.
    pub fn snapshot(&self) -> Vec<u8> {
        const LEAVE_ALTERNATE: &[u8] = b"\x1b[?1049l";
        const ENTER_ALTERNATE: &[u8] = b"\x1b[?1049h";
        let screen = self.parser.screen();
        if !screen.alternate_screen() {
            return screen.state_formatted();
        }
        let mut main = screen.clone();
        let mut vte = vte::Parser::new();
        for b in LEAVE_ALTERNATE {
            vte.advance(&mut main, *b);
        }
        let mut out = main.contents_formatted();
        out.extend_from_slice(ENTER_ALTERNATE);
        out.extend_from_slice(&screen.state_formatted());
        out
    }

    /// What the screen shows now, for [`paint`].
    pub fn frame(&self) -> Frame {
        Frame {
            screen: self.parser.screen().clone(),
        }
    }
}

/// Bytes that bring an outer terminal showing `before` (or anything, when
/// `None`: the tab's area is cleared and drawn whole) to `now`: cells,
/// cursor position, visibility and shape, and the input modes the program
/// set (bracketed paste, mouse, application keys). The tab's area is the
/// outer terminal's top-left `now`-sized corner.
///
/// The title and icon name the program set go out too, with every control
/// character (C0, DEL, and C1 such as U+009C ST or U+009B CSI, which
/// terminals reading UTF-8 C1 obey) taken out: they are the one text in a
/// paint that is not a cell's, and a terminal would end the OSC at such a
/// character and read the rest as a sequence of the program's choosing.
pub fn paint(now: &Frame, before: Option<&Frame>) -> Vec<u8> {
    let s = &now.screen;
    let mut out = Vec::new();
    match before {
        Some(prev) => {
            let p = &prev.screen;
            out.extend(s.contents_diff(p));
            out.extend(s.input_mode_diff(p));
            title_diff(&mut out, s, Some(p));
            out.extend(s.bells_diff(p));
        }
        None => {
            out.extend_from_slice(b"\x1b[H\x1b[2J");
            out.extend(s.contents_formatted());
            out.extend(s.input_mode_formatted());
            title_diff(&mut out, s, None);
        }
    }
    out
}

/// A title or icon name as it may go to the outer terminal.
fn clean_title(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).collect()
}

/// OSC 0/1/2 bringing the outer terminal's title and icon name from
/// `prev`'s (none set, when `None`) to `now`'s, cleaned.
fn title_diff(out: &mut Vec<u8>, now: &vt100::Screen, prev: Option<&vt100::Screen>) {
    let (icon, title) = (clean_title(now.icon_name()), clean_title(now.title()));
    let (prev_icon, prev_title) = prev
        .map(|p| (clean_title(p.icon_name()), clean_title(p.title())))
        .unwrap_or_default();
    let mut osc = |n: u8, text: &str| {
        out.extend_from_slice(format!("\x1b]{n};{text}\x07").as_bytes());
    };
    if icon == title && (icon != prev_icon || title != prev_title) {
        osc(0, &title);
    } else {
        if icon != prev_icon {
            osc(1, &icon);
        }
        if title != prev_title {
            osc(2, &title);
        }
    }
}

#[cfg(test)]
mod tests;

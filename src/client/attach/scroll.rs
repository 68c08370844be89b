//! Scroll mode: the tab's history (kept by the core, so it survives detach)
//! read page by page. As in less and vi: `/` searches forward, `?`
//! backward, `n` repeats, `N` repeats the other way; searches wrap around.

use super::keys::key_len;

#[derive(Debug)]
pub struct Scroll {
    pub lines: Vec<String>,
    /// Index of the top line shown.
    pub top: usize,
    /// Rows available for lines (the status line is separate).
    pub rows: usize,
    /// Search text being typed after `/` or `?`.
    pub typing: Option<String>,
    pub last: Option<String>,
    /// The direction of the last search: true for backward (`?`).
    pub backward: bool,
    pub note: String,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Stay,
    Leave,
}

impl Scroll {
    /// Opens at the bottom, as the screen was.
    pub fn new(lines: Vec<String>, rows: usize) -> Self {
        let top = lines.len().saturating_sub(rows);
        Scroll {
            lines,
            top,
            rows: rows.max(1),
            typing: None,
            last: None,
            backward: false,
            note: String::new(),
        }
    }

    fn max_top(&self) -> usize {
        self.lines.len().saturating_sub(self.rows)
    }

    /// Every key of `input`, in order: several keys can arrive in one
    /// read (a paste, a loaded machine), and none may be dropped.
    pub fn feed(&mut self, input: &[u8]) -> Outcome {
        let mut rest = input;
        while !rest.is_empty() {
            let n = key_len(rest);
            let (key, tail) = rest.split_at(n);
            rest = tail;
            if let Outcome::Leave = self.key(key) {
                return Outcome::Leave;
            }
        }
        Outcome::Stay
    }

    fn key(&mut self, key: &[u8]) -> Outcome {
        if let Some(t) = &mut self.typing {
            match key {
                b"\r" | b"\n" => {
                    let text = self.typing.take().unwrap_or_default();
                    if !text.is_empty() {
                        self.last = Some(text);
                    }
                    self.search(self.backward);
                }
                b"\x1b" | b"\x03" => self.typing = None,
                b"\x7f" | b"\x08" => {
                    t.pop();
                }
                [b] if *b >= 0x20 => t.push(*b as char),
                _ => {}
            }
            return Outcome::Stay;
        }
        let page = self.rows.saturating_sub(1).max(1);
        match key {
            b"q" | b"\x1b" | b"\x03" => return Outcome::Leave,
            b"\x1b[5~" | b"\x02" | b"b" => self.top = self.top.saturating_sub(page),
            b"\x1b[6~" | b"\x06" | b" " | b"f" => self.top = (self.top + page).min(self.max_top()),
            b"\x1b[A" | b"k" => self.top = self.top.saturating_sub(1),
            b"\x1b[B" | b"j" => self.top = (self.top + 1).min(self.max_top()),
            b"g" | b"\x1b[H" => self.top = 0,
            b"G" | b"\x1b[F" => self.top = self.max_top(),
            b"/" | b"?" => {
                self.backward = key == b"?";
                self.typing = Some(String::new());
            }
            b"n" => self.search(self.backward),
            b"N" => self.search(!self.backward),
            _ => {}
        }
        Outcome::Stay
    }

    /// Find the last search text after the top line (or before it, going
    /// backward), wrapping around the ends, and put that line at the top.
    fn search(&mut self, backward: bool) {
        let Some(text) = self.last.clone() else {
            return;
        };
        let n = self.lines.len();
        let order: Vec<usize> = if backward {
            (0..self.top).rev().chain((self.top..n).rev()).collect()
        } else {
            (self.top + 1..n).chain(0..(self.top + 1).min(n)).collect()
        };
        let hit = order.into_iter().find(|&i| self.lines[i].contains(&text));
        match hit {
            Some(i) => {
                self.top = i;
                self.note = format!("found `{text}` at line {}", i + 1);
            }
            None => self.note = format!("`{text}` not found"),
        }
    }

    /// The lines to show, each cut to the width.
    pub fn visible(&self, cols: usize) -> Vec<String> {
        self.lines
            .iter()
            .skip(self.top)
            .take(self.rows)
            .map(|l| l.chars().take(cols).collect())
            .collect()
    }

    pub fn status(&self) -> String {
        match &self.typing {
            Some(t) => format!("search: {t}"),
            None => format!(
                "scroll {}-{} of {} | PgUp/PgDn j/k g/G  / ? search  n/N again  q leave {}",
                (self.top + 1).min(self.lines.len()),
                (self.top + self.rows).min(self.lines.len()),
                self.lines.len(),
                self.note
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("line {i}")).collect()
    }

    #[test]
    fn paging_and_ends() {
        let mut s = Scroll::new(numbered(100), 10);
        assert_eq!(s.top, 90);
        s.feed(b"\x1b[5~");
        assert_eq!(s.top, 81);
        s.feed(b"g");
        assert_eq!(s.visible(80)[0], "line 1");
        s.feed(b"\x1b[6~");
        assert_eq!(s.top, 9);
        s.feed(b"G");
        assert_eq!(s.visible(80).last().unwrap(), "line 100");
        assert_eq!(s.feed(b"q"), Outcome::Leave);
    }

    #[test]
    fn searches_go_both_ways_and_wrap() {
        let mut s = Scroll::new(numbered(10_000), 20);
        // Forward from the bottom wraps to the first match.
        assert_eq!(s.feed(b"/"), Outcome::Stay);
        s.feed(b"line 42");
        s.feed(b"\r");
        assert_eq!(s.visible(80)[0], "line 42");
        s.feed(b"n");
        assert_eq!(s.visible(80)[0], "line 420");
        s.feed(b"N");
        assert_eq!(s.visible(80)[0], "line 42");
        // Backward wraps to the last match.
        s.feed(b"?");
        s.feed(b"line 4299\r");
        assert_eq!(s.visible(80)[0], "line 4299");
        s.feed(b"G");
        s.feed(b"?");
        s.feed(b"line 5000\r");
        assert_eq!(s.visible(80)[0], "line 5000");
        s.feed(b"/");
        s.feed(b"nope\r");
        assert!(s.note.contains("not found"));
    }

    /// Keys that arrive in one read (a loaded machine, a paste) each
    /// count: a search typed with its `/` and Enter, moves after a CSI key,
    /// then leaving.
    #[test]
    fn every_key_of_one_read_counts() {
        let mut s = Scroll::new(numbered(10_000), 20);
        assert_eq!(s.feed(b"g/line 5000\r"), Outcome::Stay);
        assert_eq!(s.visible(80)[0], "line 5000");
        s.feed(b"\x1b[Bjj\x1b[Ak");
        assert_eq!(s.visible(80)[0], "line 5001");
        assert_eq!(s.feed(b"Gq"), Outcome::Leave);
    }

    #[test]
    fn a_short_history_fits() {
        let s = Scroll::new(numbered(3), 10);
        assert_eq!(s.top, 0);
        assert_eq!(s.visible(4), vec!["line", "line", "line"]);
    }
}

//! A tab's recent output, raw and bounded: the source of scroll mode's
//! history. Turning bytes into lines costs a moment when someone scrolls,
//! instead of a screen model's ~40 bytes per cell for every line of history
//! of every tab all the time.

use std::collections::VecDeque;

/// Bytes of output kept per tab (about 50,000 lines of 80 columns).
pub const LOG_BYTES: usize = 4 << 20;

#[derive(Default, Clone)]
pub struct OutLog {
    bytes: VecDeque<u8>,
}

impl OutLog {
    pub fn push(&mut self, b: &[u8]) {
        if b.len() >= LOG_BYTES {
            self.bytes.clear();
            self.bytes.extend(&b[b.len() - LOG_BYTES..]);
            return;
        }
        let over = (self.bytes.len() + b.len()).saturating_sub(LOG_BYTES);
        self.bytes.drain(..over);
        self.bytes.extend(b);
    }

    /// Every line of the output as text, oldest first.
    pub fn lines(&self) -> Vec<String> {
        let (a, b) = self.bytes.as_slices();
        let mut bytes = Vec::with_capacity(a.len() + b.len());
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        plain_lines(&String::from_utf8_lossy(&bytes))
    }
}

/// Output as a plain terminal would leave it line by line: carriage return
/// and backspace overwrite, tabs expand, escape sequences are dropped, and
/// what a program draws on the alternate screen (a full-screen program's
/// frames) is not history, as in tmux.
pub fn plain_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line: Vec<char> = Vec::new();
    let mut col = 0usize;
    let mut alt = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => match chars.next() {
                Some('[') => {
                    let mut params = String::new();
                    for p in chars.by_ref() {
                        if ('\x40'..='\x7e').contains(&p) {
                            if p == 'h' || p == 'l' {
                                let on = p == 'h';
                                if ["?1049", "?1047", "?47"].contains(&params.as_str()) {
                                    alt = on;
                                }
                            }
                            break;
                        }
                        params.push(p);
                    }
                }
                // OSC and friends run to BEL or ST.
                Some(']') | Some('P') | Some('_') | Some('^') => {
                    while let Some(p) = chars.next() {
                        if p == '\x07' || (p == '\x1b' && chars.peek() == Some(&'\\')) {
                            if p == '\x1b' {
                                chars.next();
                            }
                            break;
                        }
                    }
                }
                _ => {}
            },
            _ if alt => {}
            '\n' => {
                lines.push(line.iter().collect::<String>().trim_end().to_string());
                line.clear();
                col = 0;
            }
            '\r' => col = 0,
            '\x08' => col = col.saturating_sub(1),
            '\t' => col = (col / 8 + 1) * 8,
            c if (c as u32) < 0x20 || c == '\x7f' => {}
            c => {
                if line.len() < col {
                    line.resize(col, ' ');
                }
                if col < line.len() {
                    line[col] = c;
                } else {
                    line.push(c);
                }
                col += 1;
            }
        }
    }
    let last: String = line.iter().collect::<String>().trim_end().to_string();
    if !last.is_empty() {
        lines.push(last);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_thousand_lines_come_back_in_order() {
        let mut log = OutLog::default();
        for i in 1..=10_000 {
            log.push(format!("line {i}\r\n").as_bytes());
        }
        let lines = log.lines();
        assert_eq!(lines.len(), 10_000, "{:?}", &lines[..5]);
        assert_eq!(lines[0], "line 1");
        assert_eq!(lines[9_999], "line 10000");
        assert!(lines
            .iter()
            .enumerate()
            .all(|(i, l)| *l == format!("line {}", i + 1)));
    }

    #[test]
    fn a_short_history_is_just_the_screen() {
        let mut log = OutLog::default();
        log.push(b"a\r\nb\r\n");
        assert_eq!(log.lines(), vec!["a", "b"]);
    }

    #[test]
    fn plain_lines_rows() {
        let rows: &[(&str, &[&str])] = &[
            ("a\r\nb", &["a", "b"]),
            ("progress 10%\rprogress 99%\r\n", &["progress 99%"]),
            ("abc\x08\x08X\n", &["aXc"]),
            ("\x1b[31mred\x1b[0m plain\n", &["red plain"]),
            ("\x1b]0;title\x07text\n", &["text"]),
            ("\x1b]8;;http://x\x1b\\link\n", &["link"]),
            (
                "before\n\x1b[?1049hFRAME\nFRAME\x1b[?1049lafter\n",
                &["before", "after"],
            ),
            ("a\tb\n", &["a       b"]),
            ("\r\n\r\n", &["", ""]),
        ];
        for (input, want) in rows {
            assert_eq!(plain_lines(input), *want, "{input:?}");
        }
    }

    #[test]
    fn the_log_keeps_the_newest_bytes() {
        let mut log = OutLog::default();
        log.push(&vec![b'x'; LOG_BYTES]);
        log.push(b"tail");
        assert_eq!(log.bytes.len(), LOG_BYTES);
        assert!(log.bytes.iter().rev().take(4).eq(b"liat".iter()));
        log.push(&vec![b'y'; LOG_BYTES + 5]);
        assert!(log.bytes.iter().all(|b| *b == b'y'));
    }
}

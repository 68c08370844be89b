//! The prefix key: every byte typed goes to the program, except the prefix
//! (Ctrl-b by default) and the key after it, which is a command. Pure: bytes
//! in, actions out, so every binding is tested without a terminal.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmd {
    NewTab,
    Next,
    Prev,
    /// Tab by its number in the status line, from 1.
    Tab(usize),
    Close,
    Terminal,
    Detach,
    Quit,
    Help,
    Approvals,
    Scroll,
    Redraw,
    /// The next tab that needs the person (see `super::marks::next_needing`).
    Attention,
    /// Name the shown tab (tmux's rename-window key).
    Rename,
    /// Start the shown tab's program again (asks first if it runs).
    Restart,
    /// Switch to another session (tmux's choose-session key).
    Sessions,
    /// The shown tab's diff (`g`, for git: tmux binds no `g`).
    Diff,
    /// Switch the shown tab to another agent (`A`, for agent: tmux binds
    /// no `A`).
    SwitchAgent,
    /// Report a spun-off tab's last answer to its parent (`P`, for
    /// parent).
    ReportFor,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Send(Vec<u8>),
    Cmd(Cmd),
}

/// The bindings, as the help screen lists them.
pub const BINDINGS: &[(&str, &str)] = &[
    ("c", "new tab (pick an agent)"),
    ("n / p", "next / previous tab"),
    ("1 .. 9, 0", "tab by number (0 is tab 10)"),
    ("x", "close this tab (asks first)"),
    (
        "R / A",
        "restart this tab (asks if it runs) / switch it to another agent",
    ),
    (",", "rename this tab"),
    (
        "s / P",
        "switch to another session / report a spinoff's last answer (?)",
    ),
    ("t", "open a terminal in this tab's folder"),
    ("g", "this tab's diff and its reviews; c comments, S sends"),
    (
        "[ or PageUp",
        "scroll mode: PageUp/PageDown, / to search, q to leave",
    ),
    (
        "a or Alt-n",
        "next tab that needs you: blocked, then done, then a bell",
    ),
    ("F3", "approval queue"),
    ("r / d", "redraw the window / detach (agents keep running)"),
    ("q", "quit: stop this session's agents (asks first)"),
    ("?", "this help"),
    ("prefix twice", "send the prefix key itself"),
];

pub struct Keys {
    prefix: u8,
    armed: bool,
}

/// Parse a `[client] prefix` value such as "C-b" into its byte.
pub fn prefix_byte(spec: &str) -> Option<u8> {
    let letter = spec.strip_prefix("C-")?;
    let mut chars = letter.chars();
    let c = chars.next()?.to_ascii_lowercase();
    (chars.next().is_none() && c.is_ascii_lowercase()).then(|| c as u8 - b'a' + 1)
}

impl Keys {
    pub fn new(prefix: u8) -> Self {
        Keys {
            prefix,
            armed: false,
        }
    }

    pub fn prefix(&self) -> u8 {
        self.prefix
    }

    /// Whether the prefix was typed and the next key is a command.
    pub fn armed(&self) -> bool {
        self.armed
    }

    pub fn set_armed(&mut self, armed: bool) {
        self.armed = armed;
    }

    /// Every action in `input`: the table tests' view of `step`.
    #[cfg(test)]
    pub fn feed(&mut self, input: &[u8]) -> Vec<Action> {
        let mut out = Vec::new();
        let mut rest = input;
        while !rest.is_empty() {
            let (actions, tail) = self.step(rest);
            out.extend(actions);
            rest = tail;
        }
        out
    }

    /// The actions of `input` up to and including its first command, and
    /// the bytes after it: a command may open an overlay, and the keys
    /// after it in the same read are the overlay's, not the program's.
    pub fn step<'a>(&mut self, input: &'a [u8]) -> (Vec<Action>, &'a [u8]) {
        let mut out = Vec::new();
        let mut plain = Vec::new();
        let mut i = 0;
        while i < input.len() {
            let b = input[i];
            if !self.armed {
                if b == self.prefix {
                    self.armed = true;
                } else {
                    plain.push(b);
                }
                i += 1;
                continue;
            }
            self.armed = false;
            if !plain.is_empty() {
                out.push(Action::Send(std::mem::take(&mut plain)));
            }
            if b == self.prefix {
                out.push(Action::Send(vec![b]));
                i += 1;
                continue;
            }
            let (cmd, used) = if b == 0x1b {
                // A special key after the prefix arrives as one sequence.
                special(&input[i..])
            } else {
                // Any other key after the prefix is ignored, as tmux does.
                (command(b), 1)
            };
            i += used;
            if let Some(c) = cmd {
                out.push(Action::Cmd(c));
                return (out, &input[i..]);
            }
        }
        if !plain.is_empty() {
            out.push(Action::Send(plain));
        }
        (out, &[])
    }
}

/// The length of the key at the start of `input`: a CSI sequence
/// (`ESC [ ... final`), an SS3 one (`ESC O x`, arrows in application
/// mode), else one byte. Overlays read a read's keys one by one with it.
pub fn key_len(input: &[u8]) -> usize {
    match input {
        [0x1b, b'[', rest @ ..] => rest
            .iter()
            .position(|b| (0x40..=0x7e).contains(b))
            .map_or(input.len(), |i| i + 3),
        [0x1b, b'O', _, ..] => 3,
        _ => 1,
    }
}

/// The command of the key at the start of `input` after the prefix (the
/// prefix itself apart), and the key's length: what `step` would do.
pub fn command_of(input: &[u8]) -> (Option<Cmd>, usize) {
    match input.first() {
        None => (None, 0),
        Some(0x1b) => special(input),
        Some(&b) => (command(b), 1),
    }
}

fn command(b: u8) -> Option<Cmd> {
    Some(match b {
        b'c' => Cmd::NewTab,
        b'n' => Cmd::Next,
        b'p' => Cmd::Prev,
        b'1'..=b'9' => Cmd::Tab((b - b'0') as usize),
        b'0' => Cmd::Tab(10),
        b'x' => Cmd::Close,
        b't' => Cmd::Terminal,
        b'd' => Cmd::Detach,
        b'q' => Cmd::Quit,
        b'?' => Cmd::Help,
        b'[' => Cmd::Scroll,
        b'r' => Cmd::Redraw,
        b'a' => Cmd::Attention,
        b',' => Cmd::Rename,
        b'R' => Cmd::Restart,
        b's' => Cmd::Sessions,
        b'g' => Cmd::Diff,
        b'A' => Cmd::SwitchAgent,
        b'P' => Cmd::ReportFor,
        _ => return None,
    })
}

/// A key sequence starting with ESC: the command it names, and its length.
fn special(seq: &[u8]) -> (Option<Cmd>, usize) {
    const KNOWN: &[(&[u8], Cmd)] = &[
        (b"\x1b[5~", Cmd::Scroll),
        (b"\x1bOR", Cmd::Approvals),
        (b"\x1b[13~", Cmd::Approvals),
        // Alt-n: tmux's "next window with an alert" (`next-window -a`).
        (b"\x1bn", Cmd::Attention),
    ];
    for (k, c) in KNOWN {
        if seq.starts_with(k) {
            return (Some(*c), k.len());
        }
    }
    // Unknown: skip the whole CSI/SS3 sequence so its tail is not typed.
    let mut n = 1;
    if matches!(seq.get(1), Some(b'[') | Some(b'O')) {
        n = 2;
        while let Some(&b) = seq.get(n) {
            n += 1;
            if (0x40..=0x7e).contains(&b) {
                break;
            }
        }
    }
    (None, n.min(seq.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Action::*;

    #[test]
    fn every_binding() {
        let rows: &[(&[u8], &[Action])] = &[
            (b"ls\r", &[Send(vec![b'l', b's', b'\r'])]),
            (b"\x03", &[Send(vec![3])]),
            (b"\x02\x02", &[Send(vec![2])]),
            (b"\x02c", &[Cmd(super::Cmd::NewTab)]),
            (b"\x02n", &[Cmd(super::Cmd::Next)]),
            (b"\x02p", &[Cmd(super::Cmd::Prev)]),
            (b"\x023", &[Cmd(super::Cmd::Tab(3))]),
            (b"\x020", &[Cmd(super::Cmd::Tab(10))]),
            (b"\x02x", &[Cmd(super::Cmd::Close)]),
            (b"\x02t", &[Cmd(super::Cmd::Terminal)]),
            (b"\x02d", &[Cmd(super::Cmd::Detach)]),
            (b"\x02q", &[Cmd(super::Cmd::Quit)]),
            (b"\x02?", &[Cmd(super::Cmd::Help)]),
            (b"\x02[", &[Cmd(super::Cmd::Scroll)]),
            (b"\x02r", &[Cmd(super::Cmd::Redraw)]),
            (b"\x02\x1b[5~", &[Cmd(super::Cmd::Scroll)]),
            (b"\x02\x1bOR", &[Cmd(super::Cmd::Approvals)]),
            (b"\x02\x1b[13~", &[Cmd(super::Cmd::Approvals)]),
            (b"\x02a", &[Cmd(super::Cmd::Attention)]),
            (b"\x02\x1bn", &[Cmd(super::Cmd::Attention)]),
            (b"\x02,", &[Cmd(super::Cmd::Rename)]),
            (b"\x02R", &[Cmd(super::Cmd::Restart)]),
            (b"\x02A", &[Cmd(super::Cmd::SwitchAgent)]),
            (b"\x02s", &[Cmd(super::Cmd::Sessions)]),
            (b"\x02\x1b[A", &[]),
            (b"\x02z", &[]),
            (
                b"a\x02db",
                &[Send(vec![b'a']), Cmd(super::Cmd::Detach), Send(vec![b'b'])],
            ),
            // Bracketed paste and arrows pass through untouched.
            (
                b"\x1b[200~hi\x1b[201~",
                &[Send(b"\x1b[200~hi\x1b[201~".to_vec())],
            ),
            (b"\x1b[A", &[Send(b"\x1b[A".to_vec())]),
        ];
        for (input, want) in rows {
            let mut k = Keys::new(2);
            assert_eq!(k.feed(input), *want, "{input:?}");
        }
    }

    #[test]
    fn a_step_stops_after_the_first_command() {
        let mut k = Keys::new(2);
        let (actions, rest) = k.step(b"ab\x02xy\x02q");
        assert_eq!(actions, vec![Send(b"ab".to_vec()), Cmd(super::Cmd::Close)]);
        assert_eq!(rest, b"y\x02q");
        let (actions, rest) = k.step(b"\x02zy");
        assert_eq!(actions, vec![Send(b"y".to_vec())]);
        assert_eq!(rest, b"");
    }

    #[test]
    fn key_lengths() {
        for (input, n) in [
            (&b"\x1b[5~x"[..], 4),
            (b"\x1b[B\x1b[B", 3),
            (b"\x1bOBx", 3),
            (b"\x1b", 1),
            (b"\x1bO", 1),
            (b"\x1bx", 1),
            (b"\x1b[12", 4),
            (b"2\r", 1),
        ] {
            assert_eq!(key_len(input), n, "{input:?}");
        }
    }

    #[test]
    fn the_prefix_may_arrive_alone() {
        let mut k = Keys::new(2);
        assert_eq!(k.feed(b"\x02"), vec![]);
        assert_eq!(k.feed(b"n"), vec![Cmd(super::Cmd::Next)]);
        assert_eq!(k.feed(b"n"), vec![Send(vec![b'n'])]);
    }

    #[test]
    fn prefix_specs() {
        assert_eq!(prefix_byte("C-b"), Some(2));
        assert_eq!(prefix_byte("C-a"), Some(1));
        assert_eq!(prefix_byte("C-A"), Some(1));
        assert_eq!(prefix_byte("b"), None);
        assert_eq!(prefix_byte("C-"), None);
        assert_eq!(prefix_byte("C-bb"), None);
    }
}

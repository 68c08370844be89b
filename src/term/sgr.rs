//! Writing cells back as bytes: the least SGR between two pens, and runs
//! of cells with blanks erased rather than written. Shared by snapshots
//! (read by this emulator) and paints (read by the person's terminal).

use std::io::Write;

use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::vte::ansi::{Color, NamedColor};

use super::mirror::BLINK;

/// What SGR sets of a cell (its other flags are layout: wide, wrapped).
#[derive(Clone, PartialEq, Eq, Debug)]
pub(super) struct Pen {
    fg: Color,
    bg: Color,
    flags: Flags,
    ul: Option<Color>,
}

impl Default for Pen {
    fn default() -> Self {
        Pen::of(&Cell::default())
    }
}

/// The SGR parameter of each attribute, in the order written.
const ATTRS: [(Flags, &str); 12] = [
    (Flags::BOLD, "1"),
    (Flags::DIM, "2"),
    (Flags::ITALIC, "3"),
    (Flags::UNDERLINE, "4"),
    (Flags::DOUBLE_UNDERLINE, "4:2"),
    (Flags::UNDERCURL, "4:3"),
    (Flags::DOTTED_UNDERLINE, "4:4"),
    (Flags::DASHED_UNDERLINE, "4:5"),
    (BLINK, "5"),
    (Flags::INVERSE, "7"),
    (Flags::HIDDEN, "8"),
    (Flags::STRIKEOUT, "9"),
];

fn style_flags() -> Flags {
    ATTRS.iter().fold(Flags::empty(), |acc, (f, _)| acc | *f)
}

impl Pen {
    pub fn of(cell: &Cell) -> Pen {
        Pen {
            fg: cell.fg,
            bg: cell.bg,
            flags: cell.flags & style_flags(),
            ul: cell.underline_color(),
        }
    }
}

/// CSI parameters, joined with ';'.
struct Params<'a> {
    out: &'a mut Vec<u8>,
    any: bool,
}

impl Params<'_> {
    fn push(&mut self, p: std::fmt::Arguments<'_>) {
        self.out
            .extend_from_slice(if self.any { b";" } else { b"\x1b[" });
        self.any = true;
        let _ = self.out.write_fmt(p);
    }

    fn color(&mut self, c: Color, base: u8) {
        match c {
            Color::Named(n) => {
                let i = n as usize;
                match i {
                    0..=7 => self.push(format_args!("{}", base as usize + i)),
                    8..=15 => self.push(format_args!("{}", base as usize + 60 + i - 8)),
                    _ => self.push(format_args!("{}", base + 9)),
                }
            }
            Color::Indexed(i) => self.push(format_args!("{};5;{i}", base + 8)),
            Color::Spec(c) => self.push(format_args!("{};2;{};{};{}", base + 8, c.r, c.g, c.b)),
        }
    }

    fn underline_color(&mut self, c: Option<Color>) {
        match c {
            None => self.push(format_args!("59")),
            Some(Color::Spec(c)) => self.push(format_args!("58:2::{}:{}:{}", c.r, c.g, c.b)),
            Some(Color::Indexed(i)) => self.push(format_args!("58;5;{i}")),
            Some(Color::Named(n)) => self.push(format_args!("58;5;{}", n as usize & 0xff)),
        }
    }
}

/// The SGR that turns pen `from` into `to`: attributes only added, or a
/// reset first when one goes (one `0` is shorter than most cancels).
pub(super) fn sgr(out: &mut Vec<u8>, from: &Pen, to: &Pen) {
    if from == to {
        return;
    }
    let mut p = Params { out, any: false };
    let default = Pen::default();
    let base = if !(from.flags - to.flags).is_empty() || (from.ul.is_some() && to.ul.is_none()) {
        p.push(format_args!("0"));
        &default
    } else {
        from
    };
    let added = to.flags - base.flags;
    for (flag, code) in ATTRS {
        if added.contains(flag) {
            p.push(format_args!("{code}"));
        }
    }
    if to.fg != base.fg {
        p.color(to.fg, 30);
    }
    if to.bg != base.bg {
        p.color(to.bg, 40);
    }
    if to.ul != base.ul {
        p.underline_color(to.ul);
    }
    if p.any {
        out.push(b'm');
    }
}

/// Cursor to (row, col), from 0.
pub(super) fn cup(out: &mut Vec<u8>, row: usize, col: usize) {
    let _ = write!(out, "\x1b[{};{}H", row + 1, col + 1);
}

/// The text of a cell: its character and combining marks; nothing for the
/// right half of a wide character.
pub(super) fn put_cell(out: &mut Vec<u8>, cell: &Cell) {
    if cell.flags.contains(Flags::WIDE_CHAR_SPACER) {
        return;
    }
    let c = if cell.c == '\t' || cell.flags.contains(Flags::LEADING_WIDE_CHAR_SPACER) {
        ' '
    } else {
        cell.c
    };
    let mut buf = [0; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    for z in cell.zerowidth().unwrap_or(&[]) {
        out.extend_from_slice(z.encode_utf8(&mut buf).as_bytes());
    }
}

/// An erased cell: what ECH leaves with `bg` as the pen's background.
fn erased(cell: &Cell) -> bool {
    cell.c == ' '
        && cell.flags.is_empty()
        && cell.extra.is_none()
        && cell.fg == Color::Named(NamedColor::Foreground)
}

/// Fewest erased cells worth an ECH (and a CUF past them) over spaces.
const ECH_INSIDE: usize = 12;
const ECH_AT_END: usize = 5;

/// Write `cells` from the cursor on. Trailing cells equal to `skip` are
/// left alone (they are there already); runs of erased cells are erased.
pub(super) fn draw_run(out: &mut Vec<u8>, cells: &[Cell], pen: &mut Pen, skip: Option<&Cell>) {
    draw(out, cells, pen, skip, false)
}

/// [`draw_run`] leaving the cursor after the cells, for more to follow.
pub(super) fn draw_through(out: &mut Vec<u8>, cells: &[Cell], pen: &mut Pen) {
    draw(out, cells, pen, None, true)
}

fn draw(out: &mut Vec<u8>, cells: &[Cell], pen: &mut Pen, skip: Option<&Cell>, through: bool) {
    let mut end = cells.len();
    if let Some(blank) = skip {
        while end > 0 && &cells[end - 1] == blank {
            end -= 1;
        }
    }
    let mut i = 0;
    while i < end {
        let cell = &cells[i];
        if erased(cell) {
            let n = cells[i..end]
                .iter()
                .take_while(|c| erased(c) && c.bg == cell.bg)
                .count();
            let last = i + n == end && !through;
            if n >= if last { ECH_AT_END } else { ECH_INSIDE } {
                let to = Pen {
                    bg: cell.bg,
                    ..pen.clone()
                };
                sgr(out, pen, &to);
                *pen = to;
                let _ = write!(out, "\x1b[{n}X");
                if !last {
                    let _ = write!(out, "\x1b[{n}C");
                }
                i += n;
                continue;
            }
        }
        let to = Pen::of(cell);
        if !cell.flags.contains(Flags::WIDE_CHAR_SPACER) {
            sgr(out, pen, &to);
            *pen = to;
        }
        put_cell(out, cell);
        i += 1;
    }
}

/// A row's text, wide characters once and combining marks kept.
pub(super) fn row_text(out: &mut Vec<u8>, cells: &[Cell]) {
    for cell in cells {
        put_cell(out, cell);
    }
}

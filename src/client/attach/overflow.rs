//! Which tabs the status line has room for: when every entry does not fit,
//! a run of them around the shown tab, and a mark on each cut side saying
//! how many tabs it hides and whether any of them needs the person. Pure:
//! entry widths and needs in, the run out, so every case is a table row.
//!
//! The shown tab is always in the run: the line says where the person is.
//! A hidden tab that waits for the person must not vanish, so a mark
//! carries the strongest need of the tabs it hides (`<3!`: three tabs to
//! the left, one of them blocked) and takes that need's look. ASCII, like
//! the rest of the line, so it reads the same without colours.

use std::ops::Range;

/// What a tab asks of the person, weakest first: a mark shows the
/// strongest of the tabs it hides.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Need {
    #[default]
    Nothing,
    /// Rang its bell while the window looked elsewhere.
    Bell,
    /// Finished a turn.
    Done,
    /// Waits for an answer.
    Blocked,
}

impl Need {
    /// The status line's glyph for it (see `super::status`'s table).
    pub fn glyph(self) -> &'static str {
        match self {
            Need::Nothing => "",
            Need::Bell => "^",
            Need::Done => "+",
            Need::Blocked => "!",
        }
    }
}

/// One tab's entry as the layout sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item {
    /// Its width in columns.
    pub cols: usize,
    pub need: Need,
}

/// Which side of the run a mark stands on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Left,
    Right,
}

/// The mark for the tabs `hidden` on `side`, and the strongest need among
/// them; `None` when nothing is hidden there.
pub fn mark(side: Side, hidden: &[Item]) -> Option<(String, Need)> {
    if hidden.is_empty() {
        return None;
    }
    let need = hidden.iter().map(|i| i.need).max().unwrap_or_default();
    let arrow = match side {
        Side::Left => '<',
        Side::Right => '>',
    };
    Some((format!("{arrow}{}{}", hidden.len(), need.glyph()), need))
}

/// The columns `range` of `items` takes with its marks: entries and marks
/// separated by one space.
fn cols(items: &[Item], range: &Range<usize>) -> usize {
    let left = mark(Side::Left, &items[..range.start]);
    let right = mark(Side::Right, &items[range.end..]);
    let parts = range.len() + usize::from(left.is_some()) + usize::from(right.is_some());
    let text: usize = items[range.clone()].iter().map(|i| i.cols).sum::<usize>()
        + left.map_or(0, |(m, _)| m.len())
        + right.map_or(0, |(m, _)| m.len());
    text + parts.saturating_sub(1)
}

/// The entries shown in `room` columns: all when they fit; else the shown
/// one (the first when none is) and as many neighbours as fit with the
/// marks, taken alternately after and before it, so the shown tab sits
/// near the middle and the line moves with it. The shown tab stays even
/// when it alone does not fit (the line is cut at the window's edge).
pub fn visible(items: &[Item], shown: Option<usize>, room: usize) -> Range<usize> {
    let all = 0..items.len();
    if items.is_empty() || cols(items, &all) <= room {
        return all;
    }
    let s = shown.unwrap_or(0).min(items.len() - 1);
    let mut run = s..s + 1;
    loop {
        let mut grew = false;
        // One more after, then one more before, each from the run as it
        // stands then.
        for after in [true, false] {
            let wider = if after {
                run.start..run.end + 1
            } else {
                run.start.saturating_sub(1)..run.end
            };
            if wider != run && wider.end <= items.len() && cols(items, &wider) <= room {
                run = wider;
                grew = true;
            }
        }
        if !grew {
            return run;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Need::*;

    fn items(widths: &[usize]) -> Vec<Item> {
        widths
            .iter()
            .map(|&cols| Item {
                cols,
                need: Nothing,
            })
            .collect()
    }

    /// (widths, shown, room, the run shown)
    type RunRow<'a> = (&'a [usize], Option<usize>, usize, Range<usize>);

    #[test]
    fn the_run_keeps_the_shown_tab() {
        #[rustfmt::skip]
        let rows: &[RunRow] = &[
            // Everything fits: everything, whichever is shown.
            (&[4, 4, 4], Some(2), 14, 0..3),
            (&[], None, 10, 0..0),
            // 13 entries of 8 columns in 60: the shown one and neighbours,
            // marks `<k` and `>k` counted in.
            (&[8; 13], Some(0), 60, 0..6),
            (&[8; 13], Some(12), 60, 7..13),
            (&[8; 13], Some(6), 60, 4..10),
            (&[8; 13], None, 60, 0..6),
            // Too narrow for any neighbour: the shown one alone.
            (&[8; 13], Some(5), 10, 5..6),
            (&[8; 13], Some(5), 2, 5..6),
            // Wide entries next to narrow ones.
            (&[30, 2, 2, 2, 30], Some(2), 12, 2..4),
        ];
        for (widths, shown, room, want) in rows {
            let it = items(widths);
            let got = visible(&it, *shown, *room);
            assert_eq!(&got, want, "{widths:?} shown {shown:?} in {room}");
            assert!(shown.is_none_or(|s| got.contains(&s)) || it.is_empty());
            if got.len() > 1 {
                assert!(cols(&it, &got) <= *room, "{widths:?} {got:?}");
            }
        }
    }

    /// (the side, needs hidden on it, the mark)
    type MarkRow<'a> = (Side, &'a [Need], Option<(&'a str, Need)>);

    #[test]
    fn a_mark_counts_the_hidden_and_keeps_their_strongest_need() {
        #[rustfmt::skip]
        let rows: &[MarkRow] = &[
            (Side::Left, &[], None),
            (Side::Right, &[], None),
            (Side::Left, &[Nothing, Nothing, Nothing], Some(("<3", Nothing))),
            (Side::Right, &[Nothing; 5], Some((">5", Nothing))),
            (Side::Right, &[Nothing, Blocked, Nothing], Some((">3!", Blocked))),
            (Side::Left, &[Bell, Done], Some(("<2+", Done))),
            (Side::Left, &[Done, Blocked, Bell], Some(("<3!", Blocked))),
            (Side::Right, &[Bell; 12], Some((">12^", Bell))),
        ];
        for (side, needs, want) in rows {
            let hidden: Vec<Item> = needs.iter().map(|&need| Item { cols: 3, need }).collect();
            let got = mark(*side, &hidden);
            let want = want.map(|(m, n)| (m.to_string(), n));
            assert_eq!(got, want, "{side:?} {needs:?}");
        }
    }
}

//! One row of the diff view's page: what it is about and what it says.
//! Made by `super::diff_rows` (the patch and the person's comments) and
//! `super::review_rows` (reviews by agents).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    Title,
    Blank,
    /// The file list's entry for file `.0`.
    Entry(usize),
    /// File `.0`'s header.
    File(usize),
    /// What a file's header says besides its name: a mode change, a
    /// binary file, a rename without changes.
    FileNote(usize),
    /// Hunk `.1` of file `.0`.
    Hunk(usize, usize),
    /// Line `.2` of hunk `.1` of file `.0`.
    Code(usize, usize, usize),
    /// `\ No newline at end of file` after a line.
    NoNewline,
    /// Comment `.0` of the view's comments.
    Comment(usize),
    /// Review `.0`'s header (the view's reviews, in order).
    ReviewHead(usize),
    /// A line about review `.0` (its summary, the sandbox note); about
    /// none (`usize::MAX`): a reviewer at work, reviews not read.
    ReviewNote(usize),
    /// Comment `.1` of review `.0`.
    Remark(usize, usize),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub kind: RowKind,
    /// The line numbers before a code line (blank for other rows under a
    /// file), kept apart so a search does not match them.
    pub gutter: String,
    /// What the row says, printable; what a search looks in.
    pub text: String,
}

pub fn row(kind: RowKind, gutter: String, text: String) -> Row {
    Row { kind, gutter, text }
}

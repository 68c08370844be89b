//! What nerdr remembers of each install, in
//! `$XDG_STATE_HOME/nerdr/integrations/AGENT.json`, and how an uninstall
//! uses it. Per settings file, one layer per install that changed it: the
//! SHA-256 of the text before and after, and the inserted spans at their
//! offsets in the text after. The user's text itself is never copied here
//! (settings files hold tokens), only its hashes.
//!
//! Uninstall, in order of preference:
//! 1. the file is as install left it: delete the recorded spans at their
//!    offsets, and check the result hashes to the text before (exact);
//! 2. the user edited it elsewhere: delete each recorded span where its
//!    exact text now stands (exact as to the user's edits);
//! 3. our spans were edited too: remove nerdr's entries by what they run,
//!    and the containers nerdr created once empty (only ours go; whitespace
//!    around them may differ).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::edit::{cut_spans, unapply, Insertion};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub files: Vec<FileRecord>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileRecord {
    pub path: PathBuf,
    /// Folders install made for the file, outermost first.
    #[serde(default)]
    pub created_dirs: Vec<PathBuf>,
    pub layers: Vec<Layer>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Layer {
    /// `None`: there was no file.
    pub before_sha256: Option<String>,
    pub after_sha256: String,
    /// At offsets of the text after.
    pub inserts: Vec<Insertion>,
    /// Key paths of containers this install created.
    #[serde(default)]
    pub created: Vec<Vec<String>>,
}

pub fn sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Record {
    pub fn load(path: &Path) -> anyhow::Result<Record> {
        use anyhow::Context;
        match std::fs::read_to_string(path) {
            Ok(s) => serde_json::from_str(&s).with_context(|| {
                format!(
                    "{} is not a record nerdr can read; move it aside to forget past installs",
                    path.display()
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Record::default()),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    pub fn file(&self, path: &Path) -> Option<&FileRecord> {
        self.files.iter().find(|f| f.path == path)
    }

    pub fn file_mut(&mut self, path: &Path) -> &mut FileRecord {
        if let Some(i) = self.files.iter().position(|f| f.path == path) {
            return &mut self.files[i];
        }
        self.files.push(FileRecord {
            path: path.to_path_buf(),
            created_dirs: Vec::new(),
            layers: Vec::new(),
        });
        self.files.last_mut().expect("just pushed")
    }

    pub fn forget(&mut self, path: &Path) {
        self.files.retain(|f| f.path != path);
    }
}

/// The result of undoing the recorded layers on the current text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Undo {
    /// The text exactly as before the first install (`None`: no file).
    Exact(Option<String>),
    /// The text with the recorded spans cut where they now stand; the caller
    /// must still check that the result is sound.
    Spans(String),
    /// Neither worked: remove entries by what they run.
    Changed,
}

/// Ways 1 and 2 of the module doc.
pub fn undo(current: &str, layers: &[Layer]) -> Undo {
    if let Some(exact) = undo_exact(current, layers) {
        return Undo::Exact(exact);
    }
    let mut text = current.to_string();
    for layer in layers.iter().rev() {
        match cut_spans(&text, &layer.inserts) {
            Some(t) => text = t,
            None => return Undo::Changed,
        }
    }
    Undo::Spans(text)
}

fn undo_exact(current: &str, layers: &[Layer]) -> Option<Option<String>> {
    let mut text = current.to_string();
    let mut existed = true;
    for layer in layers.iter().rev() {
        let now = sha256(&text);
        if now == layer.after_sha256 {
            text = unapply(&text, &layer.inserts)?;
            match &layer.before_sha256 {
                Some(b) if *b == sha256(&text) => {}
                None if text.is_empty() => existed = false,
                _ => return None,
            }
        } else if layer.before_sha256.as_ref() == Some(&now) {
            // Recorded, but the file write never happened (interrupted).
            continue;
        } else {
            return None;
        }
    }
    Some(existed.then_some(text))
}

#[cfg(test)]
mod tests {
    use super::super::edit::{apply, shifted};
    use super::*;

    fn layer(before: Option<&str>, inserts: Vec<Insertion>) -> (String, Layer) {
        let after = apply(before.unwrap_or(""), &inserts);
        let l = Layer {
            before_sha256: before.map(sha256),
            after_sha256: sha256(&after),
            inserts: shifted(&inserts),
            created: Vec::new(),
        };
        (after, l)
    }

    fn ins(at: usize, text: &str) -> Insertion {
        Insertion {
            at,
            text: text.into(),
        }
    }

    #[test]
    fn an_untouched_file_comes_back_exactly() {
        let before = "a = 1\nb = 2\n";
        let (after, l) = layer(Some(before), vec![ins(6, "x = 0\n")]);
        assert_eq!(undo(&after, &[l]), Undo::Exact(Some(before.into())));
    }

    #[test]
    fn a_file_install_created_goes_away() {
        let (after, l) = layer(None, vec![ins(0, "x = 0\n")]);
        assert_eq!(undo(&after, &[l]), Undo::Exact(None));
    }

    #[test]
    fn two_installs_unwind_in_turn() {
        let before = "a\n";
        let (mid, l1) = layer(Some(before), vec![ins(2, "one\n")]);
        let (after, l2) = layer(Some(&mid), vec![ins(0, "two\n")]);
        assert_eq!(undo(&after, &[l1, l2]), Undo::Exact(Some(before.into())));
    }

    #[test]
    fn a_layer_whose_write_never_happened_is_skipped() {
        let before = "a\n";
        let (_, l) = layer(Some(before), vec![ins(2, "one\n")]);
        assert_eq!(undo(before, &[l]), Undo::Exact(Some(before.into())));
    }

    #[test]
    fn edits_elsewhere_keep_the_spans_removable() {
        let before = "a = 1\n";
        let (after, l) = layer(Some(before), vec![ins(6, "x = 0\n")]);
        let edited = format!("# mine\n{after}c = 3\n");
        assert_eq!(
            undo(&edited, &[l]),
            Undo::Spans("# mine\na = 1\nc = 3\n".into())
        );
    }

    #[test]
    fn an_edited_span_leaves_it_to_the_entries() {
        let (after, l) = layer(Some("a = 1\n"), vec![ins(6, "x = 0\n")]);
        let edited = after.replace("x = 0", "x = 00");
        assert_eq!(undo(&edited, &[l]), Undo::Changed);
    }
}

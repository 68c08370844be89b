//! Which filter drivers a repository's attribute files assign (`*.bin
//! filter=lfs`): in HEAD's `.gitattributes` files (what a checkout
//! writes), the index's and the working tree's (ignored ones too: git
//! reads a `.gitattributes` whatever `.gitignore` says), `info/attributes`,
//! `core.attributesFile` and the system file. Reading every file whole is
//! cheaper than asking git per path, and errs the safe way: an assignment
//! counts even if no path matches its pattern. Files are read as bytes, as
//! git reads them: text that is not UTF-8 assigns filters all the same.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use super::config::Entry;
use super::history::Location;
use super::verdict::FilterUse;
use crate::git::query_bytes;

/// Where git's own default system attributes file lives (prefix /usr).
const SYSTEM_ATTRIBUTES: &str = "/etc/gitattributes";

/// The drivers `filter=NAME` assigns in an attribute file's bytes. Words
/// split on git's blanks (space, tab, CR, LF); a line whose first
/// non-blank is `#` is a comment.
pub fn filter_names(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let blank = |c: char| matches!(c, ' ' | '\t' | '\r' | '\n');
    let mut out: Vec<String> = Vec::new();
    for line in text.split('\n') {
        let line = line.trim_matches(blank);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        // The first word is the pattern (or `[attr]macro`); attributes follow.
        for attr in line.split(blank).filter(|w| !w.is_empty()).skip(1) {
            if let Some(name) = attr.strip_prefix("filter=") {
                if !out.iter().any(|o| o == name) {
                    out.push(name.to_string());
                }
            }
        }
    }
    out
}

/// Uses of the `drivers` (those with a configured command) in the
/// repository git found at `at` from `dir`. Files that cannot be read are
/// skipped: they assign nothing git could read either.
pub fn gather(
    dir: &Path,
    at: &Location,
    entries: &[Entry],
    home: Option<&Path>,
    drivers: &[String],
) -> Vec<FilterUse> {
    let mut texts: Vec<(String, Vec<u8>)> = Vec::new();
    let mut read = |path: &Path| {
        if let Ok(t) = std::fs::read(path) {
            texts.push((path.display().to_string(), t));
        }
    };
    read(&at.common_dir.join("info/attributes"));
    if let Some(file) = attributes_file(entries, home) {
        read(&file);
    }
    read(Path::new(SYSTEM_ATTRIBUTES));
    let mut blobs: Vec<(String, OsString)> = Vec::new();
    if let Some(top) = &at.toplevel {
        // The index's (with object ids: git falls back to them when the
        // working tree has no file) and every other file, ignored or not;
        // the pathspec keeps the listings to attribute files.
        let listing = |what: &str| {
            query_bytes(
                top,
                &["ls-files", "-z", what, "--", ":(glob)**/.gitattributes"],
            )
            .unwrap_or_default()
        };
        let staged = listing("--stage");
        let others = listing("--others");
        for rec in staged.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            // `<mode> <object> <stage>\t<path>`
            let Some(tab) = rec.iter().position(|b| *b == b'\t') else {
                continue;
            };
            let (meta, path) = (&rec[..tab], &rec[tab + 1..]);
            let id = meta.split(|b| *b == b' ').nth(1).unwrap_or_default();
            if is_attributes(path) && !id.is_empty() {
                let label = format!("{} (staged)", OsStr::from_bytes(path).to_string_lossy());
                blobs.push((label, OsString::from_vec(id.to_vec())));
                read(&top.join(OsStr::from_bytes(path)));
            }
        }
        for path in others.split(|b| *b == 0).filter(|p| is_attributes(p)) {
            read(&top.join(OsStr::from_bytes(path)));
        }
    }
    if let Ok(list) = query_bytes(dir, &["ls-tree", "-r", "-z", "--name-only", "HEAD"]) {
        for f in list.split(|b| *b == 0).filter(|f| is_attributes(f)) {
            let mut spec = OsString::from("HEAD:");
            spec.push(OsStr::from_bytes(f));
            blobs.push((spec.to_string_lossy().into_owned(), spec));
        }
    }
    for (label, spec) in blobs {
        let args = [OsStr::new("cat-file"), OsStr::new("blob"), &spec];
        if let Ok(t) = query_bytes(dir, &args) {
            texts.push((label, t));
        }
    }
    let mut uses = Vec::new();
    for (file, text) in texts {
        for driver in filter_names(&text) {
            if drivers.contains(&driver)
                && !uses
                    .iter()
                    .any(|u: &FilterUse| u.driver == driver && u.file == file)
            {
                uses.push(FilterUse {
                    driver,
                    file: file.clone(),
                });
            }
        }
    }
    uses
}

fn is_attributes(f: &[u8]) -> bool {
    f == b".gitattributes" || f.ends_with(b"/.gitattributes")
}

/// `core.attributesFile` (the last one wins), else git's default.
fn attributes_file(entries: &[Entry], home: Option<&Path>) -> Option<PathBuf> {
    let set = entries
        .iter()
        .rev()
        .find(|e| e.key == "core.attributesfile")
        .map(|e| e.value_str().to_string());
    match (set, home) {
        (Some(v), Some(h)) if v.starts_with("~/") => Some(h.join(&v[2..])),
        (Some(v), _) => Some(PathBuf::from(v)),
        // nerdr runs git without XDG_CONFIG_HOME, so git looks here.
        (None, Some(h)) => Some(h.join(".config/git/attributes")),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_assignments_are_found() {
        let rows: &[(&str, &[&str])] = &[
            ("*.bin filter=lfs diff=lfs merge=lfs -text\n", &["lfs"]),
            ("# *.bin filter=lfs\n", &[]),
            ("[attr]big filter=lfs -text\n*.iso big\n", &["lfs"]),
            (
                "*.c text\n*.x filter=crypt\n*.y filter=lfs\n*.z filter=lfs\n",
                &["crypt", "lfs"],
            ),
            ("filter=lfs\n", &[]),
            ("*.txt -filter\n", &[]),
        ];
        for (text, want) in rows {
            assert_eq!(filter_names(text.as_bytes()), *want, "{text}");
        }
        // Not UTF-8: git reads it all the same.
        assert_eq!(filter_names(b"# caf\xe9\n* filter=fake\n"), vec!["fake"]);
        assert_eq!(
            filter_names(b"\xff\xfe* filter=a\r\n*.x\tfilter=b"),
            vec!["a", "b"]
        );
        // Comments after blanks; a BOM is part of the first word.
        assert_eq!(
            filter_names(b"  # x filter=no\n\xef\xbb\xbf* filter=c"),
            vec!["c"]
        );
    }
}

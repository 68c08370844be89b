//! Which filter drivers a repository's attribute files assign (`*.bin
//! filter=lfs`): in HEAD's `.gitattributes` files (what a checkout
//! writes), the index's and the working tree's (ignored ones too: git
//! reads a `.gitattributes` whatever `.gitignore` says), `info/attributes`,
//! `core.attributesFile` and the system file. Reading every file whole is
//! cheaper than asking git per path, and errs the safe way: an assignment
//! counts even if no path matches its pattern. Files are read as bytes, as
//! git reads them: text that is not UTF-8 assigns filters all the same.
//!
//! Nothing is cached between checks: an agent can change any of these
//! files at any time (in place, keeping size and times; by a rename; or a
//! new one deep in the tree, which only a walk finds), and the walk and
//! the reads cost about what checking a cache's keys would. Each check
//! reads every file once instead, in as few git commands as it can.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::config::Entry;
use super::history::Location;
use super::verdict::FilterUse;
use crate::git::{query_bytes, query_with_input};

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
///
/// Four git commands at most, two of them at once: the index's and the
/// working tree's attribute files in one listing, HEAD's in another, then
/// every blob they name (each distinct one once) in one `cat-file --batch`.
pub fn gather(
    dir: &Path,
    at: &Location,
    entries: &[Entry],
    home: Option<&Path>,
    drivers: &[String],
) -> Vec<FilterUse> {
    let (listing, tree) = std::thread::scope(|s| {
        // The index's (with object ids: git falls back to them when the
        // working tree has no file) and every other file, ignored or not;
        // the pathspec keeps the listing to attribute files.
        let listing = s.spawn(|| {
            at.toplevel.as_ref().map(|top| {
                let args = [
                    "ls-files",
                    "-z",
                    "-t",
                    "--stage",
                    "--others",
                    "--",
                    ":(glob)**/.gitattributes",
                ];
                (top, query_bytes(top, &args).unwrap_or_default())
            })
        });
        // HEAD's, from the top whatever folder `dir` is in (ls-tree takes
        // no glob: the whole tree, filtered here).
        let tree = query_bytes(dir, &["ls-tree", "-r", "-z", "--full-tree", "HEAD"]);
        (listing.join().ok().flatten(), tree.unwrap_or_default())
    });
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
    let mut blobs: Vec<(String, String)> = Vec::new();
    if let Some((top, bytes)) = &listing {
        let listed = parse_listing(bytes);
        for (path, id) in &listed.staged {
            let label = format!("{} (staged)", OsStr::from_bytes(path).to_string_lossy());
            blobs.push((label, id.clone()));
            read(&top.join(OsStr::from_bytes(path)));
        }
        for path in &listed.others {
            read(&top.join(OsStr::from_bytes(path)));
        }
    }
    for (path, id) in parse_tree(&tree) {
        blobs.push((
            format!("HEAD:{}", OsStr::from_bytes(&path).to_string_lossy()),
            id,
        ));
    }
    let contents = read_blobs(dir, &blobs);
    for (label, id) in blobs {
        if let Some(t) = contents.get(&id) {
            texts.push((label, t.clone()));
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

/// The contents of the objects `blobs` name, each read once, all in one
/// `cat-file --batch`; any it did not answer (a git that stopped half way)
/// asked for again one by one, so a hiccup skips no file.
fn read_blobs(dir: &Path, blobs: &[(String, String)]) -> HashMap<String, Vec<u8>> {
    let mut ids: Vec<&str> = blobs.iter().map(|(_, id)| id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        return HashMap::new();
    }
    let input: Vec<u8> = ids
        .iter()
        .flat_map(|id| format!("{id}\n").into_bytes())
        .collect();
    let out = query_with_input(dir, &["cat-file", "--batch"], input).unwrap_or_default();
    let mut answered = HashSet::new();
    let mut contents = HashMap::new();
    for (id, answer) in parse_batch(&out) {
        answered.insert(id.clone());
        if let Answer::Object(bytes) = answer {
            contents.insert(id, bytes);
        }
    }
    for id in ids.into_iter().filter(|id| !answered.contains(*id)) {
        if let Ok(t) = query_bytes(dir, &["cat-file", "blob", id]) {
            contents.insert(id.to_string(), t);
        }
    }
    contents
}

/// `ls-files -z -t --stage --others`: staged files with their object ids
/// (`<tag> <mode> <object> <stage>\t<path>`) and other files (`? <path>`).
/// The tag keeps the two apart: an untracked path can hold a tab and
/// spell a staged record after it, but never starts with a tag.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Listing {
    pub staged: Vec<(Vec<u8>, String)>,
    pub others: Vec<Vec<u8>>,
}

pub fn parse_listing(bytes: &[u8]) -> Listing {
    let mut out = Listing::default();
    for rec in bytes.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        if let Some(path) = rec.strip_prefix(b"? ") {
            if is_attributes(path) {
                out.others.push(path.to_vec());
            }
            continue;
        }
        // A tag and a blank, then the staged record.
        let Some(rec) = rec.get(2..) else { continue };
        let Some(tab) = rec.iter().position(|b| *b == b'\t') else {
            continue;
        };
        let (meta, path) = (&rec[..tab], &rec[tab + 1..]);
        let id = meta.split(|b| *b == b' ').nth(1).unwrap_or_default();
        if is_attributes(path) && !id.is_empty() {
            out.staged
                .push((path.to_vec(), String::from_utf8_lossy(id).into_owned()));
        }
    }
    out
}

/// The attribute files in `ls-tree -r -z` output (`<mode> <type>
/// <object>\t<path>`), with their object ids.
pub fn parse_tree(bytes: &[u8]) -> Vec<(Vec<u8>, String)> {
    let mut out = Vec::new();
    for rec in bytes.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let Some(tab) = rec.iter().position(|b| *b == b'\t') else {
            continue;
        };
        let (meta, path) = (&rec[..tab], &rec[tab + 1..]);
        let id = meta.split(|b| *b == b' ').nth(2).unwrap_or_default();
        if is_attributes(path) && !id.is_empty() {
            out.push((path.to_vec(), String::from_utf8_lossy(id).into_owned()));
        }
    }
    out
}

#[derive(Debug, PartialEq, Eq)]
pub enum Answer {
    Object(Vec<u8>),
    /// `missing`, `ambiguous`, or whatever else git answers without content.
    Nothing,
}

/// `cat-file --batch` output: per object asked, `<oid> <type> <size>\n`,
/// that many bytes and `\n`; or `<name> missing\n`. Stops at the first
/// record it cannot read whole (what follows cannot be placed).
pub fn parse_batch(mut out: &[u8]) -> Vec<(String, Answer)> {
    let mut answers = Vec::new();
    while let Some(nl) = out.iter().position(|b| *b == b'\n') {
        let header = String::from_utf8_lossy(&out[..nl]).into_owned();
        let rest = &out[nl + 1..];
        let words: Vec<&str> = header.split(' ').collect();
        match words.as_slice() {
            [id, _kind, size] => {
                let Ok(size) = size.parse::<usize>() else {
                    break;
                };
                let Some(content) = rest.get(..size) else {
                    break;
                };
                if rest.get(size) != Some(&b'\n') {
                    break;
                }
                answers.push((id.to_string(), Answer::Object(content.to_vec())));
                out = &rest[size + 1..];
            }
            [id, _] => {
                answers.push((id.to_string(), Answer::Nothing));
                out = rest;
            }
            _ => break,
        }
    }
    answers
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

    #[test]
    fn listings_keep_staged_and_other_files_apart() {
        let id = "3718a41a50cf37ac7747b9835652f7d92145b7cf";
        let out = format!(
            "H 100644 {id} 0\t.gitattributes\0\
             S 100644 {id} 0\ta/b/.gitattributes\0\
             M 100644 {id} 2\tc/.gitattributes\0\
             ? new/.gitattributes\0\
             ? 100644 {id} 0\tx/.gitattributes\0\
             ? h/.gitattributes-not\0\
             H 100644 {id} 0\tnot.gitattributes\0"
        );
        let got = parse_listing(out.as_bytes());
        let paths = |v: &[(Vec<u8>, String)]| -> Vec<String> {
            v.iter()
                .map(|(p, i)| format!("{}@{}", String::from_utf8_lossy(p), &i[..4]))
                .collect()
        };
        assert_eq!(
            paths(&got.staged),
            [
                ".gitattributes@3718",
                "a/b/.gitattributes@3718",
                "c/.gitattributes@3718"
            ]
        );
        // An untracked folder named like a staged record is still an
        // untracked file, read from the working tree where it is.
        let others: Vec<String> = got
            .others
            .iter()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        assert_eq!(
            others,
            [
                "new/.gitattributes",
                format!("100644 {id} 0\tx/.gitattributes").as_str()
            ]
        );
        assert_eq!(parse_listing(b""), Listing::default());
        assert_eq!(parse_listing(b"H\0?\0H 100644\0"), Listing::default());
    }

    #[test]
    fn trees_give_their_attribute_files() {
        let out = b"100644 blob aaaa\t.gitattributes\0\
100644 blob bbbb\tsrc/a.rs\0\
100644 blob cccc\tsrc/.gitattributes\0\
160000 commit dddd\tsub\0\
100644 blob eeee\tw\xffeird\tname/.gitattributes\0";
        let got: Vec<(String, String)> = parse_tree(out)
            .into_iter()
            .map(|(p, i)| (String::from_utf8_lossy(&p).into_owned(), i))
            .collect();
        let want = [
            (".gitattributes", "aaaa"),
            ("src/.gitattributes", "cccc"),
            ("w\u{fffd}eird\tname/.gitattributes", "eeee"),
        ];
        assert_eq!(got.len(), want.len(), "{got:?}");
        for ((p, i), (wp, wi)) in got.iter().zip(want) {
            assert_eq!((p.as_str(), i.as_str()), (wp, wi));
        }
    }

    #[test]
    fn batches_answer_each_object_or_stop_where_they_break() {
        type Row<'a> = (&'a [u8], &'a [(&'a str, Option<&'a [u8]>)]);
        let rows: &[Row] = &[
            (b"", &[]),
            (
                b"aa blob 3\nx\ny\nbb missing\ncc blob 0\n\n",
                &[("aa", Some(b"x\ny")), ("bb", None), ("cc", Some(b""))],
            ),
            // Content holding what looks like a header is content.
            (
                b"aa blob 14\nbb missing\nzz\n\ncc blob 1\n*\n",
                &[("aa", Some(b"bb missing\nzz\n")), ("cc", Some(b"*"))],
            ),
            // Truncated: what came whole counts, the rest is asked again.
            (b"aa blob 1\n*\nbb blob 10\nshort", &[("aa", Some(b"*"))]),
            (b"aa blob 1\n**", &[]),
            (b"aa blob x\n*\n", &[]),
        ];
        for (out, want) in rows {
            let got = parse_batch(out);
            let got: Vec<(&str, Option<&[u8]>)> = got
                .iter()
                .map(|(id, a)| {
                    (
                        id.as_str(),
                        match a {
                            Answer::Object(b) => Some(b.as_slice()),
                            Answer::Nothing => None,
                        },
                    )
                })
                .collect();
            assert_eq!(got, *want, "{}", String::from_utf8_lossy(out));
        }
    }
}

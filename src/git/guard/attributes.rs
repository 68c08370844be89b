//! Which filter drivers a repository's attribute files assign (`*.bin
//! filter=lfs`): in HEAD's `.gitattributes` files (what a checkout
//! writes), the working tree's, `info/attributes` and
//! `core.attributesFile`. Reading every file whole is cheaper than asking
//! git per path, and errs the safe way: an assignment counts even if no
//! path matches its pattern.

use std::path::{Path, PathBuf};

use super::config::Entry;
use super::verdict::FilterUse;
use crate::git::query;

/// The drivers `filter=NAME` assigns in an attribute file's text.
pub fn filter_names(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        // The first word is the pattern (or `[attr]macro`); attributes follow.
        for attr in line.split_whitespace().skip(1) {
            if let Some(name) = attr.strip_prefix("filter=") {
                if !out.iter().any(|o| o == name) {
                    out.push(name.to_string());
                }
            }
        }
    }
    out
}

/// Uses of the `drivers` (those with a configured command) in `dir`'s
/// repository. Files that cannot be read are skipped: they assign nothing
/// git could read either.
pub fn gather(
    dir: &Path,
    common_dir: &Path,
    entries: &[Entry],
    home: Option<&Path>,
    drivers: &[String],
) -> Vec<FilterUse> {
    let mut texts: Vec<(String, String)> = Vec::new();
    let mut read = |label: String, path: &Path| {
        if let Ok(t) = std::fs::read_to_string(path) {
            texts.push((label, t));
        }
    };
    let info = common_dir.join("info/attributes");
    read(info.display().to_string(), &info);
    if let Some(file) = attributes_file(entries, home) {
        read(file.display().to_string(), &file);
    }
    if let Ok(top) = query(dir, &["rev-parse", "--show-toplevel"]) {
        let top = PathBuf::from(top);
        if let Ok(list) = query(
            &top,
            &[
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ],
        ) {
            for f in list.split('\0').filter(|f| is_attributes(f)) {
                let p = top.join(f);
                read(p.display().to_string(), &p);
            }
        }
    }
    if let Ok(list) = query(dir, &["ls-tree", "-r", "-z", "--name-only", "HEAD"]) {
        for f in list.split('\0').filter(|f| is_attributes(f)) {
            let spec = format!("HEAD:{f}");
            if let Ok(t) = query(dir, &["cat-file", "blob", &spec]) {
                texts.push((spec, t));
            }
        }
    }
    let mut uses = Vec::new();
    for (file, text) in texts {
        for driver in filter_names(&text) {
            if drivers.contains(&driver) {
                uses.push(FilterUse {
                    driver,
                    file: file.clone(),
                });
            }
        }
    }
    uses
}

fn is_attributes(f: &str) -> bool {
    f == ".gitattributes" || f.ends_with("/.gitattributes")
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
            assert_eq!(filter_names(text), *want, "{text}");
        }
    }
}

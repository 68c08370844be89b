//! `git blame --line-porcelain` read into [`Blamed`] lines. Pure. Every
//! line carries its commit's headers in that form, so no state is kept
//! from one line to the next but the one being read.

use super::Blamed;

/// The commit git names for lines not committed yet.
const NOT_COMMITTED: &str = "0000000000000000000000000000000000000000";

/// The lines of `out`, git's answer; an error names what it did not expect.
pub fn parse(out: &str) -> Result<Vec<Blamed>, String> {
    let mut lines = Vec::new();
    let mut current: Option<Blamed> = None;
    for row in out.lines() {
        if let Some(_content) = row.strip_prefix('\t') {
            let mut l = current
                .take()
                .ok_or("git blame gave a line of the file before its header")?;
            if l.path.is_empty() {
                return Err(format!("git blame named no file for line {}", l.line));
            }
            if l.commit.as_deref() == Some(NOT_COMMITTED) {
                l.commit = None;
            }
            lines.push(l);
        } else if let Some(path) = row.strip_prefix("filename ") {
            if let Some(l) = current.as_mut() {
                l.path = path.to_string();
            }
        } else if let Some(summary) = row.strip_prefix("summary ") {
            if let Some(l) = current.as_mut() {
                l.summary = summary.to_string();
            }
        } else if current.is_none() {
            let mut w = row.split(' ');
            let (Some(sha), Some(orig), Some(now)) = (w.next(), w.next(), w.next()) else {
                return Err(format!("git blame gave an unexpected line: {row:?}"));
            };
            let number = |s: &str| {
                s.parse::<u32>()
                    .map_err(|_| format!("git blame gave an unexpected line: {row:?}"))
            };
            if sha.len() < 40 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!("git blame gave an unexpected line: {row:?}"));
            }
            current = Some(Blamed {
                line: number(now)?,
                commit: Some(sha.to_string()),
                path: String::new(),
                orig_line: number(orig)?,
                summary: String::new(),
            });
        }
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As git 2.39 writes it: a committed line, a renamed file's line and
    /// an uncommitted one.
    const OUT: &str = "\
3f1c2d9a8b7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a 1 1 2
author A U Thor
author-mail <a@example.com>
author-time 1733200000
author-tz +0000
committer A U Thor
committer-mail <a@example.com>
committer-time 1733200000
committer-tz +0000
summary first
boundary
filename src/a.rs
\tfn a() {}
3f1c2d9a8b7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a 2 2
author A U Thor
summary first
filename src/a.rs
\tfn b() {}
9a9a9a9a9a9a9a9a9a9a9a9a9a9a9a9a9a9a9a9a 7 3 1
author B
summary moved
previous 3f1c2d9a8b7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a src/old.rs
filename src/old.rs
\t// moved here
0000000000000000000000000000000000000000 4 4 1
author Not Committed Yet
summary Version of src/a.rs from src/a.rs
filename src/a.rs
\tnew line
";

    #[test]
    fn each_line_with_its_commit_path_and_number_there() {
        let got = parse(OUT).unwrap();
        let want = [
            (1, Some("3f1c2d9a"), "src/a.rs", 1),
            (2, Some("3f1c2d9a"), "src/a.rs", 2),
            (3, Some("9a9a9a9a"), "src/old.rs", 7),
            (4, None, "src/a.rs", 4),
        ];
        assert_eq!(got.len(), want.len());
        for (g, (line, commit, path, orig)) in got.iter().zip(want) {
            assert_eq!(g.line, line);
            assert_eq!(g.commit.as_deref().map(|c| &c[..8]), commit);
            assert_eq!(g.path, path);
            assert_eq!(g.orig_line, orig);
            assert!(!g.summary.is_empty());
        }
    }

    #[test]
    fn what_git_would_not_write_is_an_error() {
        for bad in [
            "\tcontent without header\n",
            "nothex 1 1\nfilename a\n\tx\n",
            "3f1c2d9a8b7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a x 1\n",
            "3f1c2d9a8b7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a 1 1\n\tno file\n",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse("").unwrap(), vec![]);
    }
}

//! `nerdr why add` and `nerdr why` in the core: the facts `crate::why`'s
//! rules need (the repository, HEAD, whether the file has uncommitted
//! changes, `git blame` through the guard, the commits after a reason's
//! HEAD) gathered off the async workers and outside the state lock; the
//! reasons kept in `$NERDR_DATA_DIR/why.jsonl`. A tab keeps and reads
//! reasons only for files of its own worktree: it cannot speak for
//! another tab's work, nor read it through `why`.

use std::path::{Path, PathBuf};

use super::caller::Caller;
use super::privilege::CallerKind;
use super::Core;
use crate::paths::Paths;
use crate::protocol::api::{AddWhy, ApiError, AskWhy, ErrorCode};
use crate::protocol::why::{WhyAdded, WhyAnswer, WhyEntry, WhyReason};
use crate::why::{self, store, Binding, Reason};

/// Who gives or asks: the person from a terminal, or a tab (its tree is
/// all it may name).
struct Asker {
    tab: Option<(String, String, String)>,
    tree: Option<PathBuf>,
    sandboxed: bool,
}

/// Where a named file is.
struct Located {
    top: PathBuf,
    common: String,
    rel: Option<String>,
    head: String,
    /// The branch HEAD is on (`None`: detached).
    branch: Option<String>,
}

fn bad(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::BadRequest, message)
}

impl Core {
    fn asker(&self, caller: &Caller) -> Result<Asker, ApiError> {
        let Some(id) = caller.tab() else {
            return Ok(Asker {
                tab: None,
                tree: None,
                sandboxed: false,
            });
        };
        let state = self.state.lock().unwrap();
        let t = state
            .tabs
            .get(id)
            .ok_or_else(|| super::not_found::no_tab(id))?;
        let tree = t.worktree.as_ref().map_or(&t.folder, |w| &w.path).clone();
        Ok(Asker {
            tab: Some((t.id.clone(), t.name.clone(), t.agent.clone())),
            tree: Some(tree),
            sandboxed: caller.kind() == CallerKind::Sandboxed || t.sandboxed,
        })
    }

    /// `nerdr why add`.
    pub(super) async fn add_why(&self, caller: &Caller, w: AddWhy) -> Result<WhyAdded, ApiError> {
        why::check_text(&w.text).map_err(bad)?;
        let asker = self.asker(caller)?;
        let paths = self.paths.clone();
        let now = std::time::SystemTime::now();
        let at = super::clock::rfc3339_millis(now);
        let secs = now
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        super::edge::gather_at(
            "keeping a reason for a change",
            &w.folder.clone(),
            move || {
                let found = locate(&w.folder, w.file.as_deref(), asker.tree.as_deref())?;
                if let Some(rel) = &found.rel {
                    exists(&found, rel, w.lines)?;
                }
                let status: Vec<&str> = match &found.rel {
                    Some(rel) => vec!["status", "--porcelain", "--", rel],
                    None => vec!["status", "--porcelain"],
                };
                let mut dirty = !crate::git::run(&paths, &found.top, &status)
                    .map_err(|e| e.to_string())?
                    .is_empty();
                // A file's reason explains the change its lines show: the
                // coming commit, or the commit that last changed them.
                let (mut head, mut lines, mut summary) = (found.head.clone(), w.lines, None);
                let mut change = Vec::new();
                if let Some(rel) = &found.rel {
                    let blamed = match w.lines {
                        Some(l) if std::fs::metadata(found.top.join(rel)).is_ok() => {
                            blame(&paths, &found, rel, Some(l))?
                        }
                        _ => Vec::new(),
                    };
                    // `rev-list` (a query the guard lets by) prints
                    // `commit SHA`, then the subject.
                    let last = crate::git::query(
                        &found.top,
                        &["rev-list", "-1", "--format=%s", "HEAD", "--", rel],
                    )
                    .ok()
                    .and_then(|out| {
                        let (first, subject) = out.split_once('\n').unwrap_or((&out, ""));
                        let sha = first.strip_prefix("commit ")?.trim().to_string();
                        Some((sha, subject.trim().to_string()))
                    });
                    let last = last.as_ref().map(|(c, s)| (c.as_str(), s.as_str()));
                    match why::aim(rel, w.lines, &blamed, dirty, last)? {
                        why::Aim::NextCommit => {
                            dirty = true;
                            change = uncommitted(&paths, &found, rel, w.lines, &blamed);
                        }
                        why::Aim::Commit {
                            commit,
                            lines: at,
                            summary: s,
                        } => {
                            (head, lines, summary, dirty) = (commit, at, Some(s), false);
                        }
                    }
                }
                let (tab, tab_name, agent) = match asker.tab {
                    Some((t, n, a)) => (Some(t), Some(n), Some(a)),
                    None => (None, None, None),
                };
                let reason = Reason {
                    repo: found.common,
                    file: found.rel.clone(),
                    lines,
                    text: w.text,
                    head: head.clone(),
                    worktree: found.top.display().to_string(),
                    branch: found.branch.clone(),
                    secs,
                    dirty,
                    change,
                    tab,
                    tab_name,
                    agent,
                    sandboxed: asker.sandboxed,
                    at,
                };
                store::append(&paths.data_dir.join(store::FILE), &reason)?;
                tracing::info!(file = ?reason.file, tab = ?reason.tab, dirty, "reason kept");
                Ok::<_, String>(WhyAdded {
                    file: found.rel,
                    commit: (!dirty).then_some(head),
                    summary: summary.map(|s| crate::printable::printable(&s)),
                })
            },
        )
        .await
        .map_err(bad)
    }

    /// `nerdr why FILE[:LINE]`.
    pub(super) async fn why_of(&self, caller: &Caller, w: AskWhy) -> Result<WhyAnswer, ApiError> {
        let asker = self.asker(caller)?;
        let paths = self.paths.clone();
        super::edge::gather_at(
            "reading the reasons for a file",
            &w.folder.clone(),
            move || answer(&paths, &w, asker.tree.as_deref()),
        )
        .await
        .map_err(bad)
    }
}

/// The answer to `w`, all facts gathered here (blocking).
fn answer(paths: &Paths, w: &AskWhy, tree: Option<&Path>) -> Result<WhyAnswer, String> {
    let found = locate(&w.folder, Some(&w.file), tree)?;
    let rel = found.rel.clone().unwrap_or_default();
    let blamed = blame(paths, &found, &rel, w.lines)?;
    let reasons = store::of_repo(&paths.data_dir.join(store::FILE), &found.common)?;
    let here = why::Here {
        head: found.head.clone(),
        worktree: found.top.display().to_string(),
    };
    let bound: Vec<(Reason, Binding)> = reasons
        .into_iter()
        .map(|r| {
            let after = match r.dirty {
                true => commits_after(paths, &found.top, &r),
                false => Vec::new(),
            };
            let b = why::bind(&r, &here, &after);
            (r, b)
        })
        .filter(|(_, b)| *b != Binding::Elsewhere)
        .collect();
    let entries = why::explain(&blamed, &bound)
        .into_iter()
        .map(|e| WhyEntry {
            lines: e.lines,
            commit: e.commit,
            summary: crate::printable::printable(&e.summary),
            reasons: e
                .reasons
                .into_iter()
                .map(|i| {
                    let r = &bound[i].0;
                    WhyReason {
                        text: r
                            .text
                            .lines()
                            .map(crate::printable::printable)
                            .collect::<Vec<_>>()
                            .join("\n"),
                        tab: r.tab.clone(),
                        tab_name: r.tab_name.as_deref().map(crate::printable::printable),
                        agent: r.agent.clone(),
                        sandboxed: r.sandboxed,
                        at: r.at.clone(),
                    }
                })
                .collect(),
        })
        .collect();
    Ok(WhyAnswer {
        file: crate::printable::printable(&rel),
        entries,
    })
}

/// `rel`'s lines (all, or `lines`) as `git blame` tells them now, through
/// the guard. A file git has not got yet is all uncommitted lines; a file
/// that is not there, or lines it has not got, are said plainly rather than
/// in git's words.
fn blame(
    paths: &Paths,
    found: &Located,
    rel: &str,
    lines: Option<(u32, u32)>,
) -> Result<Vec<why::Blamed>, String> {
    let Some(count) = line_count(&found.top.join(rel), rel)? else {
        return Err(format!(
            "{rel} is not in {}: name a file of the worktree",
            found.top.display()
        ));
    };
    if let Some(l) = lines {
        why::check_lines(rel, l, count)?;
    }
    let spec = format!("HEAD:{rel}");
    if crate::git::query(&found.top, &["cat-file", "-e", &spec]).is_err() {
        let (a, z) = lines.unwrap_or((1, count as u32));
        return Ok((a..=z)
            .map(|line| why::Blamed {
                line,
                commit: None,
                path: rel.to_string(),
                orig_line: line,
                summary: "Not Committed Yet".into(),
            })
            .collect());
    }
    let range = lines.map(|(a, z)| format!("-L{a},{z}"));
    let mut args = vec!["blame", "--line-porcelain"];
    args.extend(range.as_deref());
    args.extend(["--", rel]);
    crate::git::run(paths, &found.top, &args)
        .map_err(|e| e.to_string())
        .and_then(|out| why::blame::parse(&out))
}

/// The commits after `r`'s HEAD on the branch it was given on that touch
/// its file, oldest first, with their commit times and, for a reason that
/// recorded its change, the lines each adds to the file (none for a
/// detached HEAD's reason, or when its HEAD is gone).
fn commits_after(paths: &Paths, top: &Path, r: &Reason) -> Vec<why::Later> {
    let Some(branch) = &r.branch else {
        return Vec::new();
    };
    let range = format!("{}..{branch}", r.head);
    let mut args = vec![
        "rev-list",
        "--reverse",
        "--ancestry-path",
        "--timestamp",
        range.as_str(),
    ];
    if let Some(f) = &r.file {
        args.extend(["--", f.as_str()]);
    }
    let out = crate::git::query(top, &args).unwrap_or_default();
    let adds = |commit: &str| match (&r.file, r.change.is_empty()) {
        (Some(f), false) => crate::git::run(
            paths,
            top,
            &["show", "--format=", "-U0", "--no-color", commit, "--", f],
        )
        .map(|d| why::fingerprint(why::added_lines(&d)))
        .unwrap_or_default(),
        _ => Vec::new(),
    };
    out.lines()
        .filter_map(|l| {
            let (secs, commit) = l.split_once(' ')?;
            Some(why::Later {
                commit: commit.to_string(),
                secs: secs.parse().ok()?,
                adds: adds(commit),
            })
        })
        .collect()
}

/// The lines an uncommitted change adds to `rel`, fingerprinted: the named
/// lines not committed yet, or what `git diff HEAD` adds (a file git has
/// not got: all of it). Nothing when it cannot be read: the reason then
/// explains the next commit of the file, as before changes were recorded.
fn uncommitted(
    paths: &Paths,
    found: &Located,
    rel: &str,
    lines: Option<(u32, u32)>,
    blamed: &[why::Blamed],
) -> Vec<String> {
    let text = std::fs::read(found.top.join(rel))
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    let nth = |n: u32| all.get(n as usize - 1).copied();
    if let Some((a, z)) = lines {
        let fresh: Vec<u32> = match blamed {
            [] => (a..=z).collect(),
            b => b
                .iter()
                .filter(|b| b.commit.is_none())
                .map(|b| b.line)
                .collect(),
        };
        return why::fingerprint(fresh.into_iter().filter_map(nth));
    }
    let spec = format!("HEAD:{rel}");
    if crate::git::query(&found.top, &["cat-file", "-e", &spec]).is_err() {
        return why::fingerprint(all);
    }
    crate::git::run(
        paths,
        &found.top,
        &["diff", "-U0", "--no-color", "HEAD", "--", rel],
    )
    .map(|d| why::fingerprint(why::added_lines(&d)))
    .unwrap_or_default()
}

/// A reason's file is there: in the worktree (then `lines` within it), or
/// deleted since HEAD (a deletion to explain, without lines).
fn exists(found: &Located, rel: &str, lines: Option<(u32, u32)>) -> Result<(), String> {
    match line_count(&found.top.join(rel), rel)? {
        Some(count) => lines.map_or(Ok(()), |l| why::check_lines(rel, l, count)),
        None => {
            let spec = format!("HEAD:{rel}");
            let in_head = crate::git::query(&found.top, &["cat-file", "-e", &spec]).is_ok();
            match (in_head, lines) {
                (true, None) => Ok(()),
                (true, Some(_)) => Err(format!(
                    "{rel} is deleted: its reason is for the whole file, without --lines"
                )),
                (false, _) => Err(format!(
                    "{rel} is not in {}, nor in its last commit: name a file of the change",
                    found.top.display()
                )),
            }
        }
    }
}

/// The most of a file `why` counts the lines of.
const MAX_COUNTED: u64 = 64 << 20;

/// How many lines the file at `path` (`rel` in messages) has; `None` when
/// there is none. The file is in a worktree an agent writes: only a
/// regular file is read, opened without waiting (a FIFO no one writes
/// would hold the request, and the reports watcher, for ever) and at most
/// [`MAX_COUNTED`] bytes of it (a sparse file of terabytes is made in an
/// instant).
fn line_count(path: &Path, rel: &str) -> Result<Option<usize>, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path);
    let f = match f {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(_) if path.is_dir() => return Err(format!("{rel} is a folder: name a file in it")),
        Err(e) => return Err(format!("cannot read {rel}: {e}")),
    };
    let meta = f
        .metadata()
        .map_err(|e| format!("cannot read {rel}: {e}"))?;
    if meta.is_dir() {
        return Err(format!("{rel} is a folder: name a file in it"));
    }
    if !meta.is_file() {
        return Err(format!(
            "{rel} is not a regular file: nerdr keeps reasons for files"
        ));
    }
    if meta.len() > MAX_COUNTED {
        return Err(format!(
            "{rel} is larger than {} MiB: nerdr keeps reasons for smaller files",
            MAX_COUNTED >> 20
        ));
    }
    let mut bytes = Vec::new();
    f.take(MAX_COUNTED)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {rel}: {e}"))?;
    Ok(Some(
        bytes.split(|b| *b == b'\n').count() - usize::from(bytes.ends_with(b"\n")),
    ))
}

/// The repository, HEAD and path of `file` (relative to `folder`, or
/// absolute; none: the folder itself), which must be inside `tree` when
/// one is given: a tab names only its own worktree's files, and relative
/// names count from its tree when its folder is elsewhere.
fn locate(folder: &Path, file: Option<&Path>, tree: Option<&Path>) -> Result<Located, String> {
    let base = match tree {
        Some(t) if !folder.starts_with(t) => t,
        _ => folder,
    };
    let named = file.map_or_else(|| base.to_path_buf(), |f| base.join(f));
    let path = canonical(&named)?;
    if let Some(t) = tree {
        let t = canonical(t)?;
        if !path.starts_with(&t) {
            return Err(format!(
                "{} is outside this tab's worktree {}: a tab keeps and reads reasons only for \
                 its own work",
                named.display(),
                t.display()
            ));
        }
    }
    let dir = if path.is_dir() {
        path.clone()
    } else {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    let query = |args: &[&str]| crate::git::query(&dir, args).map_err(|e| e.to_string());
    let top = query(&["rev-parse", "--show-toplevel"])
        .map_err(|_| format!("{} is not in a git repository", named.display()))?;
    let top = canonical(Path::new(&top))?;
    let common = query(&["rev-parse", "--path-format=absolute", "--git-common-dir"])?;
    let head = query(&["rev-parse", "--verify", "-q", "HEAD"]).map_err(|_| {
        format!(
            "{} has no commit yet: commit first, then say why",
            top.display()
        )
    })?;
    let branch = query(&["symbolic-ref", "-q", "HEAD"])
        .ok()
        .filter(|b| !b.is_empty());
    let rel = match file {
        None => None,
        Some(_) => Some(
            path.strip_prefix(&top)
                .map_err(|_| {
                    format!(
                        "{} is outside its repository {}",
                        named.display(),
                        top.display()
                    )
                })?
                .to_string_lossy()
                .into_owned(),
        ),
    };
    if rel.as_deref() == Some("") {
        return Err(format!(
            "{} is the repository itself: name a file in it",
            named.display()
        ));
    }
    Ok(Located {
        top,
        common,
        rel,
        head,
        branch,
    })
}

/// `path` with its links resolved; a file that is gone (a deletion to
/// explain) through its folder.
fn canonical(path: &Path) -> Result<PathBuf, String> {
    if let Ok(p) = path.canonicalize() {
        return Ok(p);
    }
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => dir
            .canonicalize()
            .map(|d| d.join(name))
            .map_err(|e| format!("cannot find {}: {e}", path.display())),
        _ => Err(format!("cannot find {}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn lines_are_counted_only_in_a_regular_file_of_bounded_size() {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n);
        std::fs::write(p("three"), "a\nb\nc\n").unwrap();
        std::fs::write(p("open"), "a\nb").unwrap();
        std::fs::create_dir(p("dir")).unwrap();
        nix::unistd::mkfifo(&p("fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        std::fs::File::create(p("sparse"))
            .unwrap()
            .set_len(super::MAX_COUNTED + 1)
            .unwrap();
        std::os::unix::fs::symlink(p("three"), p("link")).unwrap();
        #[rustfmt::skip]
        let rows: &[(&str, Result<Option<usize>, &str>)] = &[
            ("three", Ok(Some(3))),
            ("open", Ok(Some(2))),
            ("absent", Ok(None)),
            ("dir", Err("is a folder")),
            // Opened without waiting for a writer, and refused.
            ("fifo", Err("not a regular file")),
            ("sparse", Err("larger than 64 MiB")),
            // `locate` resolved links already: one here appeared since.
            ("link", Err("cannot read link")),
        ];
        for (name, want) in rows {
            let got = super::line_count(&p(name), name);
            match (want, &got) {
                (Ok(w), Ok(g)) => assert_eq!(g, w, "{name}"),
                (Err(w), Err(g)) => assert!(g.contains(w), "{name}: {g}"),
                _ => panic!("{name}: want {want:?}, got {got:?}"),
            }
        }
    }
}

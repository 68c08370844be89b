//! `nerdr diff TAB [--stat]`: the tab's work as one patch, made by the
//! core (the `diff` request, which the window's diff view uses too): its
//! branch against the commit its worktree started from, plus what its
//! worktree holds uncommitted (untracked files as new files). Piped, the
//! patch is git's, byte for byte, and `git apply` reads it; on a terminal
//! it is coloured as git colours it, control characters shown escaped.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::DiffTab;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The tab: its id, a unique id prefix, its number or its name (see `nerdr tabs`); or a
    /// closed tab's id or branch (nerdr/ID), as `nerdr worktrees` lists it
    pub tab: String,
    /// Git's --stat of the same changes, not the patch
    #[arg(long)]
    pub stat: bool,
    /// Colour: auto (on a terminal only, as git), always or never
    #[arg(long, value_name = "WHEN", default_value = "auto", value_parser = ["auto", "always", "never"])]
    pub color: String,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let d = client::call(DiffTab {
        tab: args.tab,
        stat: args.stat,
        folder: folder.scope()?,
    })?;
    if !d.base_recorded {
        eprintln!(
            "nerdr: no base was recorded for {} (made before nerdr recorded bases): the diff \
             starts at `git merge-base` with the main checkout's HEAD, {}",
            d.worktree.display(),
            crate::git::base::short(&d.base)
        );
    }
    if d.worktree_missing {
        eprintln!(
            "nerdr: the worktree {} is gone: this is the branch {}'s commits alone",
            d.worktree.display(),
            d.branch
        );
    }
    let terminal = std::io::stdout().is_terminal();
    let colour = match args.color.as_str() {
        "always" => true,
        "never" => false,
        _ => terminal,
    };
    let mark = uncommitted_line(&d.uncommitted);
    let mut text = match (colour, terminal) {
        (false, false) => d.patch,
        (colour, _) => shown(&d.patch, colour, args.stat),
    };
    // Piped, the patch stays git's (`git apply` reads it): the mark goes
    // to stderr; on a terminal it ends the text.
    if let Some(mark) = mark {
        match terminal {
            true => text.push_str(&format!("{mark}\n")),
            false => eprintln!("nerdr: {mark}"),
        }
    }
    let mut out = std::io::stdout().lock();
    // A reader that stops early (`| head`) is not an error.
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        r => r?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The paths whose change is (in part) not committed yet, which `nerdr
/// merge` leaves out, in one line; `None` when all of it is committed.
fn uncommitted_line(paths: &[String]) -> Option<String> {
    const SHOWN: usize = 10;
    if paths.is_empty() {
        return None;
    }
    let mut list: Vec<String> = paths
        .iter()
        .take(SHOWN)
        .map(|p| crate::protocol::printable(p))
        .collect();
    if paths.len() > SHOWN {
        list.push(format!("and {} more", paths.len() - SHOWN));
    }
    Some(format!(
        "(uncommitted: {}; in the worktree only, `nerdr merge` leaves {} out until committed)",
        list.join(", "),
        if paths.len() == 1 { "it" } else { "them" }
    ))
}

const RESET: &str = "\x1b[m";
const BOLD: &str = "\x1b[1m";
const CYAN: &str = "\x1b[36m";
const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";

/// The patch (or stat) for a terminal: each line's control characters
/// escaped (an agent's file must not drive the person's terminal), and
/// with `colour`, git's default colours.
fn shown(patch: &str, colour: bool, stat: bool) -> String {
    let mut out = String::with_capacity(patch.len() + patch.len() / 8);
    for line in patch.lines() {
        let line = line
            .split('\t')
            .map(crate::protocol::printable)
            .collect::<Vec<_>>()
            .join("\t");
        if !colour {
            out.push_str(&line);
        } else if stat {
            out.push_str(&stat_line(&line));
        } else {
            out.push_str(&patch_line(&line));
        }
        out.push('\n');
    }
    out
}

fn paint(colour: &str, text: &str) -> String {
    format!("{colour}{text}{RESET}")
}

fn patch_line(line: &str) -> String {
    const META: [&str; 12] = [
        "diff --git ",
        "index ",
        "--- ",
        "+++ ",
        "new file mode ",
        "deleted file mode ",
        "old mode ",
        "new mode ",
        "similarity index ",
        "rename from ",
        "rename to ",
        "Binary files ",
    ];
    if META.iter().any(|m| line.starts_with(m)) {
        return paint(BOLD, line);
    }
    if let Some(rest) = line.strip_prefix("@@") {
        if let Some(end) = rest.find("@@") {
            let (frag, tail) = rest.split_at(end + 2);
            return format!("{}{tail}", paint(CYAN, &format!("@@{frag}")));
        }
    }
    match line.chars().next() {
        Some('+') => paint(GREEN, line),
        Some('-') => paint(RED, line),
        _ => line.to_string(),
    }
}

/// ` path | 3 ++-`: the graph's pluses green and minuses red.
fn stat_line(line: &str) -> String {
    let Some(bar) = line.rfind('|') else {
        return line.to_string();
    };
    let (head, graph) = line.split_at(bar);
    let mut out = head.to_string();
    let mut run = String::new();
    let mut last: Option<char> = None;
    let flush = |out: &mut String, run: &mut String, c: Option<char>| {
        match c {
            Some('+') => out.push_str(&paint(GREEN, run)),
            Some('-') => out.push_str(&paint(RED, run)),
            _ => out.push_str(run),
        }
        run.clear();
    };
    for c in graph.chars() {
        let kind = matches!(c, '+' | '-').then_some(c);
        if kind != last {
            flush(&mut out, &mut run, last);
            last = kind;
        }
        run.push(c);
    }
    flush(&mut out, &mut run, last);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "diff --git a/a.txt b/a.txt\nindex 1..2 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@ fn x\n one\n-two\n+three\n+\x1b[2Jfour\n";

    #[test]
    fn patches_are_coloured_as_git_colours_them() {
        let got = shown(PATCH, true, false);
        let lines: Vec<&str> = got.lines().collect();
        assert_eq!(lines[0], "\x1b[1mdiff --git a/a.txt b/a.txt\x1b[m");
        assert_eq!(lines[4], "\x1b[36m@@ -1 +1,2 @@\x1b[m fn x");
        assert_eq!(lines[5], " one");
        assert_eq!(lines[6], "\x1b[31m-two\x1b[m");
        assert_eq!(lines[7], "\x1b[32m+three\x1b[m");
    }

    #[test]
    fn a_terminal_never_gets_the_patchs_own_escapes() {
        for colour in [true, false] {
            let got = shown(PATCH, colour, false);
            assert!(got.contains("\\u{1b}[2Jfour"), "{got}");
            assert!(!got.contains("\x1b[2J"), "{got}");
        }
        assert_eq!(shown("a\tb\\t\n", false, false), "a\tb\\t\n");
    }

    #[test]
    fn uncommitted_paths_are_marked() {
        assert_eq!(uncommitted_line(&[]), None);
        let one = uncommitted_line(&["b.txt".into()]).unwrap();
        assert_eq!(
            one,
            "(uncommitted: b.txt; in the worktree only, `nerdr merge` leaves it out until \
             committed)"
        );
        let many: Vec<String> = (0..12).map(|i| format!("f{i}\x1b")).collect();
        let said = uncommitted_line(&many).unwrap();
        assert!(said.contains("f9\\u{1b}, and 2 more;"), "{said}");
    }

    #[test]
    fn stat_graphs_are_coloured() {
        let got = stat_line(" a.txt | 3 ++-");
        assert_eq!(got, " a.txt | 3 \x1b[32m++\x1b[m\x1b[31m-\x1b[m");
        assert_eq!(stat_line(" 1 file changed"), " 1 file changed");
    }
}

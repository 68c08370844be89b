//! `nerdr why add [--file F [--lines A-B]] TEXT` and `nerdr why
//! FILE[:LINE] [--json]`: keep why a change was made, and read it back for
//! the lines a commit last touched (README.md, "Why a change was made";
//! the rules are `crate::why`'s, the facts the core's).

use std::path::PathBuf;
use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::{AddWhy, AskWhy};
use crate::protocol::why::WhyAnswer;

#[derive(Debug, clap::Args)]
#[command(
    about = "Why a change was made: the reasons kept for a file's lines (why add keeps one)",
    long_about = "Show the reasons agents (or you) gave for the lines of FILE: git blame \
    finds the commit that last touched each line, and each reason kept for that commit, that \
    file and those lines is shown with the tab and agent that gave it and when. A reason given \
    before its change was committed explains the next commit of its file that carries a line \
    of that change. Lines without a reason are counted at the end; --json lists every line \
    group (a reason's tab, tab_name and agent are null when you wrote it).\n\n\
    `nerdr why add` keeps a reason, in $NERDR_DATA_DIR/why.jsonl. From a tab it is kept with \
    the tab, its agent and its worktree's commits, and a tab keeps and reads reasons only for \
    its own worktree's files. A reason written by a sandboxed agent is marked as such: it is \
    that agent's text.",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Args {
    #[command(subcommand)]
    pub add: Option<Add>,
    /// The file, with a line or lines: FILE, FILE:LINE or FILE:A-B
    #[arg(value_name = "FILE[:LINE]", required = true)]
    pub target: Option<String>,
    /// Every line group as JSON, with or without reasons
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Subcommand)]
pub enum Add {
    /// Keep why a change was made, for the commit it applies to
    #[command(
        long_about = "Keep why a change was made: of --file F (its --lines A-B, or all it \
        changed), or of the whole change. The reason applies to the worktree's HEAD when the \
        file has no uncommitted changes, else to the next commit that touches the file: say \
        why before or after committing. Lines count as the file reads now.\n\n\
        TEXT `-` reads the reason from standard input; at most 16 KiB."
    )]
    Add(AddArgs),
}

#[derive(Debug, clap::Args)]
pub struct AddArgs {
    /// Why; `-` reads it from standard input
    pub text: String,
    /// The file the reason is about (default: the whole change)
    #[arg(long, short = 'f', value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// The lines of FILE it is about, as the file reads now: A or A-B
    #[arg(long, value_name = "A-B", requires = "file", value_parser = lines)]
    pub lines: Option<(u32, u32)>,
}

fn lines(s: &str) -> Result<(u32, u32), String> {
    crate::why::parse_lines(s)
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let here = folder.resolve()?;
    if let Some(Add::Add(a)) = args.add {
        let text = super::send::text_of(Some(a.text), None)?;
        let req = AddWhy {
            folder: here,
            file: a.file,
            lines: a.lines,
            text,
        };
        let added = match client::request(req.clone()) {
            Ok(reply) => reply.map_err(|e| anyhow::anyhow!(e.message))?,
            // A sandbox that reaches only its worktree: the reason goes
            // into the reports file nerdr reads (DESIGN: why add reads
            // NERDR_DATA_DIR without needing the config).
            Err(unreachable) => match crate::file_reports::reports_dir() {
                Some(dir) => return to_file(&dir, req),
                None => return Err(unreachable),
            },
        };
        let what = match (&added.file, a.lines) {
            (Some(f), Some((x, y))) if x == y => format!("{f}:{x}"),
            (Some(f), Some((x, y))) => format!("{f}:{x}-{y}"),
            (Some(f), None) => f.clone(),
            (None, _) => "the change".into(),
        };
        match added.commit {
            Some(c) => match &added.summary {
                Some(subject) => println!(
                    "kept: why {what}, for commit {} \"{subject}\" (the last change of {})",
                    short(&c),
                    if a.lines.is_some() {
                        "those lines"
                    } else {
                        "the file"
                    }
                ),
                None => println!("kept: why {what}, for commit {}", short(&c)),
            },
            None => println!(
                "kept: why {what}, for the next commit of {} (it has uncommitted changes)",
                added.file.as_deref().unwrap_or("this worktree")
            ),
        }
        return Ok(ExitCode::SUCCESS);
    }
    let target = args.target.unwrap_or_default();
    let (file, lines) = crate::why::parse_target(&target).map_err(anyhow::Error::msg)?;
    let answer = client::call(AskWhy {
        folder: here,
        file: PathBuf::from(file),
        lines,
    })?;
    if args.json {
        println!("{}", crate::printable::json(&answer)?);
    } else {
        print!("{}", shown(&answer));
    }
    Ok(ExitCode::SUCCESS)
}

/// `why add` as a line of the reports file in `dir`: the file named
/// relative to the top of the worktree (the folder holding `.git` above
/// the caller), as nerdr reads it.
fn to_file(dir: &std::path::Path, w: AddWhy) -> anyhow::Result<ExitCode> {
    crate::why::check_text(&w.text).map_err(anyhow::Error::msg)?;
    let mut line = serde_json::json!({"kind": "why", "text": w.text});
    if let Some(f) = &w.file {
        let abs = std::path::absolute(w.folder.join(f))?;
        let top = abs
            .ancestors()
            .skip(1)
            .find(|d| d.join(".git").exists())
            .ok_or_else(|| anyhow::anyhow!("{} is in no git worktree", abs.display()))?;
        let rel = abs.strip_prefix(top)?.to_string_lossy().into_owned();
        line["file"] = serde_json::Value::String(rel);
        if let Some((a, b)) = w.lines {
            line["lines"] = serde_json::json!([a, b]);
        }
    }
    let file = crate::file_reports::append(dir, &line)
        .map_err(|e| anyhow::anyhow!("nerdr cannot be reached, nor could the reason be written to the reports file in {}: {e}", dir.display()))?;
    println!(
        "kept: the reason went to {} (nerdr cannot be reached from here; it reads that file)",
        file.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(8)]
}

/// The answer as a person reads it: each line group with reasons, then
/// how many lines have none.
fn shown(a: &WhyAnswer) -> String {
    let mut out = String::new();
    let mut bare: u32 = 0;
    for e in &a.entries {
        if e.reasons.is_empty() {
            bare += e.lines.1 - e.lines.0 + 1;
            continue;
        }
        let lines = match e.lines {
            (x, y) if x == y => format!("{x}"),
            (x, y) => format!("{x}-{y}"),
        };
        let commit = match &e.commit {
            Some(c) => format!("{}  {}", short(c), e.summary),
            None => "not committed yet".into(),
        };
        out.push_str(&format!("{}:{lines}  {commit}\n", a.file));
        for r in &e.reasons {
            let who = match (&r.tab_name, &r.agent) {
                (Some(n), Some(ag)) => format!("{n} ({ag})"),
                (Some(n), None) => n.clone(),
                _ => "you".into(),
            };
            let note = if r.sandboxed {
                ", written in a sandbox"
            } else {
                ""
            };
            let at = r.at.get(..16).unwrap_or(&r.at).replace('T', " ");
            out.push_str(&format!("  {who}, {at}{note}:\n"));
            for l in r.text.lines() {
                out.push_str(&format!("    {l}\n"));
            }
        }
    }
    match (out.is_empty(), bare) {
        (true, _) => out.push_str(&format!(
            "no reason kept for {} (nerdr why add keeps one)\n",
            a.file
        )),
        (false, 0) => {}
        (false, 1) => out.push_str("1 more line has no reason kept\n"),
        (false, n) => out.push_str(&format!("{n} more lines have no reason kept\n")),
    }
    out
}

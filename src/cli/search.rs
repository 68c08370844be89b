//! `nerdr search QUERY [--agent A] [--limit N] [--json] [--open N]`: past
//! conversations (claude's and codex's logs) and nerdr's handoffs and
//! reviews that hold the words, ranked; `--open N` resumes result N's
//! conversation in a new tab, in the folder it ran in. The core searches
//! (`core::search`): a sandboxed agent's search covers its own tab's
//! conversation only.

use std::process::ExitCode;

use crate::client;
use crate::protocol::api::{SearchLogs, SearchResults, StartAgent};
use crate::protocol::search::{ResumeAt, SearchResult};

#[derive(Debug, clap::Args)]
#[command(
    about = "Search past conversations (claude's and codex's logs), handoffs and reviews; --open N \
        resumes one",
    long_about = "Search past conversations: the logs claude (~/.claude/projects) and codex \
        (~/.codex/sessions, or $CODEX_HOME) keep, and nerdr's own handoffs and reviews.\n\n\
        Words match in any case, anywhere in a word; \"two words\" in quotes match as one. \
        Only what the person and the agent said is searched, not tool calls or their output. \
        Results come ranked: those holding all the words first, then those holding them most \
        often, then the most recent. Each shows its agent, date (UTC), folder, session id and \
        its best matching messages (> the person's, < the agent's).\n\n\
        Run by a sandboxed agent, it searches only its own tab's conversation.",
    after_help = "Examples:\n  \
        nerdr search flaky test              conversations holding both words first\n  \
        nerdr search '\"race condition\"' --agent codex\n  \
        nerdr search migration --open 2      resume result 2 in a new tab"
)]
pub struct Args {
    /// The words to look for
    #[arg(required = true, value_name = "QUERY")]
    pub query: Vec<String>,
    /// Only this agent's conversations (claude or codex), handoffs and reviews
    #[arg(long, value_name = "AGENT")]
    pub agent: Option<String>,
    /// The most results to show
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub limit: usize,
    /// One JSON object: results (number, source, agent, id, date, folder, file, tab: the handoff's or review's tab, or the open tab a conversation is, terms, of, count, messages, lines), total, files, own_tab_only
    #[arg(long, conflicts_with = "open")]
    pub json: bool,
    /// Resume result N's conversation in a new tab of the current folder's session (or --folder's), its program run in the folder the conversation ran in (`claude --resume ID`, `codex resume ID`); refused while a tab has it open
    #[arg(long, value_name = "N")]
    pub open: Option<usize>,
}

pub fn run(args: Args, folder: &super::Folder) -> anyhow::Result<ExitCode> {
    if args.limit == 0 {
        anyhow::bail!("--limit 0: give the most results to show, from 1");
    }
    if args.open.is_none() && folder.given().is_some() {
        anyhow::bail!(
            "--folder names the session --open's tab joins; a search itself covers every \
             conversation: leave out --folder, or add --open N"
        );
    }
    let env = client::own_env()
        .into_iter()
        .filter(|(k, _)| ["HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME"].contains(&k.as_str()))
        .collect();
    let limit = match args.open {
        Some(0) => anyhow::bail!("--open 0: results are numbered from 1"),
        // The same search: its first N are the N shown before.
        Some(n) => n.max(args.limit),
        None => args.limit,
    };
    let found = client::call(SearchLogs {
        query: args.query.join(" "),
        agent: args.agent,
        limit,
        env,
    })?;
    if let Some(n) = args.open {
        return open(&found, n, folder.resolve()?);
    }
    if args.json {
        println!("{}", crate::printable::json(&found)?);
    } else {
        print!("{}", shown(&found));
    }
    Ok(ExitCode::SUCCESS)
}

/// Resume result `n`'s conversation in a new tab of `session`'s session;
/// the tab id on stdout, where it runs on stderr.
fn open(found: &SearchResults, n: usize, session: std::path::PathBuf) -> anyhow::Result<ExitCode> {
    let r = found
        .results
        .iter()
        .find(|r| r.number == n)
        .ok_or_else(|| match found.total {
            0 => anyhow::anyhow!("--open {n}: nothing matched, so there is nothing to resume"),
            total => anyhow::anyhow!(
                "--open {n}: this search has {total} result(s); run it without --open to see them"
            ),
        })?;
    let at = resume_at(r).map_err(|e| anyhow::anyhow!("--open {n}: {e}"))?;
    let cwd = at.cwd.clone();
    let started = client::call(StartAgent {
        folder: session.clone(),
        name: r.agent.clone(),
        extra_args: Vec::new(),
        env: client::own_env(),
        worktree: false,
        program: false,
        tab_name: None,
        resume: Some(at),
    })?;
    println!("{}", started.tab);
    eprintln!(
        "resumed {} {} in tab {}, running in {}, in the session of {} (`nerdr tabs` lists it)",
        r.agent,
        r.id,
        started.tab,
        cwd.display(),
        session.display()
    );
    match started.refused {
        None => Ok(ExitCode::SUCCESS),
        Some(reason) => {
            eprintln!("nerdr: {reason}");
            Ok(ExitCode::FAILURE)
        }
    }
}

/// Where and how result `r` resumes, or why it cannot.
fn resume_at(r: &SearchResult) -> Result<ResumeAt, String> {
    match r.source.as_str() {
        "claude" | "codex" => {}
        "handoff" => {
            return Err(format!(
                "result {} is handoff {}, not a conversation: `nerdr handoffs` shows it whole",
                r.number, r.id
            ))
        }
        other => {
            return Err(format!(
                "result {} is a {other}, not a conversation: `nerdr reviews {}` shows it",
                r.number,
                r.tab.as_deref().unwrap_or("TAB")
            ))
        }
    }
    let cwd = r.folder.clone().ok_or_else(|| {
        format!(
            "result {}'s log names no folder it ran in, and {} resumes a conversation only \
             there; resume it yourself: {}",
            r.number,
            r.agent,
            by_hand(r)
        )
    })?;
    Ok(ResumeAt {
        session: r.id.clone(),
        cwd,
    })
}

/// The agent's own command that resumes `r`.
fn by_hand(r: &SearchResult) -> String {
    match r.source.as_str() {
        "codex" => format!("`codex resume {}`", r.id),
        _ => format!("`claude --resume {}`", r.id),
    }
}

/// The results for a person: numbered, one heading line each, its
/// matching messages under it; what was left out at the end.
fn shown(found: &SearchResults) -> String {
    let mut out = String::new();
    if found.own_tab_only {
        out.push_str("(a sandboxed agent's search: this tab's own conversation only)\n");
    }
    for p in &found.problems {
        out.push_str(&format!("warning: {}\n", crate::printable::printable(p)));
    }
    if found.results.is_empty() {
        out.push_str(&format!(
            "nothing found in {} conversation log(s), handoffs and reviews\n",
            found.files
        ));
        return out;
    }
    let width = found.results.len().to_string().len();
    for r in &found.results {
        let folder = r.folder.as_ref().map_or("-".to_string(), |f| {
            crate::printable::printable(&f.display().to_string())
        });
        let date = if r.date.is_empty() { "-" } else { &r.date };
        let what = match r.source.as_str() {
            "handoff" => format!(
                "handoff {} from tab {} ({})",
                r.id,
                r.tab.as_deref().unwrap_or("?"),
                r.agent
            ),
            "review" => format!("review {} ({})", r.id, r.agent),
            _ => match &r.tab {
                Some(tab) => format!("{} {} (open in tab {tab})", r.agent, r.id),
                None => format!("{} {}", r.agent, r.id),
            },
        };
        out.push_str(&format!("{:>width$}. {what}  {date}  {folder}\n", r.number));
        let pad = " ".repeat(width + 2);
        out.push_str(&format!(
            "{pad}{} of {} word(s), {} time(s) in {} message(s)\n",
            r.terms, r.of, r.count, r.messages
        ));
        for l in &r.lines {
            let mark = if l.request { '>' } else { '<' };
            out.push_str(&format!("{pad}{mark} {}\n", l.text));
        }
    }
    let hidden = found.total.saturating_sub(found.results.len());
    if hidden > 0 {
        out.push_str(&format!(
            "{hidden} more result(s): --limit {} shows them\n",
            found.total
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::search::SearchLine;

    fn result(n: usize, source: &str, id: &str, folder: Option<&str>) -> SearchResult {
        SearchResult {
            number: n,
            source: source.into(),
            agent: if source == "codex" { "codex" } else { "claude" }.into(),
            id: id.into(),
            date: "2026-12-02 13:19".into(),
            folder: folder.map(Into::into),
            file: None,
            tab: Some("ab12".into()),
            terms: 2,
            of: 2,
            count: 3,
            messages: 2,
            lines: vec![
                SearchLine {
                    request: true,
                    text: "fix the parser".into(),
                },
                SearchLine {
                    request: false,
                    text: "the parser is fixed".into(),
                },
            ],
        }
    }

    #[test]
    fn results_are_numbered_with_their_messages_under_them() {
        let found = SearchResults {
            results: vec![
                result(1, "claude", "s-1", Some("/p")),
                result(2, "handoff", "4", Some("/q")),
            ],
            total: 3,
            files: 10,
            own_tab_only: false,
            problems: vec![],
        };
        assert_eq!(
            shown(&found),
            "1. claude s-1 (open in tab ab12)  2026-12-02 13:19  /p\n   \
             2 of 2 word(s), 3 time(s) in 2 message(s)\n   \
             > fix the parser\n   \
             < the parser is fixed\n\
             2. handoff 4 from tab ab12 (claude)  2026-12-02 13:19  /q\n   \
             2 of 2 word(s), 3 time(s) in 2 message(s)\n   \
             > fix the parser\n   \
             < the parser is fixed\n\
             1 more result(s): --limit 3 shows them\n"
        );
        let none = SearchResults {
            results: vec![],
            total: 0,
            files: 7,
            own_tab_only: true,
            problems: vec!["cannot read x\x1b".into()],
        };
        assert_eq!(
            shown(&none),
            "(a sandboxed agent's search: this tab's own conversation only)\n\
             warning: cannot read x\\u{1b}\n\
             nothing found in 7 conversation log(s), handoffs and reviews\n"
        );
    }

    #[test]
    fn only_a_conversation_with_a_folder_resumes() {
        let at = resume_at(&result(1, "codex", "019a-c", Some("/w"))).unwrap();
        assert_eq!(
            (at.session.as_str(), at.cwd.to_str()),
            ("019a-c", Some("/w"))
        );
        #[rustfmt::skip]
        let rows: &[(SearchResult, &str)] = &[
            (result(2, "handoff", "4", None), "`nerdr handoffs` shows it whole"),
            (result(3, "review", "ab12#1", None), "`nerdr reviews ab12` shows it"),
            (result(4, "claude", "s-9", None), "resume it yourself: `claude --resume s-9`"),
            (result(5, "codex", "c-9", None), "resume it yourself: `codex resume c-9`"),
        ];
        for (r, want) in rows {
            let e = resume_at(r).unwrap_err();
            assert!(e.contains(want), "{}: {e}", r.number);
        }
    }
}

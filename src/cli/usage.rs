//! `nerdr usage [--json]`: how much of the Claude and codex plans' 5-hour
//! and weekly windows is used, and when each resets (README.md, "Plan
//! usage"). Reads the agents' files itself, without the core; the rules
//! are `crate::usage`'s.

use std::process::ExitCode;

use crate::usage;

#[derive(Debug, clap::Args)]
#[command(
    about = "How much of the claude and codex plans' 5-hour and weekly limits is used",
    long_about = "How much of the claude and codex plans' 5-hour and weekly limits is used, and \
    when each window resets (local time, its zone named, and how long from now).\n\n\
    codex: the newest rate-limit entry in its session logs ($CODEX_HOME/sessions, default \
    ~/.codex/sessions), which codex writes with each turn on a ChatGPT plan.\n\
    claude: $XDG_STATE_HOME/nerdr/sessions/claude-limits.json, which claude's status line \
    writes while claude runs on a claude.ai plan (`nerdr integration install claude --status-line` \
    sets the status line up).\n\n\
    A window is \"unknown\" with the reason when there is no file, the file cannot be read \
    or is malformed (it is named), or its numbers are too old to trust (the window has reset \
    since). --json prints the same as {\"now\": SECONDS, \"agents\": [{\"agent\", \"source\", \
    \"observed_at\", \"five_hour\", \"weekly\"}]}, each window {\"state\": \"known\", \
    \"used_percent\", \"resets_at\"} or {\"state\": \"unknown\", \"reason\"}; times in seconds \
    since the epoch."
)]
pub struct Args {
    /// Print the numbers as JSON
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let now = crate::usage::read::now();
    let all = usage::read::gather(now);
    if args.json {
        let out = serde_json::json!({"now": now, "agents": all});
        println!("{}", crate::printable::json(&out)?);
    } else {
        for u in &all {
            print!("{}", usage::describe(u, now, usage::time::zone_at));
        }
    }
    Ok(ExitCode::SUCCESS)
}

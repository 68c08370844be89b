//! Session arguments: how an agent is told to start a new conversation,
//! resume one by id, or continue its latest. They go last, after the
//! agent's `command` and `args`, so a wrapper such as
//! `["nerdr", "sandbox", "--", "claude"]` passes them through untouched.
//! Pure: [`build`] turns a resolved agent, a [`Mode`], the [`Features`] of
//! the installed version and an optional reported resume command into the
//! final argv. Finding the features is `features.rs`; choosing the mode and
//! running the program belong to the core.
//!
//! | agent    | new                          | resume `<id>`                      | continue           |
//! |----------|------------------------------|------------------------------------|--------------------|
//! | claude   | `--session-id <new>`         | `--resume <id>`                    | `--continue`       |
//! | opencode | `[--standalone]`             | `[--standalone] --session <id>`    | `[--standalone] --continue` |
//! | copilot  | `--session-id <new>` or none | `--session-id <id>` or `--resume=<id>` | `--continue`   |
//! | codex    | `[--no-daemon]`              | `resume [--no-daemon] <id>`        | `resume [--no-daemon] --last` |
//! | cursor   | none                         | `--resume <id>`                    | `--continue`       |
//! | gemini   | `--session-id <new>`         | `--resume <id>`                    | `--resume latest`  |
//! | agy      | none                         | `--conversation <id>`              | `--continue`       |
//! | grok     | `--session-id <new>`         | `--resume <id>`                    | `--continue`       |
//!
//! `<new>` is a UUID v4 nerdr makes, so it knows the conversation's id from
//! the start; the other agents report theirs through their hooks later.
//! Bracketed words and copilot's first forms depend on [`Features`].
//!
//! Confirmed from `--help` of the versions the npm registry served as
//! latest (claude 2.1.197, codex-cli 0.171.0, copilot 1.0.102, gemini
//! 0.61.0, opencode 1.18.33):
//! - claude: `--session-id <uuid>` ("must be a valid UUID"), `-r, --resume
//!   [value]`, `-c, --continue`.
//! - codex: `resume [SESSION_ID]` with `--last`; `--no-daemon` ("Run without
//!   the shared background server") is listed both at the top level and
//!   under `resume`, and `codex resume --no-daemon <id>` parses. It goes
//!   after `resume`, where that subcommand's own help lists it.
//! - copilot: `--session-id <id>` ("Resume an existing session or task by
//!   ID, or set the UUID for a new session"), `-r, --resume [<value>]`
//!   (optional value, hence `--resume=<id>`), `--continue`.
//! - gemini: `--session-id` ("Start a new session with a manually provided
//!   UUID"), `-r, --resume` (`"latest"` or an index or id).
//! - opencode: `-s, --session`, `-c, --continue`. It has **no**
//!   `--standalone`, and rejects unknown options (prints its help, exits
//!   1), so `--standalone` is passed only when the installed version lists
//!   it ([`Features::opencode_standalone`]).
//!
//! cursor-agent, agy and grok are not published on npm; their flags are
//! from their vendors' documentation: cursor `--resume <chat-id>` and
//! `--continue` (an alias of `--resume=-1`); agy `--conversation <id>` and
//! `--continue`; grok `-s, --session-id <id>` (names a new session with a
//! UUID), `-r, --resume <id>` and `-c, --continue`.

use crate::config::ResolvedAgent;

use super::kind::{Features, Kind};

/// Which conversation a launch is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// A fresh conversation.
    New,
    /// The conversation with this id (as the agent reported it, or as nerdr
    /// gave it at [`Mode::New`]).
    Resume(String),
    /// The agent's most recent conversation, for when nerdr knows no id.
    Continue,
}

/// A resume command an agent reported for its tab (`nerdr pane
/// report-agent TAB -- WORD ARGS...`): `WORD` names the agent's program,
/// `ARGS` are what resume it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reported {
    pub argv: Vec<String>,
}

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The agent's command and `args`, then the session arguments.
    pub argv: Vec<String>,
    /// The id `argv` names: the one nerdr made for a new conversation, or
    /// the one it resumes. `None` when `argv` names none (agents that take
    /// no id for a new conversation, `Continue`, custom agents, reported
    /// resume commands): the agent reports it later, if at all.
    pub session_id: Option<String>,
}

impl Kind {
    /// Whether nerdr names a new conversation itself (with a UUID v4).
    pub fn assigns_id(self, features: &Features) -> bool {
        match self {
            Kind::Claude | Kind::Gemini | Kind::Grok => true,
            Kind::Copilot => features.copilot_session_id,
            Kind::Opencode | Kind::Codex | Kind::Cursor | Kind::Agy => false,
        }
    }

    /// The session arguments for one launch, one arm per agent. A new
    /// conversation carries an id exactly when [`Kind::assigns_id`] holds
    /// (`build` sees to it).
    fn words(self, want: &Want, f: &Features) -> Vec<String> {
        let lit = |words: &[&str]| words.iter().map(|s| s.to_string()).collect();
        let flag = |flag: &str, id: &str| vec![flag.to_owned(), id.to_owned()];
        // `flag id` for a new conversation nerdr named, nothing otherwise.
        let named = |name: &str, id: &Option<String>| {
            id.as_deref().map_or_else(Vec::new, |id| flag(name, id))
        };
        // A word passed in every mode when the installed version has it.
        let fixed = |on: bool, word: &str| {
            if on {
                vec![word.to_owned()]
            } else {
                Vec::new()
            }
        };
        match self {
            Kind::Claude => match want {
                Want::New(id) => named("--session-id", id),
                Want::Resume(id) => flag("--resume", id),
                Want::Last => lit(&["--continue"]),
            },
            Kind::Opencode => {
                let mut all = fixed(f.opencode_standalone, "--standalone");
                all.extend(match want {
                    Want::New(_) => Vec::new(),
                    Want::Resume(id) => flag("--session", id),
                    Want::Last => lit(&["--continue"]),
                });
                all
            }
            Kind::Copilot => match want {
                Want::New(id) => named("--session-id", id),
                Want::Resume(id) if f.copilot_session_id => flag("--session-id", id),
                // `--resume [<value>]` takes an optional value: joined, so
                // it cannot be read as a prompt.
                Want::Resume(id) => vec![format!("--resume={id}")],
                Want::Last => lit(&["--continue"]),
            },
            Kind::Codex => {
                let no_daemon = fixed(f.codex_no_daemon, "--no-daemon");
                match want {
                    Want::New(_) => no_daemon,
                    // `resume` is a subcommand: its options follow it.
                    Want::Resume(id) => [lit(&["resume"]), no_daemon, vec![id.clone()]].concat(),
                    Want::Last => [lit(&["resume"]), no_daemon, lit(&["--last"])].concat(),
                }
            }
            Kind::Cursor => match want {
                Want::New(_) => Vec::new(),
                Want::Resume(id) => flag("--resume", id),
                Want::Last => lit(&["--continue"]),
            },
            Kind::Gemini => match want {
                Want::New(id) => named("--session-id", id),
                Want::Resume(id) => flag("--resume", id),
                Want::Last => lit(&["--resume", "latest"]),
            },
            Kind::Agy => match want {
                Want::New(_) => Vec::new(),
                Want::Resume(id) => flag("--conversation", id),
                Want::Last => lit(&["--continue"]),
            },
            Kind::Grok => match want {
                Want::New(id) => named("--session-id", id),
                Want::Resume(id) => flag("--resume", id),
                Want::Last => lit(&["--continue"]),
            },
        }
    }
}

/// [`Mode`] with ids checked and the new one made, for [`Kind::words`].
#[derive(Debug)]
enum Want {
    /// With the id nerdr made, when it names new conversations.
    New(Option<String>),
    Resume(String),
    Last,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgvError {
    /// An id that would not reach the agent as one word meaning an id: it
    /// could be read as an option (`--settings=...`) or be mangled.
    #[error(
        "agent `{agent}`: session id {id:?} cannot be passed on a command line \
         (ids are up to {MAX_ID} letters, digits, `-`, `_`, `.` or `:`, starting with a letter or digit); \
         start a new conversation instead"
    )]
    BadSessionId { agent: String, id: String },

    #[error(
        "agent `{agent}` reported an empty resume command; report the agent's program \
         followed by the arguments that resume it, e.g. `{program} --resume ID`"
    )]
    EmptyReport { agent: String, program: String },

    #[error(
        "agent `{agent}` reported a resume command whose word {position} (counting from 1) \
         contains a NUL character, which cannot be passed to a program; report it without one"
    )]
    NulInReport { agent: String, position: usize },

    /// The reported command is for some other program: nerdr would be
    /// passing one program's arguments to another.
    #[error(
        "agent `{agent}` reported a resume command for `{word}`, which is not a word of its command {}; \
         the first word must name the agent's program, e.g. `{} ...`",
        quoted(command),
        command.last().map_or("", String::as_str)
    )]
    ForeignReport {
        agent: String,
        word: String,
        command: Vec<String>,
    },

    /// A built-in the config knows but this module has no rules for: a
    /// bug, caught by a test; refused rather than started without them.
    #[error(
        "built-in agent `{agent}` has no session rules in nerdr; this is a bug in nerdr, \
         please report it (a custom agent with its own `command` and `resume_args` works meanwhile)"
    )]
    NoRules { agent: String },
}

/// Longest session id accepted (UUIDs are 36, opencode's `ses_...` ids 30).
pub const MAX_ID: usize = 128;

/// `words` as a TOML array, for messages.
fn quoted(words: &[String]) -> String {
    let inner: Vec<String> = words.iter().map(|w| format!("{w:?}")).collect();
    format!("[{}]", inner.join(", "))
}

/// The full argv for launching `agent` in `mode`. `new_id` is called only
/// when nerdr names a new conversation itself (see [`Kind::assigns_id`]).
///
/// A reported resume command replaces the built-in resume and continue
/// arguments, except for a sandboxed agent: what a sandboxed agent says
/// about how to start it next time is not trusted (it could add
/// `--dangerously-skip-permissions` or a settings file of its own), so its
/// report is ignored and the normal resume used.
pub fn build(
    agent: &ResolvedAgent,
    mode: &Mode,
    features: &Features,
    reported: Option<&Reported>,
    new_id: impl FnOnce() -> String,
) -> Result<Launch, ArgvError> {
    let mut argv = agent.command.clone();
    let resuming = !matches!(mode, Mode::New);
    if let Some(reported) = reported.filter(|_| resuming && !agent.sandboxed) {
        argv.extend(reported_args(agent, reported)?.iter().cloned());
        return Ok(Launch {
            argv,
            session_id: None,
        });
    }
    if !agent.builtin {
        // `detect` picks screen rules only; a custom agent's arguments are
        // its own `resume_args` (none: every start is a new conversation).
        if resuming {
            argv.extend(agent.resume_args.iter().flatten().cloned());
        }
        return Ok(Launch {
            argv,
            session_id: None,
        });
    }
    let kind = Kind::of(&agent.name).ok_or_else(|| ArgvError::NoRules {
        agent: agent.name.clone(),
    })?;
    let want = match mode {
        Mode::New if kind.assigns_id(features) => Want::New(Some(checked_id(agent, new_id())?)),
        Mode::New => Want::New(None),
        Mode::Resume(id) => Want::Resume(checked_id(agent, id.clone())?),
        Mode::Continue => Want::Last,
    };
    argv.extend(kind.words(&want, features));
    let session_id = match want {
        Want::New(id) => id,
        Want::Resume(id) => Some(id),
        Want::Last => None,
    };
    Ok(Launch { argv, session_id })
}

/// `id` if it can go on a command line as a session id: it must not look
/// like an option, since it comes from what an agent reported.
fn checked_id(agent: &ResolvedAgent, id: String) -> Result<String, ArgvError> {
    let usable = id.len() <= MAX_ID
        && id.starts_with(|c: char| c.is_ascii_alphanumeric())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b));
    if usable {
        Ok(id)
    } else {
        Err(ArgvError::BadSessionId {
            agent: agent.name.clone(),
            id,
        })
    }
}

/// The arguments of a reported resume command, after checking that its
/// first word names a word of the agent's command (as given, or by file
/// name: `claude` matches `/usr/local/bin/claude`). Only the arguments are
/// used; the program run is always the configured command.
pub fn reported_args<'r>(
    agent: &ResolvedAgent,
    reported: &'r Reported,
) -> Result<&'r [String], ArgvError> {
    let command = &agent.command[..agent.command_words.min(agent.command.len())];
    let Some((word, args)) = reported.argv.split_first() else {
        return Err(ArgvError::EmptyReport {
            agent: agent.name.clone(),
            program: command.last().cloned().unwrap_or_default(),
        });
    };
    if let Some(index) = reported.argv.iter().position(|w| w.contains('\0')) {
        return Err(ArgvError::NulInReport {
            agent: agent.name.clone(),
            position: index + 1,
        });
    }
    let file_name = |w: &str| w.rsplit('/').next().unwrap_or(w).to_owned();
    let name = file_name(word);
    let names_agent = command
        .iter()
        .any(|c| c == word || (!name.is_empty() && file_name(c) == name));
    if !names_agent {
        return Err(ArgvError::ForeignReport {
            agent: agent.name.clone(),
            word: word.clone(),
            command: command.to_vec(),
        });
    }
    Ok(args)
}

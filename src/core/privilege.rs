//! What each kind of caller may do to each kind of tab
//! (docs/ARCHITECTURE.md, "The privilege model"). One pure function over
//! plain data, so that every cell of the matrix is written down and tested;
//! the connection decides who the caller is, the state what the target is.

/// Who asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallerKind {
    /// The person, on the client socket with the key.
    User,
    /// A program of an unsandboxed tab, as the kernel verified it.
    Tab,
    /// A program of a sandboxed tab, or anyone holding a sandboxed tab's
    /// secret without being provably its program.
    Sandboxed,
}

/// What is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// `nerdr agent`: start an agent in a new tab.
    StartAgent,
    /// `nerdr terminal`: open a terminal pane.
    OpenTerminal,
    Restart,
    Close,
    /// `nerdr rename`: name a tab.
    Rename,
    /// `nerdr quit`: close a whole session.
    Quit,
    /// `nerdr send` (and typing through a window).
    Send,
    /// `nerdr read` (and a window's view of a tab).
    Read,
    Resize,
    /// A row of `nerdr tabs`.
    See,
    /// List the approval queue.
    ListApprovals,
    /// Answer an approval.
    Decide,
    /// Run a plugin from `$XDG_CONFIG_HOME/nerdr/plugins/`.
    RunPlugin,
    /// Reports from an agent's own hooks about itself.
    Report,
    /// `nerdr sandbox`'s proxy asking the person about a host on neither
    /// network list: target `Own` when the caller is the tab's program
    /// itself (`nerdr sandbox`, outside its sandbox), `Nothing` for any
    /// other process with the tab's secret (one inside the sandbox).
    AskNetwork,
    /// Harmless facts: the agents that exist, the core's status.
    Query,
    /// `nerdr diff`: a tab's work as a patch (what its files hold).
    Diff,
    /// `nerdr worktrees`: every worktree of every repository nerdr knows.
    ListWorktrees,
    /// `nerdr merge`: writes the main checkout, outside every sandbox.
    Merge,
    /// `nerdr clean`: removes worktrees and branches.
    Clean,
    /// `nerdr request-review`: start a reviewer on a tab's work.
    RequestReview,
    /// `nerdr post-review`: a reviewer's review, always about its own tab
    /// (target `Own`; the core then checks the tab is a reviewer's).
    PostReview,
    // --- handoffs ---
    /// `nerdr handoff`: pass a tab's conversation on. The target is who
    /// gets it: `Own` for the caller's own handoff to the person
    /// (`--to-me`), the agent to start (`--to`), `Nothing` for another
    /// tab's conversation.
    Handoff,
    /// `nerdr handoffs`: what was handed to the person.
    ListHandoffs,
}

/// What it is asked of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// The caller's own tab.
    Own,
    /// An agent (running, or to be started) inside a sandbox.
    SandboxedAgent,
    /// An agent outside every sandbox.
    Agent,
    /// A terminal pane: the user's own shell.
    Terminal,
    /// Not about one tab (a session, the queue, a plugin, the core).
    Nothing,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    /// Waits for the person's approval (F3, `nerdr approvals`).
    Queue(&'static str),
    Refuse(&'static str),
}

pub fn decide(caller: CallerKind, op: Operation, target: Target) -> Verdict {
    use CallerKind as C;
    use Operation as O;
    use Target as T;
    use Verdict::*;
    match (caller, op, target) {
        // Approvals are the person's to give, never a program's.
        (C::User, _, _) => Allow,
        (_, O::Decide, _) => Refuse("approvals are the user's to give, not a program's in a tab"),
        (_, O::AskNetwork, T::Own) => Queue(
            "a host on neither network list waits for the user's answer: once, for the rest of \
             the sandbox run, or no",
        ),
        // Not the tab's program itself: a program running under it (inside
        // its sandbox), which must not put questions that read as the
        // proxy's.
        (_, O::AskNetwork, _) => Refuse(
            "network questions are `nerdr sandbox`'s own: only the tab's program itself asks \
             them, never a program running under it (inside its sandbox)",
        ),
        // A review is posted from the reviewer's own tab, about itself.
        (C::Tab | C::Sandboxed, O::PostReview, T::Own) => Allow,
        (C::Tab | C::Sandboxed, O::PostReview, _) => Refuse(
            "a review is posted by its reviewer, from its own tab (`nerdr post-review` in the \
             tab `nerdr request-review` started)",
        ),
        (C::Tab, _, _) => Allow,
        (C::Sandboxed, O::Query, _) => Allow,
        (C::Sandboxed, O::Diff, T::Own) => Allow,
        (C::Sandboxed, O::Diff, _) => Refuse("a sandboxed agent may see only its own tab's diff"),
        (C::Sandboxed, O::ListWorktrees, _) => Refuse(
            "a sandboxed agent cannot list worktrees: they hold other tabs' work, outside its \
             sandbox",
        ),
        (C::Sandboxed, O::Merge, _) => Refuse(
            "a sandboxed agent cannot merge: a merge writes the main checkout, outside every \
             sandbox (the user merges, with `nerdr merge`)",
        ),
        (C::Sandboxed, O::Clean, _) => {
            Refuse("a sandboxed agent cannot clean up worktrees: they hold other tabs' work")
        }
        (C::Sandboxed, O::Report, T::Own) => Allow,
        (C::Sandboxed, O::Report, _) => Refuse("an agent reports only about its own tab"),
        (C::Sandboxed, O::See, T::Own) => Allow,
        (C::Sandboxed, O::See, _) => Refuse("a sandboxed agent sees only its own tab"),
        (C::Sandboxed, O::OpenTerminal, _) => Refuse(
            "a sandboxed agent cannot open terminals: a terminal is the user's shell, outside \
             every sandbox",
        ),
        (C::Sandboxed, O::Quit, _) => Refuse(
            "a sandboxed agent cannot close a session: it holds terminals and agents outside \
             the sandbox",
        ),
        (C::Sandboxed, O::ListApprovals, _) => {
            Refuse("the approval queue is the user's; a sandboxed agent cannot list it")
        }
        // --- handoffs ---
        (C::Sandboxed, O::Handoff, T::Own | T::SandboxedAgent) => Allow,
        (C::Sandboxed, O::Handoff, T::Agent) => Queue(
            "the agent to start runs outside every sandbox: a handoff from a sandboxed agent \
             waits for the user's approval",
        ),
        (C::Sandboxed, O::Handoff, T::Terminal | T::Nothing) => Refuse(
            "a sandboxed agent hands off only its own conversation, to a sandboxed agent or to \
             the user",
        ),
        (C::Sandboxed, O::ListHandoffs, _) => Refuse(
            "handoffs to the user are the user's to read; a sandboxed agent cannot list them",
        ),
        (C::Sandboxed, O::RunPlugin, _) => {
            Queue("a plugin runs outside the sandbox: each run waits for the user's approval")
        }
        (C::Sandboxed, _, T::Terminal) => {
            Refuse("a sandboxed agent cannot use terminals: they run outside every sandbox")
        }
        (C::Sandboxed, O::Send, T::Agent) => Queue(
            "the agent runs outside every sandbox: a message from a sandboxed agent waits for \
             the user's approval",
        ),
        (C::Sandboxed, O::StartAgent, T::Agent) => Refuse(
            "a sandboxed agent can start only agents that are themselves sandboxed \
             (`sandboxed = true` in config.toml)",
        ),
        (C::Sandboxed, _, T::Agent) => {
            Refuse("a sandboxed agent cannot act on an agent that runs outside every sandbox")
        }
        // Its reviewer is sandboxed whatever is asked (`review::choice`).
        (C::Sandboxed, O::RequestReview, T::Own | T::SandboxedAgent) => Allow,
        (C::Sandboxed, O::RequestReview, T::Nothing) => {
            Refuse("name the tab whose work is to be reviewed")
        }
        (C::Sandboxed, O::StartAgent, T::SandboxedAgent) => Allow,
        (C::Sandboxed, O::StartAgent, _) => Refuse("start an agent by naming it"),
        (
            C::Sandboxed,
            O::Restart | O::Close | O::Rename | O::Send | O::Read | O::Resize,
            T::Own | T::SandboxedAgent,
        ) => Allow,
        (
            C::Sandboxed,
            O::Restart | O::Close | O::Rename | O::Send | O::Read | O::Resize,
            T::Nothing,
        ) => Refuse("this operation needs a tab to act on"),
    }
}

/// What a request asks beyond its operation and target, where a sandboxed
/// caller could use it to reach past its sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Extras {
    /// The request reaches outside the caller's own session: `nerdr agent
    /// --folder` naming another folder (nerdr would run host git there), or
    /// a tab of another session.
    pub foreign_folder: bool,
    /// `nerdr agent --no-worktree`: the new agent would work in the
    /// session's own checkout, the one the person works in.
    pub no_worktree: bool,
    /// Words added to the agent's command line: they could undo the
    /// agent's own sandbox settings (`--sandbox danger-full-access`, ...).
    pub extra_args: bool,
    /// `nerdr close --remove-worktree` on another tab: its uncommitted work
    /// would be deleted.
    pub removes_others_worktree: bool,
    /// `nerdr close --remove-worktree --force`: the worktree goes even
    /// with work no commit holds (saved first). The person's call only:
    /// an agent must not be able to clear its tracks.
    pub forced_removal: bool,
    /// A restart or start that would bring an agent back outside a sandbox
    /// (its config changed since).
    pub unsandboxed_launch: bool,
}

/// The extras a caller may ask for: only the person and unsandboxed tabs
/// may use them.
pub fn decide_extras(caller: CallerKind, extras: Extras) -> Verdict {
    if caller != CallerKind::Sandboxed {
        return Verdict::Allow;
    }
    if extras.unsandboxed_launch {
        return Verdict::Refuse(
            "its config no longer marks the agent `sandboxed`: a sandboxed agent cannot bring it \
             back outside a sandbox (the user can)",
        );
    }
    if extras.foreign_folder {
        return Verdict::Refuse("a sandboxed agent acts only within its own session's folder");
    }
    if extras.no_worktree {
        return Verdict::Refuse(
            "a sandboxed agent starts agents only in worktrees of their own, never in the \
             checkout the user works in",
        );
    }
    if extras.extra_args {
        return Verdict::Refuse(
            "a sandboxed agent cannot add arguments to an agent's command line: they could undo \
             the agent's own sandbox settings",
        );
    }
    if extras.forced_removal {
        return Verdict::Refuse(
            "a sandboxed agent cannot force a worktree's removal: work no commit holds is \
             removed only when the user says so (commit it first, or ask the user)",
        );
    }
    if extras.removes_others_worktree {
        return Verdict::Refuse(
            "a sandboxed agent cannot remove another tab's worktree: its uncommitted work would \
             be lost",
        );
    }
    Verdict::Allow
}

/// What a start names, as far as the privilege model cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// A program run as it is (`nerdr agent -- CMD`): no config, no sandbox.
    Program,
    /// An agent, by its settings as the config has them now.
    Agent { sandboxed: bool },
    /// A name the config does not resolve: the launch refuses it with the
    /// config's error.
    Unresolved,
}

/// What a start is done to: only an agent the config sandboxes is a
/// sandboxed agent; a program run as it is runs outside every sandbox,
/// and an unresolved name counts as outside too (a config fixed between
/// the check and the launch must not start it unchecked).
pub fn start_target(start: Start) -> Target {
    match start {
        Start::Agent { sandboxed: true } => Target::SandboxedAgent,
        Start::Agent { sandboxed: false } | Start::Program | Start::Unresolved => Target::Agent,
    }
}

/// Whether a refusal of a request naming a tab must read exactly as "no
/// such tab" (same code, same words, no extra I/O): for a sandboxed
/// caller, a tab outside every sandbox (agent or terminal) or in another
/// session, none of which it may act on, so their ids must tell it
/// nothing. Its own tab, and sandboxed agents of its own session (which it
/// may read and type into), are refused with the reason.
pub fn hides_tab(caller: CallerKind, target: Target, foreign: bool) -> bool {
    match (caller, target) {
        (CallerKind::User | CallerKind::Tab, _) => false,
        (CallerKind::Sandboxed, Target::Agent | Target::Terminal) => true,
        (CallerKind::Sandboxed, Target::SandboxedAgent) => foreign,
        (CallerKind::Sandboxed, Target::Own | Target::Nothing) => false,
    }
}

/// Whether a caller may see a session (in `nerdr sessions`) in which it
/// may see `seen_tabs` tabs: one with a tab it may see, or, for the
/// person, any (a window open on a folder with no tabs yet). A sandboxed
/// agent so sees its own session only.
pub fn sees_session(caller: CallerKind, seen_tabs: usize) -> bool {
    seen_tabs > 0 || caller == CallerKind::User
}

/// The operation's name in refusals and journal entries.
pub fn name(op: Operation) -> &'static str {
    match op {
        Operation::StartAgent => "agent",
        Operation::OpenTerminal => "terminal",
        Operation::Restart => "restart",
        Operation::Close => "close",
        Operation::Rename => "rename",
        Operation::Quit => "quit",
        Operation::Send => "send",
        Operation::Read => "read",
        Operation::Resize => "resize",
        Operation::See => "tabs",
        Operation::ListApprovals => "approvals",
        Operation::Decide => "approve",
        Operation::RunPlugin => "plugin",
        Operation::Report => "report",
        Operation::AskNetwork => "ask-network",
        Operation::Query => "query",
        Operation::Diff => "diff",
        Operation::ListWorktrees => "worktrees",
        Operation::Merge => "merge",
        Operation::Clean => "clean",
        Operation::RequestReview => "request-review",
        Operation::PostReview => "post-review",
        Operation::Handoff => "handoff",
        Operation::ListHandoffs => "handoffs",
    }
}

#[cfg(test)]
mod tests {
    use super::CallerKind::{Sandboxed as S, Tab, User};
    use super::Operation::*;
    use super::Target::{Agent as Out, Nothing, Own, SandboxedAgent as In, Terminal as Term};
    use super::*;

    const CALLERS: [CallerKind; 3] = [User, Tab, S];
    const OPS: [Operation; 24] = [
        StartAgent,
        OpenTerminal,
        Restart,
        Close,
        Rename,
        Quit,
        Send,
        Read,
        Resize,
        See,
        ListApprovals,
        Decide,
        RunPlugin,
        Report,
        Query,
        AskNetwork,
        Diff,
        ListWorktrees,
        Merge,
        Clean,
        RequestReview,
        PostReview,
        Handoff,
        ListHandoffs,
    ];
    const TARGETS: [Target; 5] = [Own, In, Out, Term, Nothing];

    /// `a` allow, `q` queue, `r` refuse: one letter per target, in the order
    /// own tab, sandboxed agent, agent, terminal, nothing.
    const SANDBOXED: [(Operation, &str); 24] = [
        (StartAgent, "rarrr"),
        (OpenTerminal, "rrrrr"),
        (Restart, "aarrr"),
        (Close, "aarrr"),
        (Rename, "aarrr"),
        (Quit, "rrrrr"),
        (Send, "aaqrr"),
        (Read, "aarrr"),
        (Resize, "aarrr"),
        (See, "arrrr"),
        (ListApprovals, "rrrrr"),
        (Decide, "rrrrr"),
        (RunPlugin, "qqqqq"),
        (Report, "arrrr"),
        (Query, "aaaaa"),
        (AskNetwork, "qrrrr"),
        (Diff, "arrrr"),
        (ListWorktrees, "rrrrr"),
        (Merge, "rrrrr"),
        (Clean, "rrrrr"),
        (RequestReview, "aarrr"),
        (PostReview, "arrrr"),
        (Handoff, "aaqrr"),
        (ListHandoffs, "rrrrr"),
    ];

    fn letter(v: &Verdict) -> char {
        match v {
            Verdict::Allow => 'a',
            Verdict::Queue(_) => 'q',
            Verdict::Refuse(_) => 'r',
        }
    }

    #[test]
    fn every_cell_of_the_matrix() {
        let mut cells = 0;
        for caller in CALLERS {
            for (i, op) in OPS.into_iter().enumerate() {
                let row = match caller {
                    User => "aaaaa",
                    Tab if op == Decide => "rrrrr",
                    Tab if op == AskNetwork => "qrrrr",
                    Tab if op == PostReview => "arrrr",
                    Tab => "aaaaa",
                    S => {
                        assert_eq!(SANDBOXED[i].0, op, "table rows follow OPS");
                        SANDBOXED[i].1
                    }
                };
                for (target, want) in TARGETS.into_iter().zip(row.chars()) {
                    let got = decide(caller, op, target);
                    assert_eq!(letter(&got), want, "{caller:?} {op:?} {target:?}: {got:?}");
                    if let Verdict::Refuse(why) | Verdict::Queue(why) = got {
                        assert!(why.len() > 10, "{caller:?} {op:?} {target:?} says why");
                    }
                    cells += 1;
                }
            }
        }
        assert_eq!(cells, CALLERS.len() * OPS.len() * TARGETS.len());
    }

    #[test]
    fn every_extra_for_every_caller() {
        // Each extra alone, none, and all: only a sandboxed caller is held.
        let alone = [
            Extras {
                foreign_folder: true,
                ..Extras::default()
            },
            Extras {
                extra_args: true,
                ..Extras::default()
            },
            Extras {
                removes_others_worktree: true,
                ..Extras::default()
            },
            Extras {
                unsandboxed_launch: true,
                ..Extras::default()
            },
            Extras {
                no_worktree: true,
                ..Extras::default()
            },
            Extras {
                forced_removal: true,
                ..Extras::default()
            },
        ];
        let all = Extras {
            no_worktree: true,
            foreign_folder: true,
            extra_args: true,
            removes_others_worktree: true,
            unsandboxed_launch: true,
            forced_removal: true,
        };
        for caller in CALLERS {
            assert_eq!(decide_extras(caller, Extras::default()), Verdict::Allow);
            for extras in alone.iter().chain([&all]) {
                let got = decide_extras(caller, *extras);
                match caller {
                    S => assert!(matches!(got, Verdict::Refuse(_)), "{extras:?}"),
                    _ => assert_eq!(got, Verdict::Allow, "{caller:?} {extras:?}"),
                }
            }
        }
        let why = |e| match decide_extras(S, e) {
            Verdict::Refuse(w) => w,
            other => panic!("{other:?}"),
        };
        assert!(why(alone[0]).contains("own session's folder"));
        assert!(why(alone[1]).contains("arguments"));
        assert!(why(alone[2]).contains("worktree"));
        assert!(why(alone[3]).contains("outside a sandbox"));
        assert!(why(alone[4]).contains("checkout the user works in"));
        assert!(why(alone[5]).contains("force a worktree's removal"));
    }

    #[test]
    fn a_program_run_as_it_is_starts_as_an_agent_outside_every_sandbox() {
        #[rustfmt::skip]
        let rows: &[(&str, Start, Target, [char; 3])] = &[
            // (what, start, target, verdict for user, tab, sandboxed)
            ("a program run as it is is unsandboxed", Start::Program, Out, ['a', 'a', 'r']),
            ("a sandboxed agent", Start::Agent { sandboxed: true }, In, ['a', 'a', 'a']),
            ("an unsandboxed agent", Start::Agent { sandboxed: false }, Out, ['a', 'a', 'r']),
            ("a name the config does not resolve", Start::Unresolved, Out, ['a', 'a', 'r']),
        ];
        for (what, start, target, verdicts) in rows {
            assert_eq!(start_target(*start), *target, "{what}");
            for (caller, want) in CALLERS.iter().zip(verdicts) {
                let got = letter(&decide(*caller, StartAgent, start_target(*start)));
                assert_eq!(got, *want, "{what}, asked by {caller:?}");
            }
        }
    }

    #[test]
    fn which_refusals_read_as_no_such_tab() {
        // One letter per target (own, sandboxed agent, agent, terminal,
        // nothing): `h` hidden, `-` refused with its reason.
        let rows: [(CallerKind, bool, &str); 6] = [
            (User, false, "-----"),
            (User, true, "-----"),
            (Tab, false, "-----"),
            (Tab, true, "-----"),
            (S, false, "--hh-"),
            (S, true, "-hhh-"),
        ];
        for (caller, foreign, row) in rows {
            for (target, want) in TARGETS.into_iter().zip(row.chars()) {
                assert_eq!(
                    hides_tab(caller, target, foreign),
                    want == 'h',
                    "{caller:?} {target:?} foreign={foreign}"
                );
            }
        }
    }

    #[test]
    fn who_sees_a_session() {
        let rows: [(CallerKind, usize, bool); 6] = [
            (User, 0, true),
            (User, 2, true),
            (Tab, 0, false),
            (Tab, 1, true),
            (S, 0, false),
            (S, 1, true),
        ];
        for (caller, seen, want) in rows {
            assert_eq!(sees_session(caller, seen), want, "{caller:?} {seen}");
        }
    }

    #[test]
    fn operation_names_are_distinct() {
        let names: std::collections::HashSet<_> = OPS.into_iter().map(name).collect();
        assert_eq!(names.len(), OPS.len());
    }
}

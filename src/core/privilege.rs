//! What each kind of caller may do to each kind of tab (DESIGN.md, "The
//! privilege model"). One pure function over plain data, so that every cell
//! of the matrix is written down and tested; the connection decides who the
//! caller is, the state what the target is.

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
    /// Harmless facts: the agents that exist, the core's status.
    Query,
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
        (C::Tab, _, _) => Allow,
        (C::Sandboxed, O::Query, _) => Allow,
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
        (C::Sandboxed, O::StartAgent, T::SandboxedAgent) => Allow,
        (C::Sandboxed, O::StartAgent, _) => Refuse("start an agent by naming it"),
        (
            C::Sandboxed,
            O::Restart | O::Close | O::Send | O::Read | O::Resize,
            T::Own | T::SandboxedAgent,
        ) => Allow,
        (C::Sandboxed, O::Restart | O::Close | O::Send | O::Read | O::Resize, T::Nothing) => {
            Refuse("this operation needs a tab to act on")
        }
    }
}

/// The operation's name in refusals and journal entries.
pub fn name(op: Operation) -> &'static str {
    match op {
        Operation::StartAgent => "agent",
        Operation::OpenTerminal => "terminal",
        Operation::Restart => "restart",
        Operation::Close => "close",
        Operation::Quit => "quit",
        Operation::Send => "send",
        Operation::Read => "read",
        Operation::Resize => "resize",
        Operation::See => "tabs",
        Operation::ListApprovals => "approvals",
        Operation::Decide => "approve",
        Operation::RunPlugin => "plugin",
        Operation::Report => "report",
        Operation::Query => "query",
    }
}

#[cfg(test)]
mod tests {
    use super::CallerKind::{Sandboxed as S, Tab, User};
    use super::Operation::*;
    use super::Target::{Agent as Out, Nothing, Own, SandboxedAgent as In, Terminal as Term};
    use super::*;

    const CALLERS: [CallerKind; 3] = [User, Tab, S];
    const OPS: [Operation; 14] = [
        StartAgent,
        OpenTerminal,
        Restart,
        Close,
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
    ];
    const TARGETS: [Target; 5] = [Own, In, Out, Term, Nothing];

    /// `a` allow, `q` queue, `r` refuse: one letter per target, in the order
    /// own tab, sandboxed agent, agent, terminal, nothing.
    const SANDBOXED: [(Operation, &str); 14] = [
        (StartAgent, "rarrr"),
        (OpenTerminal, "rrrrr"),
        (Restart, "aarrr"),
        (Close, "aarrr"),
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
    fn operation_names_are_distinct() {
        let names: std::collections::HashSet<_> = OPS.into_iter().map(name).collect();
        assert_eq!(names.len(), OPS.len());
    }
}

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
    /// `nerdr spinoff`: start part of a tab's work in a new agent (target:
    /// the parent tab, whose worktree it branches from and which gets the
    /// results; `spinoff::choice` picks the agent).
    SpinOff,
    /// `nerdr report-result`: a spun-off tab's result for its parent,
    /// always about its own tab (target `Own`; the core then checks the tab
    /// is a spinoff's, `spinoff::delivery`).
    ReportResult,
    // --- handoffs ---
    /// `nerdr handoff`: pass a tab's conversation on. The target is who
    /// gets it: `Own` for the caller's own handoff to the person
    /// (`--to-me`), the agent to start (`--to`), `Nothing` for another
    /// tab's conversation.
    Handoff,
    /// `nerdr handoffs`: what was handed to the person.
    ListHandoffs,
    /// `nerdr switch`: stop a tab's agent and start another in its place
    /// (target: the tab). Like a restart, but a sandboxed agent may ask
    /// it only of its own tab: the agent it would stop in a sibling tab is
    /// the person's to replace. What it may switch to is
    /// `switch::rules`' (a sandboxed tab only to sandboxed agents).
    Switch,
}

/// What it is asked of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// The caller's own tab.
    Own,
    /// A reviewer of the caller's own work (`nerdr request-review` started
    /// it on the caller's tab): it answers to the person, not to its
    /// author ([`tab_target`]).
    OwnReviewer,
    /// The tab whose work the caller reviews: the caller is its reviewer,
    /// whose words reach it only through the person.
    OwnAuthor,
    /// To a sandboxed caller, its reviewer or its author running outside
    /// every sandbox: neither to be read (it is outside the caller's
    /// sandbox) nor to be typed into (F4), so not even by the person's
    /// approval.
    LinkedOutside,
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

/// Why an author's agent may not act on its own reviewer.
pub const REVIEWER_ANSWERS_TO_THE_USER: &str =
    "a reviewer answers to the user, not to the agent whose work it reviews: its author may \
     see, read and diff it, but not type into, restart, switch, close, rename or resize it, nor \
     post, report or ask a review for it (the user can)";

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
        // A result is reported by the spun-off tab, about itself.
        (C::Tab | C::Sandboxed, O::ReportResult, T::Own) => Allow,
        (C::Tab | C::Sandboxed, O::ReportResult, _) => Refuse(
            "a result is reported by the spun-off agent, from its own tab (`nerdr \
             report-result` in the tab `nerdr spinoff` started), and goes only to its parent",
        ),
        // Between a reviewer and its author, only looking: what one says
        // to the other goes through the person (`nerdr reviews --send`).
        (C::Tab | C::Sandboxed, O::See | O::Read | O::Diff | O::Query, T::OwnReviewer) => Allow,
        (C::Tab | C::Sandboxed, O::See | O::Read | O::Diff | O::Query, T::OwnAuthor) => Allow,
        (C::Tab | C::Sandboxed, _, T::OwnReviewer) => Refuse(REVIEWER_ANSWERS_TO_THE_USER),
        (C::Tab | C::Sandboxed, _, T::OwnAuthor) => Refuse(
            "a reviewer's words reach its author only through its review (`nerdr post-review`), \
             which the user reads and sends on (`nerdr reviews --send`): it may see, read and \
             diff its author's tab, nothing more",
        ),
        // Only `tab_target` gives it, and only to a sandboxed caller: the
        // two refusals above, joined.
        (C::Tab | C::Sandboxed, O::Query, T::LinkedOutside) => Allow,
        (C::Tab | C::Sandboxed, _, T::LinkedOutside) => Refuse(
            "a reviewer and its author reach each other only through the user (`nerdr \
             post-review`, `nerdr reviews --send`), and this one runs outside every sandbox, \
             which a sandboxed agent may not read either",
        ),
        (C::Tab, _, _) => Allow,
        (C::Sandboxed, O::Query, _) => Allow,
        (C::Sandboxed, O::Switch, T::Own) => Allow,
        (C::Sandboxed, O::Switch, _) => Refuse(
            "a sandboxed agent switches only its own tab's agent (to a sandboxed one): another \
             tab's agent is the user's to replace",
        ),
        // Its spinoff runs sandboxed whatever is asked (`spinoff::choice`).
        (C::Sandboxed, O::SpinOff, T::Own) => Allow,
        (C::Sandboxed, O::SpinOff, T::Nothing) => {
            Refuse("a sandboxed agent spins off from its own tab; run it there")
        }
        (C::Sandboxed, O::SpinOff, _) => Refuse(
            "a sandboxed agent spins off only its own work: the results come back only to it",
        ),
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
    /// `nerdr search --open`: a past conversation resumed in a new tab,
    /// in the folder it ran in.
    pub resumes_conversation: bool,
}

/// The extras a caller may ask for: only the person and unsandboxed tabs
/// may use them.
pub fn decide_extras(caller: CallerKind, extras: Extras) -> Verdict {
    if caller != CallerKind::Sandboxed {
        return Verdict::Allow;
    }
    if extras.unsandboxed_launch {
        return Verdict::Refuse(
            "that agent would run outside every sandbox (its config does not mark it \
             `sandboxed`): a sandboxed agent cannot start it, switch to it or bring it back so",
        );
    }
    if extras.resumes_conversation {
        return Verdict::Refuse(
            "a sandboxed agent cannot resume a past conversation in a new tab: it holds what was \
             said outside its sandbox, and runs in that conversation's folder (the user can, \
             with `nerdr search --open N`)",
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
        // Its reviewer or author (outside every sandbox or not), whose id
        // it knows: no secret to keep, and the refusal says F4's reason.
        (
            CallerKind::Sandboxed,
            Target::OwnReviewer | Target::OwnAuthor | Target::LinkedOutside,
        ) => foreign,
        (CallerKind::Sandboxed, Target::Own | Target::Nothing) => false,
    }
}

/// How a tab stands to the caller's tab in the reviews: `review::store`'s
/// pending reviews, reviewer by author ([`link`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    None,
    /// The tab reviews the caller's work.
    ItsReviewer,
    /// The caller reviews the tab's work.
    ItsAuthor,
}

/// A tab and its line of starters: the tabs whose programs started it
/// (`nerdr agent`, `nerdr spinoff`, `nerdr handoff --to` from a tab),
/// oldest first: its starter's own line, then its starter. A tab counts
/// as each tab of its line ([`link`]): what a tab starts it controls, so
/// a reviewer or author one hop (or more) away is still that reviewer or
/// author. The whole line is kept with the tab, so closing a tab in the
/// middle does not break it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lined<'a> {
    pub id: &'a str,
    pub line: &'a [String],
}

impl Lined<'_> {
    /// Whether this tab is `tab`, or was started (at any remove) by it.
    fn counts_as(&self, tab: &str) -> bool {
        self.id == tab || self.line.iter().any(|t| t == tab)
    }

    /// Whether the two share a tab: one is the other, one started the
    /// other, or one tab started both. Whoever started a tab steers it, so
    /// the author's starters, and what they started, are on its side too.
    fn kin(&self, other: &Lined) -> bool {
        std::iter::once(self.id)
            .chain(self.line.iter().map(String::as_str))
            .any(|t| other.counts_as(t))
    }
}

/// The line of starters of a tab started by programs in tabs `starters`
/// (each given with its own line): each one's line, then itself, without
/// repeats. None for a tab the person started, nor for a reviewer, which
/// nerdr starts for the person whoever asked (it answers to the person:
/// counted as its author, it would be held as the author against the
/// author's other reviewers, and its author's helpers would not be held
/// against it).
pub fn line_of(starters: &[Lined]) -> Vec<String> {
    let mut line: Vec<String> = Vec::new();
    for s in starters {
        for t in s.line.iter().map(String::as_str).chain([s.id]) {
            if !line.iter().any(|l| l == t) {
                line.push(t.to_string());
            }
        }
    }
    line
}

/// How tab `tab` stands to the caller's tab `caller`, from `author_of`
/// (each reviewer tab's author with the author's line, as the review store
/// has it). A tab is on the author's side if it shares a tab with the
/// author's line ([`Lined::kin`]): a tab the author started, one that
/// started the author, or another tab of that starter. On the reviewer's
/// side is the reviewer and what it started (a reviewer's own line is
/// empty: [`line_of`]).
pub fn link(
    author_of: &std::collections::BTreeMap<String, crate::review::store::AuthorLine>,
    caller: Lined,
    tab: Lined,
) -> Link {
    let reviews = |reviewer: Lined, author: Lined| {
        author_of.iter().any(|(r, a)| {
            let a = Lined {
                id: &a.author,
                line: &a.line,
            };
            reviewer.counts_as(r) && author.kin(&a)
        })
    };
    if reviews(tab, caller) {
        Link::ItsReviewer
    } else if reviews(caller, tab) {
        Link::ItsAuthor
    } else {
        Link::None
    }
}

/// A tab, as far as what it is to a caller goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TabFacts {
    /// The caller's own tab.
    pub own: bool,
    /// A terminal pane, not an agent.
    pub terminal: bool,
    pub sandboxed: bool,
    pub link: Link,
}

/// What a tab is to a caller. A reviewer and its author are a target of
/// their own to each other; to a sandboxed caller an unsandboxed reviewer
/// or author is [`Target::LinkedOutside`], which it may neither read (it
/// is outside the caller's sandbox) nor reach through the person's
/// approval (F4).
pub fn tab_target(caller: CallerKind, tab: TabFacts) -> Target {
    let within_reach = caller != CallerKind::Sandboxed || tab.sandboxed;
    match tab {
        TabFacts { own: true, .. } => Target::Own,
        TabFacts { terminal: true, .. } => Target::Terminal,
        TabFacts {
            link: Link::ItsReviewer | Link::ItsAuthor,
            ..
        } if !within_reach => Target::LinkedOutside,
        TabFacts {
            link: Link::ItsReviewer,
            ..
        } => Target::OwnReviewer,
        TabFacts {
            link: Link::ItsAuthor,
            ..
        } => Target::OwnAuthor,
        TabFacts {
            sandboxed: true, ..
        } => Target::SandboxedAgent,
        TabFacts { .. } => Target::Agent,
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
        Operation::SpinOff => "spinoff",
        Operation::ReportResult => "report-result",
        Operation::Handoff => "handoff",
        Operation::ListHandoffs => "handoffs",
        Operation::Switch => "switch",
    }
}

#[cfg(test)]
#[path = "privilege_tests.rs"]
mod tests;

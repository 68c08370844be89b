//! `nerdr switch TAB AGENT`: the same tab (id, name, worktree, branch)
//! goes on with another agent, which gets a handoff from the one before
//! as its first prompt. What may be switched to what is [`rules`]' (pure,
//! table-tested); the history each tab's row shows is [`store`]'s
//! (`switches.json`). The core's side, which stops the old agent and
//! starts the new one through the launch `nerdr restart` uses, is
//! `core::switch`.

pub mod rules;
pub mod store;

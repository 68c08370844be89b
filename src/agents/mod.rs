//! How nerdr starts each agent: the session arguments that make it begin,
//! resume or continue a conversation (`session.rs`), the built-in agents
//! and their optional flags (`kind.rs`), which of those flags the installed
//! version supports (`features.rs`, running `--help` through `help.rs`), and the UUIDs nerdr gives new conversations (`uuid.rs`).
//! Resolving an agent from config is `config`; choosing the mode, placing a
//! sandbox probe and running the program are the core's.

pub mod features;
pub mod help;
pub mod help_gate;
pub mod kind;
pub mod opencode;
pub mod session;
pub mod uuid;

#[cfg(test)]
mod tests;

pub use features::{program_word, Detector};
pub use help::HelpEnv;
pub use kind::{Features, Kind};
pub use session::{build, ArgvError, Launch, Mode, Reported};

//! The sandbox check (docs/ARCHITECTURE.md, "The sandbox check (probe)").
//! Before every launch of a sandboxed agent the core runs `nerdr probe`
//! through the agent's own wrapper, in place of the agent, and starts the
//! agent only if the probe, from inside, reached nothing of nerdr's.
//!
//! - [`placement`]: where the probe goes in the agent's command (pure);
//! - [`mounts`]: where nerdr's folders are mounted, by identity (pure);
//! - [`targets`]: what the probe must not reach, from the core's facts (pure);
//! - [`plan`]: what the probe is to try, as the core hands it over;
//! - [`findings`]: what the probe reports back (plain data);
//! - [`verdict`]: start, refuse or could-not-check, from the findings (pure);
//! - [`checks`]: the probe's own side, run inside the sandbox;
//! - [`run`]: the core's side: run the wrapped probe, bounded in time.

pub mod checks;
pub mod findings;
pub mod mounts;
pub mod placement;
pub mod plan;
pub mod run;
pub mod targets;
pub mod verdict;

/// The word the probe's report line starts with, before the nonce.
pub const REPORT_TAG: &str = "NERDR-PROBE";

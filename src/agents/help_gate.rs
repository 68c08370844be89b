//! When an agent's program may be run on the host (`--help`, to learn its
//! features): an unsandboxed agent's before its launch (it runs with the
//! person's rights anyway); a sandboxed agent's only after that launch's
//! sandbox check passed, and only the program file the check proved the
//! agent cannot write. Before the check, a sandboxed agent's program may
//! be one its agent replaced (through a wrapper that was fixed since, say):
//! running it on the host would hand the agent the host. One pure
//! function, [`help_program`]; the core asks it at both stages.

use std::path::{Path, PathBuf};

/// Where a launch is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Building the command line, before anything ran.
    Building,
    /// The sandbox check of this launch passed (sandboxed agents only).
    Checked,
}

/// The program to run with `--help` at `stage`, or `None` (its optional
/// flags then count as unsupported, or were decided already).
/// `found` is the program as the launch resolves it; `proven` the agent's
/// program as the passed check resolved and tested it.
pub fn help_program(
    sandboxed: bool,
    stage: Stage,
    found: Option<&Path>,
    proven: Option<&Path>,
) -> Option<PathBuf> {
    match (sandboxed, stage) {
        (false, Stage::Building) => found.map(Path::to_path_buf),
        // Decided while building; there is no check to wait for.
        (false, Stage::Checked) => None,
        (true, Stage::Building) => None,
        // The file the check tested, never another word's resolution.
        (true, Stage::Checked) => proven.map(Path::to_path_buf),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// sandboxed, stage, found, proven, and the program to run.
    type Row<'a> = (
        bool,
        Stage,
        Option<&'a Path>,
        Option<&'a Path>,
        Option<PathBuf>,
    );

    #[test]
    fn every_row() {
        let found = Path::new("/usr/bin/codex");
        let proven = Path::new("/opt/codex/bin/codex");
        let p = |s: &Path| Some(s.to_path_buf());
        let rows: &[Row] = &[
            (false, Stage::Building, Some(found), None, p(found)),
            (false, Stage::Building, None, None, None),
            (false, Stage::Checked, Some(found), Some(proven), None),
            (true, Stage::Building, Some(found), None, None),
            (true, Stage::Building, Some(found), Some(proven), None),
            (true, Stage::Checked, Some(found), Some(proven), p(proven)),
            (true, Stage::Checked, Some(found), None, None),
            (true, Stage::Checked, None, Some(proven), p(proven)),
        ];
        for (sandboxed, stage, f, pr, want) in rows {
            assert_eq!(
                &help_program(*sandboxed, *stage, *f, *pr),
                want,
                "sandboxed={sandboxed} {stage:?} {f:?} {pr:?}"
            );
        }
    }
}

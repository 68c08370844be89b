//! Finding what a launch runs and where: a folder as the filesystem has
//! it, a command word resolved as a shell would. Filesystem reads only,
//! no decision; shared by the launch, setups and the sandbox check's fact
//! gathering, so none imports another. Hand-written rather than the
//! `which` crate: a relative PATH folder must be skipped (not looked up
//! from the core's own folder) and a word with a `/` is taken from the
//! tab's folder, not the core's.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// `folder` as the filesystem has it (canonical), if it is a folder.
pub(super) fn canonical_folder(folder: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(folder).ok().filter(|f| f.is_dir())
}

pub(super) fn path_of(env: &[(String, String)]) -> String {
    env.iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into())
}

/// Resolve a command word as a shell would: a word with a `/` is a path
/// (relative to the tab's folder), anything else is looked up on `path_var`.
pub(super) fn find_program(word: &str, path_var: &str, cwd: &Path) -> Option<PathBuf> {
    let executable = |p: &Path| {
        p.metadata()
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    };
    if word.contains('/') {
        let p = cwd.join(word);
        return executable(&p).then_some(p);
    }
    std::env::split_paths(path_var)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(word))
        .find(|p| executable(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_resolve_like_a_shell() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let tool = bin.join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(bin.join("plain"), "").unwrap();
        let path = format!("relative:{}", bin.display());
        let rows: &[(&str, Option<PathBuf>)] = &[
            ("tool", Some(tool.clone())),
            ("plain", None),
            ("missing", None),
            ("bin/tool", Some(tmp.path().join("bin/tool"))),
            ("./bin/plain", None),
        ];
        for (word, want) in rows {
            assert_eq!(&find_program(word, &path, tmp.path()), want, "{word}");
        }
    }
}

//! Build-time list of the built-in screen rules: every
//! `src/detect/rules/*.toml`, embedded with `include_str!`, so a new
//! agent's rules file needs no edit anywhere else (`detect::builtin`).
//! Also the commit `nerdr --version` names (`NERDR_COMMIT`).

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

fn main() {
    commit();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/detect/rules");
    // A directory here makes cargo rerun this when a file is added or removed.
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("reading src/detect/rules").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            let name = p
                .file_stem()
                .unwrap()
                .to_str()
                .expect("a UTF-8 file name")
                .to_owned();
            (name, p.to_str().expect("a UTF-8 path").to_owned())
        })
        .collect();
    files.sort();
    let mut out = String::from("pub(super) const FILES: &[(&str, &str)] = &[\n");
    for (name, path) in &files {
        writeln!(out, "    ({name:?}, include_str!({path:?})),").unwrap();
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("detect_rules.rs");
    std::fs::write(dest, out).unwrap();
}

/// `NERDR_COMMIT`: `git rev-parse --short HEAD` when this source tree is a
/// git checkout of its own (a `.git` here, not one of a folder above, as
/// when the crate is vendored into another repository), else `unknown`.
/// Cargo reruns this when HEAD moves: HEAD itself (a checkout), the branch
/// it names (a commit) and packed-refs, found with `git rev-parse
/// --git-path` since a worktree keeps them apart. (A `.git` appearing later
/// is not watched: watching a missing path reruns this on every build.)
fn commit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dot_git = root.join(".git");
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .output()
            .ok()?;
        let text = String::from_utf8(out.stdout).ok()?.trim().to_owned();
        (out.status.success() && !text.is_empty()).then_some(text)
    };
    let commit = if dot_git.exists() {
        git(&["rev-parse", "--short", "HEAD"])
    } else {
        None
    };
    if commit.is_some() {
        let mut watched = vec!["HEAD".to_owned(), "packed-refs".to_owned()];
        watched.extend(git(&["symbolic-ref", "-q", "HEAD"]));
        for name in watched {
            // A path that does not exist would rerun this on every build.
            let path = git(&["rev-parse", "--git-path", &name]).map(|p| root.join(p));
            if let Some(path) = path.filter(|p| p.exists()) {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
    println!(
        "cargo:rustc-env=NERDR_COMMIT={}",
        commit.as_deref().unwrap_or("unknown")
    );
}

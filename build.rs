//! Build-time list of the built-in screen rules: every
//! `src/detect/rules/*.toml`, embedded with `include_str!`, so a new
//! agent's rules file needs no edit anywhere else (`detect::builtin`).

use std::fmt::Write as _;
use std::path::Path;

fn main() {
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

//! No module of `src/` depends, through its siblings, on itself.
//!
//! A cycle between modules means neither can be read, tested or moved
//! without the other; it usually shows a helper kept in the wrong place. The
//! check parses every file of the crate with `syn` (`tree`), collects the
//! modules each module names (`names`: `use` trees with their braces and
//! renames, `crate::`/`super::`/`self::` paths in types, expressions and
//! patterns, names a `use` brought in, re-exports followed to the module
//! that holds the item), lifts each reference to the two sibling modules
//! under the lowest common ancestor of its ends, and fails listing every
//! strongly connected component with its edges and the lines that make them
//! (`cycles`).
//!
//! `#[cfg(test)]` code counts: a test module is part of the module it tests,
//! and a test that reaches into a sibling's internals ties the two as much
//! as the code does (and moves with it when the code moves).
//!
//! What it cannot see:
//! - a method call: `core.resize(..)` on a type whose `impl` blocks are
//!   spread over files names no module, so `impl Core` in `core/a.rs`
//!   calling a method defined in `core/b.rs` (and back) is no edge here;
//!   only the type's path is;
//! - a macro's arguments that are not a list of expressions
//!   (`tokio::select!`, a `matches!` pattern), and what a macro expands to;
//! - a path in a string (`#[serde(with = "...")]`);
//! - a name brought in by a glob that is itself an item re-exported by a
//!   glob (the crate writes none);
//! - `#[cfg]`: every `mod` and `use` counts, whichever platform compiles
//!   it (so a cycle on macOS only is found on Linux too).
//!
//! `NERDR_MODULE_GRAPH_DUMP=1` prints every reference the check sees.

mod checker_tests;
mod cycles;
mod names;
mod tree;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, keyed by its path relative to `dir`.
fn read_sources(dir: &Path) -> BTreeMap<PathBuf, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        let entries =
            std::fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
                out.insert(path.strip_prefix(root).unwrap().to_path_buf(), text);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

#[test]
fn no_module_in_src_depends_on_itself_through_its_siblings() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = read_sources(&src);
    let tree = tree::load(&files, Path::new("main.rs")).unwrap_or_else(|e| panic!("{e}"));
    let references = names::references(&tree);
    if std::env::var_os("DUMP").is_some() {
        for r in &references {
            eprintln!(
                "{} -> {} {}:{} {}",
                tree::display(&r.from),
                tree::display(&r.to),
                r.file.display(),
                r.line,
                r.written
            );
        }
    }
    let found = cycles::find(&references);
    assert!(
        found.is_empty(),
        "module cycles in src/ (move the helper both sides use to a module \
         both can import, named after what it does):\n{}",
        cycles::report(&found, "src")
    );
}

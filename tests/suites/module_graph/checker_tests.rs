//! The checker on small crates written inline: what it finds, what it
//! ignores, and how it resolves the paths it reads.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{cycles, names, tree};

fn crate_of(files: &[(&str, &str)]) -> BTreeMap<PathBuf, String> {
    files
        .iter()
        .map(|(path, text)| (PathBuf::from(path), text.to_string()))
        .collect()
}

/// The sibling edges of a crate, as `from -> to` lines, sorted and unique.
fn edges(files: &[(&str, &str)]) -> Vec<String> {
    let tree = tree::load(&crate_of(files), Path::new("main.rs")).unwrap();
    let mut out: Vec<String> = names::references(&tree)
        .iter()
        .filter_map(|r| cycles::lift(&r.from, &r.to))
        .map(|(a, b)| format!("{} -> {}", tree::display(&a), tree::display(&b)))
        .collect();
    out.sort();
    out.dedup();
    out
}

fn cycle_report(files: &[(&str, &str)]) -> String {
    let tree = tree::load(&crate_of(files), Path::new("main.rs")).unwrap();
    let references = names::references(&tree);
    cycles::report(&cycles::find(&references), "src")
}

#[test]
fn two_modules_that_name_each_other_are_a_cycle_reported_with_its_lines() {
    let report = cycle_report(&[
        ("main.rs", "mod a;\nmod b;\n"),
        ("a.rs", "pub fn f() {\n    crate::b::g();\n}\n"),
        ("b.rs", "use crate::a::f;\npub fn g() {}\n"),
    ]);
    assert_eq!(
        report,
        "cycle: a, b\n  a -> b\n      src/a.rs:2: crate::b::g\n  b -> a\n      src/b.rs:1: crate::a::f\n"
    );
}

#[test]
fn a_cycle_deep_in_two_trees_is_lifted_to_the_trees() {
    let report = cycle_report(&[
        ("main.rs", "mod a;\nmod b;\n"),
        ("a/mod.rs", "mod x;\n"),
        ("a/x.rs", "fn f() -> crate::b::y::T { todo!() }\n"),
        ("b/mod.rs", "pub mod y;\n"),
        (
            "b/y.rs",
            "pub struct T;\nfn g() { let _ = super::super::a::x::f; }\n",
        ),
    ]);
    assert!(report.starts_with("cycle: a, b\n  a -> b\n"), "{report}");
    assert!(
        report.contains("src/b/y.rs:2: super::super::a::x::f"),
        "{report}"
    );
}

#[test]
fn a_module_naming_its_parent_or_child_makes_no_edge() {
    let files = [
        ("main.rs", "mod a;\nfn main() { a::inner::f(); }\n"),
        (
            "a/mod.rs",
            "pub mod inner;\npub fn g() { inner::f(); self::inner::f(); }\n",
        ),
        (
            "a/inner.rs",
            "use super::g;\npub fn f() { crate::a::g(); }\n",
        ),
    ];
    assert_eq!(edges(&files), Vec::<String>::new());
    assert_eq!(cycle_report(&files), "");
}

#[test]
fn a_brace_use_resolves_each_leaf_to_its_own_module() {
    let files = [
        ("main.rs", "mod a;\nmod b;\nmod c;\nmod d;\n"),
        (
            "a.rs",
            "use crate::{b::{self as bee, T}, c::U as Renamed};\nuse super::d::{self};\n",
        ),
        ("b.rs", "pub struct T;\n"),
        ("c.rs", "pub struct U;\n"),
        ("d.rs", ""),
    ];
    assert_eq!(edges(&files), ["a -> b", "a -> c", "a -> d"]);
}

#[test]
fn a_name_brought_in_by_use_resolves_through_it() {
    // `state` is bound by the `use`; `state::screen::f` names a module
    // deeper than the `use` did, and that is the edge.
    let files = [
        ("main.rs", "mod core;\nmod holder;\n"),
        ("core/mod.rs", "pub mod state;\n"),
        ("core/state/mod.rs", "pub mod screen;\n"),
        ("core/state/screen.rs", "pub fn f() {}\n"),
        ("holder/mod.rs", "mod server;\nmod peer;\n"),
        (
            "holder/server.rs",
            "use crate::holder;\nfn g() { holder::peer::h(); }\n",
        ),
        ("holder/peer.rs", "pub fn h() {}\n"),
    ];
    assert_eq!(edges(&files), ["holder::server -> holder::peer"]);
}

#[test]
fn a_re_export_is_followed_to_the_module_that_holds_the_item() {
    // `a::b` names `super::F`, which `a` re-exports from `a::c`: the edge is
    // to `a::c`, a sibling, not to the parent.
    let files = [
        ("main.rs", "mod a;\n"),
        ("a/mod.rs", "mod b;\nmod c;\npub use c::F;\n"),
        ("a/b.rs", "fn g() -> super::F { todo!() }\n"),
        ("a/c.rs", "pub struct F;\n"),
    ];
    assert_eq!(edges(&files), ["a::b -> a::c"]);
}

#[test]
fn a_name_cfg_alternatives_bind_resolves_to_each() {
    // `doctor` reaches the platform through its parent's alias; either
    // platform module may be the one compiled.
    let files = [
        ("main.rs", "mod service;\n"),
        (
            "service/mod.rs",
            "mod doctor;\nmod launchd;\nmod systemd;\n\
             #[cfg(target_os = \"macos\")]\nuse launchd as platform;\n\
             #[cfg(not(target_os = \"macos\"))]\nuse systemd as platform;\n",
        ),
        (
            "service/doctor.rs",
            "fn f() { super::platform::gather(); }\n",
        ),
        ("service/launchd.rs", "pub fn gather() {}\n"),
        ("service/systemd.rs", "pub fn gather() {}\n"),
    ];
    assert_eq!(
        edges(&files),
        [
            "service::doctor -> service::launchd",
            "service::doctor -> service::systemd"
        ]
    );
}

#[test]
fn test_code_inline_modules_and_path_attributes_count() {
    let files = [
        ("main.rs", "mod a;\nmod b;\n"),
        (
            "a.rs",
            "pub fn f() {}\n#[cfg(test)]\n#[path = \"a_tests.rs\"]\nmod tests;\n",
        ),
        ("a_tests.rs", "#[test]\nfn t() { crate::b::g(); }\n"),
        (
            "b.rs",
            "pub fn g() {}\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() { assert_eq!(crate::a::f(), ()); }\n}\n",
        ),
    ];
    assert_eq!(edges(&files), ["a -> b", "b -> a"]);
}

#[test]
fn a_file_no_mod_reaches_or_a_mod_with_no_file_is_an_error_naming_it() {
    let err = tree::load(
        &crate_of(&[("main.rs", "mod a;\n"), ("stray.rs", "")]),
        Path::new("main.rs"),
    )
    .err()
    .unwrap();
    assert_eq!(
        err,
        "main.rs: `mod a;` has no file (looked for a.rs and a/mod.rs)\n\
         stray.rs: no `mod` declaration reaches this file; declare it or delete it"
    );
}

#[test]
fn paths_to_other_crates_and_local_items_make_no_edge() {
    let files = [
        ("main.rs", "mod a;\nmod b;\n"),
        (
            "a.rs",
            "use std::fs;\nstruct b;\nfn f() { fs::read(\"x\").ok(); ::b::x(); let _ = b; }\n",
        ),
        ("b.rs", ""),
    ];
    assert_eq!(edges(&files), Vec::<String>::new());
}

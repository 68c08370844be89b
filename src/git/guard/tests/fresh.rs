//! Every check reads what is there now. A file changed in place (same
//! size, same modification time to the nanosecond), replaced by a rename,
//! or newly made is seen by the next check in the same process: what a
//! cache keyed by the files' identity would have to get right, and the
//! guard keeps none.

use std::fs::{File, FileTimes};
use std::os::unix::fs::MetadataExt;

use super::*;

/// A repository with sandbox history and a filter driver `evil` in its
/// config (the guard then gathers attribute files for a `diff`).
fn repo_with_driver(f: &Fixture) -> PathBuf {
    let r = f.repo("r");
    record_run(&f.paths.state_dir, &r, &[]).unwrap();
    git(&r, &["config", "filter.evil.clean", "/bin/cat"]);
    r
}

/// The files a `diff` check in `dir` finds assigning a configured filter.
fn conversions(f: &Fixture, dir: &Path) -> Vec<String> {
    match check(&f.paths.state_dir, dir, Op::Diff).verdict {
        Verdict::Allow => vec![],
        Verdict::Refuse(reasons) => reasons
            .into_iter()
            .filter(|x| x.rule == Rule::Conversion)
            .map(|x| x.why)
            .collect(),
    }
}

fn names(found: &[String], file: &str) -> bool {
    found
        .iter()
        .any(|w| w.starts_with(file) && w.contains("assigns `filter=evil`"))
}

/// `path`'s times, to the nanosecond, put back on `file`.
fn keep_times(file: &Path, of: &std::fs::Metadata) {
    let times = FileTimes::new()
        .set_accessed(of.accessed().unwrap())
        .set_modified(of.modified().unwrap());
    File::options()
        .write(true)
        .open(file)
        .unwrap()
        .set_times(times)
        .unwrap();
}

/// Write `text` over `path` in place: same inode, same size, same
/// modification time; only the content (and the ctime) differ.
fn rewrite_in_place(path: &Path, text: &str) {
    let before = std::fs::metadata(path).unwrap();
    assert_eq!(before.len(), text.len() as u64, "not the same size");
    std::fs::write(path, text).unwrap();
    keep_times(path, &before);
    let after = std::fs::metadata(path).unwrap();
    assert_eq!(
        (
            after.dev(),
            after.ino(),
            after.len(),
            after.modified().unwrap()
        ),
        (
            before.dev(),
            before.ino(),
            before.len(),
            before.modified().unwrap()
        )
    );
}

/// Replace `path` by a file of the same size and times renamed over it.
fn replace_by_rename(path: &Path, text: &str) {
    let before = std::fs::metadata(path).unwrap();
    assert_eq!(before.len(), text.len() as u64, "not the same size");
    let new = path.parent().unwrap().join(".replacement");
    std::fs::write(&new, text).unwrap();
    keep_times(&new, &before);
    std::fs::rename(&new, path).unwrap();
    let after = std::fs::metadata(path).unwrap();
    assert_ne!(after.ino(), before.ino());
    assert_eq!(
        (after.len(), after.modified().unwrap()),
        (before.len(), before.modified().unwrap())
    );
}

const SAFE: &str = "* filter=safe\n";
const EVIL: &str = "* filter=evil\n";

/// Each attribute file git reads, written harmless, checked, then changed
/// by `change` to assign the configured driver: the next check names it.
fn each_attribute_file_changed_by(change: fn(&Path, &str)) {
    let f = Fixture::new();
    let r = repo_with_driver(&f);
    std::fs::create_dir_all(r.join("d/e")).unwrap();
    std::fs::write(r.join("d/e/t.txt"), "t\n").unwrap();
    std::fs::write(r.join("d/e/.gitattributes"), SAFE).unwrap();
    git(&r, &["add", "."]);
    git(&r, &["commit", "-q", "-m", "tracked attributes"]);
    let global = f.root().join("attributes");
    git(
        &r,
        &["config", "core.attributesFile", global.to_str().unwrap()],
    );
    let files = [
        (r.join(".gitattributes"), ".gitattributes"),
        (r.join("d/e/.gitattributes"), "d/e/.gitattributes"),
        (r.join(".git/info/attributes"), "info/attributes"),
        (global.clone(), "attributes"),
    ];
    for (path, _) in &files {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, SAFE).unwrap();
    }
    assert_eq!(conversions(&f, &r), Vec::<String>::new());
    for (path, label) in &files {
        change(path, EVIL);
        let found = conversions(&f, &r);
        let shown = path.display().to_string();
        assert!(names(&found, &shown), "{label} not seen:\n{found:#?}");
        change(path, SAFE);
        let found = conversions(&f, &r);
        assert!(!names(&found, &shown), "{label} still seen:\n{found:#?}");
    }
}

#[test]
fn an_attribute_file_changed_in_place_keeping_size_and_times_is_read_again() {
    each_attribute_file_changed_by(rewrite_in_place);
}

#[test]
fn an_attribute_file_replaced_by_a_rename_is_read_again() {
    each_attribute_file_changed_by(replace_by_rename);
}

#[test]
fn a_new_nested_attribute_file_is_read() {
    let f = Fixture::new();
    let r = repo_with_driver(&f);
    std::fs::create_dir_all(r.join("a/b/c")).unwrap();
    std::fs::write(r.join("a/b/c/x.txt"), "x\n").unwrap();
    assert_eq!(conversions(&f, &r), Vec::<String>::new());
    // Untracked and ignored, deep down, with nothing else changed above.
    std::fs::write(r.join(".git/info/exclude"), ".gitattributes\n").unwrap();
    std::fs::write(r.join("a/b/c/.gitattributes"), EVIL).unwrap();
    let found = conversions(&f, &r);
    assert!(
        names(
            &found,
            &r.join("a/b/c/.gitattributes").display().to_string()
        ),
        "{found:#?}"
    );
    // From a folder below the top, too.
    let found = conversions(&f, &r.join("a/b"));
    assert!(
        names(
            &found,
            &r.join("a/b/c/.gitattributes").display().to_string()
        ),
        "{found:#?}"
    );
}

#[test]
fn a_config_file_changed_in_place_or_replaced_is_read_again() {
    let f = Fixture::new();
    let r = f.repo("r");
    record_run(&f.paths.state_dir, &r, &[]).unwrap();
    // The filter a committed attribute file assigns, and a textconv in an
    // included file: both misspelt, so no program is configured yet.
    std::fs::write(r.join(".gitattributes"), EVIL).unwrap();
    git(&r, &["add", "."]);
    git(
        &r,
        &["-c", "filter.evil.clean=cat", "commit", "-q", "-m", "attrs"],
    );
    git(&r, &["config", "filter.evix.clean", "/bin/cat"]);
    let inc = f.root().join("inc.cfg");
    std::fs::write(&inc, "[diff \"x\"]\n\ttextcxnv = /bin/cat\n").unwrap();
    git(&r, &["config", "include.path", inc.to_str().unwrap()]);
    let settings = |op| match check(&f.paths.state_dir, &r, op).verdict {
        Verdict::Allow => vec![],
        Verdict::Refuse(reasons) => reasons
            .into_iter()
            .map(|x| (x.rule, x.setting))
            .collect::<Vec<_>>(),
    };
    let has = |got: &[(Rule, String)], rule: Rule, setting: &str| {
        got.iter().any(|(r, s)| *r == rule && s == setting)
    };
    let got = settings(Op::Diff);
    assert!(!has(&got, Rule::Conversion, "filter.evil.clean"), "{got:?}");
    assert!(
        !has(&got, Rule::RepositoryProgram, "diff.x.textconv"),
        "{got:?}"
    );
    // The repository's config, in place: now the driver the attributes
    // assign has a command.
    let config = r.join(".git/config");
    let text = std::fs::read_to_string(&config).unwrap();
    rewrite_in_place(&config, &text.replace("\"evix\"", "\"evil\""));
    let got = settings(Op::Diff);
    assert!(has(&got, Rule::Conversion, "filter.evil.clean"), "{got:?}");
    // The included file, replaced by a rename.
    let text = std::fs::read_to_string(&inc).unwrap();
    replace_by_rename(&inc, &text.replace("textcxnv", "textconv"));
    let got = settings(Op::Diff);
    assert!(
        has(&got, Rule::RepositoryProgram, "diff.x.textconv"),
        "{got:?}"
    );
}

#[test]
fn attribute_files_only_in_head_are_found_from_any_folder() {
    let f = Fixture::new();
    let r = repo_with_driver(&f);
    std::fs::create_dir_all(r.join("d")).unwrap();
    std::fs::write(r.join("d/x.txt"), "x\n").unwrap();
    std::fs::write(r.join(".gitattributes"), EVIL).unwrap();
    git(&r, &["add", "."]);
    git(
        &r,
        &["-c", "filter.evil.clean=cat", "commit", "-q", "-m", "attrs"],
    );
    // Deleted from the index and the working tree, still in HEAD (a
    // checkout or reset writes it back).
    git(&r, &["rm", "-q", ".gitattributes"]);
    for dir in [r.clone(), r.join("d")] {
        let found = conversions(&f, &dir);
        assert!(
            names(&found, "HEAD:.gitattributes"),
            "from {}: {found:#?}",
            dir.display()
        );
    }
}

//! Where an agent's rules come from: the files nerdr ships
//! (`src/detect/rules/NAME.toml`, embedded at build time by `build.rs`),
//! or the user's `$XDG_CONFIG_HOME/nerdr/detect/NAME.toml`, which replaces
//! the built-in file of the same name.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use super::rules::{parse, RuleSet};
use super::RulesError;

mod files {
    include!(concat!(env!("OUT_DIR"), "/detect_rules.rs"));
}

/// Every built-in rules file: (name, text).
pub fn files() -> &'static [(&'static str, &'static str)] {
    files::FILES
}

/// The built-in rules for `name`, if nerdr ships some.
pub fn builtin(name: &str) -> Option<Arc<RuleSet>> {
    type Parsed = Vec<(&'static str, Option<Arc<RuleSet>>)>;
    static PARSED: OnceLock<Parsed> = OnceLock::new();
    let parsed = PARSED.get_or_init(|| {
        files()
            .iter()
            .map(|(n, text)| {
                let shown = format!("built-in {n}.toml");
                // The table test parses every file, so this is a build
                // that skipped its tests; the agent's state is then unknown.
                let rules = parse(n, None, &shown, text)
                    .map_err(|e| tracing::error!("{e}"))
                    .ok()
                    .map(Arc::new);
                (*n, rules)
            })
            .collect()
    });
    parsed.iter().find(|(n, _)| *n == name)?.1.clone()
}

/// The rules for `name`: the user's `dir/NAME.toml` if it exists, else the
/// built-in file. `Ok(None)`: no rules for that name. A malformed user
/// file is an error (the caller keeps the built-in rules). Reads the disk.
pub fn load(name: &str, dir: &Path) -> Result<Option<Arc<RuleSet>>, RulesError> {
    if !valid_name(name) {
        return Err(RulesError {
            message: format!(
                "detect = \"{name}\": a rules name is letters, digits, `-` and `_` \
                 (it names the file {}/NAME.toml)",
                dir.display()
            ),
        });
    }
    let path = dir.join(format!("{name}.toml"));
    match std::fs::read(&path) {
        Ok(bytes) => {
            let shown = path.display().to_string();
            let text = String::from_utf8(bytes).map_err(|e| RulesError {
                message: format!(
                    "{shown}: not UTF-8 text (byte {}); save it as UTF-8 or remove it to use the \
                     built-in rules",
                    e.utf8_error().valid_up_to()
                ),
            })?;
            parse(name, Some(path.clone()), &shown, &text).map(|r| Some(Arc::new(r)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(builtin(name)),
        Err(e) => Err(RulesError {
            message: format!(
                "{}: cannot be read ({e}); fix it or remove it to use the built-in rules",
                path.display()
            ),
        }),
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_in_the_rules_folder_is_built_in_and_parses() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/detect/rules");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .map(|p| p.file_stem().unwrap().to_str().unwrap().to_owned())
            .collect();
        on_disk.sort();
        let table: Vec<&str> = files().iter().map(|(n, _)| *n).collect();
        assert_eq!(table, on_disk, "the built-in table is stale: rebuild");
        for (name, text) in files() {
            assert!(valid_name(name), "{name}.toml: not a valid rules name");
            let on_disk = std::fs::read_to_string(dir.join(format!("{name}.toml"))).unwrap();
            assert_eq!(*text, on_disk, "{name}.toml: the built-in copy is stale");
            if let Err(e) = parse(name, None, &format!("src/detect/rules/{name}.toml"), text) {
                panic!("{e}");
            }
            assert!(builtin(name).is_some(), "{name}");
        }
        assert!(
            table.contains(&"claude") && table.contains(&"codex"),
            "{table:?}"
        );
        assert_eq!(builtin("no-such-agent"), None);
    }

    #[test]
    fn a_user_file_replaces_the_built_in_one() {
        let dir = tempfile::tempdir().unwrap();
        // No user file: the built-in rules.
        let got = load("claude", dir.path()).unwrap().unwrap();
        assert_eq!(got.file, None);
        assert_eq!(got, builtin("claude").unwrap());
        std::fs::write(
            dir.path().join("claude.toml"),
            "[[rule]]\nname = \"mine\"\nstate = \"idle\"\nregion = \"screen\"\ncontains = \"x\"\n",
        )
        .unwrap();
        let got = load("claude", dir.path()).unwrap().unwrap();
        assert_eq!(
            got.file.as_deref(),
            Some(dir.path().join("claude.toml").as_path())
        );
        let names: Vec<&str> = got.rules().iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, vec!["mine"]);
        // A name with no built-in file and no user file: no rules.
        assert_eq!(load("mytool", dir.path()).unwrap(), None);
        // A user file for a new name.
        std::fs::copy(
            dir.path().join("claude.toml"),
            dir.path().join("mytool.toml"),
        )
        .unwrap();
        assert_eq!(load("mytool", dir.path()).unwrap().unwrap().name, "mytool");
    }

    #[test]
    fn a_bad_user_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("claude.toml");
        std::fs::write(
            &path,
            "[[rule]]\nname = \"x\"\nstate = \"idle\"\nregion = \"bottom\"\ncontains = \"x\"\n",
        )
        .unwrap();
        let e = load("claude", dir.path()).unwrap_err().message;
        assert!(
            e.starts_with(&format!(
                "{}:4: rule \"x\": key `region`: \"bottom\" is not one of",
                path.display()
            )),
            "{e}"
        );
        std::fs::write(&path, b"agent = \"\xff\"\n").unwrap();
        let e = load("claude", dir.path()).unwrap_err().message;
        assert!(
            e.starts_with(&format!("{}: not UTF-8", path.display())),
            "{e}"
        );
        // A folder where the file should be.
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        let e = load("claude", dir.path()).unwrap_err().message;
        assert!(
            e.starts_with(&format!("{}: cannot be read", path.display())),
            "{e}"
        );
    }

    #[test]
    fn a_name_cannot_leave_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["../claude", "a/b", "", ".hidden", "x.toml"] {
            let e = load(name, dir.path()).unwrap_err().message;
            assert!(e.contains("a rules name is letters, digits"), "{name}: {e}");
        }
        for name in ["claude", "my-tool_2"] {
            assert!(load(name, dir.path()).is_ok(), "{name}");
        }
    }
}

//! The nerdr skill `nerdr integration install` puts beside an agent's
//! hooks: `SKILL.md` (this folder) in the agent's own skills folder
//! (`~/.claude/skills/nerdr/`, `$CODEX_HOME/skills/nerdr/`,
//! `$COPILOT_HOME/skills/nerdr/`), which teaches the agent nerdr's commands
//! and what to do when one is refused. A whole file nerdr owns, unlike the
//! hooks' edits of the person's settings: install writes it where there is
//! none (or nerdr's own, untouched since), uninstall removes it while it is
//! still exactly what nerdr wrote, so the folder is as it was before. A
//! file of the same name nerdr did not write, or one changed since, is
//! left as it is and named. [`install_step`] and [`uninstall_step`] decide,
//! pure; the record of what was written is `integrations/skills.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::state::sha256;
use super::{files, Agent, AgentEnv};

/// What install writes.
pub const SKILL: &str = include_str!("SKILL.md");

/// Where the agent's nerdr skill goes, `None` without HOME or the agent's
/// variable.
pub fn skill_file(agent: Agent, env: &AgentEnv) -> Option<PathBuf> {
    let (var, dot) = match agent {
        Agent::Claude => (&env.claude_config_dir, ".claude"),
        Agent::Codex => (&env.codex_home, ".codex"),
        Agent::Copilot => (&env.copilot_home, ".copilot"),
    };
    let dir = var.clone().or_else(|| Some(env.home.as_ref()?.join(dot)))?;
    Some(dir.join("skills").join("nerdr").join("SKILL.md"))
}

/// What install does with the skill file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstallStep {
    Write,
    /// It is nerdr's skill as this nerdr writes it.
    Already,
    /// A file nerdr did not write, or changed since: left alone.
    KeepTheirs,
}

/// `current`: the file now; `written`: the hash of what nerdr last wrote
/// there, if it did.
pub fn install_step(current: Option<&str>, written: Option<&str>, ours: &str) -> InstallStep {
    match current {
        None => InstallStep::Write,
        Some(t) if t == ours => InstallStep::Already,
        // An older nerdr's skill, untouched since: this one's replaces it.
        Some(t) if written == Some(sha256(t).as_str()) => InstallStep::Write,
        Some(_) => InstallStep::KeepTheirs,
    }
}

/// What uninstall does with the skill file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UninstallStep {
    Remove,
    /// Nothing of nerdr's there.
    Nothing,
    /// nerdr wrote it, and it changed since: the person's edit is kept.
    KeepChanged,
}

pub fn uninstall_step(current: Option<&str>, written: Option<&str>) -> UninstallStep {
    match (current, written) {
        (None, _) | (Some(_), None) => UninstallStep::Nothing,
        (Some(t), Some(w)) if sha256(t) == w => UninstallStep::Remove,
        (Some(_), Some(_)) => UninstallStep::KeepChanged,
    }
}

/// What install wrote, per agent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Written {
    skills: BTreeMap<String, Entry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Entry {
    path: PathBuf,
    sha256: String,
    /// Folders install made for it, outermost first.
    created_dirs: Vec<PathBuf>,
}

fn load(record: &Path) -> anyhow::Result<Written> {
    match files::read(record)? {
        None => Ok(Written::default()),
        Some(t) => serde_json::from_str(&t).with_context(|| {
            format!(
                "{} is not nerdr's record of installed skills; move it aside to start afresh",
                record.display()
            )
        }),
    }
}

fn save(record: &Path, w: &Written) -> anyhow::Result<()> {
    if w.skills.is_empty() {
        return files::remove(record);
    }
    let dir = record.parent().expect("the record lives in a folder");
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    files::write(record, &(serde_json::to_string_pretty(w)? + "\n"))
}

/// Put the skill in place for `agent`; a line for the person.
pub fn install(agent: Agent, file: &Path, record: &Path) -> anyhow::Result<String> {
    let mut w = load(record)?;
    let before = files::read(file)?;
    let written = w.skills.get(agent.name()).filter(|e| e.path == file);
    match install_step(before.as_deref(), written.map(|e| e.sha256.as_str()), SKILL) {
        InstallStep::Already => Ok(format!("nerdr's skill is already in {}", file.display())),
        InstallStep::KeepTheirs => Ok(format!(
            "{} exists and is not nerdr's (or was changed): left as it is, without nerdr's \
             skill; move it aside and install again to have it",
            file.display()
        )),
        InstallStep::Write => {
            let dirs = match written {
                Some(e) => e.created_dirs.clone(),
                None => files::missing_dirs(file),
            };
            // Recorded first: a failed write leaves a record uninstall skips.
            w.skills.insert(
                agent.name().into(),
                Entry {
                    path: file.to_path_buf(),
                    sha256: sha256(SKILL),
                    created_dirs: dirs.clone(),
                },
            );
            save(record, &w)?;
            files::make_dirs(
                &dirs
                    .iter()
                    .filter(|d| !d.exists())
                    .cloned()
                    .collect::<Vec<_>>(),
            )?;
            files::write(file, SKILL)?;
            Ok(format!("added nerdr's skill {}", file.display()))
        }
    }
}

/// Take the skill out for `agent`; a line for the person, if any.
pub fn uninstall(agent: Agent, file: &Path, record: &Path) -> anyhow::Result<Option<String>> {
    let mut w = load(record)?;
    let Some(entry) = w.skills.get(agent.name()).cloned() else {
        return Ok(None);
    };
    let file = if entry.path == file {
        file
    } else {
        &entry.path
    };
    let current = files::read(file)?;
    let said = match uninstall_step(current.as_deref(), Some(&entry.sha256)) {
        UninstallStep::Nothing => None,
        UninstallStep::Remove => {
            files::remove(file)?;
            files::remove_empty_dirs(&entry.created_dirs);
            Some(format!("removed nerdr's skill {}", file.display()))
        }
        UninstallStep::KeepChanged => Some(format!(
            "kept {}: it changed since nerdr wrote it (your edit); remove it yourself if you \
             no longer want it",
            file.display()
        )),
    };
    w.skills.remove(agent.name());
    save(record, &w)?;
    Ok(said)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_writes_only_where_nothing_or_its_own_untouched_file_is() {
        let ours = "new skill";
        let old = "old skill";
        let old_sha = sha256(old);
        #[rustfmt::skip]
        let rows: &[(&str, Option<&str>, Option<&str>, InstallStep)] = &[
            ("no file", None, None, InstallStep::Write),
            ("no file, a record of one gone", None, Some(&old_sha), InstallStep::Write),
            ("this nerdr's skill", Some(ours), None, InstallStep::Already),
            ("an older nerdr's, untouched", Some(old), Some(&old_sha), InstallStep::Write),
            ("an older nerdr's, edited", Some("edited"), Some(&old_sha), InstallStep::KeepTheirs),
            ("the person's own file", Some("mine"), None, InstallStep::KeepTheirs),
        ];
        for (what, current, written, want) in rows {
            assert_eq!(install_step(*current, *written, ours), *want, "{what}");
        }
    }

    #[test]
    fn uninstall_removes_only_what_it_wrote_unchanged() {
        let sha = sha256(SKILL);
        #[rustfmt::skip]
        let rows: &[(&str, Option<&str>, Option<&str>, UninstallStep)] = &[
            ("as written", Some(SKILL), Some(&sha), UninstallStep::Remove),
            ("edited since", Some("edited"), Some(&sha), UninstallStep::KeepChanged),
            ("gone", None, Some(&sha), UninstallStep::Nothing),
            ("never written", Some("mine"), None, UninstallStep::Nothing),
        ];
        for (what, current, written, want) in rows {
            assert_eq!(uninstall_step(*current, *written), *want, "{what}");
        }
    }

    #[test]
    fn the_skill_names_itself_and_teaches_the_commands() {
        let front = SKILL.strip_prefix("---\n").unwrap();
        let (meta, _) = front.split_once("\n---\n").unwrap();
        assert!(meta.lines().any(|l| l == "name: nerdr"), "{meta}");
        assert!(
            meta.lines().any(|l| l.starts_with("description: ")),
            "{meta}"
        );
        for taught in [
            "\"${NERDR_BIN:-nerdr}\" request-review",
            "\"${NERDR_BIN:-nerdr}\" spinoff",
            "\"${NERDR_BIN:-nerdr}\" report-result",
            "\"${NERDR_BIN:-nerdr}\" handoff",
            "\"${NERDR_BIN:-nerdr}\" why add",
            "show the person its message as it is",
        ] {
            assert!(SKILL.contains(taught), "{taught}");
        }
    }

    #[test]
    fn install_then_uninstall_leaves_the_folder_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".claude/skills/other")).unwrap();
        std::fs::write(home.join(".claude/skills/other/SKILL.md"), "theirs").unwrap();
        let env = AgentEnv {
            home: Some(home.clone()),
            ..AgentEnv::default()
        };
        let file = skill_file(Agent::Claude, &env).unwrap();
        let record = dir.path().join("state/integrations/skills.json");
        install(Agent::Claude, &file, &record).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), SKILL);
        assert!(install(Agent::Claude, &file, &record)
            .unwrap()
            .contains("already"));
        uninstall(Agent::Claude, &file, &record).unwrap();
        assert!(!file.exists());
        assert!(
            !home.join(".claude/skills/nerdr").exists(),
            "the folder install made"
        );
        assert_eq!(
            std::fs::read_to_string(home.join(".claude/skills/other/SKILL.md")).unwrap(),
            "theirs"
        );
        assert!(!record.exists());
        // An edited skill survives uninstall.
        install(Agent::Claude, &file, &record).unwrap();
        std::fs::write(&file, "my edit").unwrap();
        let said = uninstall(Agent::Claude, &file, &record).unwrap().unwrap();
        assert!(said.starts_with("kept"), "{said}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "my edit");
    }
}

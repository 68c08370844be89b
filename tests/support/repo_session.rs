//! A git repository and nerdr as a non-root user under the private
//! `systemd --user` (the suites on bringing work home and on reviews):
//! the service installed, a config, a repository in `~/work/r` with one
//! commit, and the real binary run in it, with the tab, worktree and git
//! questions those suites ask.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::sysenv::SystemdEnv;

/// `[agents.sh]`: a plain bash, outside every sandbox.
pub const SH: &str = "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n";

/// `~/.gitconfig` with an identity (merge commits need one) and `main`
/// as the first branch.
pub const GITCONFIG_MAIN: (&str, &str) = (
    ".gitconfig",
    "[user]\n\tname = t\n\temail = t@e\n[init]\n\tdefaultBranch = main\n",
);

/// `[agents.NAME]`: bash inside bubblewrap (read-only root, the runtime
/// dir hidden, its own PID namespace), a sandbox nerdr's check passes (it
/// runs in place of the last word, NAME); `hide_state`: nerdr's state
/// folder (the hook socket's) hidden too.
pub fn boxed_shell(name: &str, hide_state: bool) -> String {
    let state = if hide_state {
        " --tmpfs \\\"$(dirname \\\"$NERDR_SOCKET\\\")\\\""
    } else {
        ""
    };
    format!(
        "[agents.{name}]\ncommand = [\"sh\", \"-c\", \"if [ \\\"$0\\\" = {name} ]; \
         then set -- bash --norc --noprofile; else set -- \\\"$0\\\" \\\"$@\\\"; fi; exec bwrap \
         --ro-bind / / --dev /dev --proc /proc --unshare-pid --die-with-parent \
         --tmpfs \\\"$XDG_RUNTIME_DIR\\\"{state} -- \\\"$@\\\"\", \"{name}\"]\nsandboxed = true\n"
    )
}

pub struct RepoSession {
    pub env: SystemdEnv,
    pub repo: PathBuf,
}

impl RepoSession {
    /// The service installed with `config`, `files` (paths under HOME:
    /// `work/r/...` for the repository's) written, and `~/work/r` a
    /// repository holding them in one commit, "first".
    pub fn start(config: &str, files: &[(&str, &str)]) -> Option<RepoSession> {
        let env = SystemdEnv::start()?;
        env.run(&["nerdr", "service", "install"]);
        env.write_user_file(".config/nerdr/config.toml", config);
        for (rel, text) in files {
            env.write_user_file(rel, text);
        }
        let st = RepoSession {
            repo: env.home().join("work/r"),
            env,
        };
        st.git(&st.repo, &["init", "-q"]);
        st.git(&st.repo, &["add", "."]);
        st.git(&st.repo, &["commit", "-q", "-m", "first"]);
        Some(st)
    }

    /// A repository on `main` with one commit (`tracked.txt`, three
    /// lines, and `*.log` ignored); the user's git has an identity.
    pub fn on_main(config: &str) -> Option<RepoSession> {
        Self::start(
            config,
            &[
                GITCONFIG_MAIN,
                ("work/r/tracked.txt", "one\ntwo\nthree\n"),
                ("work/r/.gitignore", "*.log\n"),
            ],
        )
    }

    /// `git ARGS` as the user in `dir`, with an identity; stdout trimmed.
    pub fn git(&self, dir: &Path, args: &[&str]) -> String {
        self.git_raw(dir, args).trim_end().to_string()
    }

    /// `git` whose stdout is kept as git wrote it.
    pub fn git_raw(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.env.run(&super::git::with_identity(s(dir), args));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `git` that may fail: (success, stdout and stderr).
    pub fn git_out(&self, dir: &Path, args: &[&str]) -> (bool, String) {
        let out = self.env.output(&super::git::with_identity(s(dir), args));
        (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    }

    /// `nerdr ARGS` as the user in the repository (in HOME once a test
    /// removed it): (success, stdout, stderr).
    pub fn nerdr(&self, args: &[&str]) -> (bool, String, String) {
        let dir = if self.repo.exists() {
            self.repo.as_path()
        } else {
            self.env.home()
        };
        let out = self.env.nerdr_in(dir, args);
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// `nerdr ARGS`, which must succeed: its stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        self.ok_said(args).0
    }

    /// `nerdr ARGS`, which must succeed: its stdout and what it said on
    /// stderr.
    pub fn ok_said(&self, args: &[&str]) -> (String, String) {
        let (ok, out, err) = self.nerdr(args);
        assert!(ok, "nerdr {args:?} failed: {err}");
        (out, err)
    }

    /// `nerdr ARGS`, which must fail: its stderr.
    pub fn fails(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.nerdr(args);
        assert!(!ok, "nerdr {args:?} was meant to fail: {out}");
        err
    }

    /// A new tab of `agent`: its id.
    pub fn tab(&self, agent: &str) -> String {
        self.ok(&["agent", agent]).trim().to_string()
    }

    /// A new tab of `agent`: its id and worktree.
    pub fn tab_and_worktree(&self, agent: &str) -> (String, PathBuf) {
        let tab = self.tab(agent);
        let wt = self.worktree_of(&tab);
        (tab, wt)
    }

    /// The tabs, closed ones too with `--all`.
    pub fn tabs(&self, extra: &[&str]) -> Vec<Value> {
        serde_json::from_str(&self.ok(&[&["tabs", "--json"], extra].concat())).unwrap()
    }

    /// Tab `id`'s row in `nerdr tabs --json`.
    pub fn tab_row(&self, id: &str) -> Value {
        self.tabs(&[])
            .into_iter()
            .find(|t| t["id"] == id)
            .unwrap_or_else(|| panic!("no tab {id}"))
    }

    /// Tab `tab`'s worktree, closed or not.
    pub fn worktree_of(&self, tab: &str) -> PathBuf {
        let tabs = self.tabs(&["--all"]);
        let t = tabs.iter().find(|t| t["id"] == tab).expect("tab listed");
        PathBuf::from(t["worktree"].as_str().expect("a worktree"))
    }

    pub fn worktrees(&self) -> Vec<Value> {
        serde_json::from_str(&self.ok(&["worktrees", "--json"])).unwrap()
    }

    /// Worktree `wt`'s row in `nerdr worktrees --json`.
    pub fn worktree_row(&self, wt: &Path) -> Value {
        let rows = self.worktrees();
        rows.iter()
            .find(|r| r["path"] == s(wt))
            .cloned()
            .unwrap_or_else(|| panic!("{} not listed: {rows:#?}", wt.display()))
    }

    /// Write `file` in `dir` and commit it there (ignored or not).
    pub fn commit(&self, dir: &Path, file: &str, text: &str, message: &str) {
        std::fs::write(dir.join(file), text).unwrap();
        self.git(dir, &["add", "-f", file]);
        self.git(dir, &["commit", "-q", "-m", message]);
    }

    /// The repository's HEAD.
    pub fn head(&self) -> String {
        self.git(&self.repo, &["rev-parse", "HEAD"])
    }

    /// The commit `branch` names in the repository.
    pub fn tip(&self, branch: &str) -> String {
        self.git(&self.repo, &["rev-parse", &format!("refs/heads/{branch}")])
    }

    /// `git status --porcelain` of the repository.
    pub fn status(&self) -> String {
        self.git(&self.repo, &["status", "--porcelain"])
    }

    /// Poll `nerdr read TAB` until it shows `needle`; the screen.
    pub fn screen_shows(&self, tab: &str, needle: &str, within: Duration) -> String {
        let mut last = String::new();
        let ok = super::poll(within, || {
            last = self.ok(&["read", tab]);
            last.contains(needle)
        });
        assert!(ok, "tab {tab} never showed {needle:?}:\n{last}");
        last
    }

    /// `line` typed into tab `tab`'s shell, waiting up to `secs` seconds
    /// for `rc-<marker>-N`; the screen without its line breaks.
    pub fn in_tab(&self, tab: &str, line: &str, marker: &str, secs: u64) -> String {
        self.ok(&["send", tab, &format!("{line} 2>&1; echo rc-{marker}-$?")]);
        let done = format!("rc-{marker}-");
        let mut last = String::new();
        let finished = super::poll(Duration::from_secs(secs), || {
            last = self.ok(&["read", tab]).replace('\n', "");
            last.rfind(&done).is_some_and(|i| {
                last[i + done.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_digit())
            })
        });
        assert!(finished, "tab {tab} never finished {line:?}:\n{last}");
        last
    }

    /// Run a shell line as the user (files the user makes, as an agent would).
    pub fn sh(&self, line: &str) {
        self.env.run(&["sh", "-c", line]);
    }
}

/// A path as the `&str` a command line takes.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

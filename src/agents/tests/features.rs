//! Feature detection: reading help texts (excerpts of the real ones), and
//! the detector against scripts whose `--help` the test writes, so the
//! cache, its file and the timeout are tested without any agent installed.

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::agents::features::{
    listed_flags, program_word, DetectError, Detector, Record, Stamp, MAX_AGE,
};
use crate::agents::help::{HelpEnv, HelpError};
use crate::agents::kind::{Features, Kind};
use crate::config;

/// copilot 1.0.102: `--session-id` listed as an option, and used again in
/// prose and examples.
const COPILOT: &str = "\
Usage: copilot [OPTIONS] [COMMAND]

Options:
  -r, --resume [<value>]
          Resume from a previous session (optionally specify existing
          session ID, task ID, ID prefix, or name; name matching is
          exact, case-insensitive)
      --continue
          Resume the most recent session
      --session-id <id>
          Resume an existing session or task by ID, or set the UUID
          for a new session
      --add-dir <directory>
          session working directory (the --resume/--worktree/-C
          directory), whatever order the options appear in

Examples:
  # Start a new session with a specific UUID
  $ copilot --session-id=0cb916db-26aa-40f2-86b5-1ba81b225fd2
";

/// An older copilot: `--session-id` only in an example, not as an option.
const COPILOT_OLD: &str = "\
Options:
  -r, --resume [sessionId]  Resume from a previous session
      --continue            Resume the most recent session

Examples:
  $ copilot --session-id=abc   # in a future version
  (see --session-id in the changelog)
";

/// codex-cli 0.171.0, with the warning it prints first.
const CODEX: &str = "\
WARNING: proceeding, even though we could not create PATH aliases
Usage: codex [OPTIONS] [PROMPT]

  -a, --ask-for-approval <APPROVAL_POLICY>
          Configure when the model requires human approval before executing a command

          Possible values:
          - on-request: The model decides when to ask the user for approval
      --no-alt-screen
          Disable alternate screen mode
      --no-daemon
          Run without the shared background server, even if it is already running
  -h, --help
          Print help (see a summary with '-h')
";

/// opencode 1.18.33 (yargs): no `--standalone`.
const OPENCODE: &str = "\
Options:
  -h, --help          show help                                                            [boolean]
  -c, --continue      continue the last session                                            [boolean]
  -s, --session       session id to continue                                                [string]
      --fork          fork the session when continuing (use with --continue or --session)  [boolean]
";

#[test]
fn options_count_only_where_they_are_defined() {
    let set = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<BTreeSet<_>>();
    let rows: &[(&str, &str, BTreeSet<String>)] = &[
        (
            "copilot",
            COPILOT,
            set(&["--add-dir", "--continue", "--resume", "--session-id"]),
        ),
        ("older copilot", COPILOT_OLD, set(&["--continue", "--resume"])),
        (
            "codex",
            CODEX,
            set(&["--ask-for-approval", "--help", "--no-alt-screen", "--no-daemon"]),
        ),
        (
            "opencode",
            OPENCODE,
            set(&["--continue", "--fork", "--help", "--session"]),
        ),
        (
            "clap and commander forms: values, commas, =",
            "  -C, --cd <DIR>\n  --session-id <uuid>   Use a specific id\n  --resume=[value]\n\t--tabbed\n",
            set(&["--cd", "--resume", "--session-id", "--tabbed"]),
        ),
        (
            "colours are ignored",
            "  \x1b[1m--no-daemon\x1b[0m  Run without the server\n",
            set(&["--no-daemon"]),
        ),
        (
            "a bare -- and prose are not options",
            "  --  end of options\n  use --no-daemon to stay alone\n",
            set(&[]),
        ),
        ("nothing", "", set(&[])),
    ];
    for (case, help, want) in rows {
        assert_eq!(&listed_flags(help), want, "{case}");
    }
}

#[test]
fn features_follow_the_flags_of_their_own_agent_only() {
    let all: BTreeSet<String> = ["--session-id", "--no-daemon", "--standalone"]
        .map(String::from)
        .into();
    let rows: &[(Kind, &str, Features)] = &[
        (
            Kind::Copilot,
            COPILOT,
            Features {
                copilot_session_id: true,
                ..Features::default()
            },
        ),
        (Kind::Copilot, COPILOT_OLD, Features::default()),
        (
            Kind::Codex,
            CODEX,
            Features {
                codex_no_daemon: true,
                ..Features::default()
            },
        ),
        (Kind::Opencode, OPENCODE, Features::default()),
    ];
    for (kind, help, want) in rows {
        assert_eq!(Features::of(*kind, &listed_flags(help)), *want, "{kind:?}");
    }
    // Another agent's flags never switch a feature on.
    for kind in [
        Kind::Claude,
        Kind::Cursor,
        Kind::Gemini,
        Kind::Agy,
        Kind::Grok,
    ] {
        assert_eq!(Features::of(kind, &all), Features::default(), "{kind:?}");
        assert!(kind.help_flags().is_empty(), "{kind:?} needs no --help run");
    }
    assert_eq!(
        Features::of(Kind::Opencode, &all),
        Features {
            opencode_standalone: true,
            ..Features::default()
        }
    );
}

#[test]
fn the_program_word_is_the_agent_not_its_wrapper() {
    let rows: &[(&str, &str, Option<&str>)] = &[
        ("codex", "", Some("codex")),
        ("cursor", "", Some("cursor-agent")),
        (
            "codex",
            "[agents.codex]\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"codex\"]\nargs = [\"codex\"]\n",
            Some("codex"),
        ),
        (
            "codex",
            "[agents.codex]\ncommand = [\"/opt/codex/bin/codex\", \"--profile\", \"x\"]\n",
            Some("/opt/codex/bin/codex"),
        ),
        (
            "copilot",
            "[agents.copilot]\ncommand = [\"/home/me/bin/copilot-dev\"]\n",
            Some("/home/me/bin/copilot-dev"),
        ),
        // A wrapper around something else: nothing to ask.
        (
            "codex",
            "[agents.codex]\ncommand = [\"docker\", \"run\", \"img\"]\nargs = [\"codex\"]\n",
            None,
        ),
        // Custom agents have no optional flags.
        ("amp", "[agents.amp]\ncommand = [\"amp\"]\ndetect = \"codex\"\n", None),
    ];
    for (name, text, want) in rows {
        let agent = config::parse(text, Path::new("/cfg/config.toml"))
            .and_then(|c| c.resolve_agent(name))
            .unwrap();
        assert_eq!(program_word(&agent), *want, "{name}: {text}");
    }
}

#[test]
fn answers_expire_with_a_new_file_or_age() {
    let stamp = Stamp {
        mtime_s: 1_700_000_000,
        mtime_ns: 5,
        size: 100,
    };
    let record = Record {
        path: "/usr/bin/codex".into(),
        stamp,
        checked: 1_000_000,
        flags: BTreeSet::new(),
    };
    let day = MAX_AGE.as_secs();
    let rows: &[(&str, Stamp, u64, bool)] = &[
        ("same file, just checked", stamp, 1_000_000, true),
        (
            "same file, almost a day later",
            stamp,
            1_000_000 + day - 1,
            true,
        ),
        ("same file, a day later", stamp, 1_000_000 + day, false),
        ("clock went back", stamp, 999_999, false),
        (
            "new mtime",
            Stamp {
                mtime_s: 1_700_000_001,
                ..stamp
            },
            1_000_000,
            false,
        ),
        (
            "new mtime nanoseconds",
            Stamp {
                mtime_ns: 6,
                ..stamp
            },
            1_000_000,
            false,
        ),
        ("new size", Stamp { size: 101, ..stamp }, 1_000_000, false),
    ];
    for (case, seen, now, want) in rows {
        assert_eq!(record.fresh(seen, *now), *want, "{case}");
    }
}

/// A temp dir with an executable script `name` that appends a line to
/// `runs` each time it runs, then runs `body`.
struct Scripts {
    dir: tempfile::TempDir,
}

impl Scripts {
    fn new() -> Scripts {
        Scripts {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn write(&self, name: &str, body: &str) -> PathBuf {
        let path = self.path(name);
        let runs = self.path("runs");
        let text = format!("#!/bin/sh\necho run >> '{}'\n{body}\n", runs.display());
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    fn runs(&self) -> usize {
        std::fs::read_to_string(self.path("runs"))
            .map(|s| s.lines().count())
            .unwrap_or(0)
    }

    fn state(&self) -> PathBuf {
        self.path("state")
    }
}

fn env() -> HelpEnv {
    HelpEnv {
        path: Some("/usr/bin:/bin".into()),
        home: Some("/nonexistent-home".into()),
    }
}

fn help_printing(text: &str) -> String {
    format!("cat <<'EOF'\n{text}\nEOF")
}

#[test]
fn help_is_asked_once_per_version_of_the_program() {
    let s = Scripts::new();
    let codex = s.write("codex", &help_printing(CODEX));
    let detector = Detector::new(&s.state());

    let features = detector.features(Kind::Codex, &codex, &env());
    assert!(features.codex_no_daemon);
    assert_eq!(s.runs(), 1);
    // Asked again: from memory.
    assert!(
        detector
            .features(Kind::Codex, &codex, &env())
            .codex_no_daemon
    );
    assert_eq!(s.runs(), 1);
    // A restarted core: from the file.
    let cache = std::fs::read_to_string(s.state().join("features.json")).unwrap();
    assert!(cache.contains("--no-daemon"), "{cache}");
    let restarted = Detector::new(&s.state());
    assert!(
        restarted
            .features(Kind::Codex, &codex, &env())
            .codex_no_daemon
    );
    assert_eq!(s.runs(), 1);

    // A new version (same size, later mtime) is asked again.
    let older = CODEX.replace("--no-daemon", "--no-demons");
    assert_eq!(older.len(), CODEX.len());
    s.write("codex", &help_printing(&older));
    let later = SystemTime::now() + Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(&codex)
        .unwrap()
        .set_modified(later)
        .unwrap();
    assert!(
        !restarted
            .features(Kind::Codex, &codex, &env())
            .codex_no_daemon
    );
    assert_eq!(s.runs(), 2);
    // And that answer is what the next core reads.
    let again = Detector::new(&s.state());
    assert!(!again.features(Kind::Codex, &codex, &env()).codex_no_daemon);
    assert_eq!(s.runs(), 2);
}

#[test]
fn a_symlink_is_keyed_by_the_program_it_points_to() {
    let s = Scripts::new();
    let real = s.write("copilot-real", &help_printing(COPILOT));
    let link = s.path("copilot");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let detector = Detector::new(&s.state());
    assert!(
        detector
            .features(Kind::Copilot, &link, &env())
            .copilot_session_id
    );
    assert!(
        detector
            .features(Kind::Copilot, &real, &env())
            .copilot_session_id
    );
    assert_eq!(s.runs(), 1);
}

#[test]
fn agents_without_optional_flags_run_nothing() {
    let s = Scripts::new();
    let claude = s.write("claude", &help_printing(CODEX));
    let detector = Detector::new(&s.state());
    assert_eq!(
        detector.features(Kind::Claude, &claude, &env()),
        Features::default()
    );
    assert_eq!(s.runs(), 0);
}

#[test]
fn the_program_gets_a_small_clean_environment_and_no_stdin() {
    let s = Scripts::new();
    let seen = s.path("seen");
    let program = s.write(
        "codex",
        &format!(
            "env > '{0}'; pwd >> '{0}'; if read line; then echo got-input >> '{0}'; fi\n{1}",
            seen.display(),
            help_printing(CODEX)
        ),
    );
    Detector::new(&s.state()).flags(&program, &env()).unwrap();
    let text = std::fs::read_to_string(&seen).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let cwd = lines.pop();
    assert_eq!(cwd, Some("/"), "{text}");
    let names: BTreeSet<&str> = lines.iter().filter_map(|l| l.split('=').next()).collect();
    // What the shell adds by itself is allowed; nothing of ours is.
    let allowed = [
        "HOME", "NO_COLOR", "OLDPWD", "PATH", "PWD", "SHLVL", "TERM", "_",
    ];
    assert!(names.iter().all(|n| allowed.contains(n)), "{names:?}");
    assert!(lines.contains(&"PATH=/usr/bin:/bin"), "{text}");
    assert!(lines.contains(&"HOME=/nonexistent-home"), "{text}");
    assert!(lines.contains(&"NO_COLOR=1"), "{text}");
    assert!(!text.contains("got-input"), "{text}");
}

#[test]
fn a_hanging_program_is_killed_with_everything_it_started() {
    let s = Scripts::new();
    let pid_file = s.path("sleeper");
    let program = s.write(
        "opencode",
        &format!("sleep 60 & echo $! > '{}'\nwait", pid_file.display()),
    );
    let detector = Detector::with_timeout(&s.state(), Duration::from_millis(500));
    let started = Instant::now();
    let got = detector.flags(&program, &env());
    assert!(
        matches!(got, Err(DetectError::Help(HelpError::Timeout { .. }))),
        "{got:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // The background `sleep` was in the killed group: it goes away (init
    // reaps it) instead of living on for a minute.
    let sleeper = std::fs::read_to_string(&pid_file).unwrap();
    let proc_dir = PathBuf::from(format!("/proc/{}", sleeper.trim()));
    let deadline = Instant::now() + Duration::from_secs(5);
    while proc_dir.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !proc_dir.exists(),
        "sleep {} is still running",
        sleeper.trim()
    );

    // Remembered for this version in memory (no second wait), not on disk.
    let started = Instant::now();
    assert_eq!(
        detector.features(Kind::Opencode, &program, &env()),
        Features::default()
    );
    assert!(started.elapsed() < Duration::from_millis(400));
    assert_eq!(s.runs(), 1);
    assert!(!s.state().join("features.json").exists());
}

#[test]
fn a_failing_run_without_options_is_not_an_answer() {
    let s = Scripts::new();
    let program = s.write(
        "copilot",
        "echo 'env: node: No such file or directory' >&2\nexit 127",
    );
    let detector = Detector::new(&s.state());
    let got = detector.flags(&program, &env());
    assert_eq!(
        got.unwrap_err().to_string(),
        format!(
            "`{} --help` failed and listed no options; run it by hand to see why",
            program.display()
        )
    );
    assert!(!s.state().join("features.json").exists());
    // A restarted core asks again.
    let _ = Detector::new(&s.state()).flags(&program, &env());
    assert_eq!(s.runs(), 2);

    // Failing but listing options (some programs exit 1 after help) counts.
    let program = s.write("codex", &format!("{}\nexit 1", help_printing(CODEX)));
    assert!(
        detector
            .features(Kind::Codex, &program, &env())
            .codex_no_daemon
    );
}

#[test]
fn a_missing_program_or_a_broken_cache_file_is_no_answer_but_no_failure() {
    let s = Scripts::new();
    let detector = Detector::new(&s.state());
    let missing = s.path("not-there");
    let got = detector.flags(&missing, &env()).unwrap_err().to_string();
    assert!(
        got.starts_with(&format!("cannot look at {}: ", missing.display())),
        "{got}"
    );
    assert_eq!(
        detector.features(Kind::Codex, &missing, &env()),
        Features::default()
    );

    std::fs::create_dir_all(s.state()).unwrap();
    std::fs::write(s.state().join("features.json"), "{not json").unwrap();
    let codex = s.write("codex", &help_printing(CODEX));
    assert!(
        Detector::new(&s.state())
            .features(Kind::Codex, &codex, &env())
            .codex_no_daemon
    );
    // Rewritten as a valid file.
    let text = std::fs::read_to_string(s.state().join("features.json")).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["version"], 1);
    assert_eq!(value["programs"].as_array().map(Vec::len), Some(1));
}

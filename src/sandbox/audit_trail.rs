//! The audit trail of one `nerdr sandbox` run: JSON lines appended to
//! `$NERDR_DATA_DIR/audit/<session>.jsonl` (dir 0700, file 0600), one per
//! decision, each mirrored to the journal as a [`Kind::Sandbox`] entry.
//! Decisions: the start (settings hash, bubblewrap version, kernel
//! features), settings keys ignored, each network decision the proxy makes
//! ([`Trail::net`]), changes to the agent's config refused after the run,
//! the exit.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::Mutex;

use serde::Serialize;
use serde_json::{json, Value};

use crate::audit::{Event, Kind};
use crate::paths::Paths;

/// One network decision, as the filtering proxy reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NetDecision {
    /// `opened` and `closed` (an allowed connection, paired by
    /// `connection`), `open-at-exit`, `refused`, `unreachable`.
    pub phase: &'static str,
    pub connection: u64,
    pub host: String,
    pub port: u16,
    /// The rule that decided (`deniedDomains: *.evil.test`, `default`).
    pub rule: String,
    pub allowed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Identical refusals this line stands for (merged within a second).
    pub count: u64,
    pub bytes_up: u64,
    pub bytes_down: u64,
}

/// An open trail; shareable between threads (the proxy reports from its
/// own).
pub struct Trail {
    session: String,
    path: PathBuf,
    file: Mutex<File>,
    paths: Paths,
}

/// A per-run id: time and randomness, safe in a file name.
pub fn new_session_id() -> String {
    let mut rnd = [0u8; 4];
    let _ = getrandom::getrandom(&mut rnd);
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!(
        "{secs}-{}",
        rnd.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

impl Trail {
    pub fn open(paths: &Paths, session: &str) -> std::io::Result<Trail> {
        let dir = paths.data_dir.join("audit");
        DirBuilder::new().recursive(true).mode(0o700).create(&dir)?;
        let path = dir.join(format!("{session}.jsonl"));
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&path)?;
        Ok(Trail {
            session: session.to_string(),
            path,
            file: Mutex::new(file),
            paths: paths.clone(),
        })
    }

    #[cfg(test)]
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// The sandbox is about to start.
    pub fn start(&self, s: &Start) {
        let v = serde_json::to_value(s).expect("start serializes");
        self.record(
            "start",
            v,
            format!(
                "sandbox {} started `{}` (bubblewrap {}, settings {})",
                self.session,
                s.cmd.join(" "),
                s.bwrap_version,
                &s.settings_hash[..12.min(s.settings_hash.len())]
            ),
        );
    }

    /// A settings key was ignored (a project tried to loosen, or nerdr
    /// does not apply it).
    pub fn setting(&self, warning: &str) {
        self.record(
            "setting",
            json!({ "warning": warning }),
            format!("sandbox {}: {warning}", self.session),
        );
    }

    /// The sandbox ran without bubblewrap (`enabled = false`, or
    /// `failIfUnavailable = false` and bubblewrap unusable).
    pub fn unsandboxed(&self, why: &str) {
        self.record(
            "unsandboxed",
            json!({ "reason": why }),
            format!(
                "sandbox {} runs its program WITHOUT a sandbox: {why}",
                self.session
            ),
        );
    }

    /// The proxy's API: a line when an allowed connection opens and
    /// when it closes, one per refusal (or merged repeats).
    pub fn net(&self, d: &NetDecision) {
        let v = serde_json::to_value(d).expect("decision serializes");
        let verb = if d.allowed { "allowed" } else { "denied" };
        let what = match d.phase {
            "opened" => format!("connection {} opened", d.connection),
            "closed" => format!(
                "connection {} closed: {} bytes up, {} down",
                d.connection, d.bytes_up, d.bytes_down
            ),
            "open-at-exit" => format!("connection {} still open at exit", d.connection),
            other => other.to_string(),
        };
        let times = if d.count > 1 {
            format!(", {} times", d.count)
        } else {
            String::new()
        };
        let why = d
            .why
            .as_deref()
            .map(|w| format!(": {w}"))
            .unwrap_or_default();
        self.record(
            "net",
            v,
            format!(
                "sandbox {}: {verb} {}:{} by {} ({what}{times}){why}",
                self.session, d.host, d.port, d.rule
            ),
        );
    }

    /// A file the program planted that would steer host git (a redirect in
    /// a git dir), removed after the run.
    pub fn removed(&self, path: &std::path::Path, why: &str) {
        self.record(
            "removed",
            json!({ "path": path, "reason": why }),
            format!(
                "sandbox {}: removed {} after the run: {why}",
                self.session,
                path.display()
            ),
        );
    }

    /// A ref of the program's private copy came home (`moved`), was kept
    /// under nerdr's namespace instead (`kept`), or could not come home.
    pub fn git_work(&self, action: &str, r: &str, id: &str, message: &str) {
        self.record(
            "git",
            json!({ "action": action, "ref": r, "id": id }),
            format!("sandbox {}: {action}: {message}", self.session),
        );
    }

    /// A change the program made to its own config that would start a
    /// program outside the sandbox: not carried back.
    pub fn config_refused(&self, file: &std::path::Path, key: &str, why: &str) {
        self.record(
            "config-refused",
            json!({ "path": file, "key": key, "reason": why }),
            format!(
                "sandbox {}: refused {key} in {}: {why}",
                self.session,
                file.display()
            ),
        );
    }

    /// The program ended.
    pub fn exit(&self, code: i32, signal: Option<i32>, duration_ms: u64) {
        self.record(
            "exit",
            json!({ "code": code, "signal": signal, "duration_ms": duration_ms }),
            format!(
                "sandbox {} ended: exit code {code} after {duration_ms} ms",
                self.session
            ),
        );
    }

    fn record(&self, event: &str, mut fields: Value, message: String) {
        let ts = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as u64)
            .unwrap_or(0);
        if let Value::Object(m) = &mut fields {
            m.insert("ts_us".into(), ts.into());
            m.insert("session".into(), self.session.clone().into());
            m.insert("event".into(), event.into());
        }
        let mut line = fields.to_string();
        line.push('\n');
        {
            let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
            // One write per line: lines never interleave.
            if let Err(e) = f.write_all(line.as_bytes()) {
                eprintln!(
                    "nerdr sandbox: cannot append to {}: {e}",
                    self.path.display()
                );
            }
        }
        let mut ev = Event::new(Kind::Sandbox, message)
            .field("NERDR_SANDBOX_SESSION", &self.session)
            .field("NERDR_SANDBOX_EVENT", event)
            .field("NERDR_AUDIT_JSON", line.trim_end());
        if let Value::Object(m) = &fields {
            for (k, name) in [
                ("host", "NERDR_HOST"),
                ("rule", "NERDR_RULE"),
                ("reason", "NERDR_REASON"),
            ] {
                if let Some(Value::String(s)) = m.get(k) {
                    ev = ev.field(name, s);
                }
            }
        }
        crate::audit::record(&self.paths, &ev);
    }
}

/// What the start line says.
#[derive(Debug, Clone, Serialize)]
pub struct Start {
    pub cmd: Vec<String>,
    pub worktree: PathBuf,
    pub settings_hash: String,
    pub bwrap_version: String,
    pub kernel_features: Vec<&'static str>,
    pub weakened: Vec<&'static str>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    #[test]
    fn one_private_line_per_decision() {
        let t = tempfile::tempdir().unwrap();
        let env = crate::paths::Env {
            home: Some(t.path().to_path_buf()),
            ..Default::default()
        };
        let paths = Paths::resolve(&env).unwrap();
        std::fs::create_dir_all(&paths.state_dir).unwrap();
        let trail = Trail::open(&paths, "s1").unwrap();
        trail.start(&Start {
            cmd: vec!["true".into()],
            worktree: "/w".into(),
            settings_hash: "ab".repeat(32),
            bwrap_version: "0.8.0".into(),
            kernel_features: vec!["pid-ns"],
            weakened: vec![],
        });
        trail.net(&NetDecision {
            phase: "refused",
            connection: 0,
            host: "evil.test".into(),
            port: 443,
            rule: "deniedDomains: evil.test".into(),
            allowed: false,
            why: None,
            count: 3,
            bytes_up: 0,
            bytes_down: 0,
        });
        trail.exit(3, None, 12);
        let text = std::fs::read_to_string(trail.path()).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let events: Vec<_> = lines.iter().map(|l| l["event"].as_str().unwrap()).collect();
        assert_eq!(events, ["start", "net", "exit"]);
        assert_eq!(lines[0]["bwrap_version"], "0.8.0");
        assert_eq!(lines[1]["host"], "evil.test");
        assert_eq!(lines[1]["allowed"], false);
        assert_eq!(
            (&lines[1]["phase"], &lines[1]["count"]),
            (&json!("refused"), &json!(3))
        );
        assert_eq!(lines[2]["code"], 3);
        assert!(lines.iter().all(|l| l["session"] == "s1"));
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(trail.path()), 0o600);
        assert_eq!(mode(trail.path().parent().unwrap()), 0o700);
        // Mirrored to core.log too.
        let log = std::fs::read_to_string(paths.core_log()).unwrap();
        assert_eq!(log.lines().filter(|l| l.contains("AUDIT")).count(), 3);
    }
}

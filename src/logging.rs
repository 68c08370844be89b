//! Where a long-running nerdr process's log goes (the core's `core.log`, the
//! holder's `holder.log`): always to its file in the state dir, and to the
//! journal when its socket exists (structured fields,
//! `SYSLOG_IDENTIFIER=nerdr`), else to stderr.

use std::path::Path;

use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

const JOURNAL_SOCKET: &str = "/run/systemd/journal/socket";

/// Returns whether log lines also go to stderr (no journal).
pub fn init(log_file: &Path) -> anyhow::Result<bool> {
    use anyhow::Context;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log_file)
        .with_context(|| format!("cannot open the log {}", log_file.display()))?;
    let level = match std::env::var("NERDR_LOG").as_deref() {
        Ok("debug") => LevelFilter::DEBUG,
        Ok("trace") => LevelFilter::TRACE,
        _ => LevelFilter::INFO,
    };
    let file_layer = tracing_subscriber::fmt::layer()
        .with_ansi(false)
        .with_writer(std::sync::Mutex::new(file))
        .with_filter(level);
    let journal = Path::new(JOURNAL_SOCKET)
        .exists()
        .then(|| tracing_journald::layer().ok())
        .flatten()
        .map(|l| {
            // Fields become NERDR_TAB, NERDR_AGENT, ...: the names audit
            // entries carry (docs/ARCHITECTURE.md, "Logs and audit"), and
            // clear of journald's own.
            l.with_syslog_identifier("nerdr".into())
                .with_field_prefix(Some("NERDR".into()))
                .with_filter(level)
        });
    let to_stderr = journal.is_none();
    let stderr = to_stderr.then(|| {
        tracing_subscriber::fmt::layer()
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .with_writer(std::io::stderr)
            .with_filter(level)
    });
    tracing_subscriber::registry()
        .with(file_layer)
        .with(journal)
        .with(stderr)
        .try_init()
        .context("logging was already set up")?;
    Ok(to_stderr)
}

//! The desktop notification: `org.freedesktop.Notifications.Notify` on the
//! session bus, through zbus on tokio (the Desktop Notifications
//! Specification; GNOME, KDE, dunst, mako, swaync and xfce4-notifyd all
//! own that name). A machine without a notification daemon (a server, an
//! SSH login, a bus where nobody owns the name) is normal, so every failure
//! here is a debug log line, and the whole exchange is bounded by [`LIMIT`]:
//! a daemon that never answers costs one task a few seconds, nothing more.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use zbus::zvariant::Value;

/// How long connecting and the call together may take.
pub const LIMIT: Duration = Duration::from_secs(5);

const NAME: &str = "org.freedesktop.Notifications";
const PATH: &str = "/org/freedesktop/Notifications";
/// The spec's "normal" urgency: "critical" would stay on screen until
/// dismissed, which for a tab that the person may answer from elsewhere is
/// too much.
const URGENCY_NORMAL: u8 = 1;

#[derive(Debug, thiserror::Error)]
pub enum Failed {
    #[error("no session bus address: {0}")]
    NoAddress(String),
    #[error("{0}")]
    Bus(#[from] zbus::Error),
    #[error("no answer within {} ms", .0.as_millis())]
    TimedOut(Duration),
}

/// The daemon's id of each tab's latest notification, so the next one
/// for that tab replaces it ("claude is done" takes the place of "claude
/// needs you", which is no longer true). Forgotten wholesale past
/// [`MAX_REMEMBERED`] tabs: the cost of that is one notification shown
/// beside an old one instead of over it.
static LATEST: Mutex<Option<HashMap<String, u32>>> = Mutex::new(None);
const MAX_REMEMBERED: usize = 1024;

/// Send one notification for `tab` on the bus of this process's session
/// (`DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`), in place of
/// the tab's last one, logging the outcome.
pub async fn send_to_session_bus(tab: String, summary: String, body: String) {
    let replaces = latest(|m| m.get(&tab).copied()).unwrap_or(0);
    let sent = match crate::systemd::names::bus_address(
        std::env::var_os("DBUS_SESSION_BUS_ADDRESS").as_deref(),
        std::env::var_os("XDG_RUNTIME_DIR").as_deref(),
    ) {
        Ok(address) => send(&address, replaces, &summary, &body, LIMIT).await,
        Err(e) => Err(Failed::NoAddress(e.to_string())),
    };
    match sent {
        Ok(id) => {
            latest(|m| {
                if m.len() >= MAX_REMEMBERED {
                    m.clear();
                }
                m.insert(tab, id)
            });
            tracing::debug!(id, summary = %summary, "desktop notification sent")
        }
        Err(error) => {
            tracing::debug!(error = %error, summary = %summary, "no desktop notification")
        }
    }
}

fn latest<T>(f: impl FnOnce(&mut HashMap<String, u32>) -> T) -> T {
    let mut guard = LATEST.lock().unwrap_or_else(|p| p.into_inner());
    f(guard.get_or_insert_with(HashMap::new))
}

/// Send one notification to the daemon on the bus at `address`, in place
/// of its notification `replaces` (0: none); its id on success. Gives up
/// after `limit`.
pub async fn send(
    address: &str,
    replaces: u32,
    summary: &str,
    body: &str,
    limit: Duration,
) -> Result<u32, Failed> {
    let exchange = async {
        // The one bound is the time-out around all of this.
        let conn = zbus::connection::Builder::address(address)?.build().await?;
        let capabilities: Vec<String> = conn
            .call_method(Some(NAME), PATH, Some(NAME), "GetCapabilities", &())
            .await?
            .body()
            .deserialize()?;
        // A daemon that reads markup would take a `&` or `<` in a folder's
        // name for the start of a tag (and some drop a body that does not
        // parse).
        let body = if capabilities.iter().any(|c| c == "body-markup") {
            escape_markup(body)
        } else {
            body.to_owned()
        };
        let hints = HashMap::from([("urgency", Value::U8(URGENCY_NORMAL))]);
        let reply = conn
            .call_method(
                Some(NAME),
                PATH,
                Some(NAME),
                "Notify",
                &(
                    "nerdr",
                    replaces,
                    "", // app_icon
                    summary,
                    body.as_str(),
                    Vec::<&str>::new(), // actions
                    hints,
                    -1i32, // expire_timeout: the daemon's default
                ),
            )
            .await?;
        Ok::<u32, Failed>(reply.body().deserialize::<u32>()?)
    };
    tokio::time::timeout(limit, exchange)
        .await
        .map_err(|_| Failed::TimedOut(limit))?
}

/// `text` as the spec's markup subset shows it literally.
fn escape_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
#[path = "desktop_tests.rs"]
mod tests;

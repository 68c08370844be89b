//! A window as the core keeps it: where it is attached, its size, the tab
//! it shows, its queue, and what it was last painted (`painting`).

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::Notify;

use crate::protocol::outbox::Outbox;
use crate::term;

pub struct Window {
    pub folder: PathBuf,
    pub rows: u16,
    pub cols: u16,
    pub showing: Option<String>,
    pub out: Outbox,
    /// What the window was last painted, and at what size: the next frame
    /// is the difference from it.
    pub painted: Option<term::Frame>,
    pub painted_size: (u16, u16),
    /// The shown tab changed since the last frame; a frame is owed once
    /// the queue drains.
    pub dirty: bool,
    /// A tab list was skipped (the window's queue was past
    /// [`WINDOW_BACKLOG`]); the current one is owed once it drains.
    pub tabs_owed: bool,
    /// Wakes the window's drain task (`painting::spawn_drain_task`).
    pub bell: Arc<Notify>,
    /// The window sent keys since its last frame: their echo is painted
    /// at once (`painting::due`).
    pub typed: bool,
    /// When its last frame was sent.
    pub last_paint: Option<std::time::Instant>,
}

impl Window {
    pub fn new(folder: PathBuf, rows: u16, cols: u16, out: Outbox) -> Window {
        Window {
            folder,
            rows,
            cols,
            showing: None,
            out,
            painted: None,
            painted_size: (0, 0),
            dirty: false,
            typed: false,
            last_paint: None,
            tabs_owed: false,
            bell: Arc::new(Notify::new()),
        }
    }
}

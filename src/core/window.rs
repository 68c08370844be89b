//! A window as the core keeps it: where it is attached, its size, the tab
//! it shows, its queue, what it was last painted (`painting`), and how
//! much of that paint it acknowledged (`protocol::acks`).

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
    /// The window acknowledges its paint (`protocol::acks`): it said so
    /// in its attach, to a core that offered.
    pub acks: bool,
    /// Bytes of paint (data frames' bodies) sent it, and how many of them
    /// it acknowledged having drawn.
    pub paint_sent: u64,
    pub paint_acked: u64,
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
            acks: false,
            paint_sent: 0,
            paint_acked: 0,
        }
    }

    /// Paint sent and not acknowledged, for a window that acknowledges;
    /// `None` for one that does not (`painting::backed_up`).
    pub fn unacked(&self) -> Option<u64> {
        self.acks
            .then(|| self.paint_sent.saturating_sub(self.paint_acked))
    }
}

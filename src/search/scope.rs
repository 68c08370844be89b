//! What a search covers and for whom ([`Scope`]), and what it found
//! ([`Scanned`]): shared by the log scan and nerdr's stores.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::visible::Viewer;
use super::Found;
use crate::handoff::rules::Homes;

/// What is searched, and for whom.
pub struct Scope<'a> {
    pub homes: &'a Homes,
    /// nerdr's state folder (handoffs, reviews).
    pub state_dir: &'a Path,
    /// Only this agent's results (`--agent`).
    pub agent: Option<&'a str>,
    pub viewer: Viewer<'a>,
    /// The open tabs' folders, for a review's.
    pub tab_folders: &'a BTreeMap<String, PathBuf>,
}

/// What a scan found.
#[derive(Debug, Default)]
pub struct Scanned {
    pub found: Vec<Found>,
    /// How many conversation logs were read.
    pub files: usize,
    /// Stores or folders that could not be read, in words.
    pub problems: Vec<String>,
}

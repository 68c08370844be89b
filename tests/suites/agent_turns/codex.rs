//! The real codex under `nerdr sandbox`.

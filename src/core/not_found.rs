//! The error every request naming a tab that is gone gets, in one place:
//! a refusal that must read as "no such tab" (see `api::handle`) is the
//! same sentence, byte for byte.

use crate::protocol::api::{ApiError, ErrorCode};

/// A tab the caller named does not exist (or is not the caller's to see).
pub fn no_tab(tab: &str) -> ApiError {
    ApiError::new(
        ErrorCode::NotFound,
        format!("no tab `{tab}` (see `nerdr tabs --all` for the tabs that exist)"),
    )
}

/// [`no_tab`] for a handle that looks mistyped: the name of a tab the
/// caller may see that it most likely meant (`did_you_mean`).
pub fn no_tab_meaning(tab: &str, meant: &str) -> ApiError {
    ApiError::new(
        ErrorCode::NotFound,
        format!(
            "no tab `{tab}`; did you mean {meant}? (see `nerdr tabs --all` for the tabs that \
             exist)"
        ),
    )
}

//! The one integration test binary; suites live under `suites/`.

mod suites;
mod support;

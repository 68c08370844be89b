//! nerdr (base skeleton; the real entry point lands with the core).
#![allow(dead_code)]
mod paths;
fn main() {}

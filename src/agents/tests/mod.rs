//! Tests of the agents module: the final argv of every built-in and custom
//! agent (`session.rs`), and feature detection against help texts and
//! scripts whose help the test writes (`features.rs`).

mod features;
mod session;

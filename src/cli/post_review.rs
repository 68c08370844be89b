//! `nerdr post-review [--file F]`: a reviewer posts its review, from the tab
//! `nerdr request-review` started for it (`review::format`).

use std::io::Read;
use std::process::ExitCode;

use anyhow::Context;

use crate::client;
use crate::protocol::api::PostReview;

#[derive(Debug, clap::Args)]
#[command(after_help = "The review, on stdin or in --file, as text:\n  \
    summary: one paragraph on the whole change\n  \
    src/main.rs:12: warning: unwrap on user input\n    \
    an indented line goes on with the one before\n  \
    README.md:3: note: typo\n\
    (SEVERITY: error, warning or note; FILE relative to the repository's top folder)\n\
    or as JSON lines:\n  \
    {\"summary\": \"...\"}\n  \
    {\"file\": \"src/main.rs\", \"line\": 12, \"severity\": \"warning\", \"text\": \"...\"}\n\
    Each comment is on a file the reviewed range (base..head) changes, on a line that file has at\n\
    head; remarks on other files go in the summary. Control characters are refused; the\n\
    person sees bidirectional and zero-width characters as escapes (\\u{202e}).")]
pub struct Args {
    /// Read the review from this file instead of stdin
    #[arg(long, value_name = "FILE")]
    pub file: Option<std::path::PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Read at most one byte past the limit from either source, so a huge
    // file (or /dev/zero) is refused by the format's size check rather than
    // read whole.
    let limit = crate::review::format::MAX_BYTES as u64 + 1;
    let mut text = String::new();
    match &args.file {
        Some(f) => std::fs::File::open(f)
            .and_then(|file| file.take(limit).read_to_string(&mut text))
            .with_context(|| format!("cannot read the review from {}", f.display()))?,
        None => std::io::stdin()
            .take(limit)
            .read_to_string(&mut text)
            .context("cannot read the review from stdin")?,
    };
    // Checked here first, so the reviewer sees its mistake by line number
    // even before the core does (which checks again).
    if let Err(e) = crate::review::format::parse(&text) {
        anyhow::bail!("the review was not taken: {e}");
    }
    let posted = client::call(PostReview { text })?;
    println!("review {} of tab {} taken", posted.number, posted.author);
    Ok(ExitCode::SUCCESS)
}

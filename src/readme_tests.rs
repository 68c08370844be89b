//! Keeps README.md honest where that is cheap: every `nerdr ...` command
//! line it shows (in code spans and shell blocks) names a real subcommand,
//! hidden ones included, with flags that command takes; its config
//! reference lists exactly the keys the config parser accepts, section by
//! section, each once; and its TOML examples parse. What the parser
//! accepts is asked of the parser itself (the `valid keys` of its
//! unknown-key error), so neither side can drift without this failing.

use std::collections::BTreeMap;
use std::path::Path;

use clap::CommandFactory;

const README: &str = include_str!("../README.md");
/// The heading of the README's config reference.
const CONFIG_HEADING: &str = "## Config";

/// Every piece of code in the text: inline code spans (which may run over
/// a line break), and the lines of ```sh blocks. Other blocks (toml, the
/// window's picture) are not commands.
fn code_pieces(text: &str) -> Vec<String> {
    fn spans(prose: &mut String, pieces: &mut Vec<String>) {
        let mut parts = prose.split('`');
        parts.next();
        while let Some(span) = parts.next() {
            pieces.push(span.replace('\n', " "));
            parts.next();
        }
        prose.clear();
    }
    let mut pieces = Vec::new();
    let mut prose = String::new();
    let mut fence: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(lang) = trimmed.strip_prefix("```") {
            fence = match fence {
                Some(_) => None,
                None => {
                    spans(&mut prose, &mut pieces);
                    Some(lang.trim().to_string())
                }
            };
            continue;
        }
        match fence.as_deref() {
            Some("sh" | "bash" | "console") => pieces.push(line.to_string()),
            Some(_) => {}
            None => {
                prose.push_str(line);
                prose.push('\n');
            }
        }
    }
    spans(&mut prose, &mut pieces);
    pieces
}

/// The argument words of each `nerdr` in a piece of code, up to the end of
/// that command (a comment, a pipe, `;`, `&&`, `)`). Brackets of optional
/// parts are dropped: `[--lines N]` is `--lines N`.
fn invocations(piece: &str) -> Vec<Vec<String>> {
    let code = piece.split(" #").next().unwrap_or(piece);
    let words: Vec<String> = code
        .replace(['[', ']', '(', ')'], " ")
        .split_whitespace()
        .map(|w| w.trim_matches(|c| c == '\'' || c == '"').to_string())
        .collect();
    let mut found = Vec::new();
    for (i, word) in words.iter().enumerate() {
        if word != "nerdr" && word != "$nerdr" {
            continue;
        }
        // `ID=$(nerdr ...)` splits as `ID=$`, `nerdr`; a word before it that
        // is not a command separator is prose (`nerdr`'s own name).
        let args: Vec<String> = words[i + 1..]
            .iter()
            .take_while(|w| !matches!(w.as_str(), "|" | "||" | ";" | "&&" | "#" | "&"))
            .cloned()
            .collect();
        // A message nerdr prints (`nerdr wait: tab ab12 ...`), not a command.
        if args.first().is_some_and(|w| w.ends_with(':')) {
            continue;
        }
        found.push(args);
    }
    found
}

/// Why `args` (the words after `nerdr`) is not a command line nerdr takes,
/// or `None` when it is. Placeholders (`TAB`, `NAME|DIR`) pass as
/// positionals; `a|b` in a command's place means each of them.
fn check(args: &[String]) -> Option<String> {
    let mut root = crate::cli::Cli::command();
    root.build();
    let mut cmd = &root;
    let mut path = vec!["nerdr".to_string()];
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if word == "--" {
            // The program's own arguments.
            return None;
        }
        if let Some(flags) = word.strip_prefix("--") {
            for flag in flags.split('|') {
                let flag = flag.trim_start_matches("--");
                let flag = flag.split('=').next().unwrap_or(flag);
                let Some(arg) = cmd.get_arguments().find(|a| a.get_long() == Some(flag)) else {
                    return Some(format!("`{}` takes no `--{flag}`", path.join(" ")));
                };
                if arg.get_action().takes_values() && !word.contains('=') {
                    words.next();
                }
            }
            continue;
        }
        if word.starts_with('-') {
            continue;
        }
        if cmd.has_subcommands() {
            // A placeholder in a command's place (`nerdr COMMAND --help`).
            if word.chars().all(|c| c.is_ascii_uppercase() || c == '|') {
                return None;
            }
            let mut next = None;
            for alt in word.split('|') {
                match cmd.find_subcommand(alt) {
                    Some(sub) => next = next.or(Some(sub)),
                    None => return Some(format!("`{}` has no subcommand `{alt}`", path.join(" "))),
                }
            }
            let sub = next.expect("split yields at least one word");
            path.push(sub.get_name().to_string());
            cmd = sub;
        }
    }
    None
}

#[test]
fn every_nerdr_command_line_the_readme_shows_exists() {
    let mut wrong = Vec::new();
    let mut seen = 0;
    for piece in code_pieces(README) {
        for args in invocations(&piece) {
            seen += 1;
            if let Some(why) = check(&args) {
                wrong.push(format!("{why}: `{}`", piece.trim()));
            }
        }
    }
    assert!(
        seen > 20,
        "found only {seen} nerdr command lines in README.md"
    );
    assert!(
        wrong.is_empty(),
        "README.md shows command lines nerdr does not take:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_checker_tells_a_real_command_line_from_a_wrong_one() {
    let words = |s: &str| -> Vec<String> { s.split_whitespace().map(str::to_string).collect() };
    for good in [
        "read TAB --lines N",
        "tabs --all --json",
        "service install|uninstall|status",
        "integration install|uninstall claude|codex|copilot",
        "approvals approve --session ID",
        "sandbox --settings FILE -- CMD --whatever",
        "close TAB --remove-worktree --force",
        "log --hook|--probe|--git --json",
        "core",
        "COMMAND --help",
        "",
    ] {
        assert_eq!(check(&words(good)), None, "{good}");
    }
    for bad in [
        "frobnicate",
        "read TAB --line 3",
        "service instal",
        "tabs --hook",
    ] {
        assert!(check(&words(bad)).is_some(), "{bad}");
    }
    assert_eq!(
        invocations("ID=$(nerdr agent -- bash) # the id"),
        [words("agent -- bash")]
    );
    assert!(invocations("nerdr wait: tab ab12 is still working").is_empty());
    assert_eq!(
        invocations("nerdr tabs | head; nerdr read 1"),
        [words("tabs"), words("read 1")]
    );
}

/// The README's config reference: each `### `[SECTION]`` heading's table
/// rows, keyed by the section as written (`agents.NAME`, `notify`, ...).
fn reference(readme: &str) -> BTreeMap<String, Vec<String>> {
    let start = readme
        .find(&format!("\n{CONFIG_HEADING}\n"))
        .unwrap_or_else(|| panic!("README.md has no `{CONFIG_HEADING}` section"));
    let body = &readme[start + 1 + CONFIG_HEADING.len()..];
    let body = &body[..body.find("\n## ").unwrap_or(body.len())];
    let mut sections: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in body.lines() {
        if let Some(heading) = line.strip_prefix("### ") {
            current = heading
                .trim()
                .strip_prefix("`[")
                .and_then(|h| h.strip_suffix("]`"))
                .map(str::to_string);
            if let Some(section) = &current {
                sections.entry(section.clone()).or_default();
            }
            continue;
        }
        let (Some(section), Some(row)) = (&current, line.strip_prefix("| `")) else {
            continue;
        };
        if let Some(key) = row.split('`').next() {
            sections
                .get_mut(section)
                .expect("entered above")
                .push(key.to_string());
        }
    }
    sections
}

/// The keys the parser accepts in `section`, from its own unknown-key error.
fn accepted(section: &str) -> Vec<String> {
    let probe = "zz_not_a_key = 1";
    let text = match section {
        "" => probe.to_string(),
        "agents.NAME" => format!("[agents.x]\ncommand = [\"x\"]\n{probe}\n"),
        "agents.NAME.notify" => {
            format!("[agents.x]\ncommand = [\"x\"]\n[agents.x.notify]\n{probe}\n")
        }
        other => format!("[{other}]\n{probe}\n"),
    };
    match crate::config::parse(&text, Path::new("config.toml")) {
        Err(crate::config::ConfigError::UnknownKey { valid, .. }) => {
            valid.iter().map(|k| k.to_string()).collect()
        }
        other => panic!("[{section}] with an unknown key gave {other:?}"),
    }
}

#[test]
fn the_config_reference_lists_every_key_the_parser_takes_once() {
    let sections = reference(README);
    let mut wrong = Vec::new();
    // The top level takes the sections themselves.
    let mut tops: Vec<String> = sections
        .keys()
        .map(|s| s.split('.').next().unwrap().to_string())
        .collect();
    tops.dedup();
    let mut top_accepted = accepted("");
    top_accepted.sort();
    if tops != top_accepted {
        wrong.push(format!(
            "sections: README has {tops:?}, the parser takes {top_accepted:?}"
        ));
    }
    for (section, keys) in &sections {
        let mut listed = keys.clone();
        listed.sort();
        let before = listed.len();
        listed.dedup();
        if listed.len() != before {
            wrong.push(format!("[{section}] lists a key twice: {keys:?}"));
        }
        let mut parser = accepted(section);
        parser.sort();
        if listed != parser {
            wrong.push(format!(
                "[{section}]: README lists {listed:?}, the parser takes {parser:?}"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "README.md's config reference and the parser disagree:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_toml_example_in_the_config_reference_parses() {
    let start = README.find(&format!("\n{CONFIG_HEADING}\n")).unwrap();
    let body = &README[start + 1 + CONFIG_HEADING.len()..];
    let body = &body[..body.find("\n## ").unwrap_or(body.len())];
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in body.lines() {
        match (&mut current, line.trim()) {
            (None, "```toml") => current = Some(String::new()),
            (Some(block), "```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    assert!(
        !blocks.is_empty(),
        "the config reference has no ```toml example"
    );
    for block in blocks {
        if let Err(e) = crate::config::parse(&block, Path::new("config.toml")) {
            panic!("a README config example does not parse: {e}\n{block}");
        }
    }
}

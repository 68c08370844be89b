//! Tab handles: the words a person (or an agent) may use for a tab wherever
//! a tab id is taken — the id, a unique id prefix, the tab's number in its
//! session (as the window's status line numbers them) or its name — and
//! tab names (the default `AGENT-N`, what a new name may be). Pure
//! functions over plain data; the core gathers the tabs the caller may
//! see and rewrites the request's handle into the id before anything else
//! looks at it (`api::handle`).

use std::path::{Path, PathBuf};

use crate::protocol::api::{ApiError, ErrorCode};

/// The shortest id prefix taken: one hex digit would name a tab by luck.
pub const MIN_PREFIX: usize = 2;
/// The longest name taken: it has to fit the status line and a table.
pub const MAX_NAME: usize = 24;

/// One tab as a handle sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub id: String,
    pub name: String,
    /// Its number in its session, from 1.
    pub number: usize,
    pub folder: PathBuf,
}

/// What a handle names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// Exactly one tab.
    Tab(String),
    /// Several: the error lists them.
    Ambiguous(Vec<Entry>),
    /// None among `entries`: the caller's "no such tab" stands.
    Nothing,
}

/// The tab `handle` names among `entries` (the tabs the caller may see).
/// Tried in order, the first that matches anything wins: the exact id, a
/// name, a number, an id prefix of at least [`MIN_PREFIX`] characters.
/// Names and numbers are per session: with `home` (the caller's own
/// session) only its tabs count for them; without, every session's do, and
/// one that several sessions have is ambiguous.
pub fn resolve(handle: &str, entries: &[Entry], home: Option<&Path>) -> Resolved {
    let at_home = |e: &&Entry| home.is_none_or(|h| e.folder == h);
    let steps: [&dyn Fn(&Entry) -> bool; 4] = [
        &|e| e.id == handle,
        &|e| at_home(&e) && e.name == handle,
        &|e| at_home(&e) && number(handle) == Some(e.number),
        &|e| handle.len() >= MIN_PREFIX && e.id.starts_with(handle),
    ];
    for step in steps {
        let found: Vec<&Entry> = entries.iter().filter(|e| step(e)).collect();
        match found.as_slice() {
            [] => continue,
            [one] => return Resolved::Tab(one.id.clone()),
            many => return Resolved::Ambiguous(many.iter().map(|e| (*e).clone()).collect()),
        }
    }
    Resolved::Nothing
}

/// The tab number a handle spells: decimal digits with no leading zero, as
/// the window shows them. `01` or `0a1…` is an id prefix, never tab 1 (ids
/// are hex, so a prefix of digits alone is common).
pub fn number(handle: &str) -> Option<usize> {
    if handle.starts_with('0') || !handle.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    handle.parse().ok()
}

/// The names of the tabs a handle that names none most likely meant,
/// quoted for a question (`` `bash-1` `` for `bash1`, `` `bash-1` or
/// `bash-2` `` for `bash`): among the names `resolve` would take, those of the home
/// session if there is one. A handle of hex digits only, or with a `/`,
/// is no mistyped name: it may be a closed tab's id or branch, which some
/// requests take (`nerdr diff`), so it is left to them.
pub fn meant(handle: &str, entries: &[Entry], home: Option<&Path>) -> Option<String> {
    if handle.chars().all(|c| c.is_ascii_hexdigit()) || handle.contains('/') {
        return None;
    }
    let names = entries
        .iter()
        .filter(|e| home.is_none_or(|h| e.folder == h))
        .map(|e| e.name.as_str());
    crate::did_you_mean::either(&crate::did_you_mean::nearest(handle, names))
}

/// The error for a handle that names several tabs, listing them.
pub fn ambiguous(handle: &str, tabs: &[Entry]) -> ApiError {
    let list: Vec<String> = tabs
        .iter()
        .map(|e| {
            format!(
                "{} ({}, #{} in {})",
                e.id,
                e.name,
                e.number,
                e.folder.display()
            )
        })
        .collect();
    ApiError::new(
        ErrorCode::BadRequest,
        format!(
            "`{handle}` names {} tabs: {}; use more of the id",
            tabs.len(),
            list.join(", ")
        ),
    )
}

/// A new tab's name: its agent and the lowest number no tab of its session
/// named `AGENT-N` has (`claude-1`, `claude-2`, ...).
pub fn default_name<'a>(agent: &str, taken: impl Iterator<Item = &'a str> + Clone) -> String {
    (1..)
        .map(|n| format!("{agent}-{n}"))
        .find(|name| !taken.clone().any(|t| t == name))
        .expect("some number is free")
}

/// A new tab's number: the lowest, from 1, that no other tab of its
/// session has (`taken`), as tmux numbers new windows.
pub fn lowest_free(taken: &[usize]) -> usize {
    (1..)
        .find(|n| !taken.contains(n))
        .expect("some number is free")
}

/// Whether `name` has the form nerdr gives new tabs, `AGENT-N` (`sh-2`,
/// `terminal-1`, `my-agent-3`): some agent's next tab may get it by default.
pub fn is_default_form(name: &str) -> bool {
    name.rsplit_once('-').is_some_and(|(agent, n)| {
        !agent.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
    })
}

/// Whether `name` may be tab `id`'s new name among `others` (the names of
/// the other tabs of its session), given by a sandboxed caller or not; the
/// error says what to change. A sandboxed caller may not give a name of
/// the default form ([`is_default_form`]): it could take the name the next
/// tab of an agent outside every sandbox would get (or a closed one had),
/// and a message the person sends to `sh-2` would reach it instead.
pub fn check_name(name: &str, others: &[&str], by_sandboxed: bool) -> Result<(), ApiError> {
    let bad = |why: String| Err(ApiError::new(ErrorCode::BadRequest, why));
    if name.is_empty() || name.len() > MAX_NAME {
        return bad(format!(
            "a tab name has 1 to {MAX_NAME} characters; `{name}` has {}",
            name.len()
        ));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphabetic())
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return bad(format!(
            "a tab name is a plain word: a letter, then letters, digits, `-` or `_`; `{name}` is \
             not"
        ));
    }
    if name.chars().all(|c| c.is_ascii_hexdigit()) {
        return bad(format!(
            "`{name}` would read as a tab id prefix (hex digits only); add a letter past `f`"
        ));
    }
    if by_sandboxed && is_default_form(name) {
        return bad(format!(
            "`{name}` has the form of a default name (AGENT-N), which nerdr gives new tabs; a \
             sandboxed agent picks a name without a trailing -N"
        ));
    }
    if others.contains(&name) {
        return bad(format!(
            "another tab of this session is named `{name}`; pick another name"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, name: &str, number: usize, folder: &str) -> Entry {
        Entry {
            id: id.into(),
            name: name.into(),
            number,
            folder: folder.into(),
        }
    }

    fn tabs() -> Vec<Entry> {
        vec![
            entry("d5920a11", "claude-1", 1, "/p"),
            entry("d5931b22", "codex-1", 2, "/p"),
            entry("0a1b2c3d", "review", 3, "/p"),
            entry("12ab34cd", "claude-1", 1, "/q"),
        ]
    }

    /// Every way a handle can go, with and without a home session.
    #[test]
    fn every_kind_of_handle() {
        use Resolved::*;
        let tab = |id: &str| Tab(id.to_string());
        let rows: &[(&str, Option<&str>, Resolved)] = &[
            // the exact id, whatever the session
            ("d5920a11", Some("/q"), tab("d5920a11")),
            ("12ab34cd", None, tab("12ab34cd")),
            // a unique prefix, of at least two characters
            ("d592", None, tab("d5920a11")),
            ("0a", Some("/q"), tab("0a1b2c3d")),
            ("d", None, Nothing),
            // an ambiguous prefix lists the matches
            (
                "d59",
                None,
                Ambiguous(vec![tabs()[0].clone(), tabs()[1].clone()]),
            ),
            // a number, in the home session
            ("2", Some("/p"), tab("d5931b22")),
            ("1", Some("/q"), tab("12ab34cd")),
            ("3", Some("/q"), Nothing),
            // a number several sessions have, with no home
            (
                "1",
                None,
                Ambiguous(vec![tabs()[0].clone(), tabs()[3].clone()]),
            ),
            ("3", None, tab("0a1b2c3d")),
            // a number before a prefix it also is
            ("12", None, tab("12ab34cd")),
            // a name, in the home session, or unique
            ("review", None, tab("0a1b2c3d")),
            ("claude-1", Some("/q"), tab("12ab34cd")),
            (
                "claude-1",
                None,
                Ambiguous(vec![tabs()[0].clone(), tabs()[3].clone()]),
            ),
            ("review", Some("/q"), Nothing),
            // nothing
            ("zz", None, Nothing),
            ("", None, Nothing),
            ("0", Some("/p"), Nothing),
        ];
        for (handle, home, want) in rows {
            let got = resolve(handle, &tabs(), home.map(Path::new));
            assert_eq!(&got, want, "handle {handle:?} from {home:?}");
        }
    }

    /// Numbers are the tabs' own, not their places: after a close the
    /// others keep theirs, and the gap names nothing.
    #[test]
    fn numbers_are_the_tabs_own() {
        use Resolved::*;
        let tabs = vec![
            entry("b2b2b2b2", "bash-2", 2, "/p"),
            entry("c3c3c3c3", "review-bash-1", 3, "/p"),
            entry("02d4d4d4", "bash-4", 4, "/p"),
        ];
        let rows: &[(&str, Resolved)] = &[
            ("1", Nothing),
            // A leading zero makes an id prefix, never a number.
            ("02", Tab("02d4d4d4".into())),
            ("03", Nothing),
            ("4", Tab("02d4d4d4".into())),
            ("+2", Nothing),
            ("2", Tab("b2b2b2b2".into())),
            ("3", Tab("c3c3c3c3".into())),
            ("bash-2", Tab("b2b2b2b2".into())),
        ];
        for (handle, want) in rows {
            let got = resolve(handle, &tabs, Some(Path::new("/p")));
            assert_eq!(&got, want, "handle {handle:?}");
        }
    }

    /// A handle that names nothing and reads as a typo gets the name it
    /// most likely meant; one that could be an id or a branch gets none.
    #[test]
    fn a_mistyped_name_gets_the_one_meant() {
        let rows: &[(&str, Option<&str>, Option<&str>)] = &[
            ("claude1", Some("/p"), Some("`claude-1`")),
            ("codex1", Some("/p"), Some("`codex-1`")),
            ("reveiw", Some("/p"), Some("`review`")),
            // Only the home session's names.
            ("reveiw", Some("/q"), None),
            // The same name in two sessions is one guess.
            ("claude1", None, Some("`claude-1`")),
            // Hex (an id, or a number) and branches are not guessed at.
            ("d5920a1f", None, None),
            ("12", Some("/p"), None),
            ("nerdr/d5920a11", None, None),
            ("something-else", None, None),
        ];
        for (handle, home, want) in rows {
            let got = meant(handle, &tabs(), home.map(Path::new));
            assert_eq!(got.as_deref(), *want, "{handle:?} from {home:?}");
        }
    }

    #[test]
    fn an_ambiguous_handle_lists_the_tabs() {
        let Resolved::Ambiguous(many) = resolve("d59", &tabs(), None) else {
            panic!("ambiguous")
        };
        let e = ambiguous("d59", &many);
        assert_eq!(e.code, ErrorCode::BadRequest);
        assert_eq!(
            e.message,
            "`d59` names 2 tabs: d5920a11 (claude-1, #1 in /p), d5931b22 (codex-1, #2 in /p); \
             use more of the id"
        );
    }

    /// A reviewer's name is cut to fit the names the core takes.
    #[test]
    fn reviewer_names_fit_a_tab_name() {
        assert_eq!(crate::review::LONGEST_NAME, MAX_NAME);
    }

    #[test]
    fn default_names_take_the_lowest_free_number() {
        let rows: &[(&[&str], &str)] = &[
            (&[], "claude-1"),
            (&["claude-1"], "claude-2"),
            (&["claude-2"], "claude-1"),
            (&["claude-1", "codex-1", "claude-2"], "claude-3"),
        ];
        for (taken, want) in rows {
            assert_eq!(default_name("claude", taken.iter().copied()), *want);
        }
    }

    #[test]
    fn new_tabs_take_the_lowest_free_number() {
        let rows: &[(&[usize], usize)] = &[
            (&[], 1),
            (&[1], 2),
            (&[2], 1),
            (&[1, 3], 2),
            (&[3, 1, 2], 4),
            (&[0, 5], 1),
        ];
        for (taken, want) in rows {
            assert_eq!(lowest_free(taken), *want, "{taken:?}");
        }
    }

    #[test]
    fn names_are_plain_unique_words() {
        let rows: &[(&str, bool)] = &[
            ("review", true),
            ("fix_tests-2", true),
            ("claude-1", false),
            ("", false),
            ("2fast", false),
            ("has space", false),
            ("naïve", false),
            ("cafe", false),
            ("beef-1", true),
            ("a234567890123456789012345", false),
        ];
        for (name, ok) in rows {
            for by_sandboxed in [false, true] {
                let got = check_name(name, &["claude-1", "codex-1"], by_sandboxed);
                let ok = *ok && !(by_sandboxed && is_default_form(name));
                assert_eq!(got.is_ok(), ok, "{name:?} ({by_sandboxed}): {got:?}");
                if let Err(e) = got {
                    assert!(e.message.contains(name), "{name:?}: {}", e.message);
                }
            }
        }
    }

    /// The default form, which a sandboxed caller may not give: any other
    /// agent's next tab could be called so.
    #[test]
    fn default_form_names() {
        let rows: &[(&str, bool, bool)] = &[
            // name, default form, a sandboxed caller may give it
            ("sh-2", true, false),
            ("terminal-1", true, false),
            ("my-agent-12", true, false),
            ("boxed-7", true, false),
            ("helper", false, true),
            ("fix-tests", false, true),
            ("v2-", false, true),
            ("x-1a", false, true),
            ("beef-1x", false, true),
        ];
        for (name, form, sandboxed_ok) in rows {
            assert_eq!(is_default_form(name), *form, "{name}");
            assert_eq!(check_name(name, &[], true).is_ok(), *sandboxed_ok, "{name}");
            assert!(check_name(name, &[], false).is_ok(), "{name}");
        }
    }
}

//! Who a merge's commits are by: the merge runs in the core, whose git
//! environment nerdr builds from nothing (`git::command_with`), so the
//! `GIT_AUTHOR_*` / `GIT_COMMITTER_*` of the shell that asked for it come
//! with the request. Only those six names, and only values git reads as
//! one line: nothing else of the client's environment reaches the core's
//! git, and the guard's pin (`GIT_DIR`, ...) is set after them anyway.

/// The names a merge request may carry, and nothing else.
pub const NAMES: [&str; 6] = [
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
];

/// The identity variables of a request, checked: a name not in [`NAMES`]
/// or a value holding a NUL or a line break is refused, naming it.
pub fn admit(given: &[(String, String)]) -> Result<Vec<(String, String)>, String> {
    given
        .iter()
        .map(|(k, v)| {
            if !NAMES.contains(&k.as_str()) {
                return Err(format!(
                    "nothing was merged: {} is not one of the variables a merge takes from your \
                     shell ({})",
                    crate::protocol::printable(k),
                    NAMES.join(", ")
                ));
            }
            if v.contains(['\0', '\n', '\r']) {
                return Err(format!(
                    "nothing was merged: {k} holds a NUL or a line break: set it to one line \
                     (or unset it)"
                ));
            }
            Ok((k.clone(), v.clone()))
        })
        .collect()
}

/// The identity variables set in `vars` (the client's environment).
pub fn from_env(vars: impl IntoIterator<Item = (String, String)>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = vars
        .into_iter()
        .filter(|(k, _)| NAMES.contains(&k.as_str()))
        .collect();
    out.sort();
    out
}

/// Whether git's error is its "who are you" refusal (no name or email
/// configured, none auto-detected).
pub fn unknown(git_error: &str) -> bool {
    ["identity unknown", "Please tell me who you are"]
        .iter()
        .any(|s| git_error.contains(s))
}

/// What to do when git does not know who commits, in place of its text.
pub fn advice(repo: &std::path::Path) -> String {
    format!(
        "the merge needs a commit and git does not know who you are: set your identity with \
         `git config --global user.name \"Your Name\"` and `git config --global user.email \
         you@example.com` (or `git -C {} config user.name/user.email` for this repository \
         only), or export GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL and \
         GIT_COMMITTER_NAME/GIT_COMMITTER_EMAIL in the shell that runs `nerdr merge`; then \
         merge again",
        repo.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_six_identity_names_with_one_line_values_pass() {
        let kv = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
        /// (what, the variables given, Ok or a part of the refusal)
        type Row<'a> = (&'a str, Vec<(String, String)>, Result<(), &'a str>);
        #[rustfmt::skip]
        let rows: &[Row] = &[
            ("nothing given", vec![], Ok(())),
            ("a committer name", kv("GIT_COMMITTER_NAME", "Ada L"), Ok(())),
            ("an author date", kv("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z"), Ok(())),
            ("an empty value (git's own business)", kv("GIT_AUTHOR_EMAIL", ""), Ok(())),
            ("another git variable", kv("GIT_DIR", "/x"), Err("GIT_DIR is not one of")),
            ("a config injection", kv("GIT_CONFIG_PARAMETERS", "'core.hooksPath=/x'"), Err("is not one of")),
            ("a name with a control char", kv("GIT_AUTHOR_NAME\x1b", "x"), Err("\\u{1b} is not one of")),
            ("a newline", kv("GIT_AUTHOR_NAME", "a\nb"), Err("GIT_AUTHOR_NAME holds a NUL or a line break")),
            ("a carriage return", kv("GIT_COMMITTER_EMAIL", "a\rb"), Err("line break")),
            ("a NUL", kv("GIT_COMMITTER_NAME", "a\0b"), Err("NUL")),
        ];
        for (what, given, want) in rows {
            match (admit(given), want) {
                (Ok(got), Ok(())) => assert_eq!(&got, given, "{what}"),
                (Err(e), Err(part)) => assert!(e.contains(part), "{what}: {e}"),
                (got, want) => panic!("{what}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn the_client_sends_only_the_identity_names() {
        let env = [
            ("GIT_AUTHOR_NAME", "a"),
            ("GIT_DIR", "/x"),
            ("HOME", "/h"),
            ("GIT_COMMITTER_EMAIL", "c@e"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        assert_eq!(
            from_env(env),
            vec![
                ("GIT_AUTHOR_NAME".into(), "a".into()),
                ("GIT_COMMITTER_EMAIL".into(), "c@e".into())
            ]
        );
    }

    #[test]
    fn gits_who_are_you_is_recognised() {
        let raw = "Committer identity unknown\n\n*** Please tell me who you are.\n\nfatal: \
                   unable to auto-detect email address (got 'root@vm.(none)')";
        assert!(unknown(raw));
        assert!(unknown("Author identity unknown"));
        assert!(!unknown("CONFLICT (content): Merge conflict in a.txt"));
        let a = advice(std::path::Path::new("/r"));
        assert!(a.contains("git config --global user.name"), "{a}");
        assert!(a.contains("user.email"), "{a}");
    }
}

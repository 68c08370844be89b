//! A worktree two tabs share (a handoff's new agent works in the handing
//! tab's worktree, a conversation resumed by `nerdr search --open` runs in
//! the folder it ran in): it belongs to the first tab, and no `nerdr close
//! --remove-worktree` of either (nor `nerdr clean`) removes it while the
//! other still has it open. The rule is pure; the core reads the tabs for
//! it.

use std::path::Path;

/// Another open tab working in `worktree`, that `closing` must not
/// remove it from under: the first such tab by id, for the message. Each
/// tab comes with the place it works ([`place`]): in the worktree, or in a
/// folder inside it.
pub fn others_in<'a>(
    worktree: &Path,
    closing: &str,
    tabs: impl IntoIterator<Item = (&'a str, Option<&'a Path>)>,
) -> Option<&'a str> {
    let mut others: Vec<&str> = tabs
        .into_iter()
        .filter(|(id, w)| *id != closing && w.is_some_and(|p| p.starts_with(worktree)))
        .map(|(id, _)| id)
        .collect();
    others.sort_unstable();
    others.first().copied()
}

/// Where a tab works: its worktree, else the folder its program runs in.
pub fn place<'a>(worktree: Option<&'a Path>, folder: &'a Path) -> &'a Path {
    worktree.unwrap_or(folder)
}

/// Why `nerdr close --remove-worktree` of `closing` is refused.
pub fn refusal(closing: &str, worktree: &Path, other: &str) -> String {
    format!(
        "tab {closing} was not closed: its worktree {} is also tab {other}'s (a handoff shares \
         it); close tab {other} first, or close tab {closing} and keep the worktree (`nerdr close \
         {closing}`)",
        worktree.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_worktree_stays_while_another_tab_has_it() {
        let (w, v) = (Path::new("/w/ab12"), Path::new("/w/cd34"));
        /// (what, the open tabs and their worktrees, the one that keeps it)
        type Row<'a> = (&'a str, &'a [(&'a str, Option<&'a Path>)], Option<&'a str>);
        #[rustfmt::skip]
        let rows: &[Row] = &[
            ("alone in it", &[("ab12", Some(w))], None),
            ("the handoff's agent has it", &[("ab12", Some(w)), ("ef56", Some(w))], Some("ef56")),
            ("the first tab has it", &[("ab12", Some(w)), ("ef56", Some(w))], Some("ef56")),
            ("another worktree", &[("ab12", Some(w)), ("cd34", Some(v))], None),
            ("a tab with none", &[("ab12", Some(w)), ("cd34", None)], None),
            ("a tab run in a folder inside it (a resumed conversation)",
                &[("ab12", Some(w)), ("ef56", Some(Path::new("/w/ab12/src")))], Some("ef56")),
            ("a folder that only starts with its name", &[("ab12", Some(w)), ("ef56", Some(Path::new("/w/ab12x")))], None),
            ("two others: the first named", &[("zz99", Some(w)), ("ab12", Some(w)), ("cc00", Some(w))], Some("cc00")),
        ];
        for (what, tabs, want) in rows {
            assert_eq!(others_in(w, "ab12", tabs.iter().copied()), *want, "{what}");
        }
        let why = refusal("ab12", w, "ef56");
        assert!(why.contains("close tab ef56 first"), "{why}");
        assert!(why.contains("`nerdr close ab12`"), "{why}");
    }
}

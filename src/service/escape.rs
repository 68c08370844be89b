//! How a path is spelled in a unit file or a plist so that systemd or launchd
//! reads back exactly that path, and refusals for paths that cannot be
//! spelled at all. Pure string work; rendering lives in `units.rs`.
//!
//! The systemd rules were measured against systemd 252 (a user manager and
//! `systemd-analyze verify`), not only read from the manual:
//! - Every setting used here expands specifiers, so `%` is written `%%`.
//! - `ListenStream=` takes the rest of the line as the path, as is: spaces,
//!   quotes, `#`, `;` and backslashes arrive literally. Only the ends matter:
//!   the parser trims whitespace and a trailing `\` continues the line.
//! - The executable of `ExecStart=` is unquoted and C-unescaped, but `$` is not
//!   substituted in it (`$$` would stay doubled), and systemd refuses an
//!   executable whose path holds a quote, a backslash or a control character
//!   ("Executable name contains special characters"): quoting does not help.
//! - Inside a double-quoted `Environment=` assignment, `\\` and `\"` are
//!   unescaped and `$` is literal.
//! - No line of a unit file can carry a control character such as a newline.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EscapeError {
    #[error("{what} {path:?} is not valid UTF-8; unit files and plists are UTF-8 text, so it cannot be written into one")]
    NotUtf8 { what: &'static str, path: PathBuf },
    #[error("{what} {path:?} is not an absolute path")]
    NotAbsolute { what: &'static str, path: PathBuf },
    #[error("{what} {path:?} contains a control character (such as a newline or a tab), which cannot be written into a unit file or a plist; use a path without one")]
    ControlCharacter { what: &'static str, path: PathBuf },
    #[error("{what} {path:?} ends in whitespace or a backslash, which a unit file line cannot end with; use a path without one")]
    BadEnd { what: &'static str, path: PathBuf },
    #[error("{what} {path:?} contains a quote or a backslash, and systemd refuses to run an executable whose path does (\"Executable name contains special characters\"); move nerdr to a path without them, or pass --bin")]
    UnsafeExecutable { what: &'static str, path: PathBuf },
    #[error("{what} {path:?} is {len} bytes long, but a Unix socket path can be at most {max} bytes; set a shorter XDG_STATE_HOME or XDG_RUNTIME_DIR")]
    SocketPathTooLong {
        what: &'static str,
        path: PathBuf,
        len: usize,
        max: usize,
    },
}

/// The longest socket path `bind(2)` takes here: `sun_path` holds it and a NUL.
pub const MAX_SOCKET_PATH: usize = if cfg!(target_os = "macos") { 103 } else { 107 };

/// The path as UTF-8, if it is absolute and free of control characters.
fn checked<'a>(what: &'static str, path: &'a Path) -> Result<&'a str, EscapeError> {
    let s = path.to_str().ok_or_else(|| EscapeError::NotUtf8 {
        what,
        path: path.to_owned(),
    })?;
    if !path.is_absolute() {
        return Err(EscapeError::NotAbsolute {
            what,
            path: path.to_owned(),
        });
    }
    if s.chars().any(char::is_control) {
        return Err(EscapeError::ControlCharacter {
            what,
            path: path.to_owned(),
        });
    }
    Ok(s)
}

fn double_percent(s: &str) -> String {
    s.replace('%', "%%")
}

/// A path for a setting that takes the rest of the line as a path
/// (`ListenStream=`): only specifiers are escaped.
pub fn unit_path(what: &'static str, path: &Path) -> Result<String, EscapeError> {
    let s = checked(what, path)?;
    if s.ends_with(char::is_whitespace) || s.ends_with('\\') {
        return Err(EscapeError::BadEnd {
            what,
            path: path.to_owned(),
        });
    }
    Ok(double_percent(s))
}

/// A Unix socket path for `ListenStream=`, refused when `bind(2)` could not
/// take it (`max` bytes, see [`MAX_SOCKET_PATH`]).
pub fn socket_path(what: &'static str, path: &Path, max: usize) -> Result<String, EscapeError> {
    let len = path.as_os_str().len();
    if len > max {
        return Err(EscapeError::SocketPathTooLong {
            what,
            path: path.to_owned(),
            len,
            max,
        });
    }
    unit_path(what, path)
}

/// Characters an `ExecStart=` word may hold without quotes.
fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "/._-+,:=@%".contains(c)
}

/// The executable (first word) of `ExecStart=`: `%` doubled, `$` left alone
/// (systemd does not substitute variables in the executable), and the whole
/// word double-quoted when it holds anything but plain characters. Paths
/// systemd would refuse to run are refused here, where the message can say
/// what to do.
pub fn exec_path(what: &'static str, path: &Path) -> Result<String, EscapeError> {
    let s = checked(what, path)?;
    if s.contains(['"', '\'', '\\']) {
        return Err(EscapeError::UnsafeExecutable {
            what,
            path: path.to_owned(),
        });
    }
    let escaped = double_percent(s);
    if s.chars().all(plain) {
        Ok(escaped)
    } else {
        // No `"` or `\` is left to escape inside the quotes (refused above).
        Ok(format!("\"{escaped}\""))
    }
}

/// Reads back the executable [`exec_path`] wrote at the start of an
/// `ExecStart=` value. Also accepts what a person might write by hand
/// (unquoted, or quoted with `\"` and `\\`). `None` if there is no word.
pub fn unexec_path(value: &str) -> Option<String> {
    let value = value.trim_start();
    let mut word = String::new();
    if let Some(rest) = value.strip_prefix('"') {
        let mut chars = rest.chars();
        loop {
            match chars.next()? {
                '"' => break,
                '\\' => word.push(chars.next()?),
                c => word.push(c),
            }
        }
    } else {
        word.extend(value.chars().take_while(|c| !c.is_whitespace()));
    }
    if word.is_empty() {
        return None;
    }
    Some(word.replace("%%", "%"))
}

/// A path inside a double-quoted assignment (`Environment="NAME=..."`).
pub fn quoted_value(what: &'static str, path: &Path) -> Result<String, EscapeError> {
    let s = checked(what, path)?;
    Ok(double_percent(
        &s.replace('\\', "\\\\").replace('"', "\\\""),
    ))
}

/// A path as the text of a plist `<string>` element.
pub fn xml_text(what: &'static str, path: &Path) -> Result<String, EscapeError> {
    let s = checked(what, path)?;
    Ok(s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;"))
}

/// Reads back the text [`xml_text`] wrote (the five predefined entities).
pub fn unxml_text(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: &str = "the path";

    #[test]
    fn a_listen_path_is_written_as_is_except_percent() {
        let p = Path::new("/home/a b/%h/x\"y'z;#\\w/$HOME/nerdr.sock");
        assert_eq!(
            unit_path(W, p).unwrap(),
            "/home/a b/%%h/x\"y'z;#\\w/$HOME/nerdr.sock"
        );
    }

    #[test]
    fn a_listen_path_cannot_end_in_space_or_backslash() {
        for bad in ["/a/b ", "/a/b\\"] {
            let err = unit_path(W, Path::new(bad)).unwrap_err();
            assert!(matches!(err, EscapeError::BadEnd { .. }), "{bad}: {err}");
        }
    }

    #[test]
    fn a_newline_is_refused_everywhere() {
        let p = Path::new("/home/u/evil\nExecStartPre=/bin/sh");
        let errs = [
            unit_path(W, p).unwrap_err(),
            exec_path(W, p).unwrap_err(),
            quoted_value(W, p).unwrap_err(),
            xml_text(W, p).unwrap_err(),
        ];
        for err in errs {
            assert!(matches!(err, EscapeError::ControlCharacter { .. }), "{err}");
            assert!(err.to_string().contains("control character"), "{err}");
        }
    }

    #[test]
    fn relative_and_non_utf8_paths_are_refused() {
        assert!(matches!(
            exec_path(W, Path::new("target/debug/nerdr")),
            Err(EscapeError::NotAbsolute { .. })
        ));
        use std::os::unix::ffi::OsStrExt;
        let p = Path::new(std::ffi::OsStr::from_bytes(b"/home/\xff/nerdr"));
        assert!(matches!(unit_path(W, p), Err(EscapeError::NotUtf8 { .. })));
    }

    #[test]
    fn a_plain_executable_is_not_quoted() {
        let p = Path::new("/home/u/.cargo/bin/nerdr");
        assert_eq!(exec_path(W, p).unwrap(), "/home/u/.cargo/bin/nerdr");
    }

    #[test]
    fn an_executable_with_spaces_is_quoted_and_percent_doubled() {
        let p = Path::new("/home/u/my tools/100%/nerdr");
        assert_eq!(exec_path(W, p).unwrap(), "\"/home/u/my tools/100%%/nerdr\"");
    }

    #[test]
    fn a_dollar_in_the_executable_stays_single() {
        // systemd does not substitute variables in the executable itself.
        let p = Path::new("/opt/$x;#/nerdr");
        assert_eq!(exec_path(W, p).unwrap(), "\"/opt/$x;#/nerdr\"");
    }

    #[test]
    fn an_executable_systemd_would_refuse_is_refused_with_a_remedy() {
        for bad in ["/home/o'brien/nerdr", "/a\"b/nerdr", "/a\\b/nerdr"] {
            let err = exec_path(W, Path::new(bad)).unwrap_err();
            assert!(matches!(err, EscapeError::UnsafeExecutable { .. }), "{bad}");
            assert!(err.to_string().contains("--bin"), "{err}");
        }
    }

    #[test]
    fn exec_paths_read_back_to_the_same_path() {
        for p in [
            "/usr/bin/nerdr",
            "/home/u/my tools/100%/nerdr",
            "/opt/$x;#/né rdr",
            "/a/%%/b",
        ] {
            let word = exec_path(W, Path::new(p)).unwrap();
            let line = format!("{word} core");
            assert_eq!(unexec_path(&line).as_deref(), Some(p), "{line}");
        }
    }

    #[test]
    fn hand_written_exec_lines_read_back() {
        assert_eq!(
            unexec_path(r#""/a \"b\"/c\\d" core"#).as_deref(),
            Some(r#"/a "b"/c\d"#)
        );
        assert_eq!(
            unexec_path("  /usr/bin/nerdr core").as_deref(),
            Some("/usr/bin/nerdr")
        );
        assert_eq!(unexec_path(""), None);
        assert_eq!(unexec_path("\"/unterminated"), None);
    }

    #[test]
    fn a_quoted_value_escapes_backslash_quote_and_percent_but_not_dollar() {
        let p = Path::new("/s t/a\\b\"c%d$e'f");
        assert_eq!(quoted_value(W, p).unwrap(), "/s t/a\\\\b\\\"c%%d$e'f");
    }

    #[test]
    fn a_socket_path_over_the_limit_is_refused_with_its_length() {
        let long = format!("/{}/nerdr.sock", "x".repeat(120));
        let err = socket_path(W, Path::new(&long), 107).unwrap_err();
        assert!(err.to_string().contains("132 bytes long"), "{err}");
        let fits = format!("/{}", "x".repeat(106));
        assert!(socket_path(W, Path::new(&fits), 107).is_ok());
    }

    #[test]
    fn xml_text_escapes_markup_and_reads_back() {
        let p = "/Users/a&b/<x>/Application Support/nerdr";
        let t = xml_text(W, Path::new(p)).unwrap();
        assert_eq!(t, "/Users/a&amp;b/&lt;x&gt;/Application Support/nerdr");
        assert_eq!(unxml_text(&t), p);
    }
}

//! What a program in a sandboxed tab may type into another tab with
//! `nerdr send`: text, never keys. The privilege matrix says whether it
//! may send at all (to another sandboxed agent at once, to one outside
//! every sandbox after the person's yes); this says what of its text
//! goes: escape sequences and control characters dropped
//! (`printable::typeable`: no arrow keys, Enter, ^C or paste end to drive
//! the other agent's prompts), and the message whole, with Enter, so half
//! a message cannot be completed by the next. Its own tab and everyone
//! else's sends are the person's or unsandboxed programs', typed as
//! given. Pure.

use super::privilege::CallerKind;

/// Why a sandboxed program's half message is refused.
pub const WHOLE: &str = "a sandboxed agent's message to another tab goes whole, with Enter \
                         (leave out --no-enter); its keys are not typed";

/// The text to type for a send by `caller` into another tab (`own`:
/// its own), or why it is refused.
pub fn sent_text(
    caller: CallerKind,
    own: bool,
    enter: bool,
    text: String,
) -> Result<String, &'static str> {
    match (caller, own, enter) {
        (CallerKind::Sandboxed, false, false) => Err(WHOLE),
        (CallerKind::Sandboxed, false, true) => Ok(crate::printable::typeable(&text)),
        _ => Ok(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sandboxed_program_types_text_into_other_tabs_never_keys() {
        let keys = "ok\x1b[B\x1b[B\r\x03\x1b[201~\x1b]52;c;aGk=\x07 done";
        let text = || keys.to_string();
        let stripped = Ok("ok done".to_string());
        use CallerKind::*;
        #[rustfmt::skip]
        let rows: &[(CallerKind, bool, bool, Result<String, &str>)] = &[
            (Sandboxed, false, true, stripped.clone()),
            (Sandboxed, false, false, Err(WHOLE)),
            // Its own tab: its own keys.
            (Sandboxed, true, false, Ok(text())),
            (Sandboxed, true, true, Ok(text())),
            // The person and unsandboxed programs type what they give.
            (User, false, false, Ok(text())),
            (User, false, true, Ok(text())),
            (Tab, false, false, Ok(text())),
            (Tab, false, true, Ok(text())),
        ];
        for (caller, own, enter, want) in rows {
            let got = sent_text(*caller, *own, *enter, text());
            assert_eq!(&got, want, "{caller:?} own {own} enter {enter}");
        }
    }
}

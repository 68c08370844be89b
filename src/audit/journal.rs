//! The journal's native protocol, by hand: one datagram of fields to
//! `/run/systemd/journal/socket`. tracing-journald cannot set `MESSAGE_ID`
//! (its field prefix would rename it) nor repeat a field.

use std::os::unix::net::UnixDatagram;

use super::Event;

pub const SOCKET: &str = "/run/systemd/journal/socket";

/// Journal field names: upper-case letters, digits and `_`, not starting
/// with `_` or a digit, at most 64 bytes.
pub fn valid_field_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// The datagram for an event. Every field uses the length-prefixed form, so
/// values may hold newlines.
pub fn encode(event: &Event) -> Vec<u8> {
    let mut out = Vec::new();
    let mut put = |name: &str, value: &str| {
        out.extend_from_slice(name.as_bytes());
        out.push(b'\n');
        out.extend_from_slice(&(value.len() as u64).to_le_bytes());
        out.extend_from_slice(value.as_bytes());
        out.push(b'\n');
    };
    put("MESSAGE", &event.message);
    put("MESSAGE_ID", event.kind.message_id());
    put("PRIORITY", &event.kind.priority().to_string());
    put("SYSLOG_IDENTIFIER", "nerdr");
    put("NERDR_EVENT", event.kind.name());
    for (name, value) in &event.fields {
        if valid_field_name(name) {
            put(name, value);
        }
    }
    out
}

pub fn send(event: &Event) -> std::io::Result<()> {
    let socket = UnixDatagram::unbound()?;
    socket.send_to(&encode(event), SOCKET)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::Kind;
    use super::*;

    #[test]
    fn field_names_follow_journald_rules() {
        for ok in ["NERDR_TAB", "MESSAGE_ID", "A1"] {
            assert!(valid_field_name(ok), "{ok}");
        }
        for bad in ["", "_PID", "1X", "nerdr_tab", "NERDR-TAB", &"X".repeat(65)] {
            assert!(!valid_field_name(bad), "{bad}");
        }
    }

    #[test]
    fn repeated_fields_and_newlines_survive_encoding() {
        let e = Event::new(Kind::ProbeRefused, "two\nlines")
            .field("NERDR_REACHED", "a")
            .field("NERDR_REACHED", "b");
        let bytes = encode(&e);
        let mut fields = Vec::new();
        let mut rest = &bytes[..];
        while !rest.is_empty() {
            let nl = rest.iter().position(|b| *b == b'\n').unwrap();
            let name = std::str::from_utf8(&rest[..nl]).unwrap().to_string();
            let len = u64::from_le_bytes(rest[nl + 1..nl + 9].try_into().unwrap()) as usize;
            let value = std::str::from_utf8(&rest[nl + 9..nl + 9 + len])
                .unwrap()
                .to_string();
            assert_eq!(rest[nl + 9 + len], b'\n');
            rest = &rest[nl + 10 + len..];
            fields.push((name, value));
        }
        assert!(fields.contains(&("MESSAGE".into(), "two\nlines".into())));
        assert!(fields.contains(&("MESSAGE_ID".into(), Kind::ProbeRefused.message_id().into())));
        let reached: Vec<_> = fields
            .iter()
            .filter(|(n, _)| n == "NERDR_REACHED")
            .collect();
        assert_eq!(reached.len(), 2);
    }
}

//! The hook socket: one JSON object per line.
//! Request `{"id", "method", "params", "tab"}` → `{"id", "result"}` or
//! `{"id", "error": {"code", "message"}}`. `tab` is the caller's `NERDR_TAB`
//! secret, which names the tab it claims to belong to.

use serde::{Deserialize, Serialize};

use super::api::{ApiError, ErrorCode, Request};
use super::handshake::Outcome;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookRequest {
    pub id: serde_json::Value,
    /// The caller's `NERDR_TAB`. Never logged.
    #[serde(default)]
    pub tab: Option<String>,
    #[serde(flatten)]
    pub request: Request,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookReply {
    pub id: serde_json::Value,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// Parse one line. A line that is not a request still gets an answer (with
/// whatever `id` could be read), so a caller learns what it did wrong.
pub fn parse_line(line: &[u8]) -> Result<HookRequest, HookReply> {
    match serde_json::from_slice::<HookRequest>(line) {
        Ok(r) => Ok(r),
        Err(e) => {
            let id = serde_json::from_slice::<serde_json::Value>(line)
                .ok()
                .and_then(|v| v.get("id").cloned())
                .unwrap_or(serde_json::Value::Null);
            Err(HookReply {
                id,
                outcome: Outcome::Error(ApiError::new(
                    ErrorCode::BadRequest,
                    format!("malformed request: {e}"),
                )),
            })
        }
    }
}

pub fn encode_line<T: Serialize>(msg: &T) -> Vec<u8> {
    let mut v = serde_json::to_vec(msg).expect("hook messages always serialize");
    v.push(b'\n');
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::api::ReadScreen;

    #[test]
    fn a_request_line_parses() {
        let r =
            parse_line(br#"{"id":7,"tab":"s","method":"read","params":{"tab":"t1","lines":3}}"#)
                .unwrap();
        assert_eq!(r.id, 7);
        assert_eq!(r.tab.as_deref(), Some("s"));
        assert_eq!(
            r.request,
            Request::Read(ReadScreen {
                tab: "t1".into(),
                lines: Some(3),
                folder: None,
            })
        );
    }

    #[test]
    fn request_lines_keep_their_bytes() {
        for (request, line) in [
            (
                Request::from(ReadScreen {
                    tab: "t".into(),
                    lines: None,
                    folder: None,
                }),
                r#"{"id":1,"tab":"s","method":"read","params":{"tab":"t","lines":null}}"#,
            ),
            (Request::Status, r#"{"id":1,"tab":"s","method":"status"}"#),
        ] {
            let r = HookRequest {
                id: 1.into(),
                tab: Some("s".into()),
                request,
            };
            assert_eq!(encode_line(&r), format!("{line}\n").into_bytes());
            assert_eq!(parse_line(line.as_bytes()).unwrap(), r);
        }
    }

    #[test]
    fn a_bad_line_gets_an_error_with_its_id() {
        let e = parse_line(br#"{"id":"x","method":"nope"}"#).unwrap_err();
        assert_eq!(e.id, "x");
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["error"]["code"], "bad_request");
        let e = parse_line(b"not json").unwrap_err();
        assert_eq!(e.id, serde_json::Value::Null);
    }
}

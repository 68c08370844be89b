//! opencode's `config_model`: merged into `OPENCODE_CONFIG_CONTENT` as
//! `model`, keeping whatever JSON the user already had there.

/// The new `OPENCODE_CONFIG_CONTENT`, or why the existing one cannot take a
/// model.
pub fn config_content(existing: Option<&str>, model: &str) -> Result<String, String> {
    let mut value = match existing.map(str::trim).filter(|s| !s.is_empty()) {
        None => serde_json::Value::Object(Default::default()),
        Some(text) => serde_json::from_str(text).map_err(|e| {
            format!("OPENCODE_CONFIG_CONTENT in your environment is not valid JSON ({e}); fix or unset it, or remove config_model")
        })?,
    };
    let Some(obj) = value.as_object_mut() else {
        return Err("OPENCODE_CONFIG_CONTENT in your environment is not a JSON object; fix or unset it, or remove config_model".into());
    };
    obj.insert("model".into(), serde_json::Value::String(model.into()));
    Ok(value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows() {
        let rows: &[(Option<&str>, Result<&str, &str>)] = &[
            (None, Ok(r#"{"model":"anthropic/claude-sonnet"}"#)),
            (Some(""), Ok(r#"{"model":"anthropic/claude-sonnet"}"#)),
            (
                Some(r#"{"theme":"dark","model":"old"}"#),
                Ok(r#"{"model":"anthropic/claude-sonnet","theme":"dark"}"#),
            ),
            (Some("[1]"), Err("not a JSON object")),
            (Some("{nope"), Err("not valid JSON")),
        ];
        for (existing, want) in rows {
            let got = config_content(*existing, "anthropic/claude-sonnet");
            match (got, want) {
                (Ok(g), Ok(w)) => {
                    let g: serde_json::Value = serde_json::from_str(&g).unwrap();
                    let w: serde_json::Value = serde_json::from_str(w).unwrap();
                    assert_eq!(g, w, "{existing:?}");
                }
                (Err(e), Err(w)) => assert!(e.contains(w), "{e}"),
                (g, w) => panic!("{existing:?}: got {g:?}, want {w:?}"),
            }
        }
    }
}

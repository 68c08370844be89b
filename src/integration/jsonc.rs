//! How nerdr reads the agents' JSON settings with `jsonc-parser`: the
//! dialect they accept (comments and trailing commas, nothing else beyond
//! JSON), errors that say line and column, and names for the kinds of value
//! a file has in the wrong place, and where its tokens are. Shared by the hooks install (its CST) and
//! the sandbox's settings and config merge (its AST, which keeps the byte
//! ranges their messages and edits need).

use std::ops::Range;

use jsonc_parser::ast::Value as AstValue;
use jsonc_parser::cst::{CstNode, CstRootNode};
use jsonc_parser::errors::ParseError;
use jsonc_parser::{CollectOptions, CommentCollectionStrategy, ParseOptions};

/// Where and why the text is not JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub line: usize,
    pub column: usize,
    pub what: String,
}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "not valid JSON at line {}, column {}: {}",
            self.line, self.column, self.what
        )
    }
}

impl From<ParseError> for SyntaxError {
    fn from(e: ParseError) -> Self {
        SyntaxError {
            line: e.line_display(),
            column: e.column_display(),
            what: e.kind().to_string(),
        }
    }
}

/// The agents' readers take `//` and `/* */` comments and trailing commas;
/// what else JSON5 allows they do not, so nerdr refuses it too.
pub fn options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// The document's value as plain data (`None` when it holds only
/// whitespace and comments), to compare two texts by what they mean.
pub fn parse_value(text: &str) -> Result<Option<serde_json::Value>, SyntaxError> {
    Ok(parse_ast(text)?.map(Into::into))
}

/// The value of a piece of the document, or `None` when it holds a comment
/// (or is not JSON). Trailing commas are fine: the CST writes them into a
/// file that has them.
pub fn value_without_comments(text: &str) -> Option<serde_json::Value> {
    let no_comments = ParseOptions {
        allow_comments: false,
        ..options()
    };
    // Not through the CST: it collects comments as tokens, and then
    // jsonc-parser lets them through whatever `allow_comments` says.
    jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &no_comments)
        .ok()?
        .value
        .map(Into::into)
}

/// The byte ranges of the text's tokens, comments included: what lies
/// between them is whitespace, the text's layout.
pub fn tokens(text: &str) -> Result<Vec<Range<usize>>, SyntaxError> {
    let collect = CollectOptions {
        comments: CommentCollectionStrategy::AsTokens,
        tokens: true,
    };
    let parsed = jsonc_parser::parse_to_ast(text, &collect, &options())?;
    Ok(parsed
        .tokens
        .unwrap_or_default()
        .iter()
        .map(|t| t.range.start..t.range.end)
        .collect())
}

/// The document as a tree that keeps every byte, for editing.
pub fn parse_cst(text: &str) -> Result<CstRootNode, SyntaxError> {
    Ok(CstRootNode::parse(text, &options())?)
}

/// The document's value with byte ranges, or `None` when it holds only
/// whitespace and comments.
pub fn parse_ast(text: &str) -> Result<Option<AstValue<'_>>, SyntaxError> {
    Ok(jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &options())?.value)
}

/// What kind of value this is, for error messages.
pub fn describe(v: &AstValue) -> &'static str {
    match v {
        AstValue::Object(_) => "an object",
        AstValue::Array(_) => "an array",
        AstValue::StringLit(_) => "a string",
        AstValue::BooleanLit(_) => "a boolean",
        AstValue::NullKeyword(_) => "null",
        AstValue::NumberLit(_) => "a number",
    }
}

/// [`describe`] for a node of the CST.
pub fn describe_cst(node: &CstNode) -> &'static str {
    if node.as_object().is_some() {
        "an object"
    } else if node.as_array().is_some() {
        "an array"
    } else if node.as_string_lit().is_some() {
        "a string"
    } else if node.as_boolean_lit().is_some() {
        "a boolean"
    } else if node.as_null_keyword().is_some() {
        "null"
    } else {
        "a number"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas_are_accepted() {
        let t = "// top\n{\n  /* a */ \"a\": 1, // one\n  \"b\": [2,],\n}\n";
        let v = parse_ast(t).unwrap().unwrap();
        let o = v.as_object().unwrap();
        assert_eq!(o.properties.len(), 2);
        assert_eq!(o.properties[1].value.as_array().unwrap().elements.len(), 1);
        assert_eq!(parse_cst(t).unwrap().to_string(), t);
    }

    #[test]
    fn a_piece_with_a_comment_has_no_value_but_trailing_commas_do() {
        assert_eq!(
            value_without_comments("{\"a\": [1,],}"),
            Some(serde_json::json!({"a": [1]}))
        );
        assert_eq!(value_without_comments("{\"a\": 1 /* c */}"), None);
        assert_eq!(value_without_comments("[{\"a\": 1}, // c\n]"), None);
    }

    #[test]
    fn only_blank_text_has_no_value() {
        assert!(parse_ast(" \n// nothing\n").unwrap().is_none());
        assert!(parse_cst(" \n// nothing\n").unwrap().value().is_none());
    }

    #[test]
    fn what_json5_adds_is_refused_with_line_and_column() {
        let e = parse_ast("{\n  \"a\": 1\n  \"b\": 2\n}").unwrap_err();
        // At the end of the value that lacks its comma.
        assert_eq!((e.line, e.column), (2, 9), "{e}");
        for bad in [
            "{\"a\": tru}",
            "{\"a\": 1} x",
            "[1, 2",
            "{a: 1}",
            "{\"a\": 'x'}",
            "{\"a\": 0x1}",
            "{\"a\": +1}",
            "{\"a\": .5}",
            "{\"a\": NaN}",
            "{\"a\": \"\\x41\"}",
        ] {
            assert!(parse_ast(bad).is_err(), "{bad}");
            assert!(parse_cst(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn kinds_are_named() {
        let t = r#"[{}, [], "s", true, null, 1]"#;
        let v = parse_ast(t).unwrap().unwrap();
        let names: Vec<_> = v
            .as_array()
            .unwrap()
            .elements
            .iter()
            .map(describe)
            .collect();
        assert_eq!(
            names,
            [
                "an object",
                "an array",
                "a string",
                "a boolean",
                "null",
                "a number"
            ]
        );
        let root = parse_cst(t).unwrap();
        let names: Vec<_> = root
            .array_value()
            .unwrap()
            .elements()
            .iter()
            .map(describe_cst)
            .collect();
        assert_eq!(
            names,
            [
                "an object",
                "an array",
                "a string",
                "a boolean",
                "null",
                "a number"
            ]
        );
    }
}

//! Typed, located reads of a screen-rules file's keys for `super::rules`:
//! every error names the file, the line and the key, and says what kind of
//! value was there. Split from the parser so it holds only the rule format.

use std::ops::Range;

use toml_edit::{Item, Table, Value};

use super::RulesError;

/// A value and where it is in the file.
pub(super) type Spanned<T> = (T, Option<Range<usize>>);

/// Where an error is: the file as shown and a line.
pub(super) struct Ctx<'a> {
    pub(super) shown: &'a str,
    pub(super) line: usize,
}

impl Ctx<'_> {
    pub(super) fn err(&self, message: String) -> RulesError {
        RulesError {
            message: format!("{}:{}: {message}", self.shown, self.line),
        }
    }
}

/// Typed reads of one table's keys, with errors naming the key.
pub(super) struct Fields<'a> {
    pub(super) table: &'a Table,
    pub(super) text: &'a str,
    pub(super) shown: &'a str,
    /// The rule's name, once known (messages start with it).
    pub(super) rule: Option<String>,
}

impl Fields<'_> {
    pub(super) fn rule_prefix(&self) -> String {
        self.rule
            .as_ref()
            .map_or(String::new(), |n| format!("rule \"{n}\": "))
    }

    pub(super) fn span(&self, key: &str) -> Option<Range<usize>> {
        self.table
            .get(key)
            .and_then(|item| key_span(self.table, key, item))
    }

    pub(super) fn key_err(
        &self,
        key: &str,
        span: Option<Range<usize>>,
        what: String,
    ) -> RulesError {
        let line = span
            .or_else(|| self.table.span())
            .map_or(1, |s| line_of(self.text, s.start));
        Ctx {
            shown: self.shown,
            line,
        }
        .err(format!("{}key `{key}`: {what}", self.rule_prefix()))
    }

    pub(super) fn value(&self, key: &str) -> Result<Option<&Value>, RulesError> {
        match self.table.get(key) {
            None => Ok(None),
            Some(Item::Value(v)) => Ok(Some(v)),
            Some(item) => Err(self.key_err(
                key,
                self.span(key),
                format!("expected a value, found {}", kind(item)),
            )),
        }
    }

    pub(super) fn string(&self, key: &str) -> Result<Option<String>, RulesError> {
        match self.value(key)? {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.value().clone())),
            Some(v) => Err(self.key_err(
                key,
                v.span(),
                format!("expected a string, found {}", value_kind(v)),
            )),
        }
    }

    pub(super) fn integer(&self, key: &str) -> Result<Option<Spanned<i64>>, RulesError> {
        match self.value(key)? {
            None => Ok(None),
            Some(v @ Value::Integer(i)) => Ok(Some((*i.value(), v.span()))),
            Some(v) => Err(self.key_err(
                key,
                v.span(),
                format!("expected an integer, found {}", value_kind(v)),
            )),
        }
    }

    /// A string or an array of strings; none of them empty, nor the array
    /// unless `may_be_empty`.
    pub(super) fn strings(
        &self,
        key: &str,
        may_be_empty: bool,
    ) -> Result<Option<Spanned<Vec<String>>>, RulesError> {
        let Some(v) = self.value(key)? else {
            return Ok(None);
        };
        let expected = |found: &str| {
            self.key_err(
                key,
                v.span(),
                format!("expected a string or an array of strings, found {found}"),
            )
        };
        let list = match v {
            Value::String(s) => vec![s.value().clone()],
            Value::Array(a) => {
                let mut out = Vec::new();
                for e in a.iter() {
                    match e {
                        Value::String(s) => out.push(s.value().clone()),
                        other => {
                            return Err(expected(&format!(
                                "an array holding {}",
                                value_kind(other)
                            )))
                        }
                    }
                }
                if out.is_empty() && !may_be_empty {
                    return Err(self.key_err(key, v.span(), "the array is empty".into()));
                }
                out
            }
            other => return Err(expected(value_kind(other))),
        };
        if list.iter().any(|s| s.is_empty()) {
            return Err(self.key_err(
                key,
                v.span(),
                "an empty string matches every screen; remove it".into(),
            ));
        }
        Ok(Some((list, v.span())))
    }
}

/// The span of a key in its table (the key's own, else its value's).
pub(super) fn key_span(table: &Table, key: &str, item: &Item) -> Option<Range<usize>> {
    table
        .key(key)
        .and_then(|k| k.span())
        .or_else(|| item.span())
}

/// 1-based line of a byte offset.
pub(super) fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

pub(super) fn kind(item: &Item) -> &'static str {
    match item {
        Item::None => "nothing",
        Item::Value(v) => value_kind(v),
        Item::Table(_) => "a table",
        Item::ArrayOfTables(_) => "an array of tables",
    }
}

pub(super) fn value_kind(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a float",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a date",
        Value::Array(_) => "an array",
        Value::InlineTable(_) => "an inline table",
    }
}

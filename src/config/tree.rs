//! A TOML document as plain values whose keys remember where they were
//! written. The toml crate checks the syntax; this keeps the byte span of
//! every key so `schema.rs` can point at the line and column of whatever it
//! rejects, under its full dotted name. Knows nothing about nerdr's keys.

use std::fmt;
use std::ops::Range;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use toml::Spanned;

/// `key = value`, with the byte span of the key as written.
#[derive(Debug)]
pub struct Entry {
    pub key: String,
    pub span: Range<usize>,
    pub value: Node,
}

#[derive(Debug)]
pub enum Node {
    String(String),
    Integer(i64),
    Float(f64),
    Boolean(bool),
    Datetime(String),
    Array(Vec<Node>),
    /// Entries in document order, so the first error reported is the first
    /// one in the file.
    Table(Vec<Entry>),
}

impl Node {
    /// What was found, for "found ..." in error messages.
    pub fn describe(&self) -> String {
        match self {
            Node::String(s) => format!("a string ({s:?})"),
            Node::Integer(i) => format!("an integer ({i})"),
            Node::Float(f) => format!("a float ({f})"),
            Node::Boolean(b) => format!("a boolean ({b})"),
            Node::Datetime(d) => format!("a date-time ({d})"),
            Node::Array(_) => "an array".to_owned(),
            Node::Table(_) => "a table".to_owned(),
        }
    }
}

/// Parse `text` into the entries of its root table.
pub fn parse(text: &str) -> Result<Vec<Entry>, toml::de::Error> {
    match toml::from_str::<Node>(text)? {
        Node::Table(entries) => Ok(entries),
        // A TOML document is always a table; keep the impossible case an error.
        other => Err(de::Error::custom(format!(
            "document is {}, not a table",
            other.describe()
        ))),
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a TOML value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Boolean(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Integer(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Node, E> {
        i64::try_from(v)
            .map(Node::Integer)
            .map_err(|_| E::custom(format!("integer {v} is too large")))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Float(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::String(v.to_owned()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        loop {
            let key = match map.next_key::<Spanned<String>>() {
                Ok(Some(key)) => key,
                Ok(None) => break,
                // toml hands a date-time to `deserialize_any` as a one-entry
                // map keyed by a private marker that has no span, so reading
                // a spanned key fails there and only there: every key written
                // in the document has a span. The value is the date-time text.
                Err(_) if entries.is_empty() => return Ok(Node::Datetime(map.next_value()?)),
                Err(e) => return Err(e),
            };
            let span = key.span();
            let value = map.next_value()?;
            entries.push(Entry {
                key: key.into_inner(),
                span,
                value,
            });
        }
        Ok(Node::Table(entries))
    }
}

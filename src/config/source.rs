//! The config text being checked, and the checks every section's keys
//! share (a string, a table, a boolean, ...), each error located at its
//! entry: used by `schema` and by the sections kept apart from it
//! (`hosts`).

use std::path::Path;

use super::error::Expected;
use super::tree::{Entry, Node};
use super::{ConfigError, Location};

/// Where the text came from, for locations.
pub struct Source<'a> {
    pub path: &'a Path,
    pub text: &'a str,
}

impl Source<'_> {
    pub(super) fn at(&self, entry: &Entry) -> Location {
        Location::of(self.path, self.text, entry.span.start)
    }

    pub(super) fn unknown(
        &self,
        entry: &Entry,
        section: String,
        valid: &'static [&'static str],
    ) -> ConfigError {
        ConfigError::UnknownKey {
            at: self.at(entry),
            key: entry.key.clone(),
            section,
            valid,
        }
    }

    pub(super) fn wrong_type(
        &self,
        entry: &Entry,
        key: &str,
        expected: Expected,
        found: String,
    ) -> ConfigError {
        ConfigError::WrongType {
            at: self.at(entry),
            key: key.to_owned(),
            expected,
            found,
        }
    }

    pub(super) fn invalid(
        &self,
        entry: &Entry,
        key: &str,
        problem: String,
        fix: &str,
    ) -> ConfigError {
        ConfigError::InvalidValue {
            at: self.at(entry),
            key: key.to_owned(),
            problem,
            fix: fix.to_owned(),
        }
    }

    pub(super) fn table<'n>(
        &self,
        entry: &'n Entry,
        key: &str,
        expected: Expected,
    ) -> Result<&'n [Entry], ConfigError> {
        match &entry.value {
            Node::Table(entries) => Ok(entries),
            other => Err(self.wrong_type(entry, key, expected, other.describe())),
        }
    }

    /// A string that can go into an argv or environment: no NUL.
    pub(super) fn string(&self, entry: &Entry, key: &str) -> Result<String, ConfigError> {
        match &entry.value {
            Node::String(s) => self.no_nul(entry, key, s).map(|()| s.clone()),
            other => Err(self.wrong_type(entry, key, Expected::String, other.describe())),
        }
    }

    pub(super) fn nonempty_string(&self, entry: &Entry, key: &str) -> Result<String, ConfigError> {
        let s = self.string(entry, key)?;
        if s.is_empty() {
            return Err(self.invalid(
                entry,
                key,
                "is empty".into(),
                "give it a value or remove the key",
            ));
        }
        Ok(s)
    }

    pub(super) fn strings(&self, entry: &Entry, key: &str) -> Result<Vec<String>, ConfigError> {
        let Node::Array(items) = &entry.value else {
            return Err(self.wrong_type(entry, key, Expected::Strings, entry.value.describe()));
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let Node::String(s) = item else {
                let found = format!("an array holding {} at index {i}", item.describe());
                return Err(self.wrong_type(entry, key, Expected::Strings, found));
            };
            self.no_nul(entry, key, s)?;
            out.push(s.clone());
        }
        Ok(out)
    }

    pub(super) fn boolean(&self, entry: &Entry, key: &str) -> Result<bool, ConfigError> {
        match entry.value {
            Node::Boolean(b) => Ok(b),
            ref other => Err(self.wrong_type(entry, key, Expected::Boolean, other.describe())),
        }
    }

    pub(super) fn seconds(&self, entry: &Entry, key: &str) -> Result<u64, ConfigError> {
        match entry.value {
            Node::Integer(n) if (1..=86_400).contains(&n) => Ok(n as u64),
            ref other => Err(self.wrong_type(entry, key, Expected::Seconds, other.describe())),
        }
    }

    pub(super) fn no_nul(&self, entry: &Entry, key: &str, s: &str) -> Result<(), ConfigError> {
        if s.contains('\0') {
            let fix = "remove it: a NUL byte cannot be passed to a program";
            return Err(self.invalid(entry, key, "contains a NUL character (\\u0000)".into(), fix));
        }
        Ok(())
    }
}

//! A JSON reader that keeps byte spans, so settings files can be edited by
//! inserting and deleting text instead of re-serializing them. Tolerant of
//! what people put in hand-edited settings (`//` and `/* */` comments,
//! trailing commas), because the agents' own readers often are too. Owns
//! parsing and the layout helpers the edits need; not what to edit.

/// A value and where it lies: `start..end` covers its text exactly.
#[derive(Debug, Clone)]
pub struct Node {
    pub start: usize,
    pub end: usize,
    pub kind: Kind,
}

#[derive(Debug, Clone)]
pub enum Kind {
    Object(Container<Member>),
    Array(Container<Node>),
    Scalar,
}

/// An object or array: `open` and `close` are the offsets of its brackets.
#[derive(Debug, Clone)]
pub struct Container<T> {
    pub open: usize,
    pub close: usize,
    pub items: Vec<T>,
}

#[derive(Debug, Clone)]
pub struct Member {
    pub key: String,
    pub key_start: usize,
    pub value: Node,
}

/// Something with a text span, so objects and arrays share the layout code.
pub trait Spanned {
    fn span_start(&self) -> usize;
    fn span_end(&self) -> usize;
}

impl Spanned for Node {
    fn span_start(&self) -> usize {
        self.start
    }
    fn span_end(&self) -> usize {
        self.end
    }
}

impl Spanned for Member {
    fn span_start(&self) -> usize {
        self.key_start
    }
    fn span_end(&self) -> usize {
        self.value.end
    }
}

impl Node {
    pub fn as_object(&self) -> Option<&Container<Member>> {
        match &self.kind {
            Kind::Object(o) => Some(o),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&Container<Node>> {
        match &self.kind {
            Kind::Array(a) => Some(a),
            _ => None,
        }
    }
    /// What kind of value this is, for error messages.
    pub fn describe(&self, text: &str) -> &'static str {
        match &self.kind {
            Kind::Object(_) => "an object",
            Kind::Array(_) => "an array",
            Kind::Scalar => match text.as_bytes()[self.start] {
                b'"' => "a string",
                b't' | b'f' => "a boolean",
                b'n' => "null",
                _ => "a number",
            },
        }
    }
}

impl Container<Member> {
    /// The member named `key`; the last one if it is repeated, as
    /// `JSON.parse` does.
    pub fn get(&self, key: &str) -> Option<&Member> {
        self.items.iter().rev().find(|m| m.key == key)
    }
}

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

/// The document's value, or `None` when it holds only whitespace and
/// comments.
pub fn parse(text: &str) -> Result<Option<Node>, SyntaxError> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    let res = (|| {
        p.skip_blank()?;
        if p.i == p.s.len() {
            return Ok(None);
        }
        let v = p.value(0)?;
        p.skip_blank()?;
        if p.i != p.s.len() {
            return Err(p.err("unexpected text after the value"));
        }
        Ok(Some(v))
    })();
    res.map_err(|(at, what)| {
        let before = &text[..at.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        SyntaxError { line, column, what }
    })
}

/// Past this depth a settings file is not plausible, and recursion must stop.
const MAX_DEPTH: usize = 128;

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

type PResult<T> = Result<T, (usize, String)>;

impl Parser<'_> {
    fn err(&self, what: &str) -> (usize, String) {
        (self.i, what.to_string())
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn skip_blank(&mut self) -> PResult<()> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.i += 1,
                Some(b'/') if self.s.get(self.i + 1) == Some(&b'/') => {
                    while !matches!(self.peek(), None | Some(b'\n')) {
                        self.i += 1;
                    }
                }
                Some(b'/') if self.s.get(self.i + 1) == Some(&b'*') => {
                    let start = self.i;
                    self.i += 2;
                    loop {
                        match self.peek() {
                            None => return Err((start, "unclosed /* comment".into())),
                            Some(b'*') if self.s.get(self.i + 1) == Some(&b'/') => {
                                self.i += 2;
                                break;
                            }
                            Some(_) => self.i += 1,
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> PResult<Node> {
        if depth > MAX_DEPTH {
            return Err(self.err("nested too deeply"));
        }
        let start = self.i;
        let kind = match self.peek() {
            Some(b'{') => Kind::Object(self.container(depth, |p, d| {
                let key_start = p.i;
                if p.peek() != Some(b'"') {
                    return Err(p.err("expected a member name in double quotes"));
                }
                p.string()?;
                let key: String = serde_json::from_slice(&p.s[key_start..p.i])
                    .map_err(|e| (key_start, format!("bad member name: {e}")))?;
                p.skip_blank()?;
                if p.peek() != Some(b':') {
                    return Err(p.err("expected `:` after the member name"));
                }
                p.i += 1;
                p.skip_blank()?;
                let value = p.value(d)?;
                Ok(Member {
                    key,
                    key_start,
                    value,
                })
            })?),
            Some(b'[') => Kind::Array(self.container(depth, |p, d| p.value(d))?),
            Some(b'"') => {
                self.string()?;
                Kind::Scalar
            }
            Some(c) if c == b'-' || c.is_ascii_alphanumeric() => {
                while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || b"+-.".contains(&c))
                {
                    self.i += 1;
                }
                let token = &self.s[start..self.i];
                if serde_json::from_slice::<serde_json::Value>(token).is_err() {
                    self.i = start;
                    return Err(self.err("expected a value"));
                }
                Kind::Scalar
            }
            _ => return Err(self.err("expected a value")),
        };
        Ok(Node {
            start,
            end: self.i,
            kind,
        })
    }

    /// `{ item, item, }` or `[ ... ]`, with an optional trailing comma.
    fn container<T>(
        &mut self,
        depth: usize,
        mut item: impl FnMut(&mut Self, usize) -> PResult<T>,
    ) -> PResult<Container<T>> {
        let open = self.i;
        let closer = if self.s[open] == b'{' { b'}' } else { b']' };
        self.i += 1;
        let mut items = Vec::new();
        loop {
            self.skip_blank()?;
            if self.peek() == Some(closer) {
                break;
            }
            items.push(item(self, depth + 1)?);
            self.skip_blank()?;
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(c) if c == closer => break,
                _ => return Err(self.err("expected `,` or the closing bracket")),
            }
        }
        let close = self.i;
        self.i += 1;
        Ok(Container { open, close, items })
    }

    fn string(&mut self) -> PResult<()> {
        let start = self.i;
        self.i += 1;
        loop {
            match self.peek() {
                None | Some(b'\n') => return Err((start, "unclosed string".into())),
                Some(b'\\') => self.i += 2,
                Some(b'"') => {
                    self.i += 1;
                    return Ok(());
                }
                Some(_) => self.i += 1,
            }
        }
    }
}

/// The whitespace that starts the line holding `pos`.
pub fn indent_at(text: &str, pos: usize) -> &str {
    let line_start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..];
    let n = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..n]
}

/// The document's indentation step: how much deeper the root's first member
/// sits than the root itself; two spaces when that cannot be told.
pub fn indent_unit(text: &str, root: &Node) -> String {
    let first = match &root.kind {
        Kind::Object(o) => o.items.first().map(|m| m.key_start),
        Kind::Array(a) => a.items.first().map(|n| n.start),
        Kind::Scalar => None,
    };
    if let Some(first) = first {
        if text[root.start..first].contains('\n') {
            let outer = indent_at(text, root.start);
            let inner = indent_at(text, first);
            if let Some(unit) = inner.strip_prefix(outer) {
                if !unit.is_empty() {
                    return unit.to_string();
                }
            }
        }
    }
    "  ".to_string()
}

/// The bytes to delete so that item `index` of a container leaves it, with
/// one separating comma: from the end of the previous item, or up to the
/// start of the next one, or the whole inside when it is the only item.
pub fn removal_range<T: Spanned>(c: &Container<T>, index: usize) -> std::ops::Range<usize> {
    let item = &c.items[index];
    if index > 0 {
        c.items[index - 1].span_end()..item.span_end()
    } else if let Some(next) = c.items.get(1) {
        item.span_start()..next.span_start()
    } else {
        c.open + 1..c.close
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(text: &str) -> Container<Member> {
        parse(text).unwrap().unwrap().as_object().unwrap().clone()
    }

    #[test]
    fn spans_cover_the_values_exactly() {
        let t = r#"{ "a": [1, {"b": "x\"y"}], "c": null }"#;
        let root = obj(t);
        assert_eq!(root.items.len(), 2);
        let a = &root.items[0].value;
        assert_eq!(&t[a.start..a.end], r#"[1, {"b": "x\"y"}]"#);
        assert_eq!(root.get("c").unwrap().key_start, t.find("\"c\"").unwrap());
    }

    #[test]
    fn comments_and_trailing_commas_are_accepted() {
        let t = "// top\n{\n  /* a */ \"a\": 1, // one\n  \"b\": [2,],\n}\n";
        let root = obj(t);
        assert_eq!(root.items.len(), 2);
        assert_eq!(
            root.get("b").unwrap().value.as_array().unwrap().items.len(),
            1
        );
    }

    #[test]
    fn a_repeated_key_means_its_last_value() {
        let t = r#"{"a": 1, "a": 2}"#;
        let m = obj(t).get("a").unwrap().value.clone();
        assert_eq!(&t[m.start..m.end], "2");
    }

    #[test]
    fn only_blank_text_has_no_value() {
        assert!(parse(" \n// nothing\n").unwrap().is_none());
    }

    #[test]
    fn errors_say_line_and_column() {
        let e = parse("{\n  \"a\": 1\n  \"b\": 2\n}").unwrap_err();
        assert_eq!((e.line, e.column), (3, 3), "{e}");
        assert!(parse("{\"a\": tru}").is_err());
        assert!(parse("{\"a\": 1} x").is_err());
        assert!(parse("[1, 2").is_err());
    }

    #[test]
    fn indent_unit_follows_the_file() {
        for (t, unit) in [
            ("{\n    \"a\": 1\n}", "    "),
            ("{\n\t\"a\": 1\n}", "\t"),
            ("{\"a\": 1}", "  "),
            ("{}", "  "),
        ] {
            let root = parse(t).unwrap().unwrap();
            assert_eq!(indent_unit(t, &root), unit, "{t:?}");
        }
    }

    #[test]
    fn removal_ranges_take_one_comma() {
        let t = "[1, 2, 3]";
        let root = parse(t).unwrap().unwrap();
        let a = root.as_array().unwrap();
        let cut = |i: usize| {
            let r = removal_range(a, i);
            format!("{}{}", &t[..r.start], &t[r.end..])
        };
        assert_eq!(cut(0), "[2, 3]");
        assert_eq!(cut(1), "[1, 3]");
        assert_eq!(cut(2), "[1, 2]");
        let t1 = "[ 1 ]";
        let one = parse(t1).unwrap().unwrap();
        let r = removal_range(one.as_array().unwrap(), 0);
        assert_eq!(format!("{}{}", &t1[..r.start], &t1[r.end..]), "[]");
    }
}

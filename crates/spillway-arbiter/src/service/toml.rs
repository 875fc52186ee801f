//! The small subset of TOML the service's fabric file uses, parsed without a dependency.
//!
//! Why here and not with the `toml` crate: this crate is std-only so that the simulator
//! and the service embed it without pulling anything in (see Cargo.toml), and the
//! binaries live in this crate. The fabric file needs little: `[table]` headers (one
//! level), `key = value`, values that are strings (basic escapes), integers (with `_`),
//! floats, booleans and arrays of those (may span lines), `#` comments. Anything else is
//! refused with its line number, never guessed at; a file in this subset is valid TOML
//! and means the same there.

use std::collections::BTreeMap;
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Array(Vec<Value>),
}

impl Value {
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::Int(_) => "integer",
            Value::Float(_) => "float",
            Value::Bool(_) => "boolean",
            Value::Array(_) => "array",
        }
    }
}

/// A parse error: the 1-based line and what is wrong there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TomlError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for TomlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for TomlError {}

/// Tables by name (`""` is the root), each its keys in order.
pub type Document = BTreeMap<String, BTreeMap<String, Value>>;

fn err(line: usize, message: impl Into<String>) -> TomlError {
    TomlError {
        line,
        message: message.into(),
    }
}

/// Parse `text`; a duplicated table or key is an error, as in TOML.
pub fn parse(text: &str) -> Result<Document, TomlError> {
    let mut doc = Document::new();
    doc.insert(String::new(), BTreeMap::new());
    let mut table = String::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let lineno = i + 1;
        let mut line = strip_comment(lines[i]).trim().to_string();
        i += 1;
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            if rest.starts_with('[') {
                return Err(err(lineno, "arrays of tables ([[...]]) are not supported"));
            }
            let name = rest
                .strip_suffix(']')
                .ok_or_else(|| err(lineno, "a table header must end with ]"))?
                .trim();
            if !is_bare_key(name) {
                return Err(err(
                    lineno,
                    format!("table name {name:?}: letters, digits, _ and - only"),
                ));
            }
            if doc.contains_key(name) {
                return Err(err(lineno, format!("table [{name}] defined twice")));
            }
            doc.insert(name.to_string(), BTreeMap::new());
            table = name.to_string();
            continue;
        }
        let Some(eq) = line.find('=') else {
            return Err(err(lineno, "expected `key = value` or a [table] header"));
        };
        let key = line[..eq].trim().to_string();
        if !is_bare_key(&key) {
            return Err(err(
                lineno,
                format!("key {key:?}: letters, digits, _ and - only"),
            ));
        }
        // An array may span lines: read on until its brackets balance.
        while depth(&line[eq + 1..]).map_err(|m| err(lineno, m))? > 0 {
            let Some(next) = lines.get(i) else {
                return Err(err(lineno, "unterminated array"));
            };
            line.push(' ');
            line.push_str(strip_comment(next).trim());
            i += 1;
        }
        let mut p = Parser {
            s: line[eq + 1..].trim().as_bytes(),
            pos: 0,
            line: lineno,
        };
        let v = p.value()?;
        p.skip_ws();
        if p.pos != p.s.len() {
            return Err(err(lineno, "unexpected text after the value"));
        }
        let t = doc.get_mut(&table).expect("the current table exists");
        if t.insert(key.clone(), v).is_some() {
            return Err(err(lineno, format!("key {key:?} defined twice")));
        }
    }
    Ok(doc)
}

fn is_bare_key(k: &str) -> bool {
    !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The line up to a `#` outside a string.
fn strip_comment(line: &str) -> &str {
    let mut in_str = false;
    let mut esc = false;
    for (i, c) in line.char_indices() {
        match c {
            _ if esc => esc = false,
            '\\' if in_str => esc = true,
            '"' => in_str = !in_str,
            '#' if !in_str => return &line[..i],
            _ => {}
        }
    }
    line
}

/// Open brackets minus closed ones, outside strings.
fn depth(s: &str) -> Result<i64, String> {
    let (mut d, mut in_str, mut esc) = (0i64, false, false);
    for c in s.chars() {
        match c {
            _ if esc => esc = false,
            '\\' if in_str => esc = true,
            '"' => in_str = !in_str,
            '[' if !in_str => d += 1,
            ']' if !in_str => d -= 1,
            _ => {}
        }
    }
    if in_str {
        return Err("unterminated string".into());
    }
    Ok(d)
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    line: usize,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.pos < self.s.len() && (self.s[self.pos] as char).is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn value(&mut self) -> Result<Value, TomlError> {
        self.skip_ws();
        match self.s.get(self.pos) {
            None => Err(err(self.line, "missing value")),
            Some(b'"') => self.string(),
            Some(b'[') => self.array(),
            Some(_) => self.scalar(),
        }
    }

    fn string(&mut self) -> Result<Value, TomlError> {
        self.pos += 1;
        let mut out = Vec::new();
        while let Some(&b) = self.s.get(self.pos) {
            self.pos += 1;
            match b {
                b'"' => {
                    return String::from_utf8(out)
                        .map(Value::Str)
                        .map_err(|_| err(self.line, "string is not UTF-8"))
                }
                b'\\' => {
                    let e = self.s.get(self.pos).copied();
                    self.pos += 1;
                    out.push(match e {
                        Some(b'"') => b'"',
                        Some(b'\\') => b'\\',
                        Some(b'n') => b'\n',
                        Some(b't') => b'\t',
                        _ => return Err(err(self.line, "unsupported escape in string")),
                    });
                }
                _ => out.push(b),
            }
        }
        Err(err(self.line, "unterminated string"))
    }

    fn array(&mut self) -> Result<Value, TomlError> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_ws();
            if self.s.get(self.pos) == Some(&b']') {
                self.pos += 1;
                return Ok(Value::Array(items));
            }
            items.push(self.value()?);
            self.skip_ws();
            match self.s.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {}
                _ => return Err(err(self.line, "expected , or ] in array")),
            }
        }
    }

    fn scalar(&mut self) -> Result<Value, TomlError> {
        let start = self.pos;
        while self.pos < self.s.len() && !matches!(self.s[self.pos], b',' | b']' | b' ' | b'\t') {
            self.pos += 1;
        }
        let t = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("");
        match t {
            "true" => return Ok(Value::Bool(true)),
            "false" => return Ok(Value::Bool(false)),
            _ => {}
        }
        let digits = t.replace('_', "");
        if t.contains("__") || t.starts_with('_') || t.ends_with('_') {
            return Err(err(self.line, format!("bad number {t:?}")));
        }
        if let Ok(n) = digits.parse::<i64>() {
            return Ok(Value::Int(n));
        }
        if digits.contains(['.', 'e', 'E']) {
            if let Ok(x) = digits.parse::<f64>() {
                if x.is_finite() {
                    return Ok(Value::Float(x));
                }
            }
        }
        Err(err(
            self.line,
            format!("{t:?} is not a string (in quotes), number, boolean or array"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_subset() {
        let d = parse(
            "a = 1 # c\n[t]\ns = \"x#y\\\"\"\nf = 2.5\nb = true\nn = 1_000\n\
             arr = [\n  \"p\", # one\n  \"q\",\n]\n",
        )
        .unwrap();
        assert_eq!(d[""]["a"], Value::Int(1));
        assert_eq!(d["t"]["s"], Value::Str("x#y\"".into()));
        assert_eq!(d["t"]["f"], Value::Float(2.5));
        assert_eq!(d["t"]["b"], Value::Bool(true));
        assert_eq!(d["t"]["n"], Value::Int(1000));
        assert_eq!(
            d["t"]["arr"],
            Value::Array(vec![Value::Str("p".into()), Value::Str("q".into())])
        );
    }

    #[test]
    fn refuses_with_line_numbers() {
        for (text, line, what) in [
            ("a = 1\na = 2", 2, "twice"),
            ("[t]\n[t]", 2, "twice"),
            ("[[t]]", 1, "arrays of tables"),
            ("a = \"x", 1, "unterminated"),
            ("a = [1, 2", 1, "unterminated"),
            ("a = nope", 1, "not a string"),
            ("a = 1 2", 1, "after the value"),
            ("just words", 1, "expected"),
            ("a.b = 1", 1, "letters"),
            ("a = 1__0", 1, "bad number"),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text}");
            assert!(e.message.contains(what), "{text}: {e}");
        }
    }
}

//! Structured logs: one JSON object per line. Lifecycle events go to stderr (flushed per
//! line); per-packet events go to a buffered file, flushed at exit and periodically.

use std::fmt::Write as _;
use std::io::{BufWriter, Write};

/// A JSON string literal of `s`.
pub fn quote(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// One lifecycle event on stderr: `{"t_ns": .., "proc": .., "ev": .., <fields>}`;
/// `fields` is the rest of a JSON object's members, already formatted (may be empty).
pub fn event(proc_name: &str, ev: &str, fields: &str) {
    let sep = if fields.is_empty() { "" } else { ", " };
    let line = format!(
        "{{\"t_ns\": {}, \"proc\": {}, \"ev\": {}{sep}{fields}}}\n",
        super::clock::unix_ns(),
        quote(proc_name),
        quote(ev)
    );
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(line.as_bytes());
    let _ = e.flush();
}

/// A buffered JSON-lines file (or nothing).
pub struct EventLog {
    out: Option<BufWriter<std::fs::File>>,
}

impl EventLog {
    pub fn open(path: Option<&str>) -> std::io::Result<Self> {
        Ok(EventLog {
            out: match path {
                Some(p) => Some(BufWriter::with_capacity(1 << 16, std::fs::File::create(p)?)),
                None => None,
            },
        })
    }
    pub fn enabled(&self) -> bool {
        self.out.is_some()
    }
    pub fn line(&mut self, args: std::fmt::Arguments<'_>) {
        if let Some(o) = &mut self.out {
            let _ = o.write_fmt(args);
            let _ = o.write_all(b"\n");
        }
    }
    pub fn flush(&mut self) {
        if let Some(o) = &mut self.out {
            let _ = o.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn quoting() {
        assert_eq!(super::quote("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
    }
}

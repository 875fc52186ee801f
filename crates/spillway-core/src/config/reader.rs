//! The reader: typed access with defaults, recording the resolved value of every key.

use super::error::ScenarioError;
use super::keys::{keydef, unknown_key_message, Ty, KEYS, KIND_DEFAULTS};
use crate::units::{self, Ps};
use std::fmt;
use std::path::{Path, PathBuf};
use toml::{Table, Value};

pub(super) struct Reader<'a> {
    table: &'a Table,
    base_dir: Option<PathBuf>,
    resolved: Vec<(&'static str, Value)>,
    /// Hosts that take no part in the workload (Fastpass arbiters): left out of default
    /// host lists, refused in given ones.
    pub(super) reserved: Vec<u32>,
}

impl<'a> Reader<'a> {
    /// The file key `path` names (relative to the scenario): its value as given, where
    /// it is, and its text; None when the key is not set.
    pub(super) fn file_text(
        &self,
        path: &str,
    ) -> Result<Option<(Value, PathBuf, String)>, ScenarioError> {
        let Some(v) = self.raw(path).cloned() else {
            return Ok(None);
        };
        let Value::String(name) = &v else {
            return Err(self.err_value(path, &v, "expected a file path"));
        };
        let file = self.resolve_path(name);
        let text = std::fs::read_to_string(&file).map_err(|e| {
            self.err_value(path, &v, format!("cannot read {}: {e}", file.display()))
        })?;
        Ok(Some((v, file, text)))
    }

    pub(super) fn resolve_path(&self, p: &str) -> PathBuf {
        let pb = PathBuf::from(p);
        match &self.base_dir {
            Some(b) if pb.is_relative() => b.join(pb),
            _ => pb,
        }
    }

    pub(super) fn new(table: &'a Table, base_dir: Option<&Path>) -> Result<Self, ScenarioError> {
        let r = Reader {
            table,
            base_dir: base_dir.map(Path::to_path_buf),
            resolved: Vec::new(),
            reserved: Vec::new(),
        };
        r.check_known_keys()?;
        Ok(r)
    }

    /// Every key present must be known and must apply to its section's kind.
    pub(super) fn check_known_keys(&self) -> Result<(), ScenarioError> {
        for (section, v) in self.table {
            let t = match v {
                Value::Table(t) => t,
                _ => {
                    return Err(ScenarioError::new(section, v, "expected a [section] table"));
                }
            };
            if !KEYS
                .iter()
                .any(|k| k.path.starts_with(&format!("{section}.")))
            {
                let mut known: Vec<&str> = KEYS
                    .iter()
                    .filter_map(|k| k.path.split('.').next())
                    .collect();
                known.dedup();
                return Err(ScenarioError::new(
                    section,
                    "",
                    format!("unknown section (known: {})", known.join(", ")),
                ));
            }
            let kind = self.kind_of(section);
            for (key, value) in t {
                let path = format!("{section}.{key}");
                let def = KEYS
                    .iter()
                    .find(|k| k.path == path)
                    .ok_or_else(|| ScenarioError::new(&path, value, unknown_key_message(&path)))?;
                if let Some(kind) = &kind {
                    if !def.kinds.is_empty() && !def.kinds.contains(&kind.as_str()) {
                        return Err(ScenarioError::new(
                            &path,
                            value,
                            format!(
                                "does not apply to {section}.kind = \"{kind}\" (applies to: {})",
                                def.kinds.join(", ")
                            ),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    pub(super) fn kind_of(&self, section: &str) -> Option<String> {
        let path = format!("{section}.kind");
        let def = KEYS.iter().find(|k| k.path == path)?;
        match self.raw(&path) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => None, // reported when the kind itself is read
            None => Some(def.default.to_string()),
        }
    }

    pub(super) fn raw(&self, path: &str) -> Option<&'a Value> {
        let (section, key) = path.split_once('.')?;
        self.table.get(section)?.as_table()?.get(key)
    }

    /// The default text for `path`, taking kind-specific presets into account.
    pub(super) fn default_text(&self, path: &str) -> &'static str {
        let section = path.split('.').next().unwrap_or("");
        if let Some(kind) = self.kind_of(section) {
            // Presets are keyed by the topology or workload kind.
            for &(k, p, v) in KIND_DEFAULTS {
                if k == kind && p == path {
                    return v;
                }
            }
        }
        keydef(path).default
    }

    /// `host` runs a Fastpass arbiter: the error for a workload key that names it.
    pub(super) fn reserved_host(&self, path: &str, host: u32) -> Option<ScenarioError> {
        self.reserved.contains(&host).then(|| {
            ScenarioError::new(
                path,
                host,
                format!("host {host} runs a Fastpass arbiter (fastpass.arbiter, fastpass.secondary) and takes no part in the workload"),
            )
        })
    }

    pub(super) fn err(&self, path: &str, message: impl Into<String>) -> ScenarioError {
        let value = match self.raw(path) {
            Some(v) => v.to_string(),
            None => self.default_text(path).to_string(),
        };
        ScenarioError::new(path, value, message)
    }

    pub(super) fn err_value(
        &self,
        path: &str,
        value: impl fmt::Display,
        message: impl Into<String>,
    ) -> ScenarioError {
        ScenarioError::new(path, value, message)
    }

    pub(super) fn record(&mut self, path: &'static str, v: Value) {
        let path = keydef(path).path;
        self.resolved.retain(|(p, _)| *p != path);
        self.resolved.push((path, v));
    }

    /// The value as given, or the default parsed as a bare string; None when neither.
    pub(super) fn value(&self, path: &str) -> Option<Value> {
        if let Some(v) = self.raw(path) {
            return Some(v.clone());
        }
        let d = self.default_text(path);
        if d.is_empty() {
            None
        } else {
            Some(
                d.parse::<Value>()
                    .unwrap_or_else(|_| Value::String(d.to_string())),
            )
        }
    }

    pub(super) fn typed<T>(
        &mut self,
        path: &'static str,
        parse: impl Fn(&Value) -> Result<T, String>,
        canon: impl Fn(&T) -> Value,
    ) -> Result<Option<T>, ScenarioError> {
        let Some(v) = self.value(path) else {
            return Ok(None);
        };
        let t = parse(&v).map_err(|m| ScenarioError::new(path, &v, m))?;
        self.record(path, canon(&t));
        Ok(Some(t))
    }

    pub(super) fn choice(&mut self, path: &'static str) -> Result<&'static str, ScenarioError> {
        let Ty::Choice(options) = keydef(path).ty else {
            unreachable!("{path} is not a choice")
        };
        let v = self
            .typed(
                path,
                |v| match v {
                    Value::String(s) => options
                        .iter()
                        .find(|o| *o == s)
                        .copied()
                        .ok_or_else(|| format!("must be one of: {}", options.join(", "))),
                    _ => Err(format!("must be a string, one of: {}", options.join(", "))),
                },
                |s| Value::String(s.to_string()),
            )?
            .expect("choices have defaults");
        Ok(v)
    }

    /// A choice whose default depends on other keys (its table default is empty): the
    /// value given, else `derived`, recorded in the resolved scenario.
    pub(super) fn choice_or(
        &mut self,
        path: &'static str,
        derived: &'static str,
    ) -> Result<&'static str, ScenarioError> {
        if self.raw(path).is_some() {
            return self.choice(path);
        }
        self.record(path, Value::String(derived.into()));
        Ok(derived)
    }

    pub(super) fn uint(
        &mut self,
        path: &'static str,
        min: u64,
        max: u64,
    ) -> Result<u64, ScenarioError> {
        Ok(self
            .typed(path, |v| int_in(v, min, max), |&i| Value::Integer(i as i64))?
            .expect("integers have defaults"))
    }

    pub(super) fn opt_uint(
        &mut self,
        path: &'static str,
        min: u64,
    ) -> Result<Option<u64>, ScenarioError> {
        let v = self.typed(
            path,
            |v| {
                if is_off(v) {
                    Ok(None)
                } else {
                    int_in(v, min, i64::MAX as u64).map(Some)
                }
            },
            |o| o.map_or(Value::String("off".into()), |i| Value::Integer(i as i64)),
        )?;
        Ok(v.flatten())
    }

    /// An integer in `min..=max`, or `auto` (None).
    pub(super) fn uint_or_auto(
        &mut self,
        path: &'static str,
        min: u64,
        max: u64,
    ) -> Result<Option<u64>, ScenarioError> {
        let v = self.typed(
            path,
            |v| match v {
                Value::String(s) if s == "auto" => Ok(None),
                Value::Integer(_) => int_in(v, min, max).map(Some),
                _ => Err(format!("must be an integer in {min}..={max} or \"auto\"")),
            },
            |o| o.map_or(Value::String("auto".into()), |i| Value::Integer(i as i64)),
        )?;
        Ok(v.flatten())
    }

    pub(super) fn bool(&mut self, path: &'static str) -> Result<bool, ScenarioError> {
        Ok(self
            .typed(
                path,
                |v| match v {
                    Value::Boolean(b) => Ok(*b),
                    _ => Err("must be true or false".into()),
                },
                |&b| Value::Boolean(b),
            )?
            .expect("booleans have defaults"))
    }

    pub(super) fn load(&mut self) -> Result<f64, ScenarioError> {
        let v = self
            .typed("workload.load", load_fraction, |&x| Value::Float(x))?
            .expect("load has a default");
        Ok(v)
    }

    /// A number in (lo, hi]; lo < 0 means [0, hi].
    pub(super) fn float_in(
        &mut self,
        path: &'static str,
        lo: f64,
        hi: f64,
    ) -> Result<f64, ScenarioError> {
        let v = self
            .typed(
                path,
                |v| {
                    let x = match v {
                        Value::Float(f) => *f,
                        Value::Integer(i) => *i as f64,
                        _ => return Err("must be a number".into()),
                    };
                    let ok = if lo < 0.0 { x >= 0.0 } else { x > lo };
                    if ok && x <= hi {
                        Ok(x)
                    } else if lo < 0.0 {
                        Err(format!("must be in [0, {hi}]"))
                    } else {
                        Err(format!("must be in ({lo}, {hi}]"))
                    }
                },
                |&x| Value::Float(x),
            )?
            .expect("numbers have defaults");
        Ok(v)
    }

    pub(super) fn unit<T: Copy>(
        &mut self,
        path: &'static str,
        parse: fn(&str) -> Result<T, String>,
        from_int: fn(i64) -> Result<T, String>,
        fmt: fn(T) -> String,
    ) -> Result<Option<T>, ScenarioError> {
        self.typed(
            path,
            |v| match v {
                Value::String(s) => parse(s),
                Value::Integer(i) => from_int(*i),
                _ => Err("expected a string with a unit".into()),
            },
            |&t| Value::String(fmt(t)),
        )
    }

    pub(super) fn opt_size(&mut self, path: &'static str) -> Result<Option<u64>, ScenarioError> {
        self.unit(path, units::parse_size, nonneg, units::format_size)
    }

    pub(super) fn size(&mut self, path: &'static str) -> Result<u64, ScenarioError> {
        Ok(self.opt_size(path)?.expect("sizes have defaults"))
    }

    pub(super) fn positive_size(&mut self, path: &'static str) -> Result<u64, ScenarioError> {
        let s = self.size(path)?;
        if s == 0 {
            return Err(self.err(path, "must be positive"));
        }
        Ok(s)
    }

    pub(super) fn opt_rate(&mut self, path: &'static str) -> Result<Option<u64>, ScenarioError> {
        self.unit(
            path,
            units::parse_rate,
            |i| {
                if i > 0 {
                    units::check_rate(i as u64)
                } else {
                    Err("a rate must be positive".into())
                }
            },
            units::format_rate,
        )
    }

    pub(super) fn rate(&mut self, path: &'static str) -> Result<u64, ScenarioError> {
        Ok(self.opt_rate(path)?.expect("rates have defaults"))
    }

    /// A time with no "off": absent means "derive it".
    pub(super) fn opt_time_derived(
        &mut self,
        path: &'static str,
    ) -> Result<Option<Ps>, ScenarioError> {
        self.unit(path, units::parse_time, zero_only, units::format_time)
    }

    pub(super) fn time(&mut self, path: &'static str) -> Result<Ps, ScenarioError> {
        Ok(self.opt_time_derived(path)?.expect("times have defaults"))
    }

    pub(super) fn opt_time(&mut self, path: &'static str) -> Result<Option<Ps>, ScenarioError> {
        let v = self.typed(
            path,
            |v| {
                if is_off(v) {
                    return Ok(None);
                }
                match v {
                    Value::String(s) => units::parse_time(s).map(Some),
                    Value::Integer(i) => zero_only(*i).map(Some),
                    _ => Err("expected a time (`10us`) or `off`".into()),
                }
            },
            |o| Value::String(o.map_or("off".to_string(), units::format_time)),
        )?;
        Ok(v.flatten())
    }

    /// The resolved scenario as TOML, in [`KEYS`] order.
    pub(super) fn render(&self) -> String {
        let mut out = String::from(
            "# Resolved by spillway: every key that applies, with its effective value.\n",
        );
        let mut section = "";
        for def in KEYS {
            let Some((_, v)) = self.resolved.iter().find(|(p, _)| *p == def.path) else {
                continue;
            };
            let (s, key) = def.path.split_once('.').unwrap();
            if s != section {
                out.push_str(&format!("\n[{s}]\n"));
                section = s;
            }
            if let (Ty::Flows | Ty::Routes | Ty::Links, Value::Array(a)) = (def.ty, v) {
                // Inline tables keep the resolved file in one section.
                out.push_str(&format!("{key} = [\n"));
                for f in a {
                    out.push_str(&format!("  {},\n", inline_table(f)));
                }
                out.push_str("]\n");
            } else {
                out.push_str(&format!("{key} = {v}\n"));
            }
        }
        out
    }
}

pub(super) fn inline_table(v: &Value) -> String {
    match v {
        Value::Table(t) => {
            let parts: Vec<String> = t.iter().map(|(k, v)| format!("{k} = {v}")).collect();
            format!("{{ {} }}", parts.join(", "))
        }
        other => other.to_string(),
    }
}

/// A load: a fraction of link capacity in (0, 1].
pub(super) fn load_fraction(v: &Value) -> Result<f64, String> {
    let x = match v {
        Value::Float(f) => *f,
        Value::Integer(i) => *i as f64,
        _ => return Err("must be a number in (0, 1]".into()),
    };
    if x > 0.0 && x <= 1.0 {
        Ok(x)
    } else {
        Err("must be in (0, 1]".into())
    }
}

pub(super) fn is_off(v: &Value) -> bool {
    matches!(v, Value::String(s) if s == "off") || matches!(v, Value::Boolean(false))
}

pub(super) fn int_in(v: &Value, min: u64, max: u64) -> Result<u64, String> {
    match v {
        Value::Integer(i) if *i >= 0 && (*i as u64) >= min && (*i as u64) <= max => Ok(*i as u64),
        Value::Integer(_) => Err(format!("must be an integer in {min}..={max}")),
        _ => Err("must be an integer".into()),
    }
}

pub(super) fn nonneg(i: i64) -> Result<u64, String> {
    if i >= 0 {
        units::check_size(i as u64)
    } else {
        Err("must not be negative".into())
    }
}

pub(super) fn zero_only(i: i64) -> Result<Ps, String> {
    if i == 0 {
        Ok(0)
    } else {
        Err("a time needs a unit (ps, ns, us, ms, s)".into())
    }
}

//! Command lines of `spillway-arbiterd` and `spillway-endpoint`: `--name value` options
//! and flags, parsed into a map by a function that returns an error instead of exiting,
//! so that refusals are testable; the binaries print a refusal as one line on stderr
//! and exit with code 2 (usage), as `arbiter-bench` does.

use std::collections::BTreeMap;
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Exit codes shared by both binaries.
pub const EXIT_OK: i32 = 0;
/// A runtime failure: a socket that cannot be bound, a log that cannot be written.
pub const EXIT_FAILURE: i32 = 1;
/// A usage or configuration error: nothing was started.
pub const EXIT_USAGE: i32 = 2;

/// A binary's outcome: its exit code, or an exit code and the one line to print.
pub type Outcome = Result<i32, (i32, String)>;

/// Exit with `outcome`'s code; a failure's line is printed as `name: line` on stderr.
pub fn exit(name: &str, outcome: Outcome) -> ! {
    std::process::exit(match outcome {
        Ok(code) => code,
        Err((code, e)) => {
            eprintln!("{name}: {e}");
            code
        }
    })
}

/// A usage error as a failure: exit code [`EXIT_USAGE`].
pub fn usage(e: UsageError) -> (i32, String) {
    (EXIT_USAGE, e.0)
}

/// This process's command line (without the program name), parsed as [`parse`] does.
pub fn from_env(options: &[&str], flags: &[&str]) -> Result<Args, (i32, String)> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    parse(&argv, options, flags).map_err(usage)
}

/// Parsed options: `--name value` pairs and `--flag`s.
#[derive(Debug, Default)]
pub struct Args {
    values: BTreeMap<String, String>,
    flags: Vec<String>,
    pub help: bool,
}

/// Parse `argv` (without the program name): `options` take a value, `flags` do not.
pub fn parse(argv: &[String], options: &[&str], flags: &[&str]) -> Result<Args, UsageError> {
    let mut a = Args::default();
    let mut it = argv.iter();
    while let Some(arg) = it.next() {
        if arg == "--help" || arg == "-h" {
            a.help = true;
            continue;
        }
        let Some(name) = arg.strip_prefix("--") else {
            return Err(UsageError(format!("unexpected argument {arg:?}")));
        };
        let (name, inline) = match name.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (name, None),
        };
        if flags.contains(&name) {
            if inline.is_some() {
                return Err(UsageError(format!("--{name} takes no value")));
            }
            a.flags.push(name.to_string());
        } else if options.contains(&name) {
            let v = match inline {
                Some(v) => v,
                None => it
                    .next()
                    .cloned()
                    .ok_or_else(|| UsageError(format!("--{name} needs a value")))?,
            };
            if a.values.insert(name.to_string(), v).is_some() {
                return Err(UsageError(format!("--{name} given twice")));
            }
        } else {
            return Err(UsageError(format!("unknown option --{name}")));
        }
    }
    Ok(a)
}

impl Args {
    pub fn flag(&self, name: &str) -> bool {
        self.flags.iter().any(|f| f == name)
    }
    pub fn str(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(|s| s.as_str())
    }
    pub fn required(&self, name: &str) -> Result<&str, UsageError> {
        self.str(name)
            .ok_or_else(|| UsageError(format!("--{name} is required")))
    }
    /// A number, strictly parsed, within `lo..=hi`.
    pub fn num<T>(&self, name: &str, lo: T, hi: T) -> Result<Option<T>, UsageError>
    where
        T: std::str::FromStr + PartialOrd + fmt::Display + Copy,
    {
        let Some(s) = self.str(name) else {
            return Ok(None);
        };
        let v: T = s
            .parse()
            .map_err(|_| UsageError(format!("--{name} {s:?} is not a number")))?;
        if !(lo <= v && v <= hi) {
            return Err(UsageError(format!("--{name} {v} is outside {lo}..={hi}")));
        }
        Ok(Some(v))
    }
    /// The fabric file named by `--name` (required), read and checked.
    pub fn config(&self, name: &str) -> Result<super::config::ServiceConfig, (i32, String)> {
        let path = self.required(name).map_err(usage)?;
        super::config::ServiceConfig::load(path).map_err(|e| (EXIT_USAGE, format!("{path}: {e}")))
    }
    /// A duration with a unit (`"2s"`, `"500ms"`), in picoseconds; a plain number is
    /// seconds, as everywhere on the `spillway` command line.
    pub fn duration(&self, name: &str) -> Result<Option<u64>, UsageError> {
        self.str(name)
            .map(|s| {
                let plain = !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == '.');
                let text = if plain {
                    format!("{s}s")
                } else {
                    s.to_string()
                };
                super::config::parse_duration(&text)
                    .map_err(|m| UsageError(format!("--{name}: {m}")))
            })
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn options_flags_and_refusals() {
        let a = parse(
            &v(&["--rank", "1", "--busy-poll", "--duration=2s"]),
            &["rank", "duration"],
            &["busy-poll"],
        )
        .unwrap();
        assert_eq!(a.num::<u32>("rank", 0, 7).unwrap(), Some(1));
        assert!(a.flag("busy-poll"));
        assert_eq!(a.duration("duration").unwrap(), Some(2_000_000_000_000));
        // A plain number is seconds.
        assert!(!a.help);
        let a = parse(&v(&["--duration", "1.5"]), &["duration"], &[]).unwrap();
        assert_eq!(a.duration("duration").unwrap(), Some(1_500_000_000_000));
        let a = parse(&v(&["--duration", "3x"]), &["duration"], &[]).unwrap();
        assert!(a.duration("duration").is_err());
        for bad in [
            &["--nope"][..],
            &["--rank"],
            &["x"],
            &["--rank", "1", "--rank", "2"],
            &["--busy-poll=1"],
        ] {
            assert!(
                parse(&v(bad), &["rank"], &["busy-poll"]).is_err(),
                "{bad:?}"
            );
        }
        let a = parse(&v(&["--rank", "9"]), &["rank"], &[]).unwrap();
        assert!(a.num::<u32>("rank", 0, 7).is_err());
        let a = parse(&v(&["--rank", "x"]), &["rank"], &[]).unwrap();
        assert!(a.num::<u32>("rank", 0, 7).is_err());
        assert!(parse(&v(&["--help"]), &[], &[]).unwrap().help);
    }
}

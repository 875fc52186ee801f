//! Command lines of the `arbiter-bench` binary and the `arbiter-prof` example, parsed by
//! functions that return an error instead of exiting, so that tests check every refusal.
//! The tools print a refusal as one line on stderr and exit with code 2 ([`refuse`]).
//! Every value is checked before any work starts: numbers strictly parsed (no silent
//! defaults), ranges, and the workload's size ([`bench::check_workload`]).

use crate::bench::{self, Sizes, MAX_SAMPLES};

/// `arbiter-prof`'s usage, one command per entry.
pub const PROF_USAGE: [&str; 7] = [
    "arbiter-prof alloc [LOAD [BATCHES [WIDTH]]]",
    "arbiter-prof perm [SAMPLES]",
    "arbiter-prof hash [LOAD [BATCHES [iter|racks|pipe]]]",
    "arbiter-prof permhash [SAMPLES]",
    "arbiter-prof pipe [LOAD [BATCHES [WIDTH]]]",
    "arbiter-prof sat [LOAD [BATCHES [WIDTH]]]",
    "arbiter-prof drain [LOAD [BATCHES [WIDTH]]]",
];

/// `arbiter-bench`'s usage.
pub const BENCH_USAGE: &str = "arbiter-bench [--json] [--quick] [--widths]";

/// Endpoints of `arbiter-prof`'s allocation workloads (Experiment F).
pub const PROF_ENDPOINTS: u32 = 256;
/// Unmeasured batches before `arbiter-prof alloc` and `sat` measure.
pub const PROF_WARM: u64 = 50;
/// Unmeasured batches before `arbiter-prof pipe` measures.
pub const PROF_PIPE_WARM: u64 = 100;
/// Most batches `arbiter-prof` runs (a bound on its time, not its memory, which the
/// workload check bounds).
pub const PROF_MAX_BATCHES: u64 = 10_000_000;

/// What `arbiter-prof hash` allocates with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashVariant {
    /// Greedy, one switch.
    Greedy,
    /// Iterative.
    Iter,
    /// 8 racks of 32, 24 uplinks: the rack-limited path.
    Racks,
    /// The 2-stage pipeline.
    Pipe,
}

impl HashVariant {
    /// The name `hash` prints ("" for greedy, as before).
    pub fn name(self) -> &'static str {
        match self {
            HashVariant::Greedy => "",
            HashVariant::Iter => "iter",
            HashVariant::Racks => "racks",
            HashVariant::Pipe => "pipe",
        }
    }
}

/// `LOAD BATCHES WIDTH`: the arguments of the `arbiter-prof` commands that allocate
/// ([`PROF_ENDPOINTS`] endpoints, `batches` measured batches of `width` timeslots).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AllocArgs {
    pub load: f64,
    pub batches: u64,
    pub width: u32,
}

impl AllocArgs {
    /// The benchmark workload these arguments name, after `warm` unmeasured batches
    /// (seed 1).
    pub fn workload(self, warm: u64) -> bench::AllocWorkload {
        bench::AllocWorkload {
            n: PROF_ENDPOINTS,
            load: self.load,
            width: self.width,
            warm,
            batches: self.batches,
            seed: 1,
        }
    }
}

/// An `arbiter-prof` command, every value checked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Prof {
    Alloc(AllocArgs),
    Perm {
        samples: usize,
    },
    Hash {
        load: f64,
        batches: u64,
        variant: HashVariant,
    },
    PermHash {
        samples: usize,
    },
    Pipe(AllocArgs),
    Sat(AllocArgs),
    Drain(AllocArgs),
    /// `-h` / `--help`: print the usage.
    Help,
}

/// The positional arguments of one command: strict parsing, defaults only for arguments
/// left out, nothing extra.
struct Args<'a> {
    cmd: &'a str,
    usage: &'a str,
    rest: &'a [String],
}

impl Args<'_> {
    fn err(&self, what: &str) -> String {
        format!("{}: {what} (usage: {})", self.cmd, self.usage)
    }

    fn get(&self, i: usize) -> Option<&str> {
        self.rest.get(i).map(String::as_str)
    }

    /// At most `n` arguments.
    fn at_most(&self, n: usize) -> Result<(), String> {
        match self.rest.get(n) {
            Some(extra) => Err(self.err(&format!("unexpected argument {extra:?}"))),
            None => Ok(()),
        }
    }

    /// LOAD: offered MTUs per endpoint per timeslot, a finite number above 0.
    fn load(&self, i: usize, default: f64) -> Result<f64, String> {
        let Some(s) = self.get(i) else {
            return Ok(default);
        };
        match s.parse::<f64>() {
            Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
            _ => Err(self.err(&format!("LOAD must be a finite number above 0, got {s:?}"))),
        }
    }

    /// An integer in `lo..=hi`.
    fn int(&self, i: usize, name: &str, default: u64, lo: u64, hi: u64) -> Result<u64, String> {
        let Some(s) = self.get(i) else {
            return Ok(default);
        };
        match s.parse::<u64>() {
            Ok(x) if (lo..=hi).contains(&x) => Ok(x),
            _ => Err(self.err(&format!(
                "{name} must be an integer in {lo}..={hi}, got {s:?}"
            ))),
        }
    }

    fn batches(&self, i: usize, default: u64) -> Result<u64, String> {
        self.int(i, "BATCHES", default, 1, PROF_MAX_BATCHES)
    }

    fn width(&self, i: usize, default: u32) -> Result<u32, String> {
        let w = self.int(i, "WIDTH", default as u64, 1, crate::MAX_WIDTH as u64)?;
        Ok(w as u32)
    }

    fn samples(&self, i: usize, default: usize) -> Result<usize, String> {
        let s = self.int(i, "SAMPLES", default as u64, 1, MAX_SAMPLES as u64)?;
        Ok(s as usize)
    }

    /// The workload the command will generate (its real size: warm-up batches
    /// included) must fit ([`bench::check_workload`]).
    fn workload(&self, load: f64, width: u32, batches: u64) -> Result<(), String> {
        bench::check_workload(PROF_ENDPOINTS, load, Sizes::Fixed(10), width, batches)
            .map_err(|e| self.err(&e.to_string()))
    }
}

/// Parse `arbiter-prof`'s arguments (without the program name). No arguments is
/// `alloc` with its defaults.
pub fn parse_prof(args: &[String]) -> Result<Prof, String> {
    let Some(cmd) = args.first().map(String::as_str) else {
        return Ok(Prof::Alloc(AllocArgs {
            load: 0.3,
            batches: 200,
            width: 64,
        }));
    };
    if matches!(cmd, "-h" | "--help" | "help") {
        return Ok(Prof::Help);
    }
    let Some(usage) = PROF_USAGE.iter().find(|u| u.split(' ').nth(1) == Some(cmd)) else {
        return Err(format!(
            "unknown command {cmd:?} (usage: {})",
            PROF_USAGE.join(" | ")
        ));
    };
    let a = Args {
        cmd,
        usage,
        rest: &args[1..],
    };
    // LOAD BATCHES WIDTH for the commands that allocate, with their defaults; the
    // workload checked with the `warm` batches the command runs first.
    let alloc_args =
        |load: f64, batches: u64, width: u32, warm: u64| -> Result<AllocArgs, String> {
            a.at_most(3)?;
            let args = AllocArgs {
                load: a.load(0, load)?,
                batches: a.batches(1, batches)?,
                width: a.width(2, width)?,
            };
            a.workload(args.load, args.width, warm + args.batches)?;
            Ok(args)
        };
    let p = match cmd {
        "alloc" => Prof::Alloc(alloc_args(0.3, 200, 64, PROF_WARM)?),
        "sat" => Prof::Sat(alloc_args(1.2, 200, 64, PROF_WARM)?),
        "pipe" => Prof::Pipe(alloc_args(0.9, 2000, 8, PROF_PIPE_WARM)?),
        "drain" => Prof::Drain(alloc_args(0.3, 400, 64, 0)?),
        "hash" => {
            a.at_most(3)?;
            let (load, batches) = (a.load(0, 0.3)?, a.batches(1, 200)?);
            let variant = match a.get(2) {
                None => HashVariant::Greedy,
                Some("iter") => HashVariant::Iter,
                Some("racks") => HashVariant::Racks,
                Some("pipe") => HashVariant::Pipe,
                Some(v) => {
                    return Err(a.err(&format!(
                        "the variant must be iter, racks or pipe, got {v:?}"
                    )))
                }
            };
            a.workload(load, 64, batches)?;
            Prof::Hash {
                load,
                batches,
                variant,
            }
        }
        "perm" => {
            a.at_most(1)?;
            Prof::Perm {
                samples: a.samples(0, 2000)?,
            }
        }
        "permhash" => {
            a.at_most(1)?;
            Prof::PermHash {
                samples: a.samples(0, 2000)?,
            }
        }
        _ => unreachable!("every command of PROF_USAGE is matched"),
    };
    Ok(p)
}

/// `arbiter-bench`'s options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bench {
    pub json: bool,
    pub quick: bool,
    pub widths: bool,
    /// `-h` / `--help`: print the usage.
    pub help: bool,
}

/// Parse `arbiter-bench`'s arguments (without the program name).
pub fn parse_bench(args: &[String]) -> Result<Bench, String> {
    let mut b = Bench::default();
    for a in args {
        match a.as_str() {
            "--json" => b.json = true,
            "--quick" => b.quick = true,
            "--widths" => b.widths = true,
            "-h" | "--help" => b.help = true,
            _ => return Err(format!("unknown argument {a:?} (usage: {BENCH_USAGE})")),
        }
    }
    Ok(b)
}

/// Refuse a command line: `tool: message` as one line on stderr, exit code 2.
pub fn refuse(tool: &str, message: &str) -> ! {
    eprintln!("{tool}: {message}");
    std::process::exit(2)
}

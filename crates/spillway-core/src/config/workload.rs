//! `[workload]`: the traffic, and background flows beside it.

use super::error::ScenarioError;
use super::reader::{int_in, is_off, load_fraction, Reader};
pub use super::trace::parse_trace_csv;
use super::trace::{flow_from_value, parse_hpcc_flows};
use crate::fabric::topology::{Shape, Topology, TopologySpec};
use crate::units;
use crate::workload::cdf::Cdf;
use crate::workload::load::{Load, LoadOn};
use crate::workload::matrix::RackMatrix;
use crate::workload::size_classes::SizeClasses;
use crate::workload::spec::{
    BackgroundSpec, BurstSpec, ClosedLoopSpec, FlowSpec, Gaps, IncastSpec, PoissonBackground,
    PoissonSpec, QueryArrivals, QuerySpec, ResponseSize, ShortLongSpec, WorkloadSpec,
};
use toml::Value;

impl Reader<'_> {
    pub(super) fn cdf(&mut self, path: &'static str) -> Result<Option<Cdf>, ScenarioError> {
        let Some(v) = self.value(path) else {
            return Ok(None);
        };
        let Value::String(name) = &v else {
            return Err(ScenarioError::new(
                path,
                &v,
                "expected a CDF name or file path",
            ));
        };
        let cdf = match Cdf::builtin(name) {
            Some(c) => c,
            None => {
                let p = self.resolve_path(name);
                let text = std::fs::read_to_string(&p).map_err(|e| {
                    ScenarioError::new(
                        path,
                        &v,
                        format!(
                            "not a built-in CDF ({}) and cannot read {}: {e}",
                            Cdf::BUILTINS.join(", "),
                            p.display()
                        ),
                    )
                })?;
                Cdf::parse(&text).map_err(|m| ScenarioError::new(path, &v, m))?
            }
        };
        self.record(path, v.clone());
        Ok(Some(cdf))
    }

    pub(super) fn hosts(
        &mut self,
        path: &'static str,
        hosts: u32,
    ) -> Result<Vec<u32>, ScenarioError> {
        let Some(v) = self.raw(path) else {
            return Ok((0..hosts).filter(|h| !self.reserved.contains(h)).collect());
        };
        let Value::Array(a) = v else {
            return Err(ScenarioError::new(
                path,
                v,
                "expected a list of host indices",
            ));
        };
        let mut out = Vec::with_capacity(a.len());
        for x in a {
            match x {
                Value::Integer(i) if *i >= 0 && (*i as u64) < hosts as u64 => {
                    if let Some(e) = self.reserved_host(path, *i as u32) {
                        return Err(e);
                    }
                    out.push(*i as u32)
                }
                _ => {
                    return Err(ScenarioError::new(
                        path,
                        x,
                        format!("not a host index (the topology has hosts 0..{})", hosts - 1),
                    ))
                }
            }
        }
        if out.is_empty() {
            return Err(ScenarioError::new(path, v, "must name at least one host"));
        }
        // Rates are per listed host and workers are drawn as distinct: a repeat would
        // silently double a host's load.
        let mut seen = std::collections::BTreeSet::new();
        if let Some(&d) = out.iter().find(|&&h| !seen.insert(h)) {
            return Err(ScenarioError::new(
                path,
                v,
                format!("host {d} is listed twice"),
            ));
        }
        self.record(path, v.clone());
        Ok(out)
    }

    /// A non-empty list whose items `item` reads; `None` when neither given nor
    /// defaulted. Recorded with sizes written as sizes.
    pub(super) fn list<T: ListItem>(
        &mut self,
        path: &'static str,
        item: impl Fn(&Value) -> Result<T, String>,
    ) -> Result<Option<Vec<T>>, ScenarioError> {
        self.typed(
            path,
            |v| {
                let Value::Array(a) = v else {
                    return Err("expected a list, e.g. [1, 2]".into());
                };
                if a.is_empty() {
                    return Err("must not be empty".into());
                }
                a.iter()
                    .map(|x| item(x).map_err(|e| format!("{x}: {e}")))
                    .collect()
            },
            |v: &Vec<T>| Value::Array(v.iter().map(ListItem::canon).collect()),
        )
    }

    pub(super) fn flows(
        &mut self,
        hosts: u32,
        host_ids: Option<&[Option<u32>]>,
    ) -> Result<Vec<FlowSpec>, ScenarioError> {
        let format = self.choice("workload.format")?;
        let mut flows = Vec::new();
        if let Some(v) = self.raw("workload.flows") {
            let Value::Array(a) = v else {
                return Err(ScenarioError::new(
                    "workload.flows",
                    v,
                    "expected [[workload.flows]] tables",
                ));
            };
            for (i, f) in a.iter().enumerate() {
                flows.push(flow_from_value(f, i, hosts)?);
            }
            self.record("workload.flows", v.clone());
        }
        if let Some((v, p, text)) = self.file_text("workload.file")? {
            let read = match format {
                "hpcc" => parse_hpcc_flows(&text, hosts, host_ids),
                _ => parse_trace_csv(&text, hosts),
            };
            flows.extend(read.map_err(|m| {
                ScenarioError::new("workload.file", &v, format!("{}: {m}", p.display()))
            })?);
            self.record("workload.file", v);
        }
        Ok(flows)
    }
}

/// An item of a list key, as the resolved scenario writes it.
pub(super) trait ListItem {
    fn canon(&self) -> Value;
}

impl ListItem for u64 {
    /// A size.
    fn canon(&self) -> Value {
        Value::String(units::format_size(*self))
    }
}

impl ListItem for u32 {
    fn canon(&self) -> Value {
        Value::Integer(*self as i64)
    }
}

/// `workload.load_on`: what a load counts; a flow's data as the transport sends it
/// (`mss`, `header` bytes per segment) framed by `framing` bytes.
pub(super) fn read_load_on(
    r: &mut Reader,
    mss: u32,
    header: u32,
    framing: u32,
) -> Result<LoadOn, ScenarioError> {
    Ok(match r.choice("workload.load_on")? {
        "wire" => LoadOn::Wire {
            mss,
            header,
            framing,
        },
        _ => LoadOn::Payload,
    })
}

/// `workload.load_on = "wire"` where no load sets a rate: it would do nothing. (The
/// default, `payload`, is in every resolved scenario, which must read back.)
pub(super) fn check_load_on(
    r: &Reader,
    load_on: LoadOn,
    workload: &WorkloadSpec,
    background: Option<&BackgroundSpec>,
) -> Result<(), ScenarioError> {
    let main = match workload {
        WorkloadSpec::Poisson(_) | WorkloadSpec::ShortLong(_) => true,
        WorkloadSpec::Query(q) => matches!(q.arrivals, QueryArrivals::Load(_)),
        WorkloadSpec::Incast(_) | WorkloadSpec::Trace(_) => false,
    };
    let background = background.is_some_and(|b| b.poisson.is_some());
    if load_on != LoadOn::Payload && !main && !background {
        return Err(r.err(
            "workload.load_on",
            "says what workload.load and workload.background_load count, and neither sets a rate \
             here (this workload's rate is given otherwise, and background_load is off)",
        ));
    }
    Ok(())
}

impl Reader<'_> {
    /// `workload.load`, counted as `on` says.
    fn load_on(&mut self, on: LoadOn) -> Result<Load, ScenarioError> {
        Ok(Load {
            fraction: self.load()?,
            on,
        })
    }
}

pub(super) fn read_workload(
    r: &mut Reader,
    hosts: u32,
    topology: &TopologySpec,
    load_on: LoadOn,
) -> Result<WorkloadSpec, ScenarioError> {
    // A graph's hosts, by the ids its file gives them (HPCC's flow.txt names those).
    let host_ids = match &topology.shape {
        Shape::Graph(g) => Some(g.host_numbers()),
        _ => None,
    };
    let host_ids = host_ids.as_deref();
    let kind = r.choice("workload.kind")?;
    let host_in_range = |r: &Reader, key: &str, h: u64| -> Result<u32, ScenarioError> {
        if h >= hosts as u64 {
            Err(r.err_value(
                key,
                h,
                format!("no such host: the topology has hosts 0..{}", hosts - 1),
            ))
        } else {
            Ok(h as u32)
        }
    };
    Ok(match kind {
        "incast" => {
            let receiver = r.uint("workload.receiver", 0, u32::MAX as u64)?;
            let receiver = host_in_range(r, "workload.receiver", receiver)?;
            if let Some(e) = r.reserved_host("workload.receiver", receiver) {
                return Err(e);
            }
            let all_to_all = r.choice("workload.pattern")? == "all_to_all";
            if all_to_all && !r.reserved.is_empty() {
                return Err(r.err(
                    "workload.pattern",
                    "\"all_to_all\" would make the Fastpass arbiter's host send and receive: \
                     list the hosts with workload.sources and one workload.receiver instead",
                ));
            }
            if all_to_all {
                for k in ["workload.receiver", "workload.senders"] {
                    if r.raw(k).is_some() {
                        return Err(r.err(k, "does not apply to workload.pattern = \"all_to_all\" (every host receives from all others)"));
                    }
                }
            }
            let sources = if all_to_all {
                if r.raw("workload.sources").is_some() {
                    return Err(r.err(
                        "workload.sources",
                        "does not apply to workload.pattern = \"all_to_all\"",
                    ));
                }
                Vec::new()
            } else {
                let s: Vec<u32> = r
                    .hosts("workload.sources", hosts)?
                    .into_iter()
                    .filter(|&h| h != receiver)
                    .collect();
                if s.is_empty() {
                    return Err(r.err("workload.sources", "no sender host other than the receiver"));
                }
                s
            };
            let senders = r.uint("workload.senders", 1, 1 << 20)? as u32;
            let size = r.positive_size("workload.size")?;
            let rounds = r.uint("workload.rounds", 1, 1 << 30)? as u32;
            let period = r.opt_time("workload.period")?;
            if period == Some(0) && rounds > 1 {
                // Every round would start at the same instant, all flows at once.
                return Err(r.err(
                    "workload.period",
                    "starts every round at the same instant: give a positive period, or `off` \
                     to start each round when the previous one has arrived",
                ));
            }
            WorkloadSpec::Incast(IncastSpec {
                all_to_all,
                sources,
                receiver,
                senders,
                size,
                rounds,
                period,
                jitter: r.time("workload.jitter")?,
            })
        }
        "poisson" => {
            let matrix = read_matrix(r, topology)?;
            let max_link_load = r
                .typed(
                    "workload.max_link_load",
                    |v| {
                        if is_off(v) {
                            Ok(None)
                        } else {
                            load_fraction(v).map(Some)
                        }
                    },
                    |o| o.map_or(Value::String("off".into()), Value::Float),
                )?
                .flatten();
            if max_link_load.is_some() && matrix.is_none() {
                return Err(r.err(
                    "workload.max_link_load",
                    "calibrates the rate from a traffic matrix: give workload.matrix",
                ));
            }
            let load = if max_link_load.is_some() {
                if r.raw("workload.load").is_some() {
                    return Err(r.err(
                        "workload.load",
                        "workload.max_link_load sets the rate: give one of the two",
                    ));
                }
                Load {
                    fraction: 0.0, // set from the fabric when the run is built
                    on: load_on,
                }
            } else {
                r.load_on(load_on)?
            };
            let cdf = r.cdf("workload.cdf")?.expect("poisson has a default cdf");
            if matrix.is_some() {
                for key in ["workload.sources", "workload.destinations"] {
                    if r.raw(key).is_some() {
                        return Err(
                            r.err(key, "the traffic matrix (workload.matrix) picks the hosts")
                        );
                    }
                }
            }
            let sources = r.hosts("workload.sources", hosts)?;
            let destinations = r.hosts("workload.destinations", hosts)?;
            // Each source draws destinations until one is not itself.
            if let Some(&s) = sources
                .iter()
                .find(|&&s| destinations.iter().all(|&d| d == s))
            {
                return Err(r.err(
                    "workload.destinations",
                    format!("source {s} has no destination other than itself"),
                ));
            }
            WorkloadSpec::Poisson(PoissonSpec {
                load,
                cdf,
                sources,
                destinations,
                max_flows: r.opt_uint("workload.max_flows", 1)?,
                gaps: match r.choice("workload.arrivals")? {
                    "lognormal" => Gaps::LogNormal {
                        sigma: r.float_in("workload.sigma", 0.0, 10.0)?,
                    },
                    _ if r.raw("workload.sigma").is_some() => {
                        return Err(r.err(
                            "workload.sigma",
                            "shapes log-normal gaps: set workload.arrivals = \"lognormal\"",
                        ))
                    }
                    _ => Gaps::Exponential,
                },
                matrix,
                max_link_load,
            })
        }
        "request_response" | "partition_aggregate" | "sequential" => {
            WorkloadSpec::Query(read_queries(r, kind, hosts, load_on)?)
        }
        "short_long" => {
            let load = r.load_on(load_on)?;
            let short_fraction = r.float_in("workload.short_fraction", -1.0, 1.0)?;
            let clients = r.hosts("workload.clients", hosts)?;
            let workers = r.hosts("workload.workers", hosts)?;
            // The widest short query asks 160 KB / 2 KB = 80 distinct workers.
            let widest = crate::workload::short_long::MAX_FANOUT;
            if short_fraction > 0.0 {
                for &c in &clients {
                    let avail = workers.iter().filter(|&&w| w != c).count();
                    if avail < widest as usize {
                        return Err(r.err_value(
                            "workload.workers",
                            avail,
                            format!("client {c} has {avail} workers other than itself; short queries need up to {widest}"),
                        ));
                    }
                }
            } else if let Some(&c) = clients.iter().find(|&&c| workers.iter().all(|&w| w == c)) {
                // A query from it would have no flow and never complete.
                return Err(r.err(
                    "workload.workers",
                    format!("client {c} has no worker other than itself"),
                ));
            }
            WorkloadSpec::ShortLong(ShortLongSpec {
                load,
                short_fraction,
                long_size: r.positive_size("workload.long_size")?,
                request_size: r.positive_size("workload.request_size")?,
                queries: r.opt_uint("workload.queries", 1)?,
                clients,
                workers,
            })
        }
        _ => {
            let flows = r.flows(hosts, host_ids)?;
            for (i, f) in flows.iter().enumerate() {
                for h in [f.src, f.dst] {
                    if let Some(mut e) = r.reserved_host("workload.flows", h) {
                        e.message = format!("flow {i}: {}", e.message);
                        return Err(e);
                    }
                }
            }
            if flows.is_empty() {
                return Err(r.err(
                    "workload.flows",
                    "a trace workload needs `flows` or `file` with at least one flow",
                ));
            }
            WorkloadSpec::Trace(flows)
        }
    })
}

/// `workload.classes_by_size`: up to seven strictly ascending positive sizes; empty (the
/// default) leaves every flow its class.
pub(super) fn read_size_classes(
    r: &mut Reader,
    workload: &WorkloadSpec,
) -> Result<SizeClasses, ScenarioError> {
    const KEY: &str = "workload.classes_by_size";
    let Some(v) = r.raw(KEY) else {
        r.record(KEY, Value::Array(Vec::new()));
        return Ok(SizeClasses::default());
    };
    let bad = |why: String| ScenarioError::new(KEY, v, why);
    let Value::Array(a) = v else {
        return Err(bad(
            "expected a list of ascending sizes, like [\"100KB\"] (or [] for none)".into(),
        ));
    };
    if a.len() > SizeClasses::MAX_THRESHOLDS {
        return Err(bad(format!(
            "{} thresholds: at most {} (8 priority classes)",
            a.len(),
            SizeClasses::MAX_THRESHOLDS
        )));
    }
    let sizes = a
        .iter()
        .map(|x| positive_size(x).map_err(|m| ScenarioError::new(KEY, x, m)))
        .collect::<Result<Vec<u64>, _>>()?;
    if let Some(w) = sizes.windows(2).find(|w| w[0] >= w[1]) {
        return Err(bad(format!(
            "thresholds must ascend strictly ({} is not above {})",
            units::format_size(w[1]),
            units::format_size(w[0])
        )));
    }
    if !sizes.is_empty() {
        if let WorkloadSpec::Query(q) = workload {
            if q.priorities > 1 {
                return Err(bad(format!(
                    "gives each flow a class by its size, while workload.priorities = {} draws \
                     one per query: use one of them",
                    q.priorities
                )));
            }
        }
    }
    r.record(
        KEY,
        Value::Array(
            sizes
                .iter()
                .map(|&s| Value::String(units::format_size(s)))
                .collect(),
        ),
    );
    Ok(SizeClasses::new(sizes))
}

pub(super) fn read_background(
    r: &mut Reader,
    hosts: u32,
    load_on: LoadOn,
) -> Result<Option<BackgroundSpec>, ScenarioError> {
    let poisson = read_poisson_background(r, hosts, load_on)?;
    let closed_loop = read_closed_loop(r, hosts)?;
    Ok(
        (poisson.is_some() || closed_loop.is_some()).then_some(BackgroundSpec {
            poisson,
            closed_loop,
        }),
    )
}

fn read_poisson_background(
    r: &mut Reader,
    hosts: u32,
    load_on: LoadOn,
) -> Result<Option<PoissonBackground>, ScenarioError> {
    let load = r
        .typed(
            "workload.background_load",
            |v| {
                if is_off(v) {
                    return Ok(None);
                }
                load_fraction(v)
                    .map(Some)
                    .map_err(|e| format!("{e} or `off`"))
            },
            |o| match o {
                Some(x) => Value::Float(*x),
                None => Value::String("off".into()),
            },
        )?
        .flatten();
    let Some(load) = load else {
        return Ok(None);
    };
    if hosts < 2 {
        return Err(r.err("workload.background_load", "needs at least two hosts"));
    }
    let cdf = r.cdf("workload.background_cdf")?.expect("has a default");
    let scale = r.float_in("workload.background_scale", 0.0, 1e6)?;
    let scale_above = r.size("workload.background_scale_above")?;
    // Not between reserved hosts: an arbiter's host carries only FCP (found by the
    // showdown: background flows to and from Fastpass's arbiter).
    let hosts: Vec<u32> = (0..hosts).filter(|h| !r.reserved.contains(h)).collect();
    Ok(Some(PoissonBackground {
        load: Load {
            fraction: load,
            on: load_on,
        },
        cdf,
        scale,
        scale_above,
        hosts,
    }))
}

/// `workload.background_flows` (DeTail §8.1.2) and its class.
fn read_closed_loop(r: &mut Reader, hosts: u32) -> Result<Option<ClosedLoopSpec>, ScenarioError> {
    let size = r
        .typed(
            "workload.background_flows",
            |v| {
                if is_off(v) {
                    return Ok(None);
                }
                positive_size(v)
                    .map(Some)
                    .map_err(|e| format!("{e}, or `off`"))
            },
            |o| Value::String(o.map_or("off".to_string(), units::format_size)),
        )?
        .flatten();
    let Some(size) = size else {
        for k in [
            "workload.background_class",
            "workload.background_sources",
            "workload.background_destinations",
        ] {
            if r.raw(k).is_some() {
                return Err(r.err(k, "applies to workload.background_flows, which is off"));
            }
        }
        return Ok(None);
    };
    if hosts < 2 {
        return Err(r.err("workload.background_flows", "needs at least two hosts"));
    }
    let class = r.uint("workload.background_class", 0, 7)? as u8;
    let sources = r.hosts("workload.background_sources", hosts)?;
    let destinations = r.hosts("workload.background_destinations", hosts)?;
    if let Some(&s) = sources
        .iter()
        .find(|&&s| destinations.iter().all(|&d| d == s))
    {
        return Err(r.err(
            "workload.background_destinations",
            format!("source host {s} has no destination other than itself"),
        ));
    }
    Ok(Some(ClosedLoopSpec {
        size,
        class,
        sources,
        destinations,
    }))
}

/// The query workloads: request_response, partition_aggregate, sequential.
fn read_queries(
    r: &mut Reader,
    kind: &str,
    hosts: u32,
    load_on: LoadOn,
) -> Result<QuerySpec, ScenarioError> {
    let arrivals = read_query_arrivals(r, load_on)?;
    let queries = r.opt_uint("workload.queries", 1)?;
    let fanouts =
        if kind == "partition_aggregate" {
            let fanout_given = r.raw("workload.fanout").is_some();
            match r.list("workload.fanouts", |v| {
                int_in(v, 1, 1 << 16).map(|f| f as u32)
            })? {
                Some(f) if fanout_given => return Err(r.err_value(
                    "workload.fanouts",
                    format!("{f:?}"),
                    "give workload.fanout (one fan-out) or workload.fanouts (drawn per query), \
                     not both",
                )),
                Some(f) => f,
                None => vec![r.uint("workload.fanout", 1, 1 << 16)? as u32],
            }
        } else {
            vec![1]
        };
    let request_size = r.positive_size("workload.request_size")?;
    let response = read_response_size(r, kind)?;
    let sequence = if kind == "sequential" {
        r.uint("workload.sequence", 1, 1 << 20)? as u32
    } else {
        1
    };
    let priorities = r.uint("workload.priorities", 1, 8)? as u8;
    let clients = r.hosts("workload.clients", hosts)?;
    let workers = r.hosts("workload.workers", hosts)?;
    // Every client needs the widest fan-out's workers other than itself.
    let widest = *fanouts.iter().max().expect("at least one fan-out");
    for &c in &clients {
        let avail = workers.iter().filter(|&&w| w != c).count();
        if avail < widest as usize {
            let (key, what) = match kind {
                "partition_aggregate" if fanouts.len() > 1 => {
                    ("workload.fanouts", format!("{fanouts:?}"))
                }
                "sequential" => ("workload.workers", format!("{workers:?}")),
                _ => ("workload.fanout", widest.to_string()),
            };
            return Err(r.err_value(
                key,
                what,
                format!(
                    "client {c} has only {avail} workers other than itself; a query asks up to \
                     {widest}"
                ),
            ));
        }
    }
    Ok(QuerySpec {
        arrivals,
        queries,
        fanouts,
        request_size,
        response,
        sequence,
        priorities,
        clients,
        workers,
    })
}

/// The most queries per second per client a rate may give (one a nanosecond), and the
/// fewest (one per 1000 s).
const MAX_QUERY_RATE: f64 = 1e9;
const MIN_QUERY_RATE: f64 = 1e-3;

/// A rate of queries per second per client; 0 only if `zero` allows it.
fn query_rate(v: &Value, zero: bool) -> Result<f64, String> {
    let x = match v {
        Value::Float(f) => *f,
        Value::Integer(i) => *i as f64,
        _ => return Err("must be a number of queries per second per client".into()),
    };
    if (zero && x == 0.0) || (MIN_QUERY_RATE..=MAX_QUERY_RATE).contains(&x) {
        Ok(x)
    } else {
        Err(format!(
            "must be a number of queries per second per client in [{MIN_QUERY_RATE}, {MAX_QUERY_RATE:e}]"
        ))
    }
}

/// `workload.load`, `workload.rate` and `workload.burst_*`.
fn read_query_arrivals(r: &mut Reader, load_on: LoadOn) -> Result<QueryArrivals, ScenarioError> {
    let period = r.opt_time("workload.burst_period")?;
    let bursty = period.is_some();
    let rate = r
        .typed(
            "workload.rate",
            |v| {
                if is_off(v) {
                    Ok(None)
                } else {
                    query_rate(v, bursty).map(Some).map_err(|e| {
                        if bursty {
                            format!("{e} (0 or `off`: none between bursts)")
                        } else {
                            format!("{e}, or `off` to use workload.load")
                        }
                    })
                }
            },
            |o| o.map_or(Value::String("off".into()), Value::Float),
        )?
        .flatten();
    let Some(period) = period else {
        for k in ["workload.burst_length", "workload.burst_rate"] {
            if r.raw(k).is_some() {
                return Err(r.err(k, "needs workload.burst_period (it is off)"));
            }
        }
        return Ok(match rate {
            Some(rate) => {
                refuse_load(r, "workload.rate")?;
                QueryArrivals::Rate(rate)
            }
            None => QueryArrivals::Load(r.load_on(load_on)?),
        });
    };
    if period == 0 {
        return Err(r.err("workload.burst_period", "must be positive, or `off`"));
    }
    refuse_load(r, "workload.burst_period")?;
    let Some(length) = r.opt_time_derived("workload.burst_length")? else {
        return Err(r.err(
            "workload.burst_length",
            "missing: workload.burst_period needs the length of its bursts",
        ));
    };
    if length == 0 || length > period {
        return Err(r.err_value(
            "workload.burst_length",
            units::format_time(length),
            format!(
                "must be positive and at most workload.burst_period ({})",
                units::format_time(period)
            ),
        ));
    }
    let burst_rate = r.typed(
        "workload.burst_rate",
        |v| query_rate(v, false),
        |&x| Value::Float(x),
    )?;
    let Some(burst_rate) = burst_rate else {
        return Err(r.err(
            "workload.burst_rate",
            "missing: workload.burst_period needs the queries per second per client in a burst",
        ));
    };
    Ok(QueryArrivals::OnOff(BurstSpec {
        period,
        length,
        burst_rate,
        rate: rate.unwrap_or(0.0),
    }))
}

/// `workload.load` set beside a rate (`key`) that replaces it.
fn refuse_load(r: &Reader, key: &str) -> Result<(), ScenarioError> {
    if r.raw("workload.load").is_some() {
        return Err(r.err(
            "workload.load",
            format!("does not apply when {key} is set (it gives the query rate)"),
        ));
    }
    Ok(())
}

/// `workload.response_sizes`, `workload.cdf` or `workload.response_size`.
fn read_response_size(r: &mut Reader, kind: &str) -> Result<ResponseSize, ScenarioError> {
    let sizes = r.list("workload.response_sizes", positive_size)?;
    if let Some(sizes) = sizes {
        if kind != "sequential" {
            for k in ["workload.cdf", "workload.response_size"] {
                if r.raw(k).is_some() {
                    return Err(r.err(
                        k,
                        "give one of workload.response_sizes (drawn per query), workload.cdf \
                         (drawn per response) and workload.response_size (fixed), not both",
                    ));
                }
            }
        }
        return Ok(match sizes[..] {
            [s] => ResponseSize::Fixed(s),
            _ => ResponseSize::Choice(sizes),
        });
    }
    Ok(match r.cdf("workload.cdf")? {
        Some(c) => ResponseSize::Cdf(c),
        None => ResponseSize::Fixed(r.positive_size("workload.response_size")?),
    })
}

/// A positive size (`"2KB"`, or bytes as an integer).
fn positive_size(v: &Value) -> Result<u64, String> {
    let s = match v {
        Value::String(s) => units::parse_size(s)?,
        Value::Integer(i) if *i >= 0 => units::check_size(*i as u64)?,
        _ => return Err("must be a size (`2KB`, or bytes)".into()),
    };
    if s == 0 {
        return Err("must be positive".into());
    }
    Ok(s)
}

/// `workload.matrix`: the rack-to-rack matrix over the topology's racks.
fn read_matrix(
    r: &mut Reader,
    topology: &TopologySpec,
) -> Result<Option<std::sync::Arc<RackMatrix>>, ScenarioError> {
    let Some((v, path, text)) = r.file_text("workload.matrix")? else {
        return Ok(None);
    };
    let t = Topology::build(topology);
    let mut switch_of = vec![0; t.hosts as usize];
    for l in t.links.iter().filter(|l| l.a < t.hosts) {
        switch_of[l.a as usize] = l.b;
    }
    let racks = RackMatrix::racks_of(t.hosts, |h| switch_of[h as usize]);
    let m = RackMatrix::parse(&text, racks)
        .map_err(|m| r.err_value("workload.matrix", &v, format!("{}: {m}", path.display())))?;
    r.record("workload.matrix", v.clone());
    Ok(Some(std::sync::Arc::new(m)))
}

//! A trace workload's flows as the scenario gives them: inline tables, a CSV file, or
//! the HPCC simulator's flow.txt (`workload.format`).

use super::error::ScenarioError;
use crate::units::{self, Ps};
use crate::workload::spec::FlowSpec;
use toml::Value;

pub(super) fn flow_from_value(f: &Value, i: usize, hosts: u32) -> Result<FlowSpec, ScenarioError> {
    let key = format!("workload.flows[{i}]");
    let Value::Table(t) = f else {
        return Err(ScenarioError::new(
            &key,
            f,
            "expected a table {src, dst, size, start}",
        ));
    };
    for k in t.keys() {
        if !["src", "dst", "size", "start"].contains(&k.as_str()) {
            return Err(ScenarioError::new(
                &format!("{key}.{k}"),
                &t[k],
                "unknown key (src, dst, size, start)",
            ));
        }
    }
    let host = |name: &str| -> Result<u32, ScenarioError> {
        match t.get(name) {
            Some(Value::Integer(h)) if *h >= 0 && (*h as u64) < hosts as u64 => Ok(*h as u32),
            Some(v) => Err(ScenarioError::new(
                &format!("{key}.{name}"),
                v,
                format!("not a host index (the topology has hosts 0..{})", hosts - 1),
            )),
            None => Err(ScenarioError::new(&format!("{key}.{name}"), "", "missing")),
        }
    };
    let src = host("src")?;
    let dst = host("dst")?;
    if src == dst {
        return Err(ScenarioError::new(
            &format!("{key}.dst"),
            dst,
            "a flow needs two different hosts",
        ));
    }
    let size = match t.get("size") {
        Some(Value::Integer(s)) if *s > 0 => units::check_size(*s as u64)
            .map_err(|m| ScenarioError::new(&format!("{key}.size"), s, m))?,
        Some(Value::String(s)) => units::parse_size(s)
            .and_then(|v| {
                if v > 0 {
                    Ok(v)
                } else {
                    Err("must be positive".into())
                }
            })
            .map_err(|m| ScenarioError::new(&format!("{key}.size"), s, m))?,
        Some(v) => {
            return Err(ScenarioError::new(
                &format!("{key}.size"),
                v,
                "must be a positive size",
            ))
        }
        None => return Err(ScenarioError::new(&format!("{key}.size"), "", "missing")),
    };
    let start = match t.get("start") {
        None => 0,
        Some(Value::Integer(0)) => 0,
        Some(Value::String(s)) => {
            units::parse_time(s).map_err(|m| ScenarioError::new(&format!("{key}.start"), s, m))?
        }
        Some(v) => {
            return Err(ScenarioError::new(
                &format!("{key}.start"),
                v,
                "must be a time (`10us`)",
            ))
        }
    };
    Ok(FlowSpec {
        src,
        dst,
        size,
        start,
        priority: None,
    })
}

/// HPCC's flow.txt (alibaba-edu/High-Precision-Congestion-Control `simulation/mix/
/// flow.txt`): a count line, then `src dst pg dport size start_s` a line, or with a
/// leading flow id (kwzhao's fork, which Parsimon and m3 run). Ids are the topology's
/// (`host_ids` maps a graph's to its hosts); `pg` becomes the priority class; `dport`
/// is not kept (fct.txt writes 100, as HPCC's generator does for every flow).
pub fn parse_hpcc_flows(
    text: &str,
    hosts: u32,
    host_ids: Option<&[Option<u32>]>,
) -> Result<Vec<FlowSpec>, String> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    let (n, first) = lines.next().ok_or("empty flow file")?;
    let count: usize = first
        .parse()
        .map_err(|_| format!("line {n}: expected the flow count, found '{first}'"))?;
    let mut flows = Vec::with_capacity(count.min(1 << 24));
    let host = |id: &str, what: &str, n: usize| -> Result<u32, String> {
        let id: u32 = id
            .parse()
            .map_err(|_| format!("line {n}: {what} '{id}' is not a node id"))?;
        match host_ids {
            Some(map) => map
                .get(id as usize)
                .copied()
                .flatten()
                .ok_or_else(|| format!("line {n}: {what} {id} is not a host of the topology")),
            None if id < hosts => Ok(id),
            None => Err(format!(
                "line {n}: {what} {id}: no such host (hosts 0..{})",
                hosts - 1
            )),
        }
    };
    for (n, line) in lines {
        if flows.len() == count {
            return Err(format!(
                "line {n}: more flows than the count line's {count}"
            ));
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let f = match f.len() {
            6 => &f[..],
            7 => &f[1..],
            k => {
                return Err(format!(
                    "line {n}: {k} fields; expected `src dst pg dport size start_s` (6, or 7 with a flow id first)"
                ))
            }
        };
        let (src, dst) = (host(f[0], "src", n)?, host(f[1], "dst", n)?);
        if src == dst {
            return Err(format!("line {n}: src equals dst"));
        }
        let pg: u8 = f[2]
            .parse()
            .ok()
            .filter(|&p| p < 8)
            .ok_or_else(|| format!("line {n}: pg '{}' is not a priority group 0-7", f[2]))?;
        let _dport: u16 = f[3]
            .parse()
            .map_err(|_| format!("line {n}: dport '{}' is not a port number", f[3]))?;
        let size: u64 = f[4]
            .parse()
            .ok()
            .filter(|&s| s > 0)
            .ok_or_else(|| format!("line {n}: size '{}' is not a positive byte count", f[4]))?;
        units::check_size(size).map_err(|m| format!("line {n}: size: {m}"))?;
        let start_s: f64 = f[5]
            .parse()
            .ok()
            .filter(|s: &f64| *s >= 0.0 && s.is_finite())
            .ok_or_else(|| format!("line {n}: start '{}' is not a time in seconds", f[5]))?;
        if start_s * units::PS_PER_S as f64 > units::MAX_TIME as f64 {
            return Err(format!("line {n}: start {start_s} s is later than 1 day"));
        }
        flows.push(FlowSpec {
            src,
            dst,
            size,
            start: (start_s * units::PS_PER_S as f64).round() as Ps,
            priority: Some(pg),
        });
    }
    if flows.len() != count {
        return Err(format!(
            "{} flows after the count line, which says {count}",
            flows.len()
        ));
    }
    Ok(flows)
}

/// Trace CSV: header `src,dst,size_bytes,start_us`, one flow per line.
pub fn parse_trace_csv(text: &str, hosts: u32) -> Result<Vec<FlowSpec>, String> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, header) = lines.next().ok_or("empty trace file")?;
    let cols: Vec<&str> = header.split(',').map(str::trim).collect();
    if cols != ["src", "dst", "size_bytes", "start_us"] {
        return Err(format!(
            "header must be src,dst,size_bytes,start_us, found {header}"
        ));
    }
    let mut flows = Vec::new();
    for (n, line) in lines {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let bad = |what: &str| format!("line {}: {what}: {line}", n + 1);
        if f.len() != 4 {
            return Err(bad("expected 4 fields"));
        }
        let src: u32 = f[0].parse().map_err(|_| bad("src is not a host index"))?;
        let dst: u32 = f[1].parse().map_err(|_| bad("dst is not a host index"))?;
        if src >= hosts || dst >= hosts {
            return Err(bad(&format!("no such host (hosts 0..{})", hosts - 1)));
        }
        if src == dst {
            return Err(bad("src equals dst"));
        }
        let size: u64 = f[2]
            .parse()
            .map_err(|_| bad("size_bytes is not a positive integer"))?;
        if size == 0 {
            return Err(bad("size_bytes must be positive"));
        }
        units::check_size(size).map_err(|m| bad(&format!("size_bytes: {m}")))?;
        let start_us: f64 = f[3].parse().map_err(|_| bad("start_us is not a number"))?;
        if !(start_us >= 0.0 && start_us.is_finite()) {
            return Err(bad("start_us must be a non-negative number"));
        }
        if start_us * units::PS_PER_US as f64 > units::MAX_TIME as f64 {
            return Err(bad(
                "start_us is later than 1 day, the longest time a scenario may give",
            ));
        }
        let start = (start_us * units::PS_PER_US as f64).round() as Ps;
        flows.push(FlowSpec {
            src,
            dst,
            size,
            start,
            priority: None,
        });
    }
    Ok(flows)
}

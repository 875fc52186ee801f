//! `[topology]`: the shape of the network, its links and framing.

use super::error::ScenarioError;
use super::reader::Reader;
use crate::fabric::graph::{self, GivenLink, Graph};
use crate::fabric::topology::{Shape, TopologySpec};
use crate::units;
use std::sync::Arc;
use toml::Value;

/// Most ports one node may have: a port index is 16 bits.
const MAX_PORTS: u64 = 1 << 16;

/// Most routing-table entries (one per switch and destination host, 4 bytes each): 4 GiB.
const MAX_ROUTE_ENTRIES: u64 = 1 << 30;

pub(super) fn route_table_message(hosts: u64, switches: u64) -> String {
    format!(
        "{hosts} hosts and {switches} switches need {:.1} GiB of routing tables \
         (4 bytes per switch and destination); at most {} GiB",
        (hosts * switches * 4) as f64 / (1u64 << 30) as f64,
        (MAX_ROUTE_ENTRIES * 4) >> 30
    )
}

pub(super) fn read_topology(r: &mut Reader) -> Result<TopologySpec, ScenarioError> {
    let kind = r.choice("topology.kind")?.to_string();
    let shape = match kind.as_str() {
        // One switch port per host: port indices are 16 bits.
        "star" => Shape::Star {
            hosts: r.uint("topology.hosts", 2, MAX_PORTS)? as u32,
        },
        "dumbbell" => {
            let hosts = r.uint("topology.hosts", 2, 2 * (MAX_PORTS - 1))? as u32;
            if !hosts.is_multiple_of(2) {
                return Err(r.err("topology.hosts", "a dumbbell needs an even number of hosts"));
            }
            Shape::Dumbbell { hosts }
        }
        "fat_tree" => {
            let k = r.uint("topology.k", 2, 64)? as u32;
            if !k.is_multiple_of(2) {
                return Err(r.err("topology.k", "fat-tree arity must be even"));
            }
            Shape::FatTree { k }
        }
        "clos" => read_clos(r)?,
        "graph" => return read_graph(r, kind),
        _ => {
            let racks = r.uint("topology.racks", 1, 1 << 16)? as u32;
            let hosts_per_rack = r.uint("topology.hosts_per_rack", 1, 1 << 16)? as u32;
            let spines = r.uint("topology.spines", 1, 1 << 12)? as u32;
            if u64::from(hosts_per_rack) + u64::from(spines) > MAX_PORTS {
                return Err(r.err(
                    "topology.hosts_per_rack",
                    format!(
                        "a leaf would have {} ports (hosts_per_rack + spines); at most {MAX_PORTS}",
                        u64::from(hosts_per_rack) + u64::from(spines)
                    ),
                ));
            }
            let (hosts, switches) = (
                u64::from(racks) * u64::from(hosts_per_rack),
                u64::from(racks) + u64::from(spines),
            );
            if hosts * switches > MAX_ROUTE_ENTRIES {
                return Err(r.err("topology.racks", route_table_message(hosts, switches)));
            }
            if racks * hosts_per_rack < 2 {
                return Err(r.err(
                    "topology.hosts_per_rack",
                    "the topology needs at least 2 hosts",
                ));
            }
            Shape::LeafSpine {
                racks,
                hosts_per_rack,
                spines,
            }
        }
    };
    let link_rate = r.rate("topology.link_rate")?;
    let link_delay = r.time("topology.link_delay")?;
    let has_fabric = !matches!(shape, Shape::Star { .. });
    let (fabric_rate, fabric_delay) = if has_fabric {
        (
            r.opt_rate("topology.fabric_rate")?.unwrap_or(link_rate),
            r.opt_time_derived("topology.fabric_delay")?
                .unwrap_or(link_delay),
        )
    } else {
        (link_rate, link_delay)
    };
    if has_fabric {
        r.record(
            "topology.fabric_rate",
            Value::String(units::format_rate(fabric_rate)),
        );
        r.record(
            "topology.fabric_delay",
            Value::String(units::format_time(fabric_delay)),
        );
    }
    let framing_bytes = r.uint("topology.framing_bytes", 0, 1000)? as u32;
    let clock_ppm = r.float_in("topology.clock_ppm", -1.0, 1000.0)?;
    Ok(TopologySpec {
        kind,
        shape,
        link_rate,
        link_delay,
        fabric_rate,
        fabric_delay,
        framing_bytes,
        clock_ppm,
        host_link_rates: Vec::new(),
        uplink_rates: Vec::new(),
    })
}

/// `topology.kind = "clos"`: pods of racks, planes of spines (docs/reference.md).
fn read_clos(r: &mut Reader) -> Result<Shape, ScenarioError> {
    let pods = r.uint("topology.pods", 1, 1 << 12)? as u32;
    let racks_per_pod = r.uint("topology.racks_per_pod", 1, 1 << 12)? as u32;
    let hosts_per_rack = r.uint("topology.hosts_per_rack", 1, 1 << 16)? as u32;
    let planes = r.uint("topology.planes", 1, 1 << 10)? as u32;
    let spines_per_plane = r.uint("topology.spines_per_plane", 1, 1 << 12)? as u32;
    // Ports: a rack switch has its hosts and a link a plane; a fabric switch its pod's
    // racks and its plane's spines; a spine a link a pod.
    let ports = [
        (
            "topology.hosts_per_rack",
            u64::from(hosts_per_rack) + u64::from(planes),
        ),
        (
            "topology.racks_per_pod",
            u64::from(racks_per_pod) + u64::from(spines_per_plane),
        ),
        ("topology.pods", u64::from(pods)),
    ];
    for (key, n) in ports {
        if n > MAX_PORTS {
            return Err(r.err(
                key,
                format!("a switch would have {n} ports; at most {MAX_PORTS}"),
            ));
        }
    }
    let racks = u64::from(pods) * u64::from(racks_per_pod);
    let hosts = racks * u64::from(hosts_per_rack);
    let switches = racks
        + u64::from(pods) * u64::from(planes)
        + u64::from(planes) * u64::from(spines_per_plane);
    if hosts < 2 {
        return Err(r.err(
            "topology.hosts_per_rack",
            "the topology needs at least 2 hosts",
        ));
    }
    if hosts * switches > MAX_ROUTE_ENTRIES {
        return Err(r.err("topology.pods", route_table_message(hosts, switches)));
    }
    Ok(Shape::Clos {
        pods,
        racks_per_pod,
        hosts_per_rack,
        planes,
        spines_per_plane,
    })
}

/// `topology.kind = "graph"`: from `topology.file` (HPCC's topology.txt) or from
/// `topology.links` and `topology.switches`. The nominal rates and delays other parts
/// read (a load's line rate, the BDP) are the slowest host link's and switch link's, and
/// the shortest delays.
fn read_graph(r: &mut Reader, kind: String) -> Result<TopologySpec, ScenarioError> {
    let g = match (
        r.raw("topology.file").cloned(),
        r.raw("topology.links").cloned(),
    ) {
        (Some(_), Some(links)) => {
            return Err(r.err_value(
                "topology.links",
                &links,
                "the graph comes from topology.file or topology.links, not both",
            ))
        }
        (Some(_), None) => {
            if r.raw("topology.switches").is_some() {
                return Err(r.err(
                    "topology.switches",
                    "a topology.file lists its own switches (its second line)",
                ));
            }
            let (v, path, text) = r.file_text("topology.file")?.expect("topology.file is set");
            let g = graph::parse_hpcc(&text).map_err(|m| {
                r.err_value("topology.file", &v, format!("{}: {m}", path.display()))
            })?;
            r.record("topology.file", v.clone());
            g
        }
        (None, Some(v)) => {
            let links = given_links(&v).map_err(|(key, m)| ScenarioError::new(&key, &v, m))?;
            let switches: Vec<u32> = r
                .list("topology.switches", |x| match x {
                    Value::Integer(i) if *i >= 0 && *i < 1 << 24 => Ok(*i as u32),
                    _ => Err("not a node id".into()),
                })?
                .ok_or_else(|| {
                    r.err(
                        "topology.switches",
                        "a graph of topology.links needs the ids of its switches",
                    )
                })?;
            let nodes = links
                .iter()
                .flat_map(|l| [l.a, l.b])
                .chain(switches.iter().copied())
                .max()
                .map_or(0, |m| m + 1);
            let g = Graph::new(nodes, &switches, &links, |i| format!("topology.links[{i}]"))
                .map_err(|m| r.err_value("topology.links", &v, m))?;
            r.record("topology.links", v.clone());
            g
        }
        (None, None) => {
            return Err(r.err(
                "topology.file",
                "a graph needs topology.file (HPCC's topology.txt) or topology.links",
            ))
        }
    };
    let hosts = g.hosts;
    let (host_links, fabric_links): (Vec<_>, Vec<_>) = g.links.iter().partition(|l| l.a < hosts);
    let slowest = |ls: &[&GivenLink]| ls.iter().map(|l| l.rate).min();
    let shortest = |ls: &[&GivenLink]| ls.iter().map(|l| l.delay).min();
    let link_rate = slowest(&host_links).unwrap_or(1);
    let link_delay = shortest(&host_links).unwrap_or(0);
    let framing_bytes = r.uint("topology.framing_bytes", 0, 1000)? as u32;
    let clock_ppm = r.float_in("topology.clock_ppm", -1.0, 1000.0)?;
    if u64::from(g.hosts) * u64::from(g.switches) > MAX_ROUTE_ENTRIES {
        return Err(r.err(
            "topology.file",
            route_table_message(g.hosts.into(), g.switches.into()),
        ));
    }
    Ok(TopologySpec {
        kind,
        fabric_rate: slowest(&fabric_links).unwrap_or(link_rate),
        fabric_delay: shortest(&fabric_links).unwrap_or(link_delay),
        shape: Shape::Graph(Arc::new(g)),
        link_rate,
        link_delay,
        framing_bytes,
        clock_ppm,
        host_link_rates: Vec::new(),
        uplink_rates: Vec::new(),
    })
}

/// `[[topology.links]]`: each `{a, b, rate, delay}`; errors name the item's key.
fn given_links(v: &Value) -> Result<Vec<GivenLink>, (String, String)> {
    let Value::Array(items) = v else {
        return Err((
            "topology.links".into(),
            "expected [[topology.links]] tables".into(),
        ));
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let key = format!("topology.links[{i}]");
        let Value::Table(t) = item else {
            return Err((key, "expected a table {a, b, rate, delay}".into()));
        };
        if let Some(k) = t
            .keys()
            .find(|k| !["a", "b", "rate", "delay"].contains(&k.as_str()))
        {
            return Err((
                format!("{key}.{k}"),
                "unknown key (a, b, rate, delay)".into(),
            ));
        }
        let id = |name: &str| match t.get(name) {
            Some(Value::Integer(n)) if *n >= 0 && *n < 1 << 24 => Ok(*n as u32),
            Some(_) => Err((format!("{key}.{name}"), "not a node id".to_string())),
            None => Err((format!("{key}.{name}"), "missing".to_string())),
        };
        let text = |name: &str| match t.get(name) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err((format!("{key}.{name}"), "expected a string".to_string())),
            None => Err((format!("{key}.{name}"), "missing".to_string())),
        };
        let rate = units::parse_rate(&text("rate")?).map_err(|m| (format!("{key}.rate"), m))?;
        let delay = units::parse_time(&text("delay")?).map_err(|m| (format!("{key}.delay"), m))?;
        out.push(GivenLink {
            a: id("a")?,
            b: id("b")?,
            rate,
            delay,
        });
    }
    Ok(out)
}

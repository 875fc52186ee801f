//! `[topology]`: the shape of the network, its links and framing.

use super::error::ScenarioError;
use super::reader::Reader;
use crate::fabric::topology::{Shape, TopologySpec};
use crate::units;
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

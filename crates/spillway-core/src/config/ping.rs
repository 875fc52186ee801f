//! `[ping]`: the ping workload, beside the flows.

use super::error::ScenarioError;
use super::reader::{int_in, Reader};
use crate::host::ping::{PingConfig, MIN_PING_BYTES};
use crate::units::{self, Ps};
use toml::Value;

const KEYS: [&str; 4] = ["ping.src", "ping.dst", "ping.start", "ping.bytes"];

/// `[ping]` for a network of `hosts` hosts whose largest IP packet is `max_ip` bytes, in
/// a run that stops at `duration` if set.
pub(super) fn read_ping(
    r: &mut Reader,
    hosts: u32,
    max_ip: u32,
    duration: Option<Ps>,
) -> Result<Option<PingConfig>, ScenarioError> {
    let Some(interval) = r.opt_time("ping.interval")? else {
        if let Some(k) = KEYS.into_iter().find(|k| r.raw(k).is_some()) {
            return Err(r.err(k, "applies to ping.interval, which is off"));
        }
        return Ok(None);
    };
    if interval == 0 {
        return Err(r.err("ping.interval", "must be positive"));
    }
    let mut host = |key: &'static str| -> Result<u32, ScenarioError> {
        let h = r
            .typed(
                key,
                |v| int_in(v, 0, u32::MAX as u64),
                |&h| Value::Integer(h as i64),
            )?
            .ok_or_else(|| r.err(key, "required with ping.interval: a host index"))?;
        if h >= hosts as u64 {
            return Err(r.err_value(
                key,
                h,
                format!("no such host: the topology has hosts 0..{}", hosts - 1),
            ));
        }
        Ok(h as u32)
    };
    let src = host("ping.src")?;
    let dst = host("ping.dst")?;
    if src == dst {
        return Err(r.err_value(
            "ping.dst",
            dst,
            "is ping.src: a host's ping to itself never reaches the network",
        ));
    }
    let start = r.time("ping.start")?;
    if let Some(d) = duration.filter(|&d| start > d) {
        return Err(r.err(
            "ping.start",
            format!(
                "after run.duration ({}): no ping would be sent",
                units::format_time(d)
            ),
        ));
    }
    let bytes = r.size("ping.bytes")?;
    if !(MIN_PING_BYTES..=max_ip as u64).contains(&bytes) {
        return Err(r.err(
            "ping.bytes",
            format!(
                "must be in {MIN_PING_BYTES}..={max_ip} B: IP and ICMP headers at least, a full \
                 data packet (transport.mss + transport.header_bytes) at most"
            ),
        ));
    }
    Ok(Some(PingConfig {
        src,
        dst,
        interval,
        start,
        ip_bytes: bytes as u32,
    }))
}

//! The reference page (docs/reference.md), generated from the key table.

use super::keys::{KEYS, KIND_DEFAULTS};

/// The reference page for every key, generated from [`KEYS`] (docs/reference.md).
pub fn reference_markdown() -> String {
    let mut out = String::from(
        "# Scenario reference\n\n\
         Generated from `crates/spillway-core/src/config/keys.rs` by `spillway reference`; do not edit by hand.\n\n\
         Sizes: `B`, `KB` = 1024 B (`KiB` too), `MB`, `GB`. Rates are decimal: `10Gbps` = 1e10 bit/s. \
         Times: `ps`, `ns`, `us`, `ms`, `s`. A key that does not apply to the chosen kind is refused.\n\n\
         ## Limits\n\n\
         Simulated time is an integer number of picoseconds in 64 bits (about 213 days), and every \
         run's arithmetic stays inside it: any time a scenario gives (every time key, a trace flow's \
         start) is at most 1 day (`86400s`); rates are 1 Kbps to 100 Tbps; sizes (buffers, flows, \
         CDF points) at most 1024GB (2^40 B). The clock's horizon is 2^62 ps (about 53 days): a run with no \
         `run.duration` that gets there stops with `stop_reason = \"horizon\"`. Every buffer (switch \
         ports, host NICs) must hold one full-size frame. Open-loop workloads (`poisson`, \
         `request_response`, `partition_aggregate`, `short_long`, `sequential`) need `run.duration` \
         or their count limit (`max_flows`, `queries`).\n",
    );
    let mut section = "";
    for k in KEYS {
        let s = k.path.split('.').next().unwrap();
        if s != section {
            out.push_str(&format!(
                "\n## [{s}]\n\n| key | type | default | applies to | meaning |\n|---|---|---|---|---|\n"
            ));
            section = s;
        }
        let mut default = if k.default.is_empty() {
            "—".to_string()
        } else {
            format!("`{}`", k.default)
        };
        for &(kind, p, v) in KIND_DEFAULTS {
            if p == k.path {
                default.push_str(&format!("; {kind}: `{v}`"));
            }
        }
        let applies = if k.kinds.is_empty() {
            "all".to_string()
        } else {
            k.kinds.join(", ")
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            k.path,
            k.ty.describe(),
            default,
            applies,
            k.doc
        ));
    }
    out
}

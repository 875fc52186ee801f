//! The ideal flow completion time, the denominator of every slowdown (defined
//! here, once): the flow alone on its path, sent at line rate from time 0, store-and-forward.

use crate::units::{serialization_ps, Ps};

/// Ideal FCT: the flow alone on its path, sent at line rate from time 0, store-and-forward
/// at every hop: the time the last byte is fully received at the destination.
///
/// `hops` are (rate, propagation delay) from the source NIC to the destination.
/// `wire_full` is the wire size of a full segment, `wire_last` of the last one.
/// With identical packets, packet j leaves hop i at F₀(i) + j·maxₖ≤ᵢ sₖ (tandem
/// store-and-forward queues); the smaller last packet is then stepped hop by hop.
/// Saturates at `u64::MAX` (a flow too long to finish before the clock's horizon).
pub fn ideal_fct(hops: &[(u64, Ps)], packets: u64, wire_full: u32, wire_last: u32) -> Ps {
    assert!(packets >= 1 && !hops.is_empty());
    let first_wire = if packets == 1 { wire_last } else { wire_full };
    // F0[i]: when the first packet has been serialized onto hop i.
    let mut f0 = Vec::with_capacity(hops.len());
    let mut t = 0;
    for (i, &(rate, _)) in hops.iter().enumerate() {
        if i > 0 {
            t += hops[i - 1].1;
        }
        t += serialization_ps(first_wire as u64, rate);
        f0.push(t);
    }
    let last_delay = hops[hops.len() - 1].1;
    if packets == 1 {
        return f0[hops.len() - 1] + last_delay;
    }
    // Second-to-last full packet j = packets - 2.
    let j = packets - 2;
    let mut max_s = 0;
    let mut prev_full = Vec::with_capacity(hops.len());
    for (i, &(rate, _)) in hops.iter().enumerate() {
        max_s = max_s.max(serialization_ps(wire_full as u64, rate));
        prev_full.push(f0[i].saturating_add(j.saturating_mul(max_s)));
    }
    let mut f_last: Ps = 0;
    for (i, &(rate, _)) in hops.iter().enumerate() {
        let ready = if i == 0 {
            0
        } else {
            f_last.saturating_add(hops[i - 1].1)
        };
        f_last = ready
            .max(prev_full[i])
            .saturating_add(serialization_ps(wire_last as u64, rate));
    }
    f_last.saturating_add(last_delay)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_packet_is_serialization_plus_propagation_per_hop() {
        let hops = [(10_000_000_000, 1_000_000), (10_000_000_000, 1_000_000)];
        // 1000 B at 10G = 800 ns per hop, 1 us per link.
        assert_eq!(ideal_fct(&hops, 1, 1000, 1000), 2 * 800_000 + 2 * 1_000_000);
    }

    #[test]
    fn many_packets_pipeline_at_the_bottleneck() {
        // 10G then 1G: the 1G hop paces everything after the first packet.
        let hops = [(10_000_000_000, 0), (1_000_000_000, 0)];
        let s10 = 1_200_000; // 1500 B at 10G
        let s1 = 12_000_000; // 1500 B at 1G
        assert_eq!(ideal_fct(&hops, 10, 1500, 1500), s10 + 10 * s1);
        // A brute-force tandem-queue recurrence agrees for a short last packet.
        let sizes = [1500u64, 1500, 1500, 700];
        let hops = [
            (10_000_000_000u64, 300_000u64),
            (40_000_000_000, 300_000),
            (1_000_000_000, 500_000),
        ];
        let mut prev = vec![0u64; hops.len()];
        let mut fin = 0;
        for &p in &sizes {
            let mut ready = 0;
            for (i, &(rate, d)) in hops.iter().enumerate() {
                let f = ready.max(prev[i]) + serialization_ps(p, rate);
                prev[i] = f;
                ready = f + d;
            }
            fin = ready;
        }
        assert_eq!(ideal_fct(&hops, 4, 1500, 700), fin);
    }
}

//! The ideal flow completion time, the denominator of every slowdown (defined
//! here, once): the flow alone on its path, sent at line rate from time 0,
//! store-and-forward, or with `switch.cut_through` cut through where the switches would.

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

/// How a packet left a hop, in [`ideal_fct_cut_through`]'s recurrence.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Left {
    /// At the source, or once its header was in (cut through).
    Head,
    /// Once it was all in (stored, the link free by then).
    Tail,
    /// When the link freed from the packet before (stored, and it waited).
    Free,
}

/// Ideal FCT with cut-through switches (`switch.cut_through`): the flow alone on its
/// path, sent at line rate from time 0; each switch starts a packet once `header` bytes
/// of it are in if the egress is free by then and would not finish before the packet's
/// last byte is in (`switch::cut_through`'s rule), and otherwise stores it and starts it
/// when it is all in or the egress frees, whichever is later.
///
/// Whether a packet cuts through depends on when the one before it left, so this is a
/// recurrence over the packets, not a closed form; but it becomes periodic: once every
/// hop that cut through or waited for the tail moves by its input's step from one packet
/// to the next, and every hop that waited for the link is one whose serialization is at
/// least its input's step, every later full packet does the same (the conditions are
/// invariant under a common shift, and a waiting hop's backlog only grows), so the rest
/// are stepped over at once. `hops`, `packets`, `wire_full`, `wire_last` as for
/// [`ideal_fct`]; the nodes between hops are switches.
pub fn ideal_fct_cut_through(
    hops: &[(u64, Ps)],
    packets: u64,
    wire_full: u32,
    wire_last: u32,
    header: u32,
) -> Ps {
    assert!(packets >= 1 && !hops.is_empty());
    let n = hops.len();
    // Per hop: when the current packet started, how, and its step from the one before.
    let mut start = vec![0 as Ps; n];
    let mut left = vec![Left::Head; n];
    let mut step = vec![0 as Ps; n];
    // `start` of the packet before, for `free`: none yet (the links are free at 0).
    let mut prev: Option<Vec<Ps>> = None;
    let mut prev_wire = 0u64;
    let mut j = 0u64;
    while j < packets {
        let wire = if j + 1 == packets {
            wire_last
        } else {
            wire_full
        } as u64;
        for i in 0..n {
            let (rate, _) = hops[i];
            let s = serialization_ps(wire, rate);
            let free = prev.as_ref().map_or(0, |p| {
                p[i].saturating_add(serialization_ps(prev_wire, rate))
            });
            let (t, how) = if i == 0 {
                (free, Left::Head)
            } else {
                let (r_in, lat) = hops[i - 1];
                let s_in = serialization_ps(wire, r_in);
                let h_in = serialization_ps(wire.min(header as u64), r_in);
                let head = start[i - 1].saturating_add(h_in + lat);
                let tail = start[i - 1].saturating_add(s_in + lat);
                if free <= head && s >= s_in - h_in {
                    (head, Left::Head)
                } else if free >= tail {
                    (free, Left::Free)
                } else {
                    (tail, Left::Tail)
                }
            };
            step[i] = prev.as_ref().map_or(0, |p| t.saturating_sub(p[i]));
            start[i] = t;
            left[i] = how;
        }
        // Full packets after this one (the last is not full).
        let full_left = (packets - 1).saturating_sub(j + 1);
        if j >= 1 && full_left > 0 {
            let stable = (0..n).all(|i| {
                i == 0
                    || match left[i] {
                        Left::Free => serialization_ps(wire, hops[i].0) >= step[i - 1],
                        _ => step[i] == step[i - 1],
                    }
            });
            if stable {
                // Every later full packet repeats this one's steps: jump to the last
                // full one.
                for i in 0..n {
                    start[i] = start[i].saturating_add(step[i].saturating_mul(full_left));
                }
                j += full_left;
            }
        }
        prev = Some(start.clone());
        prev_wire = wire;
        j += 1;
    }
    let (rate, delay) = hops[n - 1];
    start[n - 1]
        .saturating_add(serialization_ps(wire_last as u64, rate))
        .saturating_add(delay)
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

    /// [`ideal_fct_cut_through`]'s rule, packet by packet to the last (no stepping
    /// over), written out separately.
    fn cut_through_by_packet(hops: &[(u64, Ps)], sizes: &[u64], header: u64) -> Ps {
        let mut free = vec![0u64; hops.len()];
        let mut done = 0;
        for &w in sizes {
            let mut t = free[0];
            free[0] = t + serialization_ps(w, hops[0].0);
            for i in 1..hops.len() {
                let (r_in, lat) = hops[i - 1];
                let rest = serialization_ps(w, r_in) - serialization_ps(w.min(header), r_in);
                let head = t + serialization_ps(w.min(header), r_in) + lat;
                let out = serialization_ps(w, hops[i].0);
                t = if free[i] <= head && out >= rest {
                    head
                } else {
                    free[i].max(head + rest)
                };
                free[i] = t + out;
            }
            done = free[hops.len() - 1] + hops[hops.len() - 1].1;
        }
        done
    }

    /// Cut through every switch of one rate: the last packet leaves the source after
    /// all the others, and each switch adds its header time only.
    #[test]
    fn cut_through_at_equal_rates_adds_a_header_time_per_switch() {
        let g10 = 10_000_000_000;
        let hops = [
            (g10, 1_000_000),
            (g10, 500_000),
            (g10, 700_000),
            (g10, 300_000),
        ];
        let prop: u64 = hops.iter().map(|h| h.1).sum();
        let h = serialization_ps(62, g10);
        assert_eq!(
            ideal_fct_cut_through(&hops, 1, 1538, 1000, 62),
            serialization_ps(1000, g10) + 3 * h + prop
        );
        assert_eq!(
            ideal_fct_cut_through(&hops, 100, 1538, 1000, 62),
            99 * serialization_ps(1538, g10) + serialization_ps(1000, g10) + 3 * h + prop
        );
        // A header as long as any packet: store-and-forward's closed form.
        for packets in [1, 2, 3, 50, 5000] {
            assert_eq!(
                ideal_fct_cut_through(&hops, packets, 1538, 700, u32::MAX),
                ideal_fct(&hops, packets, 1538, 700)
            );
        }
    }

    /// Mixed rates (a slow ingress into a faster egress stores; the reverse cuts
    /// through) and rates a few ppm apart: the stepped-over recurrence is the one
    /// computed packet by packet.
    #[test]
    fn cut_through_steps_over_the_periodic_part_exactly() {
        let g = 1_000_000_000u64;
        let paths: [&[(u64, Ps)]; 5] = [
            &[
                (10 * g, 200_000),
                (40 * g, 200_000),
                (40 * g, 200_000),
                (10 * g, 200_000),
            ],
            &[(40 * g, 100), (10 * g, 100), (40 * g, 100), (g, 100)],
            &[
                (10 * g, 1_000_000),
                (10_000_999_000, 0),
                (9_999_001_000, 5),
                (10 * g, 7),
            ],
            &[(g, 0), (25 * g, 0), (10 * g, 0)],
            &[(10_000_001_000, 1), (9_999_999_000, 2)],
        ];
        for hops in paths {
            for (full, last, header) in [(1538, 1538, 62), (1500, 41, 40), (84, 84, 62)] {
                for packets in [1u64, 2, 3, 4, 7, 40, 333] {
                    let mut sizes = vec![full as u64; packets as usize - 1];
                    sizes.push(last as u64);
                    assert_eq!(
                        ideal_fct_cut_through(hops, packets, full, last, header),
                        cut_through_by_packet(hops, &sizes, header as u64),
                        "{hops:?}, {packets} x {full}/{last}, header {header}"
                    );
                }
            }
        }
        // A flow of a billion packets costs a few steps.
        let hops = paths[0];
        let big = ideal_fct_cut_through(hops, 1 << 30, 1500, 1500, 40);
        assert_eq!(
            big,
            ideal_fct_cut_through(hops, 3, 1500, 1500, 40)
                + ((1 << 30) - 3) * serialization_ps(1500, 10 * g)
        );
    }
}

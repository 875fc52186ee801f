//! iSLIP (McKeown, "The iSLIP scheduling algorithm for input-queued switches", 1999), the
//! crossbar scheduler DeTail's switches use (DeTail §5.1), with strict priority classes.
//!
//! One round matches free inputs to free outputs: every free input requests each free
//! output it holds packets for, at the highest class it holds for it; each output grants
//! the request of highest class, ties broken round-robin from its grant pointer; each
//! input accepts the grant of highest class, ties broken round-robin from its accept
//! pointer. Matched pairs leave the round and the unmatched try again (iterations) until
//! no new pair forms. Only first-iteration acceptances move the pointers, to one past the
//! partner: so pointers desynchronize and, under uniform saturation, every pair is
//! served in turn (iSLIP's fairness).
//!
//! Sans-IO and allocation-free: ports are bits of a `u64`, so a switch has at most 64.

/// Most ports a switch the matcher schedules may have.
pub const MAX_PORTS: usize = 64;

/// No request from this input to that output.
pub const NO_REQUEST: u8 = u8::MAX;

/// The requests of one round: per input, the class (0 highest) of its request to each
/// output, or [`NO_REQUEST`].
pub trait Requests {
    /// The class of input `i`'s request to output `o`, or [`NO_REQUEST`].
    fn class(&self, i: usize, o: usize) -> u8;
    /// The outputs input `i` holds packets for (a superset of its requests is fine).
    fn wants(&self, i: usize) -> u64;
}

/// The round-robin pointers of an `n`-port crossbar.
#[derive(Debug, Clone)]
pub struct Islip {
    n: usize,
    grant: [u8; MAX_PORTS],
    accept: [u8; MAX_PORTS],
    /// A round's scratch, kept so that a round clears only the entries of its free
    /// ports (not 1 KB of arrays each call): per output the inputs requesting it, per
    /// input the outputs granting it and the class of its best grant.
    requesters: [u64; MAX_PORTS],
    grants: [u64; MAX_PORTS],
    granted: [u8; MAX_PORTS],
    /// The class of each request of the iteration, asked once: `class[i][o]`, valid
    /// where `requesters[o]` has `i`.
    class: [[u8; MAX_PORTS]; MAX_PORTS],
}

/// The ports of `set` in round-robin order starting at `from` (which wraps).
#[inline]
fn in_order(set: u64, from: usize, n: usize) -> impl Iterator<Item = usize> {
    let rot = if n == 64 {
        set.rotate_right(from as u32)
    } else {
        let mask = (1u64 << n) - 1;
        ((set >> from) | (set << (n - from))) & mask
    };
    let mut bits = rot;
    std::iter::from_fn(move || {
        if bits == 0 {
            return None;
        }
        let k = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        Some((k + from) % n)
    })
}

impl Islip {
    pub fn new(n: usize) -> Islip {
        assert!((1..=MAX_PORTS).contains(&n), "1 to {MAX_PORTS} ports");
        Islip {
            n,
            grant: [0; MAX_PORTS],
            accept: [0; MAX_PORTS],
            requesters: [0; MAX_PORTS],
            grants: [0; MAX_PORTS],
            granted: [0; MAX_PORTS],
            class: [[NO_REQUEST; MAX_PORTS]; MAX_PORTS],
        }
    }

    /// Output `o`'s grant pointer and input `i`'s accept pointer (tests).
    pub fn pointers(&self, i: usize, o: usize) -> (usize, usize) {
        (self.grant[o] as usize, self.accept[i] as usize)
    }

    /// A pair matched outside a round, as one would have matched it (the only request
    /// to a free output from an input with no other): the pointers move as a
    /// first-iteration acceptance moves them.
    #[inline]
    pub fn matched_alone(&mut self, i: usize, o: usize) {
        self.grant[o] = ((i + 1) % self.n) as u8;
        self.accept[i] = ((o + 1) % self.n) as u8;
    }

    /// One round over the free inputs `inputs` and free outputs `outputs`: the matched
    /// (input, output) pairs are appended to `out`.
    pub fn round(
        &mut self,
        req: &impl Requests,
        mut inputs: u64,
        mut outputs: u64,
        out: &mut Vec<(u16, u16)>,
    ) {
        let n = self.n;
        let mut first = true;
        loop {
            // Grant: each free output picks among the free inputs that want it.
            let mut bits = outputs;
            while bits != 0 {
                self.requesters[bits.trailing_zeros() as usize] = 0;
                bits &= bits - 1;
            }
            let mut bits = inputs;
            while bits != 0 {
                let i = bits.trailing_zeros() as usize;
                self.grants[i] = 0;
                self.granted[i] = u8::MAX;
                bits &= bits - 1;
            }
            let mut any = false;
            for i in in_order(inputs, 0, n) {
                let mut w = req.wants(i) & outputs;
                while w != 0 {
                    let o = w.trailing_zeros() as usize;
                    w &= w - 1;
                    let c = req.class(i, o);
                    if c != NO_REQUEST {
                        self.class[i][o] = c;
                        self.requesters[o] |= 1 << i;
                    }
                }
            }
            for o in in_order(outputs, 0, n) {
                let r = self.requesters[o];
                if r == 0 {
                    continue;
                }
                let mut best: Option<(u8, usize)> = None;
                for i in in_order(r, self.grant[o] as usize, n) {
                    let c = self.class[i][o];
                    if best.is_none_or(|(bc, _)| c < bc) {
                        best = Some((c, i));
                    }
                }
                let (c, i) = best.expect("a requester");
                self.grants[i] |= 1 << o;
                self.granted[i] = self.granted[i].min(c);
                any = true;
            }
            if !any {
                return;
            }
            // Accept: each input granted picks its best grant.
            let mut matched = false;
            for i in in_order(inputs, 0, n) {
                let g = self.grants[i];
                if g == 0 {
                    continue;
                }
                let c = self.granted[i];
                let o = in_order(g, self.accept[i] as usize, n)
                    .find(|&o| self.class[i][o] == c)
                    .expect("the best grant");
                out.push((i as u16, o as u16));
                inputs &= !(1 << i);
                outputs &= !(1 << o);
                matched = true;
                if first {
                    self.matched_alone(i, o);
                }
            }
            if !matched || inputs == 0 || outputs == 0 {
                return;
            }
            first = false;
        }
    }
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)] // the reference indexes as the paper does
mod tests {
    use super::*;
    use crate::rng::Rng;

    struct Matrix {
        n: usize,
        class: Vec<Vec<u8>>,
    }

    impl Requests for Matrix {
        fn class(&self, i: usize, o: usize) -> u8 {
            self.class[i][o]
        }
        fn wants(&self, i: usize) -> u64 {
            (0..self.n)
                .filter(|&o| self.class[i][o] != NO_REQUEST)
                .fold(0, |m, o| m | 1 << o)
        }
    }

    /// iSLIP written out plainly from the paper's three steps, with vectors and modular
    /// scans: the reference the fast matcher must agree with, pointers included.
    struct Slow {
        n: usize,
        grant: Vec<usize>,
        accept: Vec<usize>,
    }

    impl Slow {
        fn round(
            &mut self,
            m: &Matrix,
            free_in: &[bool],
            free_out: &[bool],
        ) -> Vec<(usize, usize)> {
            let n = self.n;
            let mut in_open = free_in.to_vec();
            let mut out_open = free_out.to_vec();
            let mut result = Vec::new();
            let mut first = true;
            loop {
                // Requests.
                let reqs: Vec<(usize, usize, u8)> = (0..n)
                    .flat_map(|i| (0..n).map(move |o| (i, o)))
                    .filter(|&(i, o)| in_open[i] && out_open[o] && m.class[i][o] != NO_REQUEST)
                    .map(|(i, o)| (i, o, m.class[i][o]))
                    .collect();
                // Grants: highest class, then the first input at or after the pointer.
                let mut grants: Vec<(usize, usize, u8)> = Vec::new();
                for o in 0..n {
                    let mine: Vec<&(usize, usize, u8)> = reqs.iter().filter(|r| r.1 == o).collect();
                    let Some(top) = mine.iter().map(|r| r.2).min() else {
                        continue;
                    };
                    let i = (0..n)
                        .map(|k| (self.grant[o] + k) % n)
                        .find(|&i| mine.iter().any(|r| r.0 == i && r.2 == top))
                        .unwrap();
                    grants.push((i, o, top));
                }
                if grants.is_empty() {
                    return result;
                }
                let mut any = false;
                for i in 0..n {
                    let mine: Vec<&(usize, usize, u8)> =
                        grants.iter().filter(|g| g.0 == i).collect();
                    let Some(top) = mine.iter().map(|g| g.2).min() else {
                        continue;
                    };
                    let o = (0..n)
                        .map(|k| (self.accept[i] + k) % n)
                        .find(|&o| mine.iter().any(|g| g.1 == o && g.2 == top))
                        .unwrap();
                    result.push((i, o));
                    in_open[i] = false;
                    out_open[o] = false;
                    any = true;
                    if first {
                        self.grant[o] = (i + 1) % n;
                        self.accept[i] = (o + 1) % n;
                    }
                }
                if !any {
                    return result;
                }
                first = false;
            }
        }
    }

    /// Random request matrices, free sets and classes over many rounds: the matcher and
    /// the reference give the same pairs in the same order of inputs, and the same
    /// pointers; every result is a matching (no input or output twice), uses only free
    /// ports and real requests, and is maximal (no free input still requests a free
    /// output).
    #[test]
    fn agrees_with_the_reference_and_is_a_maximal_matching() {
        let mut rng = Rng::new(11, 3);
        for n in [1usize, 2, 3, 7, 16, 33, 64] {
            let mut fast = Islip::new(n);
            let mut slow = Slow {
                n,
                grant: vec![0; n],
                accept: vec![0; n],
            };
            for _ in 0..300 {
                let density = rng.next_f64();
                let classes = 1 + rng.below(8);
                let m = Matrix {
                    n,
                    class: (0..n)
                        .map(|_| {
                            (0..n)
                                .map(|_| {
                                    if rng.next_f64() < density {
                                        rng.below(classes) as u8
                                    } else {
                                        NO_REQUEST
                                    }
                                })
                                .collect()
                        })
                        .collect(),
                };
                let free_in: Vec<bool> = (0..n).map(|_| rng.next_f64() < 0.8).collect();
                let free_out: Vec<bool> = (0..n).map(|_| rng.next_f64() < 0.8).collect();
                let bits = |v: &[bool]| {
                    v.iter()
                        .enumerate()
                        .fold(0u64, |m, (k, &b)| m | (b as u64) << k)
                };
                let mut got = Vec::new();
                fast.round(&m, bits(&free_in), bits(&free_out), &mut got);
                let want = slow.round(&m, &free_in, &free_out);
                let got_pairs: Vec<(usize, usize)> =
                    got.iter().map(|&(i, o)| (i as usize, o as usize)).collect();
                assert_eq!(got_pairs, want, "n {n}");
                for k in 0..n {
                    assert_eq!(fast.pointers(k, k), (slow.grant[k], slow.accept[k]));
                }
                let mut ins = 0u64;
                let mut outs = 0u64;
                for &(i, o) in &got_pairs {
                    assert!(free_in[i] && free_out[o] && m.class[i][o] != NO_REQUEST);
                    assert_eq!(ins & 1 << i, 0, "input {i} twice");
                    assert_eq!(outs & 1 << o, 0, "output {o} twice");
                    ins |= 1 << i;
                    outs |= 1 << o;
                }
                for i in 0..n {
                    for o in 0..n {
                        let open =
                            free_in[i] && free_out[o] && ins & 1 << i == 0 && outs & 1 << o == 0;
                        assert!(
                            !(open && m.class[i][o] != NO_REQUEST),
                            "not maximal: ({i}, {o})"
                        );
                    }
                }
            }
        }
    }

    /// A higher class wins the output and the input whatever the pointers say.
    #[test]
    fn the_highest_class_is_served_first() {
        let n = 4;
        let mut s = Islip::new(n);
        // Inputs 0 and 1 both want output 2; input 1 has class 0, input 0 class 5.
        let mut class = vec![vec![NO_REQUEST; n]; n];
        class[0][2] = 5;
        class[1][2] = 0;
        let m = Matrix { n, class };
        let mut out = Vec::new();
        s.round(&m, 0b1111, 0b1111, &mut out);
        assert_eq!(out, vec![(1, 2)]);
    }

    /// Under uniform saturation (every input always holds packets for every output, one
    /// class) iSLIP's pointers desynchronize: after a short start every round is a full
    /// matching (100% throughput), and every (input, output) pair is served equally.
    #[test]
    fn uniform_saturation_is_fair_and_fully_matched() {
        for n in [2usize, 4, 8, 16] {
            let m = Matrix {
                n,
                class: vec![vec![0; n]; n],
            };
            let all = if n == 64 { u64::MAX } else { (1 << n) - 1 };
            let mut s = Islip::new(n);
            let mut served = vec![vec![0u64; n]; n];
            let rounds = 200 * n;
            for r in 0..rounds {
                let mut out = Vec::new();
                s.round(&m, all, all, &mut out);
                if r < 2 * n {
                    continue; // the pointers' first rounds: they are still aligning
                }
                assert_eq!(out.len(), n, "round {r}: not a full matching");
                for (i, o) in out {
                    served[i as usize][o as usize] += 1;
                }
            }
            // Desynchronized, each round serves a permutation and every pair once in
            // every n rounds.
            let min = served.iter().flatten().min().unwrap();
            let max = served.iter().flatten().max().unwrap();
            assert!(max - min <= 1, "n {n}: pair service from {min} to {max}");
        }
    }
}

//! The RoCE connection's laws on scripted inputs: DCQCN's rate after CNPs, step by step
//! against its equations; HPCC's rate from one ACK's telemetry; go-back-N's resend.

use super::config::*;
use super::dcqcn::Dcqcn;
use super::hpcc::Hpcc;
use super::RoceConnection;
use crate::packet::int::{IntHop, IntStack};
use crate::transport::connection::{Data, Input, RoceAck, Segment};
use crate::units::Ps;

const US: Ps = 1_000_000;
const NS: Ps = 1_000;

fn dcqcn_cfg() -> DcqcnConfig {
    // The HPCC simulator's run.py at 100 Gbit/s.
    DcqcnConfig {
        g: 1.0 / 256.0,
        alpha_interval: US,
        decrease_interval: 4 * US,
        increase_interval: 300 * US,
        fast_recovery: 1,
        rate_ai: 20e6,
        rate_hai: 200e6,
        clamp_target: false,
        cnp_interval: 50 * US,
    }
}

/// DCQCN's reaction point by its equations, one timer event at a time (no skipping):
/// the reference [`Dcqcn::advance`] is held to.
struct Reference {
    alpha: f64,
    rc: f64,
    rt: f64,
    stage: u32,
    cnp_a: bool,
    cnp_d: bool,
    /// (time, kind): 0 α, 1 increase, 2 decrease.
    next: [Ps; 3],
}

impl Reference {
    fn step_to(&mut self, now: Ps, c: &DcqcnConfig, line: f64) {
        loop {
            // At one instant the event scheduled first runs first: α, then of the increase
            // timer and the decrease check the one of longer period (the check on a tie).
            let rank = |k: usize| match k {
                0 => 0,
                1 if c.increase_interval > c.decrease_interval => 1,
                1 => 3,
                _ => 2,
            };
            let (k, t) = (0..3)
                .map(|k| (k, self.next[k]))
                .min_by_key(|&(k, t)| (t, rank(k)))
                .unwrap();
            if t > now {
                return;
            }
            match k {
                0 => {
                    self.alpha = if self.cnp_a {
                        (1.0 - c.g) * self.alpha + c.g
                    } else {
                        (1.0 - c.g) * self.alpha
                    };
                    self.cnp_a = false;
                    self.next[0] += c.alpha_interval;
                }
                1 => {
                    self.next[1] += c.increase_interval;
                    if self.stage == c.fast_recovery {
                        self.rt = (self.rt + c.rate_ai).min(line);
                    } else if self.stage > c.fast_recovery {
                        self.rt = (self.rt + c.rate_hai).min(line);
                    }
                    self.rc = (self.rc + self.rt) / 2.0;
                    self.stage += 1;
                }
                _ => {
                    self.next[2] += c.decrease_interval;
                    if self.cnp_d {
                        if self.stage != 0 {
                            self.rt = self.rc;
                        }
                        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(1e9);
                        self.stage = 0;
                        self.cnp_d = false;
                        self.next[1] = t + c.increase_interval;
                    }
                }
            }
        }
    }
}

/// DCQCN driven by `cnps` (CNP arrival times) and looked at every `step` from 10 us to
/// 5 ms, against [`Reference`] after every look; the stages seen.
fn dcqcn_against_reference(c: DcqcnConfig, cnps: &[Ps], step: Ps) -> (Dcqcn, Vec<u32>) {
    let line = 100e9;
    let mut d = Dcqcn::new(c);
    let mut rate = line;
    let mut r = Reference {
        alpha: 1.0,
        rc: line,
        rt: line,
        stage: 0,
        cnp_a: false,
        cnp_d: true,
        next: [
            cnps[0] + c.alpha_interval,
            Ps::MAX,
            cnps[0] + c.decrease_interval + NS,
        ],
    };
    let mut seen = Vec::new();
    let mut looks: Vec<Ps> = (0..)
        .map(|k| cnps[0] + k * step)
        .take_while(|&t| t <= 5_000 * US)
        .collect();
    looks.extend_from_slice(cnps);
    looks.sort();
    looks.dedup();
    for &t in &looks {
        d.advance(t, &mut rate, line, 1e9);
        r.step_to(t, &c, line);
        if cnps.contains(&t) {
            d.on_cnp(t, rate);
            if t != cnps[0] {
                r.cnp_a = true;
                r.cnp_d = true;
            }
        }
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1e-12);
        assert!(close(rate, r.rc), "{t}: rate {rate} vs {}", r.rc);
        if t > cnps[0] {
            assert!(
                close(d.target, r.rt),
                "{t}: target {} vs {}",
                d.target,
                r.rt
            );
            assert!(
                close(d.alpha, r.alpha),
                "{t}: alpha {} vs {}",
                d.alpha,
                r.alpha
            );
            assert_eq!(d.stage, r.stage, "{t}");
        }
        seen.push(r.stage);
    }
    (d, seen)
}

#[test]
fn dcqcn_follows_its_equations_through_cuts_recovery_and_increase() {
    let c = dcqcn_cfg();
    let line = 100e9;
    // CNPs at 10 us (the first: α = 1, the timers start, no cut yet), 12 us, 400 us
    // and 2 ms; then quiet to 5 ms: cuts, fast recovery, additive, then hyper increase.
    let cnps = [10 * US, 12 * US, 400 * US, 2_000 * US];
    // Looked at often (each look replays one event at most) and rarely (a look replays
    // runs of α decays, idle checks and increases at once): the same rates.
    for step in [500 * NS, 37 * US, 1_000 * US] {
        let (d, seen) = dcqcn_against_reference(c, &cnps, step);
        // The first CNP cuts nothing; the 12 us one is the first cut.
        assert_eq!(d.cuts(), 3, "step {step}");
        if step == 500 * NS {
            // The script went through each phase: cuts (stage 0), fast recovery (1),
            // additive (2) and hyper increase (above 2).
            assert!(seen.contains(&0) && seen.contains(&1) && seen.contains(&2));
            assert!(seen.iter().any(|&s| s > 3));
        }
    }
    // Timers whose increase period is shorter than the check's: at a shared instant the
    // check runs first (the simulator's event order), and the reference agrees.
    let fast = DcqcnConfig {
        increase_interval: 2 * US,
        decrease_interval: 4 * US,
        ..c
    };
    dcqcn_against_reference(fast, &[10 * US, 12 * US, 30 * US, 31 * US, 400 * US], US);
    // The first cut: α after one plain decay and one CNP-flagged update.
    let g = c.g;
    let a = ((1.0 - g).powi(3) + g) * (1.0 - g);
    let mut check = Dcqcn::new(c);
    let mut rc = line;
    check.on_cnp(10 * US, rc);
    check.advance(12 * US, &mut rc, line, 1e9);
    check.on_cnp(12 * US, rc);
    check.advance(14 * US + NS, &mut rc, line, 1e9);
    assert!((rc - line * (1.0 - a / 2.0)).abs() < 1e-3, "{rc}");
    assert_eq!(
        check.target, line,
        "a first cut keeps the target (CLAMP_TARGET_RATE = 0)"
    );
}

#[test]
fn hpcc_reacts_to_the_most_utilized_hop_by_its_equation() {
    let cfg = HpccConfig {
        eta: 0.95,
        max_stage: 5,
        rate_ai: 50e6,
        fast_react: true,
    };
    let line = 100e9;
    let t = 10 * US;
    let mut h = Hpcc::new(cfg, line);
    let hop = |ts: Ps, tx: u64, q: u64, rate: u64| IntHop {
        ts,
        tx_bytes: tx,
        qlen: q,
        rate,
    };
    let stack = |hops: &[IntHop]| {
        let mut s = IntStack::default();
        for &x in hops {
            s.push(x);
        }
        s
    };
    let mut rate = line;
    // The first ACK only stores the records (snd_nxt was 10 KB then).
    let first = stack(&[
        hop(0, 0, 50_000, 100_000_000_000),
        hop(0, 0, 0, 400_000_000_000),
    ]);
    h.on_ack(1000, 10_000, &first, &mut rate, line, 1e8, t);
    assert_eq!(rate, line);
    // 1 us later: hop 0 sent 12.5 KB (100 Gbit/s) and still holds 60 KB; hop 1 sent
    // 25 KB of its 400 Gbit/s. u_0 = 1 + min(50, 60) KB / (B T) = 1.4; u_1 = 0.5.
    let second = stack(&[
        hop(US, 12_500, 60_000, 100_000_000_000),
        hop(US, 25_000, 0, 400_000_000_000),
    ]);
    h.on_ack(11_000, 20_000, &second, &mut rate, line, 1e8, t);
    let u0: f64 = 1.0 + 50_000.0 * 8.0 / (100e9 * 10e-6);
    assert!((u0 - 1.4).abs() < 1e-12);
    let big_u = (1.0 * (t - US) as f64 + u0 * US as f64) / t as f64;
    let expect = line / (big_u / 0.95) + 50e6;
    assert!((rate - expect).abs() < 1.0, "{rate} vs {expect}");
    assert!((h.u - big_u).abs() < 1e-12);
    // It acknowledged beyond the first ACK's snd_nxt: committed, stage 0.
    assert_eq!((h.committed, h.stage), (rate, 0));
    // An ACK within the same round trip (seq <= 20 KB) reacts from the committed rate but
    // commits nothing; an idle path (u = 0.5 < η) then raises it additively.
    let committed = h.committed;
    let third = stack(&[
        hop(2 * US, 12_500 + 6_250, 0, 100_000_000_000),
        hop(2 * US, 25_000, 0, 400_000_000_000),
    ]);
    h.on_ack(15_000, 30_000, &third, &mut rate, line, 1e8, t);
    assert_eq!(h.committed, committed);
    assert!(h.u < big_u, "the average moved toward 0.5");
    let c = h.u / 0.95;
    let expect = if c >= 1.0 {
        committed / c + 50e6
    } else {
        committed + 50e6
    };
    assert!((rate - expect.min(line)).abs() < 1.0, "{rate} vs {expect}");
}

fn none_cfg() -> RoceConfig {
    RoceConfig {
        mss: 1000,
        header_bytes: 44,
        framing: 38,
        line_rate: 10_000_000_000,
        base_rtt: 10 * US,
        window: false,
        min_rate: 1e8,
        timeout: 1_000 * US,
        nack_interval: 500 * US,
        cc: RoceCc::None,
        data_class: 0,
        ack_class: 0,
    }
}

/// Every segment the connection sends by `until`, its NIC taking each at once.
fn send_all(c: &mut RoceConnection, from: Ps, until: Ps) -> Vec<(Ps, Segment)> {
    let mut out = Vec::new();
    let mut now = from;
    loop {
        let mut segs = Vec::new();
        c.poll_transmit(now, 1, &mut segs);
        if !segs.is_empty() {
            // The NIC starts it at once and offers the flow its slot again.
            c.poll_transmit(now, 1, &mut segs);
            assert_eq!(segs.len(), 1, "the limiter holds the next frame back");
        }
        out.extend(segs.into_iter().map(|s| (now, s)));
        match c.poll_timeout() {
            Some(t) if t <= until && t > now => now = t,
            _ => return out,
        }
        if c.poll_timeout() == Some(now) {
            c.handle(now, Input::Timeout);
        }
    }
}

fn deliver(c: &mut RoceConnection, now: Ps, s: &Segment) -> Option<RoceAck<'static>> {
    let h = c.handle(
        now,
        Input::Data(Data {
            seq: s.seq,
            len: s.len,
            ts: s.ts,
            retx: s.retx,
            ce: false,
        }),
    );
    h.ack_now.then(|| {
        let a = c.poll_ack();
        RoceAck {
            cum: a.info.cum,
            nack: a.pack,
            ece: a.info.ece,
            int: None,
        }
    })
}

#[test]
fn go_back_n_resends_exactly_from_the_lost_packet() {
    let cfg = none_cfg();
    let mut c = RoceConnection::new(&cfg, 10_000, None);
    let sent = send_all(&mut c, 0, 100 * US);
    assert_eq!(sent.len(), 10);
    // Line rate: one frame time apart (1082 B at 10 Gbit/s).
    assert_eq!(sent[1].0 - sent[0].0, 1082 * 800);
    let segs: Vec<Segment> = sent.iter().map(|&(_, s)| s).collect();
    let now = 20 * US;
    // 0..=2 arrive; 3 is lost; 4 arrives: a NACK of byte 3000; 5 arrives: no second NACK.
    for s in &segs[..3] {
        let a = deliver(&mut c, now, s).unwrap();
        assert!(!a.nack);
        c.handle(now, Input::RoceAck(a));
    }
    let nack = deliver(&mut c, now, &segs[4]).unwrap();
    assert!(nack.nack && nack.cum == 3000);
    assert!(deliver(&mut c, now, &segs[5]).is_none());
    c.handle(now, Input::RoceAck(nack));
    // Go-back-N: 3000, 4000, ... 9000 again, in order, each a retransmission.
    let again = send_all(&mut c, now, 200 * US);
    let seqs: Vec<u64> = again.iter().map(|(_, s)| s.seq).collect();
    assert_eq!(seqs, (3..10).map(|k| k * 1000).collect::<Vec<_>>());
    assert!(again.iter().all(|(_, s)| s.retx));
    for (_, s) in &again {
        let a = deliver(&mut c, now, s).unwrap();
        c.handle(now, Input::RoceAck(a));
    }
    assert!(c.finished());
    assert_eq!(c.stats().retransmits, 7);
    assert_eq!(c.stats().duplicate_bytes, 0);
}

#[test]
fn a_timeout_goes_back_to_the_first_unacknowledged_byte() {
    let cfg = none_cfg();
    let mut c = RoceConnection::new(&cfg, 3_000, None);
    let sent = send_all(&mut c, 0, 10 * US);
    assert_eq!(sent.len(), 3);
    let a = deliver(&mut c, US, &sent[0].1).unwrap();
    c.handle(US, Input::RoceAck(a));
    // Nothing more arrives: the timer is the timeout, from the last progress.
    assert_eq!(c.poll_timeout(), Some(US + cfg.timeout));
    c.handle(US + cfg.timeout, Input::Timeout);
    let again = send_all(&mut c, US + cfg.timeout, US + cfg.timeout + 10 * US);
    let seqs: Vec<u64> = again.iter().map(|(_, s)| s.seq).collect();
    assert_eq!(seqs, vec![1000, 2000]);
    assert_eq!(c.stats().timeouts, 1);
    // A duplicate (the original 1000 B arriving late) is ACKed, not taken twice.
    let dup = deliver(&mut c, 2 * US, &sent[1].1).unwrap();
    assert_eq!(dup.cum, 2000);
    let dup = deliver(&mut c, 2 * US, &again[0].1).unwrap();
    assert_eq!(dup.cum, 2000);
    assert_eq!(c.stats().duplicate_bytes, 1000);
}

#[test]
fn timeouts_without_progress_double_until_an_ack_resets_them() {
    let cfg = none_cfg();
    let mut c = RoceConnection::new(&cfg, 2_000, None);
    let sent = send_all(&mut c, 0, 10 * US);
    assert_eq!(sent.len(), 2);
    let rto = cfg.timeout;
    // The timer runs from the send into the empty pipe, at 0.
    let mut at = rto;
    for k in 0..8u32 {
        assert_eq!(c.poll_timeout(), Some(at), "timeout {k}");
        c.handle(at, Input::Timeout);
        // Go-back-N from byte 0, both packets again.
        let again = send_all(&mut c, at, at + 10 * US);
        assert_eq!(again.len(), 2);
        at += rto << (k + 1).min(6);
    }
    assert_eq!(c.stats().timeouts, 8);
    // An ACK of new data resets the timer to one timeout from it.
    let a = deliver(&mut c, at - US, &sent[0].1).unwrap();
    c.handle(at - US, Input::RoceAck(a));
    assert_eq!(c.poll_timeout(), Some(at - US + rto));
}

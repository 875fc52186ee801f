//! The TCP sender and receiver, driven by hand.

use super::config::{PriorityMode, TcpConfig};
use super::fastlane::NotifyMode;
use super::receiver::TcpReceiver;
use super::scoreboard::LOST;
use super::sender::TcpSender;
use crate::transport::cc::kinds::CcKind;
use crate::transport::cc::newreno::NewReno;
use crate::transport::cc::CongestionControl;
use crate::transport::connection::{AckInfo, Data, Segment};
use crate::units::Ps;

/// A data segment as the receiver gets it.
fn data(seq: u64, len: u32, ts: Ps, retx: bool, ce: bool) -> Data {
    Data {
        seq,
        len,
        ts,
        retx,
        ce,
    }
}

/// The sender driven as the host drives it: an input, then the send pass it asks for.
trait Drive {
    fn start_(&mut self, now: Ps, limit: usize, out: &mut Vec<Segment>);
    fn ack_(&mut self, now: Ps, ack: &AckInfo, limit: usize, out: &mut Vec<Segment>);
    fn timer_(&mut self, now: Ps, limit: usize, out: &mut Vec<Segment>);
    fn poll_(&mut self, now: Ps, limit: usize, out: &mut Vec<Segment>);
    fn notify_(&mut self, now: Ps, seq: u64, epoch: u16, limit: usize, out: &mut Vec<Segment>);
}

impl<C: CongestionControl> Drive for TcpSender<C> {
    fn start_(&mut self, now: Ps, limit: usize, out: &mut Vec<Segment>) {
        self.start();
        self.poll_transmit(now, limit, out);
    }
    fn ack_(&mut self, now: Ps, ack: &AckInfo, limit: usize, out: &mut Vec<Segment>) {
        self.on_ack(now, ack);
        self.poll_transmit(now, limit, out);
    }
    fn timer_(&mut self, now: Ps, limit: usize, out: &mut Vec<Segment>) {
        self.on_timeout(now);
        self.poll_transmit(now, limit, out);
    }
    fn poll_(&mut self, now: Ps, limit: usize, out: &mut Vec<Segment>) {
        self.on_nic_freed();
        self.poll_transmit(now, limit, out);
    }
    fn notify_(&mut self, now: Ps, seq: u64, epoch: u16, limit: usize, out: &mut Vec<Segment>) {
        self.on_notify(now, seq, epoch);
        self.poll_transmit(now, limit, out);
    }
}

/// (seq, len, retx) of a segment, what the tests compare.
fn seg(seq: u64, len: u32, retx: bool) -> (u64, u32, bool) {
    (seq, len, retx)
}

fn sent(out: &[Segment]) -> Vec<(u64, u32, bool)> {
    out.iter().map(|s| (s.seq, s.len, s.retx)).collect()
}

/// A data segment as a host would hand it back.
fn segment(seq: u64, len: u32, retx: bool) -> Segment {
    Segment {
        seq,
        ts: 0,
        prio: 0,
        len,
        ip_bytes: 40 + len,
        epoch: 0,
        class: 0,
        retx,
        probe: false,
        ect: true,
        cpa: true,
    }
}

fn cfg() -> TcpConfig {
    TcpConfig {
        mss: 1000,
        init_cwnd: 4,
        rwnd: 1 << 20,
        per_ack_increase: false,
        cwnd_limited: false,
        ssthresh_from_cwnd: false,
        rto_min: 1_000,
        rto_init: 1_000,
        rto_max: 1_000_000,
        dupthresh: Some(3),
        delayed_ack: None,
        lost_retransmit: true,
        fixed_rto: false,
        probe_after: None,
        ecn: true,
        ooo_option: false,
        notify: NotifyMode::Tcp,
        rearm_rto: false,
        max_reordering: None,
        tso_defer: None,
        undo: false,
        cc: CcKind::NewReno,
        priority: PriorityMode::Remaining,
        header_bytes: 40,
        data_class: 0,
        ack_class: 0,
        cp: true,
    }
}

/// Linux's undo (`transport.undo`). Segment 0 is delayed, not lost: three segments
/// behind it start a fast retransmit at t = 30, which halves the window. Then the
/// original arrives; its ACK echoes its send time (5, before 30), so the window goes
/// back to twice ssthresh, and when the retransmission arrives as a duplicate
/// (D-SACK) and the recovery ends, ssthresh is restored too. Without undo, or when
/// the original was really lost (the hole is filled by the retransmission, whose
/// ACK echoes t = 30), the reduction stands.
#[test]
fn undo_restores_a_window_cut_for_a_delayed_segment() {
    let mut c = cfg();
    c.init_cwnd = 10;
    let size = 20_000;
    let run = |undo: bool, original_lost: bool| {
        let mut c = c.clone();
        c.undo = undo;
        let mut s = TcpSender::new(&c, size, NewReno::default());
        let mut r = TcpReceiver::new(&c, size);
        let mut out = Vec::new();
        s.start_(0, 100, &mut out);
        // Slow start over, so that no growth blurs the comparison.
        s.window_mut().ssthresh = s.window().cwnd;
        let before = s.window().cwnd;
        let segs = std::mem::take(&mut out);
        for seg in &segs[1..4] {
            r.on_data(20, data(seg.seq, seg.len, 5, false, false));
            s.ack_(30, &r.make_ack(), 100, &mut out);
        }
        assert!(s.in_recovery());
        let resent = out.iter().find(|o| o.retx).expect("fast retransmit");
        assert_eq!(resent.seq, 0);
        let halved = s.window().cwnd;
        assert!(halved < before);
        // The hole is filled: by the original (sent at 5) or by the retransmission.
        let (ts, retx) = if original_lost {
            (30, true)
        } else {
            (5, false)
        };
        r.on_data(40, data(0, segs[0].len, ts, retx, false));
        s.ack_(50, &r.make_ack(), 100, &mut out);
        // The late original's ACK restores the window at once (partial undo).
        assert_eq!(s.undos(), u32::from(undo && !original_lost));
        if s.undos() == 1 {
            assert!(s.window().cwnd >= before && s.in_recovery());
        }
        if !original_lost {
            // The retransmission arrives too: a duplicate, reported by D-SACK.
            r.on_data(41, data(0, segs[0].len, 30, true, false));
            let a = r.make_ack();
            assert!(a.dsack);
            s.ack_(51, &a, 100, &mut out);
        }
        // Everything else arrives; the recovery ends.
        let mut t = 60;
        while !s.done() {
            let sent = std::mem::take(&mut out);
            for seg in segs[4..].iter().chain(sent.iter().filter(|o| !o.retx)) {
                if seg.seq >= r.delivered() {
                    r.on_data(t, data(seg.seq, seg.len, t, false, false));
                    s.ack_(t + 1, &r.make_ack(), 100, &mut out);
                    t += 2;
                }
            }
            if t > 10_000 {
                break;
            }
        }
        assert!(s.done() && !s.in_recovery());
        (
            before,
            halved,
            s.window().cwnd,
            s.window().ssthresh,
            s.undos(),
        )
    };
    let (before, halved, cwnd, ssthresh, undos) = run(true, false);
    assert_eq!(undos, 1);
    assert!(cwnd >= before, "{cwnd} after undo, {before} before the cut");
    assert!(ssthresh >= before / 4 * 3, "{ssthresh}");
    assert!(halved < before);
    for (undo, lost) in [(false, false), (true, true)] {
        let (before, halved, cwnd, ssthresh, undos) = run(undo, lost);
        assert_eq!(undos, 0);
        assert_eq!(ssthresh, halved);
        assert!(
            cwnd < before,
            "undo {undo}, lost {lost}: {cwnd} vs {before}"
        );
    }
}

/// Review findings on recovery: a PACK after a timeout starts no fast recovery (RFC
/// 6582 §4), and a second timeout of the same data keeps ssthresh (RFC 5681 §3.1),
/// also when a loss halves the window rather than the flight (Linux).
#[test]
fn timeouts_are_not_reduced_for_twice() {
    let c = TcpConfig {
        init_cwnd: 10,
        dupthresh: None,
        ssthresh_from_cwnd: true,
        ..cfg()
    };
    let mut s = TcpSender::new(&c, 100_000, NewReno::default());
    let mut out = Vec::new();
    s.start_(0, usize::MAX, &mut out);
    assert_eq!(out.len(), 10);
    out.clear();
    s.timer_(s.timer().unwrap(), usize::MAX, &mut out);
    assert_eq!(s.window().ssthresh, 5000);
    out.clear();
    s.timer_(s.timer().unwrap(), usize::MAX, &mut out);
    assert_eq!((s.timeouts(), s.window().ssthresh), (2, 5000));
    // A PACK for segment 5 (never received) before snd.una passes `recover`.
    let (cwnd, ssthresh) = (s.window().cwnd, s.window().ssthresh);
    let pack = AckInfo {
        cum: 0,
        pack: (6000, 5000),
        ..Default::default()
    };
    s.ack_(s.timer().unwrap() - 1, &pack, usize::MAX, &mut out);
    assert!(!s.in_recovery());
    assert_eq!((s.window().cwnd, s.window().ssthresh), (cwnd, ssthresh));
}

/// RFC 5681 §4.2: with delayed ACKs, the segment that fills a hole is acknowledged
/// at once, not held.
#[test]
fn a_segment_filling_a_hole_is_acknowledged_at_once() {
    let mut c = cfg();
    c.delayed_ack = Some(40_000_000);
    let mut r = TcpReceiver::new(&c, 10_000);
    assert!(
        !r.on_data(1, data(0, 1000, 1, false, false)).ack_now,
        "in order: delayed"
    );
    assert!(
        r.on_data(2, data(2000, 1000, 2, false, false)).ack_now,
        "out of order"
    );
    r.make_ack();
    assert!(
        r.on_data(3, data(1000, 1000, 3, false, false)).ack_now,
        "fills the hole"
    );
    r.make_ack();
    assert!(
        !r.on_data(4, data(3000, 1000, 4, false, false)).ack_now,
        "in order again"
    );
}

/// RFC 8257 §3.2 with delayed ACKs: an ACK never covers both marked and unmarked
/// data, so the bytes acknowledged with ECE are exactly the bytes that arrived with CE
/// (the fraction DCTCP's α estimates). Marks in runs of 1 to 3 segments.
#[test]
fn delayed_acks_echo_ce_exactly_for_the_marked_bytes() {
    let mut c = cfg();
    c.delayed_ack = Some(40_000_000);
    let size = 1460 * 60;
    let mut r = TcpReceiver::new(&c, size);
    let (mut marked, mut echoed, mut acks, mut last) = (0, 0, 0, 0);
    let mut ack = |r: &mut TcpReceiver, echoed: &mut u64| {
        let a = r.make_ack();
        if a.ece {
            *echoed += a.cum - last;
        }
        last = a.cum;
        acks += 1;
    };
    for k in 0..60u64 {
        let ce = (k / 2 + k / 3) % 2 == 1;
        if ce {
            marked += 1460;
        }
        if r.ce_flips(ce) {
            ack(&mut r, &mut echoed);
        }
        if r.on_data(k, data(k * 1460, 1460, k, false, ce)).ack_now {
            ack(&mut r, &mut echoed);
        }
    }
    assert!(r.complete());
    assert!(marked > 0 && marked < size);
    assert_eq!(echoed, marked);
    // Still delayed where the marks allow: fewer ACKs than segments.
    assert!(acks < 60, "{acks} ACKs");
}

/// ACKs reordered on the way back: old ACKs arriving after a newer one are not
/// duplicates (RFC 5681 §2), so three of them start no fast retransmit.
#[test]
fn old_acks_are_not_duplicate_acks() {
    let mut c = cfg();
    c.init_cwnd = 10;
    let size = 100_000;
    let mut s = TcpSender::new(&c, size, NewReno::default());
    let mut r = TcpReceiver::new(&c, size);
    let mut out = Vec::new();
    s.start_(0, 100, &mut out);
    let segs = std::mem::take(&mut out);
    let mut acks = Vec::new();
    for (i, seg) in segs[..3].iter().enumerate() {
        r.on_data(10 + i as u64, data(seg.seq, seg.len, 0, false, false));
        acks.push(r.make_ack());
    }
    // The newest first, then the two older ones, the oldest twice.
    for (t, a) in [(20, 2), (21, 0), (22, 1), (23, 0)] {
        s.ack_(t, &acks[a], 100, &mut out);
    }
    assert!(out.iter().all(|o| !o.retx), "{out:?}");
    assert!(!s.in_recovery());
    // Three true duplicates (segments 4-6 arrive, 3 is missing) do start one.
    for seg in &segs[4..7] {
        r.on_data(30, data(seg.seq, seg.len, 0, false, false));
        s.ack_(30, &r.make_ack(), 100, &mut out);
    }
    assert!(s.in_recovery());
    assert!(
        out.iter().any(|o| o.retx && o.seq == segs[3].seq),
        "{out:?}"
    );
}

/// Linux's TSO deferral (tcp_tso_should_defer, win_divisor 3): with 30 segments of
/// window, ACKs that free one segment each send nothing until a third of the window
/// (10 segments) can go, which then leaves as one burst; without it, each ACK sends
/// a segment.
#[test]
fn tso_deferral_sends_a_third_of_the_window_at_once() {
    let mut c = cfg();
    c.init_cwnd = 30;
    c.per_ack_increase = true;
    let size = 1_000_000;
    for defer in [None, Some(2_000_000)] {
        c.tso_defer = defer;
        let mut s = TcpSender::new(&c, size, NewReno::default());
        let mut r = TcpReceiver::new(&c, size);
        let mut out = Vec::new();
        s.start_(0, 100, &mut out);
        assert_eq!(
            out.len(),
            30,
            "the initial window fits the deferral's limit"
        );
        let first: Vec<Segment> = std::mem::take(&mut out);
        // In order, one ACK each (slow start is over: no growth to blur the count).
        s.window_mut().ssthresh = s.window().cwnd;
        let mut bursts = Vec::new();
        for (i, seg) in first.iter().enumerate() {
            r.on_data(10 + i as u64, data(seg.seq, seg.len, 0, false, false));
            s.ack_(10 + i as u64, &r.make_ack(), 100, &mut out);
            if !out.is_empty() {
                bursts.push(out.len());
                out.clear();
            }
        }
        match defer {
            // One per ACK (two once the window has grown by a segment).
            None => assert!(bursts.len() == 30 && bursts.iter().all(|&b| b <= 2)),
            // cwnd is 30 segments (one more after 30 ACKs at most): a burst goes
            // once 10 are free.
            Some(_) => {
                assert!(bursts.len() >= 2, "{bursts:?}");
                assert!(bursts.iter().all(|&b| b >= 10), "{bursts:?}");
            }
        }
    }
}

/// A burst decided on goes whole: when the host's NIC budget (2 segments a call)
/// cuts it, the host's polls send the rest without a new decision.
#[test]
fn tso_deferral_burst_split_by_the_nic_budget_goes_on_at_polls() {
    let mut c = cfg();
    c.init_cwnd = 30;
    c.per_ack_increase = true;
    c.tso_defer = Some(2_000_000);
    let size = 1_000_000;
    let mut s = TcpSender::new(&c, size, NewReno::default());
    let mut r = TcpReceiver::new(&c, size);
    let mut out = Vec::new();
    s.start_(0, 100, &mut out);
    s.window_mut().ssthresh = s.window().cwnd;
    let segs = std::mem::take(&mut out);
    for (i, seg) in segs[..10].iter().enumerate() {
        r.on_data(10 + i as u64, data(seg.seq, seg.len, 0, false, false));
        s.ack_(10 + i as u64, &r.make_ack(), 2, &mut out);
    }
    assert_eq!(
        out.len(),
        2,
        "the tenth ACK frees a third: a burst, cut to 2"
    );
    let mut sent = out.len();
    for t in 0..10 {
        out.clear();
        s.poll_(100 + t, 2, &mut out);
        sent += out.len();
    }
    assert_eq!(
        sent, 10,
        "the polls send the rest of the burst, and no more"
    );
}

/// The deferral is for the Open state only, ends when the ACKs pause for two
/// jiffies, and never holds back the end of the data.
#[test]
fn tso_deferral_stops_out_of_order_after_a_pause_and_at_the_tail() {
    let mut c = cfg();
    c.init_cwnd = 30;
    c.dupthresh = None;
    c.tso_defer = Some(2_000_000);
    // A sender past slow start with its initial window out, its receiver, and the
    // segments sent.
    let start = |size: u64| {
        let mut s = TcpSender::new(&c, size, NewReno::default());
        let mut out = Vec::new();
        s.start_(0, 100, &mut out);
        s.window_mut().ssthresh = s.window().cwnd;
        (s, TcpReceiver::new(&c, size), out)
    };
    // Segment `seg` arrives at time t (CE-marked or not) and its ACK is handled.
    let ack = |s: &mut TcpSender<NewReno>,
               r: &mut TcpReceiver,
               t: Ps,
               seg: &Segment,
               ce: bool,
               out: &mut Vec<Segment>| {
        r.on_data(t, data(seg.seq, seg.len, 0, false, ce));
        s.ack_(t, &r.make_ack(), 100, out);
    };
    let size = 1_000_000;
    let mut out = Vec::new();
    // Out of order: segment 0 is missing, so segment 1's ACK SACKs it (Disorder):
    // the freed segment goes at once.
    let (mut s, mut r, first) = start(size);
    ack(&mut s, &mut r, 10, &first[1], false, &mut out);
    assert_eq!(out.len(), 1, "a SACK leaves the Open state");
    // In order, the first ACK defers; one two jiffies later sends.
    let (mut s, mut r, first) = start(size);
    out.clear();
    ack(&mut s, &mut r, 10, &first[0], false, &mut out);
    assert!(out.is_empty());
    ack(&mut s, &mut r, 20, &first[1], false, &mut out);
    assert!(out.is_empty(), "ACKs 10 ps apart keep deferring");
    ack(&mut s, &mut r, 2_000_020, &first[2], false, &mut out);
    assert_eq!(
        out.len(),
        3,
        "an ACK two jiffies after the last deferral sends"
    );
    // A poll in between (from the NIC, not an ACK) does not re-stamp the deferral.
    let (mut s, mut r, first) = start(size);
    out.clear();
    ack(&mut s, &mut r, 10, &first[0], false, &mut out);
    s.poll_(1_500_000, 100, &mut out);
    assert!(out.is_empty());
    ack(&mut s, &mut r, 2_000_010, &first[1], false, &mut out);
    assert_eq!(
        out.len(),
        2,
        "two jiffies after the ACK's deferral, not the poll's"
    );
    // After an ECN echo the window shrinks (Linux's CWR state): no deferral until
    // the data sent before it is acknowledged.
    let (mut s, mut r, first) = start(size);
    out.clear();
    ack(&mut s, &mut r, 10, &first[0], true, &mut out);
    assert!(
        out.is_empty(),
        "the window halved to ~15 segments with 29 out"
    );
    let mut bursts = Vec::new();
    for (i, seg) in first[1..25].iter().enumerate() {
        ack(&mut s, &mut r, 20 + i as u64, seg, false, &mut out);
        if !out.is_empty() {
            bursts.push(out.len());
            out.clear();
        }
    }
    // Deferring would wait for a third of the window (5 segments) each time.
    assert!(
        bursts.len() >= 5 && bursts.iter().all(|&b| b < 5),
        "{bursts:?}"
    );
    // The tail: 31 segments in all, so the one left after the initial window fits.
    let (mut s, mut r, first) = start(31_000);
    out.clear();
    ack(&mut s, &mut r, 10, &first[0], false, &mut out);
    assert_eq!(out.len(), 1, "the last segment is not held back");
}

/// `window_closed` is what lets the host skip a poll: whenever it says so, a poll
/// sends nothing and changes neither the pipe nor the timer. Checked after every
/// event of random lossy, reordering exchanges (with recoveries and timeouts) that
/// send one segment per call, so the window is found both closed and open.
#[test]
fn a_poll_of_a_closed_window_does_nothing() {
    let c = cfg();
    let (mut closed, mut open) = (0, 0);
    for seed in 0..20 {
        let mut rng = crate::rng::Rng::new(seed, 3);
        let size = 100_000;
        let mut s = TcpSender::new(&c, size, NewReno::default());
        let mut r = TcpReceiver::new(&c, size);
        let (mut net, mut out) = (Vec::new(), Vec::new());
        s.start_(0, 1, &mut out);
        let mut t = 0;
        while !s.done() {
            t += 10;
            assert!(t < 1_000_000_000, "exchange stalled");
            net.append(&mut out);
            if net.is_empty() {
                // Nothing in the network: the retransmission timer must fire.
                t = t.max(s.timer().expect("data out, timer running"));
                s.timer_(t, 1, &mut out);
            } else if rng.below(3) == 0 {
                s.poll_(t, 1, &mut out);
            } else {
                // One segment, any of those in flight (reordering), lost 1 in 10.
                let seg = net.swap_remove(rng.below(net.len() as u64) as usize);
                if rng.below(10) != 0 && !seg.probe {
                    r.on_data(t, data(seg.seq, seg.len, t, seg.retx, false));
                    s.ack_(t, &r.make_ack(), 1, &mut out);
                }
            }
            net.append(&mut out);
            if s.window_closed() {
                closed += 1;
                let (pipe, timer) = (s.pipe(), s.timer());
                s.poll_(t, 4, &mut out);
                assert!(out.is_empty(), "seed {seed}: a closed window sent");
                assert_eq!((s.pipe(), s.timer()), (pipe, timer), "seed {seed}");
            } else {
                open += 1;
            }
        }
    }
    assert!(closed > 1000 && open > 1000, "closed {closed}, open {open}");
}

/// Feeds every segment but `lost` to a receiver and the ACKs back to the sender.
#[test]
fn single_loss_is_repaired_by_fast_retransmit_without_timeout() {
    let c = cfg();
    let mut s = TcpSender::new(&c, 10_000, NewReno::default());
    let mut r = TcpReceiver::new(&c, 10_000);
    let mut out = Vec::new();
    s.start_(0, usize::MAX, &mut out);
    let mut t = 0;
    let mut dropped = false;
    while !s.done() {
        assert!(!out.is_empty(), "sender stalled");
        let batch: Vec<Segment> = std::mem::take(&mut out);
        t += 10;
        for seg in batch {
            if seg.seq == 2000 && !dropped {
                dropped = true;
                continue;
            }
            r.on_data(t, data(seg.seq, seg.len, t, seg.retx, false));
            let ack = r.make_ack();
            s.ack_(t + 5, &ack, usize::MAX, &mut out);
        }
    }
    assert_eq!(r.delivered(), 10_000);
    assert_eq!(s.timeouts(), 0);
    assert_eq!(s.retransmits(), 1);
    assert_eq!(s.pipe(), 0);
}

/// Drops segment 2 twice (the original and its first retransmission); returns the
/// sender's (timeouts, retransmits) once the flow completes.
fn lose_a_retransmission(lost_retransmit: bool) -> (u32, u32) {
    let c = TcpConfig {
        lost_retransmit,
        ..cfg()
    };
    let mut s = TcpSender::new(&c, 40_000, NewReno::default());
    let mut r = TcpReceiver::new(&c, 40_000);
    let mut out = Vec::new();
    s.start_(0, usize::MAX, &mut out);
    let (mut t, mut drops) = (0, 0);
    while !s.done() {
        if out.is_empty() {
            // Nothing in flight to clock the sender: only the timer is left.
            t = s.timer().expect("a timer while data is outstanding");
            s.timer_(t, usize::MAX, &mut out);
            continue;
        }
        let batch: Vec<Segment> = std::mem::take(&mut out);
        t += 10;
        for seg in batch {
            if seg.seq == 2000 && drops < 2 {
                drops += 1;
                continue;
            }
            r.on_data(t, data(seg.seq, seg.len, t, seg.retx, false));
            let ack = r.make_ack();
            s.ack_(t + 5, &ack, usize::MAX, &mut out);
        }
    }
    assert_eq!(r.delivered(), 40_000);
    (s.timeouts(), s.retransmits())
}

#[test]
fn a_lost_retransmission_is_resent_when_later_data_is_sacked() {
    assert_eq!(lose_a_retransmission(true), (0, 2));
    // RFC 6675 alone waits for the timer.
    let (timeouts, _) = lose_a_retransmission(false);
    assert_eq!(timeouts, 1);
}

#[test]
fn timeout_resends_only_unsacked_segments() {
    let c = TcpConfig {
        dupthresh: None,
        ..cfg()
    };
    let mut s = TcpSender::new(&c, 4_000, NewReno::default());
    let mut r = TcpReceiver::new(&c, 4_000);
    let mut out = Vec::new();
    s.start_(0, usize::MAX, &mut out);
    assert_eq!(out.len(), 4);
    // Segment 0 is lost; 1..3 arrive and are SACKed.
    for seg in out.drain(..).skip(1).collect::<Vec<_>>() {
        r.on_data(10, data(seg.seq, seg.len, 0, false, false));
        let ack = r.make_ack();
        assert_eq!(ack.cum, 0);
        s.ack_(20, &ack, usize::MAX, &mut out);
    }
    assert!(out.is_empty(), "no fast retransmit with the threshold off");
    s.timer_(s.timer().unwrap(), usize::MAX, &mut out);
    assert_eq!(sent(&out), vec![seg(0, 1000, true)]);
    assert_eq!(s.timeouts(), 1);
    r.on_data(2000, data(0, 1000, 1500, true, false));
    assert!(r.complete());
}

/// Congestion avoidance at cwnd 4000: segments 1-3 arrive before segment 0, whose
/// arrival acknowledges all four at once. Returns cwnd after that ACK.
fn cwnd_after_a_cumulative_jump(per_ack: bool) -> u64 {
    let c = TcpConfig {
        per_ack_increase: per_ack,
        dupthresh: None,
        ..cfg()
    };
    let mut s = TcpSender::new(&c, 100_000, NewReno::default());
    s.window_mut().ssthresh = 1000;
    let mut r = TcpReceiver::new(&c, 100_000);
    let mut out = Vec::new();
    s.start_(0, usize::MAX, &mut out);
    let sent: Vec<Segment> = std::mem::take(&mut out);
    assert_eq!(sent.len(), 4);
    for seg in sent.iter().skip(1).chain(sent.iter().take(1)) {
        r.on_data(10, data(seg.seq, seg.len, 0, false, false));
        s.ack_(20, &r.make_ack(), usize::MAX, &mut out);
    }
    assert_eq!(s.una(), 4000);
    s.window().cwnd
}

#[test]
fn per_ack_counting_grows_the_window_once_per_cumulative_jump() {
    // RFC 5681 byte counting: 4000 bytes acknowledged = one window = one MSS more.
    assert_eq!(cwnd_after_a_cumulative_jump(false), 5000);
    // Linux 2.6: one ACK advancing una counts as one segment, a quarter window.
    assert_eq!(cwnd_after_a_cumulative_jump(true), 4000);
}

/// A sender held to 4 segments by the receive window, in congestion avoidance at 10:
/// cwnd after 400 round trips of ACKs.
fn cwnd_held_by_rwnd(cwnd_limited: bool) -> u64 {
    let c = TcpConfig {
        init_cwnd: 10,
        rwnd: 4000,
        cwnd_limited,
        ..cfg()
    };
    let size = 2_000_000;
    let mut s = TcpSender::new(&c, size, NewReno::default());
    s.window_mut().ssthresh = 1000;
    let mut r = TcpReceiver::new(&c, size);
    let mut out = Vec::new();
    s.start_(0, usize::MAX, &mut out);
    let mut t = 0;
    for _ in 0..400 {
        assert!(s.flight() <= 4000, "the receive window holds the sender");
        for seg in std::mem::take(&mut out) {
            t += 1;
            r.on_data(t, data(seg.seq, seg.len, 0, false, false));
            s.ack_(t, &r.make_ack(), usize::MAX, &mut out);
        }
    }
    assert!(s.una() > 1_000_000);
    s.window().cwnd
}

#[test]
fn a_window_that_does_not_limit_the_sender_grows_only_without_cwnd_limited() {
    // RFC 5681: every ACK grows it, to far beyond what the sender can use.
    assert!(
        cwnd_held_by_rwnd(false) > 40 * 1000,
        "{}",
        cwnd_held_by_rwnd(false)
    );
    // Linux: 6 of its 10 segments unused, more than 3: it stays.
    assert_eq!(cwnd_held_by_rwnd(true), 10_000);
}

/// A sender held to 4000 bytes by the receive window with cwnd 10,000 loses its first
/// segment and enters fast retransmit; returns ssthresh.
fn ssthresh_after_loss(from_cwnd: bool) -> u64 {
    let c = TcpConfig {
        init_cwnd: 10,
        rwnd: 4000,
        ssthresh_from_cwnd: from_cwnd,
        ..cfg()
    };
    let mut s = TcpSender::new(&c, 100_000, NewReno::default());
    let mut r = TcpReceiver::new(&c, 100_000);
    let mut out = Vec::new();
    s.start_(0, usize::MAX, &mut out);
    let sent: Vec<Segment> = std::mem::take(&mut out);
    assert_eq!(sent.len(), 4);
    for seg in &sent[1..] {
        r.on_data(10, data(seg.seq, seg.len, 0, false, false));
        s.ack_(20, &r.make_ack(), usize::MAX, &mut out);
    }
    assert!(s.in_recovery());
    s.window().ssthresh
}

#[test]
fn a_loss_halves_the_flight_or_the_window() {
    // RFC 5681: FlightSize / 2 = 4000 / 2.
    assert_eq!(ssthresh_after_loss(false), 2000);
    // Linux: cwnd / 2.
    assert_eq!(ssthresh_after_loss(true), 5000);
}

/// `host.nic_drop = "local"`: segments the host's NIC refused are taken back, not
/// lost. Trailing new data comes off the scoreboard (snd.nxt steps back), a refused
/// retransmission waits to be sent again, and the window halves once per window.
#[test]
fn refused_segments_are_taken_back_not_lost() {
    let c = cfg();
    let mut s = TcpSender::new(&c, 100_000, NewReno::default());
    let mut out = Vec::new();
    s.start_(0, usize::MAX, &mut out);
    assert_eq!(out.len(), 4);
    // The NIC took the first two of the burst.
    s.unsend(&out[2..]);
    assert_eq!((s.nxt(), s.pipe()), (2000, 2000));
    assert_eq!(
        s.window().cwnd,
        2000,
        "halved from 4000 (ECN-style, once per window)"
    );
    assert!(!s.in_recovery());
    out.clear();
    s.poll_(1, usize::MAX, &mut out);
    assert!(out.is_empty(), "pipe 2000 fills cwnd 2000");
    // The last one sent refused as well, within the same window: taken back, and no
    // second reduction.
    s.unsend(&[segment(1000, 1000, false)]);
    assert_eq!(s.window().cwnd, 2000);
    assert_eq!((s.nxt(), s.pipe()), (1000, 1000));
    // It goes out again as new data, and nothing counts as retransmitted.
    s.poll_(2, usize::MAX, &mut out);
    assert_eq!(sent(&out), vec![seg(1000, 1000, false)]);
    assert_eq!(s.retransmits(), 0);
    // A refused retransmission is resent later, counted once.
    s.on_pack(0, 1000); // the first segment was cut on the way
    out.clear();
    s.poll_(4, usize::MAX, &mut out);
    assert!(sent(&out).contains(&seg(0, 1000, true)));
    assert_eq!(s.retransmits(), 1);
    s.unsend(&out);
    assert_eq!(s.retransmits(), 0);
    out.clear();
    s.poll_(5, usize::MAX, &mut out);
    assert_eq!(sent(&out)[0], seg(0, 1000, true));
    assert_eq!(s.retransmits(), 1);
}

/// A NewReno sender of `size` bytes with an initial window of `init_cwnd` segments,
/// started, its receiver, and what it sent.
fn started(init_cwnd: u32, size: u64) -> (TcpSender<NewReno>, TcpReceiver, Vec<Segment>) {
    started_with(&TcpConfig { init_cwnd, ..cfg() }, size, NewReno::default())
}

/// The same with any configuration and congestion control.
fn started_with<C: CongestionControl>(
    c: &TcpConfig,
    size: u64,
    cc: C,
) -> (TcpSender<C>, TcpReceiver, Vec<Segment>) {
    let mut s = TcpSender::new(c, size, cc);
    let r = TcpReceiver::new(c, size);
    let mut out = Vec::new();
    s.start_(0, usize::MAX, &mut out);
    (s, r, out)
}

/// RFC 6675 IsLost below a segment a PACK marked: segments 6-8 SACKed make 0-4 lost
/// (three SACKed above each), although the scan from the top meets segment 5, which
/// a PACK marked lost, first. The scan used to stop there.
#[test]
fn is_lost_reaches_below_a_segment_a_pack_marked() {
    let (mut s, mut r, mut out) = started(10, 10_000);
    assert_eq!(out.len(), 10);
    r.on_cut(5000, 1000);
    s.ack_(1, &r.make_ack(), usize::MAX, &mut out);
    for seq in [6000, 7000, 8000] {
        r.on_data(2, data(seq, 1000, 0, false, false));
        s.ack_(3, &r.make_ack(), usize::MAX, &mut out);
    }
    for k in 0..5 {
        assert_ne!(
            s.seg_state(k) & LOST,
            0,
            "segment {k} has three SACKed above it"
        );
    }
    assert_eq!(s.seg_state(9) & LOST, 0, "nothing SACKed above segment 9");
}

/// A PACK during a recovery for data sent after it began reports a loss in the next
/// window: when the recovery ends, the next one starts, with its own reduction
/// (Linux: lost_out at the end of Recovery), also with no duplicate-ACK threshold.
#[test]
fn a_loss_in_the_next_window_cuts_again_when_the_recovery_ends() {
    let c = TcpConfig {
        init_cwnd: 8,
        dupthresh: None,
        ..cfg()
    };
    let (mut s, mut r, mut out) = started_with(&c, 100_000, NewReno::default());
    s.window_mut().ssthresh = s.window().cwnd; // no slow start: the window moves only by the cuts
    let first: Vec<Segment> = std::mem::take(&mut out);
    // Segment 0 is cut; 1..8 arrive.
    r.on_cut(0, 1000);
    s.ack_(1, &r.make_ack(), usize::MAX, &mut out);
    assert!(s.in_recovery());
    let after_first_cut = s.window().cwnd;
    assert_eq!(after_first_cut, 4000);
    for seg in &first[1..] {
        r.on_data(2, data(seg.seq, seg.len, 0, false, false));
        s.ack_(3, &r.make_ack(), usize::MAX, &mut out);
    }
    // The retransmission of 0 and new data (8000 on) are out; 8000 is cut, and the
    // retransmission's ACK, which ends the recovery, carries the PACK.
    assert!(out.iter().any(|o| o.seq == 0 && o.retx), "{out:?}");
    assert!(out.iter().any(|o| o.seq == 8000 && !o.retx), "{out:?}");
    r.on_cut(8000, 1000);
    r.on_data(4, data(0, 1000, 0, true, false));
    let ack = r.make_ack();
    assert_eq!((ack.cum, ack.pack_block()), (8000, Some((8000, 9000))));
    out.clear();
    s.ack_(5, &ack, usize::MAX, &mut out);
    assert!(s.in_recovery(), "the next recovery has begun");
    assert_eq!(s.window().cwnd, 2000, "and cut the window again");
    assert!(out.iter().any(|o| o.seq == 8000 && o.retx), "{out:?}");
    // The same PACK arriving while the first recovery still runs: marked lost at
    // once, and the cut comes when the recovery ends.
    let (mut s, mut r, mut out) = started_with(&c, 100_000, NewReno::default());
    s.window_mut().ssthresh = s.window().cwnd;
    let first: Vec<Segment> = std::mem::take(&mut out);
    r.on_cut(0, 1000);
    s.ack_(1, &r.make_ack(), usize::MAX, &mut out);
    for seg in &first[1..] {
        r.on_data(2, data(seg.seq, seg.len, 0, false, false));
        s.ack_(3, &r.make_ack(), usize::MAX, &mut out);
    }
    r.on_cut(8000, 1000);
    s.ack_(4, &r.make_ack(), usize::MAX, &mut out);
    assert_eq!(s.window().cwnd, 4000, "one reduction per recovery");
    r.on_data(5, data(0, 1000, 0, true, false));
    s.ack_(6, &r.make_ack(), usize::MAX, &mut out);
    assert!(s.in_recovery());
    assert_eq!(s.window().cwnd, 2000);
}

/// RFC 6675 §2: a duplicate ACK that SACKs nothing new (here a D-SACK for a
/// segment that arrived twice) does not count toward the threshold.
#[test]
fn a_dsack_alone_is_no_duplicate_ack() {
    let (mut s, mut r, mut out) = started(10, 10_000);
    // Segment 0 is late; segment 5 arrives, then arrives three times more (a
    // duplicated packet): one new SACK, three D-SACKs.
    for _ in 0..4 {
        r.on_data(1, data(5000, 1000, 0, false, false));
        s.ack_(2, &r.make_ack(), usize::MAX, &mut out);
    }
    assert_eq!(s.dupacks(), 1);
    assert!(!s.in_recovery(), "no fast retransmit on one new SACK");
    // Two more new SACKs make three duplicates.
    for seq in [6000, 7000] {
        r.on_data(3, data(seq, 1000, 0, false, false));
        s.ack_(4, &r.make_ack(), usize::MAX, &mut out);
    }
    assert!(s.in_recovery());
}

#[test]
fn sack_blocks_name_the_newest_block_first() {
    let c = cfg();
    let mut r = TcpReceiver::new(&c, 10_000);
    r.on_data(0, data(2000, 1000, 0, false, false));
    r.on_data(0, data(5000, 1000, 0, false, false));
    let ack = r.make_ack();
    assert_eq!(ack.cum, 0);
    assert_eq!(
        &ack.sack[..ack.nsack as usize],
        &[(5000, 6000), (2000, 3000)]
    );
}

/// RFC 2018 §4: after the triggering segment's block come the most recently reported
/// blocks, so a block whose ACK was lost is repeated by the next ones. Our receiver
/// filled the option with the lowest blocks, and with more holes than blocks a
/// delivered segment could go unreported until IsLost resent it (duplicate bytes of
/// the fat-tree DCTCP benchmark: 30,008, now 2,268).
#[test]
fn sack_blocks_repeat_the_most_recently_reported() {
    let c = cfg();
    let mut r = TcpReceiver::new(&c, 100_000);
    let mut last = AckInfo::default();
    for seq in [2000, 10_000, 20_000, 30_000, 40_000] {
        r.on_data(0, data(seq, 1000, 0, false, false));
        last = r.make_ack();
    }
    assert_eq!(
        &last.sack[..last.nsack as usize],
        &[(40_000, 41_000), (30_000, 31_000), (20_000, 21_000)]
    );
    // A block that grows moves to the front; the others keep their order.
    r.on_data(0, data(21_000, 1000, 0, false, false));
    let a = r.make_ack();
    assert_eq!(
        &a.sack[..a.nsack as usize],
        &[(20_000, 22_000), (40_000, 41_000), (30_000, 31_000)]
    );
}

/// The recent blocks are distinct ones (RFC 2018 §4: "not subsets of a SACK block
/// already included"): arrivals that extend one block count as one report of it, so
/// they do not push the older blocks out. Before, the list kept the last three
/// triggering segments, here 41, 42 and 43 of one block, and 30's block was dropped
/// for 10's. A PACK made with no arrival does not count as a report either.
#[test]
fn sack_blocks_repeat_distinct_recent_blocks() {
    let c = cfg();
    let mut r = TcpReceiver::new(&c, 100_000);
    let mut last = AckInfo::default();
    for seq in [10_000, 20_000, 30_000, 40_000, 41_000, 42_000, 43_000] {
        r.on_data(0, data(seq, 1000, 0, false, false));
        last = r.make_ack();
    }
    assert_eq!(
        &last.sack[..last.nsack as usize],
        &[(40_000, 44_000), (30_000, 31_000), (20_000, 21_000)]
    );
    r.on_cut(50_000, 1000);
    assert_eq!(r.make_ack().pack_block(), Some((50_000, 51_000)));
    r.make_ack(); // an ACK sent again, with no new arrival
    r.on_data(0, data(60_000, 1000, 0, false, false));
    let a = r.make_ack();
    assert_eq!(
        &a.sack[..a.nsack as usize],
        &[(60_000, 61_000), (40_000, 44_000), (30_000, 31_000)]
    );
}

#[test]
fn delayed_ack_acks_every_second_segment() {
    let c = TcpConfig {
        delayed_ack: Some(500),
        ..cfg()
    };
    let mut r = TcpReceiver::new(&c, 10_000);
    assert!(!r.on_data(0, data(0, 1000, 0, false, false)).ack_now);
    assert_eq!(r.timer(), Some(500));
    assert!(r.on_data(1, data(1000, 1000, 0, false, false)).ack_now);
    r.make_ack();
    assert!(!r.on_data(2, data(2000, 1000, 0, false, false)).ack_now);
    assert!(r.on_timer(502));
}

/// CP §4.3–§4.4: a cut packet makes the receiver name exactly the lost bytes with
/// swapped edges; the sender marks them lost and resends them without waiting for
/// duplicate ACKs or a timeout; a PACK for data already received changes nothing.
#[test]
fn pack_names_the_lost_bytes_and_the_sender_resends_them_at_once() {
    let c = TcpConfig {
        dupthresh: None,
        ..cfg()
    };
    let mut s = TcpSender::new(&c, 6_500, NewReno::default());
    let mut r = TcpReceiver::new(&c, 6_500);
    let mut out = Vec::new();
    s.start_(0, usize::MAX, &mut out);
    assert_eq!(out.len(), 4);
    // Segment 1 (bytes 1000..2000) is cut at a switch; the others arrive.
    r.on_data(1, data(0, 1000, 0, false, false));
    s.ack_(2, &r.make_ack(), usize::MAX, &mut out);
    r.on_cut(1000, 1000);
    let pack = r.make_ack();
    assert_eq!(pack.pack, (2000, 1000), "edges swapped: right first");
    assert_eq!(pack.pack_block(), Some((1000, 2000)));
    let before = s.window().cwnd;
    out.clear();
    s.ack_(3, &pack, usize::MAX, &mut out);
    assert!(sent(&out).contains(&seg(1000, 1000, true)), "{out:?}");
    assert!(s.in_recovery());
    assert!(s.window().cwnd < before, "the window is cut once");
    let cwnd = s.window().cwnd;
    // A PACK for bytes the receiver already has is ignored.
    r.on_data(4, data(2000, 1000, 0, false, false));
    r.on_cut(0, 1000);
    let stale = r.make_ack();
    assert_eq!(
        stale.pack_block(),
        None,
        "bytes below rcv_nxt are not reported"
    );
    let mut pk = stale;
    pk.pack = (3000, 2000); // a PACK for bytes the receiver SACKed
    out.clear();
    s.ack_(5, &pk, usize::MAX, &mut out);
    assert_eq!(s.packs().1, 1);
    assert_eq!(s.window().cwnd, cwnd);
    assert!(
        out.iter().all(|o| o.seq != 2000),
        "received data is not resent"
    );
    assert_eq!(s.timeouts(), 0);
}

/// Ten segments out, the timer fires, then the resent head is acknowledged by an ACK
/// echoing CE: (cwnd, ssthresh) after the timeout and after the ACK.
fn ece_after_a_timeout<C: CongestionControl>(cc: C) -> ((u64, u64), (u64, u64)) {
    let c = TcpConfig {
        init_cwnd: 10,
        ..cfg()
    };
    let (mut s, _, mut out) = started_with(&c, 100_000, cc);
    let t = s.timer().unwrap();
    s.timer_(t, usize::MAX, &mut out);
    let before = (s.window().cwnd, s.window().ssthresh);
    let ack = AckInfo {
        cum: 1000,
        ece: true,
        echo_ts: t,
        ..Default::default()
    };
    s.ack_(t + 10, &ack, usize::MAX, &mut out);
    (before, (s.window().cwnd, s.window().ssthresh))
}

/// RFC 3168 §6.1.2: the timeout has reduced for this window; an echo of a CE mark on
/// its data neither raises the window (NewReno's echo set it to half the flight, 4.5
/// segments, from one) nor cuts ssthresh again (CUBIC's and DCTCP's went to 2).
#[test]
fn an_ecn_echo_after_a_timeout_changes_nothing() {
    use crate::transport::cc::cubic::Cubic;
    use crate::transport::cc::dctcp::Dctcp;
    let runs = [
        ("newreno", ece_after_a_timeout(NewReno::default())),
        ("cubic", ece_after_a_timeout(Cubic::default())),
        ("dctcp", ece_after_a_timeout(Dctcp::new(1.0 / 16.0))),
    ];
    for (name, (before, after)) in runs {
        // Slow start alone: one segment more for the one acknowledged.
        assert_eq!(after.0, before.0 + 1000, "{name}: cwnd");
        assert_eq!(after.1, before.1, "{name}: ssthresh");
    }
}

/// RFC 3168 §6.1.2 halves the window. With no duplicate-ACK threshold, a late
/// segment 0 leaves 25 segments SACKed above it, and FlightSize (nxt − una) is over
/// twice cwnd: half of it set ssthresh above the window, and the sender slow-started
/// after the "reduction" (cwnd 10 segments, ssthresh 10 -> 17).
#[test]
fn an_ecn_echo_halves_the_window_when_sacked_data_outweighs_it() {
    let (mut s, mut out, cwnd) = sacked_far_above_a_hole();
    let mut a = AckInfo {
        ece: true,
        ..Default::default()
    };
    a.sack[0] = (1000, 26_000);
    a.nsack = 1;
    s.ack_(20, &a, usize::MAX, &mut out);
    assert_eq!(s.ecn_reductions(), 1);
    assert_eq!((s.window().cwnd, s.window().ssthresh), (cwnd / 2, cwnd / 2));
}

/// A sender with no duplicate-ACK threshold whose segment 0 is late: 25 segments
/// SACKed above it, FlightSize (nxt − una) over twice cwnd.
fn sacked_far_above_a_hole() -> (TcpSender<NewReno>, Vec<Segment>, u64) {
    let c = TcpConfig {
        init_cwnd: 10,
        dupthresh: None,
        ..cfg()
    };
    let (mut s, _r, mut out) = started_with(&c, 1_000_000, NewReno::default());
    s.window_mut().ssthresh = s.window().cwnd;
    for right in 2..=26u64 {
        let mut a = AckInfo::default();
        a.sack[0] = (1000, right * 1000);
        a.nsack = 1;
        s.ack_(10, &a, usize::MAX, &mut out);
    }
    let cwnd = s.window().cwnd;
    assert!(s.nxt() - s.una() > 2 * cwnd);
    (s, out, cwnd)
}

/// A PACK or a timeout for the hole halves the window, not FlightSize: half of
/// FlightSize was above cwnd, and a loss raised the window (cwnd 10,000 -> 17,500
/// bytes for the PACK).
#[test]
fn a_loss_never_halves_more_than_the_window() {
    let (mut s, mut out, cwnd) = sacked_far_above_a_hole();
    let mut a = AckInfo {
        pack: (1000, 0),
        ..Default::default()
    };
    a.sack[0] = (1000, 26_000);
    a.nsack = 1;
    s.ack_(20, &a, usize::MAX, &mut out);
    assert!(s.in_recovery());
    assert_eq!((s.window().cwnd, s.window().ssthresh), (cwnd / 2, cwnd / 2));

    let (mut s, mut out, cwnd) = sacked_far_above_a_hole();
    let due = s.timer().expect("data outstanding");
    s.timer_(due, usize::MAX, &mut out);
    assert_eq!(s.timeouts(), 1);
    assert_eq!((s.window().cwnd, s.window().ssthresh), (1000, cwnd / 2));
}

/// RFC 5681 §3.2 step 2: what was sent beyond the window while the duplicate ACKs
/// came in (limited transmit; here the pipe sender's new segments as SACKs shrink
/// the pipe) is not part of the FlightSize that the third one halves.
#[test]
fn data_sent_on_duplicate_acks_is_not_halved() {
    let (mut s, mut r, mut out) = started(10, 100_000);
    out.clear();
    for seq in [1000u64, 2000, 3000] {
        r.on_data(10, data(seq, 1000, 0, false, false));
        s.ack_(20, &r.make_ack(), usize::MAX, &mut out);
    }
    assert!(s.in_recovery());
    assert!(
        out.iter().any(|o| o.seq >= 10_000),
        "new data went out on the SACKs"
    );
    assert!(s.nxt() - s.una() > 10_000);
    assert_eq!(s.window().ssthresh, 5000);
}

/// Ten segments out, slow start over; segment 0's ACK echoes CE, then segment 1 of
/// the same window is lost (2, 3 and 4 SACKed): (cwnd, ssthresh) after the echo and
/// after the loss, and whether segment 1 was resent.
fn ecn_then_loss<C: CongestionControl>(cc: C) -> ((u64, u64), (u64, u64), bool) {
    let c = TcpConfig {
        init_cwnd: 10,
        ..cfg()
    };
    let (mut s, _, mut out) = started_with(&c, 100_000, cc);
    s.window_mut().ssthresh = s.window().cwnd;
    let ack = AckInfo {
        cum: 1000,
        ece: true,
        ..Default::default()
    };
    s.ack_(100, &ack, usize::MAX, &mut out);
    assert_eq!(s.ecn_reductions(), 1);
    let after_ecn = (s.window().cwnd, s.window().ssthresh);
    for r in [3000u64, 4000, 5000] {
        let mut a = AckInfo {
            cum: 1000,
            ..Default::default()
        };
        a.sack[0] = (2000, r);
        a.nsack = 1;
        s.ack_(200, &a, usize::MAX, &mut out);
    }
    assert!(s.in_recovery());
    let resent = out.iter().any(|o| o.seq == 1000 && o.retx);
    (after_ecn, (s.window().cwnd, s.window().ssthresh), resent)
}

/// RFC 3168 §6.1.2: one reduction for the marks and losses of one window. An ECN cut,
/// then a loss of the same window: CUBIC's ssthresh stays at the first cut (it went to
/// β² of the window).
#[test]
fn an_ecn_cut_and_a_loss_in_one_window_cut_once() {
    use crate::transport::cc::cubic::Cubic;
    let (after_ecn, after_loss, resent) = ecn_then_loss(Cubic::default());
    assert!(after_ecn.1 < 10_000);
    assert_eq!(after_loss.1, after_ecn.1);
    assert!(resent, "the loss is resent");
}

/// A timeout during a fast recovery keeps the recovery's ssthresh (Linux's
/// tcp_enter_loss): a cut based on the already-cut window compounded it, to β² for
/// CUBIC and a quarter for NewReno with `ssthresh_from = "cwnd"`.
#[test]
fn a_timeout_during_a_recovery_does_not_cut_again() {
    use crate::transport::cc::cubic::Cubic;
    fn run<C: CongestionControl>(cc: C, from_cwnd: bool) -> (u64, u64) {
        let c = TcpConfig {
            init_cwnd: 10,
            ssthresh_from_cwnd: from_cwnd,
            ..cfg()
        };
        let (mut s, _, mut out) = started_with(&c, 100_000, cc);
        for r in [2000u64, 3000, 4000] {
            let mut a = AckInfo::default();
            a.sack[0] = (1000, r);
            a.nsack = 1;
            s.ack_(100, &a, usize::MAX, &mut out);
        }
        assert!(s.in_recovery());
        let in_recovery = s.window().ssthresh;
        let t = s.timer().unwrap();
        s.timer_(t, usize::MAX, &mut out);
        assert_eq!(s.window().cwnd, 1000);
        (in_recovery, s.window().ssthresh)
    }
    let (a, b) = run(Cubic::default(), false);
    assert_eq!((a, b), (7001, 7001));
    let (a, b) = run(NewReno::default(), true);
    assert_eq!((a, b), (5000, 5000));
}

/// A pFabric sender (with FastLane's probes) whose first window went unanswered for
/// three timeouts: in probe mode. Returns it, what the last timeout sent, and when.
fn pfabric_in_probe_mode() -> (
    TcpSender<crate::transport::cc::pfabric::PFabricCc>,
    Vec<Segment>,
    Ps,
) {
    use crate::transport::cc::pfabric::PFabricCc;
    let c = TcpConfig {
        init_cwnd: 10,
        dupthresh: None,
        fixed_rto: true,
        probe_after: Some(3),
        notify: NotifyMode::Probe,
        ..cfg()
    };
    let mut s = TcpSender::new(&c, 100_000, PFabricCc::new(20_000));
    let mut out = Vec::new();
    s.start_(0, usize::MAX, &mut out);
    let mut t = 0;
    for _ in 0..3 {
        out.clear();
        t = s.timer().unwrap();
        s.timer_(t, usize::MAX, &mut out);
    }
    (s, out, t)
}

/// pFabric probe mode ends when new data is acknowledged: a probe lost on the way,
/// with the original head only delayed, kept the flow silent for `probe_after` more
/// timeouts (Turbo §4's stuck packet).
#[test]
fn an_ack_of_new_data_ends_pfabric_probe_mode() {
    let (mut s, mut out, t) = pfabric_in_probe_mode();
    assert!(
        out.iter().any(|o| o.probe),
        "probe mode after three timeouts"
    );
    out.clear();
    let ack = AckInfo {
        cum: 1000,
        ..Default::default()
    };
    s.ack_(t + 10, &ack, usize::MAX, &mut out);
    if out.is_empty() {
        let d = s.timer().unwrap();
        s.timer_(d, usize::MAX, &mut out);
    }
    assert!(
        out.iter().any(|o| !o.probe && o.len > 0),
        "data goes out by the next timeout: {out:?}"
    );
}

/// A probe that is never answered (lost, and its notification dropped too) must not
/// stop later FastLane probes (`NotifyMode::Probe`): its flag goes when new data ends
/// pFabric's probe mode, and at the next timeout otherwise. Before, a later
/// notification sent no probe, so its segment waited for a timeout, every time.
#[test]
fn a_lost_probe_does_not_silence_later_notifications() {
    let probed = |out: &[Segment]| out.iter().any(|o| o.probe);
    // pFabric: probe mode after three timeouts; its probe is lost, the delayed head's
    // ACK ends probe mode, then segment 5 is dropped and notified.
    let (mut s, mut out, t) = pfabric_in_probe_mode();
    assert!(probed(&out));
    out.clear();
    let ack = AckInfo {
        cum: 1000,
        ..Default::default()
    };
    s.ack_(t + 10, &ack, usize::MAX, &mut out);
    out.clear();
    let e = s.epoch();
    s.notify_(t + 20, 5000, e, usize::MAX, &mut out);
    assert!(probed(&out), "a probe for the notified segment: {out:?}");

    // FastLane probe mode alone: a notification's probe is lost with its own
    // notification; after the timeout, the next notification is probed for again.
    let c = TcpConfig {
        init_cwnd: 10,
        dupthresh: None,
        notify: NotifyMode::Probe,
        ..cfg()
    };
    let (mut s, mut r, mut out) = started_with(&c, 100_000, NewReno::default());
    r.on_data(1, data(0, 1000, 0, false, false));
    s.ack_(2, &r.make_ack(), usize::MAX, &mut out);
    out.clear();
    let e = s.epoch();
    s.notify_(3, 3000, e, usize::MAX, &mut out);
    assert!(probed(&out), "the first notification's probe");
    out.clear();
    let d = s.timer().unwrap();
    s.timer_(d, usize::MAX, &mut out);
    let resent: Vec<u64> = out.iter().filter(|o| !o.probe).map(|o| o.seq).collect();
    for seq in resent {
        r.on_data(d + 1, data(seq, 1000, d, true, false));
    }
    out.clear();
    s.ack_(d + 2, &r.make_ack(), usize::MAX, &mut out);
    let k = s.nxt() - 1000;
    out.clear();
    let e = s.epoch();
    s.notify_(d + 3, k, e, usize::MAX, &mut out);
    assert!(probed(&out), "a probe after the timeout: {out:?}");
}

/// RFC 8257 §3.5: DCTCP's echo cut is α-sized, so a loss in the same window still
/// halves the window as conventional TCP would (Linux's dctcp_react_to_loss); the
/// once-per-window rule of RFC 3168 holds for the others (the test above).
#[test]
fn a_dctcp_loss_halves_even_in_a_window_cut_for_an_echo() {
    use crate::transport::cc::dctcp::Dctcp;
    let (after_ecn, after_loss, resent) = ecn_then_loss(Dctcp::new(1.0 / 16.0));
    assert!(
        after_loss.0 < after_ecn.0,
        "{after_ecn:?} then {after_loss:?}"
    );
    assert!(resent);
}

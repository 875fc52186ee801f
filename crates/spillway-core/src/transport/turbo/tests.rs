//! The variants' state machines (Turbo §4.2), driven by hand: what each sends after a
//! timeout, an ACK, a probe's echo.

use super::*;
use crate::transport::connection::AckInfo;

const MSS: u64 = 1460;
const RTO: Ps = 9_500_000;

fn cfg(per_packet: bool, on_timeout: OnTimeout, probe_spacing: bool) -> TurboConfig {
    TurboConfig {
        mss: MSS as u32,
        header_bytes: 40,
        rto: RTO,
        per_packet,
        on_timeout,
        probe_spacing,
        ack_deflates: true,
        data_class: 0,
        ack_class: 0,
    }
}

fn t1() -> TurboConfig {
    cfg(false, OnTimeout::Inflate, false)
}
fn t2() -> TurboConfig {
    cfg(false, OnTimeout::Stop, false)
}
fn t3() -> TurboConfig {
    cfg(true, OnTimeout::Inflate, false)
}
fn t4() -> TurboConfig {
    cfg(true, OnTimeout::Inflate, true)
}

fn sender(c: &TurboConfig, segs: u64) -> TurboSender {
    TurboSender::new(c, segs * MSS, 0)
}

/// Sends `n` segments (one poll each, as the NIC frees its slot).
fn send(s: &mut TurboSender, now: Ps, n: usize) -> Vec<Segment> {
    let mut out = Vec::new();
    for _ in 0..n {
        s.poll_transmit(now, 1, &mut out);
    }
    out
}

/// An ACK: cumulative to segment `cum`, SACKing segment ranges `sack`.
fn ack(cum: u64, sack: &[(u64, u64)]) -> AckInfo {
    let mut a = AckInfo {
        cum: cum * MSS,
        nsack: sack.len() as u8,
        ..Default::default()
    };
    for (i, &(l, r)) in sack.iter().enumerate() {
        a.sack[i] = (l * MSS, r * MSS);
    }
    a
}

fn seg_numbers(segs: &[Segment]) -> Vec<u64> {
    segs.iter()
        .filter(|s| !s.probe)
        .map(|s| s.seq / MSS)
        .collect()
}

#[test]
fn priority_is_the_remaining_size_and_falls_with_acks_and_sacks() {
    let mut s = sender(&t1(), 10);
    let out = send(&mut s, 0, 3);
    assert!(out
        .iter()
        .all(|x| x.prio == 10 * MSS && !x.retx && !x.probe));
    assert_eq!(
        out.iter().map(|x| x.ip_bytes).collect::<Vec<_>>(),
        [1500; 3]
    );
    s.on_ack(1, &ack(1, &[]));
    s.on_ack(2, &ack(1, &[(2, 3)]));
    // Segment 0 acknowledged, segment 2 SACKed: 8 segments left.
    assert_eq!(s.remaining(), 8 * MSS);
    assert_eq!(send(&mut s, 3, 1)[0].prio, 8 * MSS);
}

#[test]
fn t1_timeout_inflates_past_the_cliff_resends_unsacked_from_the_hole_and_probes() {
    let mut s = sender(&t1(), 10);
    send(&mut s, 0, 6);
    assert_eq!(s.timer(), Some(RTO));
    // Segments 0 and 3 lost; 1, 2, 4, 5 SACKed.
    s.on_ack(100, &ack(0, &[(1, 3), (4, 6)]));
    s.on_timeout(RTO);
    assert!(s.inflated());
    assert_eq!(s.timeouts(), 1);
    let out = send(&mut s, RTO, 5);
    // The probe first, at the true priority (4 segments SACKed of 10: 6 left)...
    assert!(out[0].probe && out[0].len == 0 && out[0].prio == 6 * MSS);
    assert_eq!(out[0].ip_bytes, 40);
    // ...then the holes, never the SACKed data, then new data; all past the cliff.
    assert_eq!(seg_numbers(&out), [0, 3, 6, 7]);
    assert!(out[1..].iter().all(|x| x.prio == CLIFF + 6 * MSS));
    assert!(out[1].retx && out[2].retx && !out[3].retx);
    // Every inflated packet ranks below every uninflated one, even a whole flow's.
    assert!(out[1].prio > u32::MAX as u64 * 1_000_000);
    // The timer restarted from the timeout.
    assert_eq!(s.timer(), Some(2 * RTO));
}

#[test]
fn inflation_ends_with_a_probe_echo_or_with_a_new_cumulative_ack() {
    let mut s = sender(&t1(), 10);
    send(&mut s, 0, 2);
    s.on_timeout(RTO);
    assert!(s.inflated());
    s.on_probe_echo(RTO + 5);
    assert!(!s.inflated());
    s.on_timeout(2 * RTO + 5);
    assert!(s.inflated());
    assert_eq!(s.inflations(), 2);
    // SACK news alone does not deflate; a new cumulative ACK does.
    s.on_ack(2 * RTO + 10, &ack(0, &[(1, 2)]));
    assert!(s.inflated());
    s.on_ack(2 * RTO + 20, &ack(2, &[]));
    assert!(!s.inflated());

    // With `ack_deflates = false`, only the echo does.
    let mut c = t1();
    c.ack_deflates = false;
    let mut s = sender(&c, 10);
    send(&mut s, 0, 2);
    s.on_timeout(RTO);
    s.on_ack(RTO + 10, &ack(2, &[]));
    assert!(s.inflated());
    s.on_probe_echo(RTO + 20);
    assert!(!s.inflated());
}

#[test]
fn t2_stops_sends_only_a_probe_per_rto_then_resumes_from_the_hole_uninflated() {
    let mut s = sender(&t2(), 20);
    send(&mut s, 0, 4);
    s.on_ack(10, &ack(1, &[(2, 3)]));
    s.on_timeout(10 + RTO);
    assert!(s.stopped() && !s.inflated());
    let mut t = 10 + RTO;
    for round in 0..4 {
        // Only the probe, however much room the NIC has.
        let out = send(&mut s, t, 5);
        assert_eq!(out.len(), 1, "round {round}");
        assert!(out[0].probe);
        assert!(!s.has_work());
        assert_eq!(s.timer(), Some(t + RTO));
        t += RTO;
        s.on_timeout(t);
    }
    assert_eq!(s.probes(), 4);
    // The echo: resume from the first hole (segment 1), skipping SACKed segment 2, at
    // the true priority (2 of 20 delivered).
    s.on_probe_echo(t + 1);
    assert!(!s.stopped());
    let out = send(&mut s, t + 1, 3);
    assert_eq!(seg_numbers(&out), [1, 3, 4]);
    assert!(out.iter().all(|x| x.prio == 18 * MSS));
    assert!(out[0].retx && out[1].retx && !out[2].retx);
}

#[test]
fn t2_resumes_on_an_ack_with_news_too() {
    let mut s = sender(&t2(), 20);
    send(&mut s, 0, 3);
    s.on_timeout(RTO);
    assert!(s.stopped());
    send(&mut s, RTO, 1);
    // A late SACK for segment 1: the path delivers.
    s.on_ack(RTO + 3, &ack(0, &[(1, 2)]));
    assert!(!s.stopped());
    assert_eq!(seg_numbers(&send(&mut s, RTO + 3, 3)), [0, 2, 3]);
}

#[test]
fn t3_resends_only_the_expired_packets_before_new_data() {
    let mut s = sender(&t3(), 20);
    // Segments 0..4 at t = 0, 10, 20, 30.
    for i in 0..4 {
        send(&mut s, i * 10, 1);
    }
    assert_eq!(s.timer(), Some(RTO));
    // Segment 1 and 3 delivered (SACKed); 0 and 2 not.
    s.on_ack(100, &ack(0, &[(1, 2), (3, 4)]));
    // Only segment 0 has expired at RTO + 5.
    s.on_timeout(RTO + 5);
    assert!(s.inflated());
    let out = send(&mut s, RTO + 5, 3);
    assert!(out[0].probe);
    assert_eq!(seg_numbers(&out), [0, 4]);
    // The next deadline is segment 2's.
    assert_eq!(s.timer(), Some(20 + RTO));
    s.on_timeout(20 + RTO);
    let out = send(&mut s, 20 + RTO, 2);
    assert!(out[0].probe, "T3 probes at every expiry");
    assert_eq!(seg_numbers(&out), [2]);
    assert_eq!(s.retransmits(), 2);
}

#[test]
fn t3_a_resent_packet_gets_a_fresh_deadline_and_an_old_one_does_not_fire() {
    let mut s = sender(&t3(), 5);
    send(&mut s, 0, 1);
    s.on_timeout(RTO);
    send(&mut s, RTO, 2); // probe, then segment 0 again
                          // The first transmission's deadline is gone; the resend's is at 2 RTO.
    assert_eq!(s.timer(), Some(2 * RTO));
    s.on_ack(RTO + 100, &ack(1, &[]));
    // Delivered: no deadline left until more is sent.
    assert_eq!(s.timer(), None);
}

#[test]
fn t4_probes_at_most_once_per_rto() {
    let mut s = sender(&t4(), 20);
    for i in 0..6 {
        send(&mut s, i * 1_000_000, 1);
    }
    // Expiries at RTO, RTO + 1 us, ...: one probe, then none until an RTO has passed.
    let mut probes = Vec::new();
    for i in 0..6 {
        let now = RTO + i * 1_000_000;
        s.on_timeout(now);
        let out = send(&mut s, now, 3);
        if out.iter().any(|x| x.probe) {
            probes.push(now);
        }
    }
    assert_eq!(probes, [RTO]);
    // T3 under the same expiries probes every time.
    let mut s = sender(&t3(), 20);
    for i in 0..6 {
        send(&mut s, i * 1_000_000, 1);
    }
    let mut n = 0;
    for i in 0..6 {
        let now = RTO + i * 1_000_000;
        s.on_timeout(now);
        n += send(&mut s, now, 3).iter().filter(|x| x.probe).count();
    }
    assert_eq!(n, 6);
    // After an RTO, T4 probes again.
    let mut s = sender(&t4(), 20);
    send(&mut s, 0, 1);
    s.on_timeout(RTO);
    send(&mut s, RTO, 2);
    s.on_timeout(2 * RTO);
    assert!(send(&mut s, 2 * RTO, 2)[0].probe);
}

#[test]
fn sacked_data_is_never_resent_by_any_variant() {
    for c in [t1(), t2(), t3(), t4()] {
        let mut s = sender(&c, 40);
        send(&mut s, 0, 30);
        // Even segments delivered, odd ones lost: SACKed in blocks of one.
        let mut sacked = Vec::new();
        for k in (2..30).step_by(2) {
            let blocks: Vec<(u64, u64)> = [(k, k + 1)].to_vec();
            s.on_ack(10 + k, &ack(1, &blocks));
            sacked.push(k);
        }
        let mut t = 100;
        let mut resent = Vec::new();
        for _ in 0..6 {
            t += RTO;
            s.on_timeout(t);
            s.on_probe_echo(t + 1);
            resent.extend(seg_numbers(&send(&mut s, t + 1, 50)));
        }
        assert!(
            resent.iter().all(|k| !sacked.contains(k)),
            "{c:?}: resent {resent:?}"
        );
        assert!(
            resent.contains(&1) && resent.contains(&29),
            "{c:?}: {resent:?}"
        );
    }
}

#[test]
fn the_cliff_orders_inflated_flows_by_remaining_size_below_every_true_priority() {
    let mut big = sender(&t1(), 100_000);
    let mut small = sender(&t1(), 3);
    send(&mut big, 0, 1);
    send(&mut small, 0, 1);
    small.on_timeout(RTO);
    let inflated_small = send(&mut small, RTO, 2)[1].prio;
    let true_big = send(&mut big, RTO, 1)[0].prio;
    assert!(inflated_small > true_big);
    big.on_timeout(2 * RTO);
    let inflated_big = send(&mut big, 2 * RTO, 2)[1].prio;
    assert!(inflated_big > inflated_small);
}

#[test]
fn a_connection_finishes_when_every_segment_is_acknowledged() {
    let c = t1();
    let mut conn = TurboConnection::new(&c, 3 * MSS + 100, None);
    let mut out = Vec::new();
    for _ in 0..5 {
        conn.poll_transmit(0, 1, &mut out);
    }
    assert_eq!(out.len(), 4);
    assert_eq!(out[3].len, 100);
    for (i, s) in out.iter().enumerate() {
        conn.handle(
            i as Ps,
            Input::Data(crate::transport::connection::Data {
                seq: s.seq,
                len: s.len,
                ts: s.ts,
                retx: false,
                ce: false,
            }),
        );
        let a = conn.poll_ack();
        assert_eq!(a.ip_bytes, 40);
        conn.handle(i as Ps, Input::Ack(&a.info));
    }
    assert!(conn.finished());
    assert_eq!(conn.poll_timeout(), None);
    assert!(!conn.wants_poll(1));
}

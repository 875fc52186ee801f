//! FCP wire format: every message kind round-trips through `encode`/`decode` at the
//! length its constants give; decoding arbitrary or mutated bytes returns an error or a
//! message, never a panic; the checksum rejects a wrong nonce and corrupted bytes.

use proptest::prelude::*;
use spillway_arbiter::fcp::wire::*;

fn arb_body() -> impl Strategy<Value = Body> {
    let demand = (any::<u32>(), any::<u64>()).prop_map(|(dst, total)| Demand { dst, total });
    let grant = (any::<u16>(), any::<u16>(), any::<u32>())
        .prop_map(|(offset, path, dst)| SlotGrant { offset, path, dst });
    let totals =
        (any::<u32>(), any::<u64>(), any::<u64>()).prop_map(|(dst, requested, allocated)| Totals {
            dst,
            requested,
            allocated,
        });
    prop_oneof![
        prop::collection::vec(demand.clone(), 0..=MAX_REPORT_ENTRIES).prop_map(Body::Report),
        prop::collection::vec(demand, 0..=MAX_REPORT_ENTRIES).prop_map(Body::Query),
        (
            (any::<u64>(), any::<u32>(), any::<u32>()),
            prop::collection::vec(grant, 0..=MAX_GRANTS),
            prop::collection::vec(totals, 0..=MAX_TOTALS)
        )
            .prop_map(|((base, ack, ack_vec), grants, totals)| Body::Alloc(Alloc {
                base,
                ack,
                ack_vec,
                grants,
                totals
            })),
        Just(Body::ResetRequest),
        any::<u64>().prop_map(|nonce| Body::Reset { nonce }),
        any::<u64>().prop_map(|nonce| Body::ResetAck { nonce }),
        Just(Body::Watchdog),
    ]
}

fn arb_msg() -> impl Strategy<Value = Msg> {
    (
        any::<u32>(),
        any::<u32>(),
        any::<u32>(),
        any::<u64>(),
        arb_body(),
    )
        .prop_map(|(epoch, seq, endpoint, nonce, body)| {
            let mut m = Msg {
                epoch,
                seq,
                endpoint,
                nonce,
                body,
            };
            m.nonce = m.key();
            m
        })
}

fn encode(m: &Msg) -> Vec<u8> {
    let mut buf = vec![0; MAX_MSG_LEN];
    let n = m.encode(&mut buf).expect("valid message encodes");
    buf.truncate(n);
    buf
}

#[test]
fn sizes() {
    assert_eq!(HEADER_LEN, 24);
    assert_eq!(report_len(0), 26);
    assert_eq!(report_len(1), 38);
    assert_eq!(report_len(MAX_REPORT_ENTRIES), 1226);
    assert_eq!(alloc_len(0, 0), 44);
    assert_eq!(alloc_len(1, 1), 72);
    assert_eq!(alloc_len(MAX_GRANTS, MAX_TOTALS), 1196);
    assert_eq!(MAX_MSG_LEN, 1226);
    assert_eq!(RESET_REQUEST_LEN, 24);
    assert_eq!(RESET_LEN, 32);
    assert_eq!(RESET_ACK_LEN, 32);
    assert_eq!(WATCHDOG_LEN, 24);
    // Every message fits a 1500-byte MTU with IP and UDP headers.
    const { assert!(MAX_MSG_LEN + 28 <= 1500) };
}

#[test]
fn every_kind_round_trips() {
    let bodies = [
        Body::Report(vec![Demand {
            dst: 7,
            total: u64::MAX,
        }]),
        Body::Query(vec![Demand { dst: 8, total: 3 }]),
        Body::Alloc(Alloc {
            base: 1 << 40,
            ack: u32::MAX,
            ack_vec: 0x8000_0001,
            grants: vec![SlotGrant {
                offset: 3,
                path: 2,
                dst: 9,
            }],
            totals: vec![Totals {
                dst: 9,
                requested: 5,
                allocated: 4,
            }],
        }),
        Body::ResetRequest,
        Body::Reset { nonce: 0xdead },
        Body::ResetAck { nonce: 0xbeef },
        Body::Watchdog,
    ];
    for body in bodies {
        let mut m = Msg {
            epoch: 3,
            seq: 17,
            endpoint: 5,
            nonce: 0x1234_5678,
            body,
        };
        m.nonce = m.key();
        let b = encode(&m);
        assert_eq!(b.len(), m.wire_len());
        assert_eq!(peek(&b).unwrap().kind, m.kind());
        assert_eq!(decode(&b, 0x1234_5678), Ok(m));
    }
}

#[test]
fn typed_errors() {
    let m = Msg {
        epoch: 1,
        seq: 1,
        endpoint: 1,
        nonce: 99,
        body: Body::Report(vec![Demand { dst: 2, total: 3 }]),
    };
    let b = encode(&m);
    assert!(matches!(
        decode(&b[..10], 99),
        Err(DecodeError::Truncated { .. })
    ));
    assert!(matches!(
        decode(&b[..b.len() - 1], 99),
        Err(DecodeError::Length { .. })
    ));
    let mut v = b.clone();
    v[0] = 1;
    assert_eq!(
        decode(&v, 99),
        Err(DecodeError::Version(1)),
        "version 1 is refused"
    );
    let mut v = b.clone();
    v[1] = 0;
    assert_eq!(decode(&v, 99), Err(DecodeError::Kind(0)));
    // An oversized count, the length field matching the bytes.
    let mut v = b.clone();
    v[24..26].copy_from_slice(&1000u16.to_be_bytes());
    assert!(matches!(
        decode(&v, 99),
        Err(DecodeError::TooManyEntries { count: 1000, .. })
    ));
    // A count the bytes do not hold.
    let mut v = b.clone();
    v[24..26].copy_from_slice(&2u16.to_be_bytes());
    assert!(matches!(decode(&v, 99), Err(DecodeError::Truncated { .. })));
    let mut v = b.clone();
    v[30] ^= 1;
    assert_eq!(decode(&v, 99), Err(DecodeError::Checksum));
    assert_eq!(decode(&b, 98), Err(DecodeError::Checksum));
    assert_eq!(decode(&b, 99), Ok(m));
    // Encoding refuses what it cannot represent.
    let big = Msg {
        epoch: 0,
        seq: 0,
        endpoint: 0,
        nonce: 0,
        body: Body::Report(vec![Demand { dst: 0, total: 0 }; MAX_REPORT_ENTRIES + 1]),
    };
    assert!(matches!(
        big.encode(&mut [0; 4096]),
        Err(EncodeError::TooManyEntries { .. })
    ));
    assert!(matches!(
        Msg {
            body: Body::Watchdog,
            ..big
        }
        .encode(&mut [0; 10]),
        Err(EncodeError::BufferTooSmall { need: 24, got: 10 })
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn round_trip(m in arb_msg()) {
        let b = encode(&m);
        prop_assert_eq!(b.len(), m.wire_len());
        prop_assert_eq!(decode(&b, m.nonce), Ok(m));
    }

    /// Session messages verify only under their own nonce; control messages under any
    /// (they are keyed with the control nonce).
    #[test]
    fn wrong_nonce_rejected(m in arb_msg(), other in any::<u64>()) {
        let b = encode(&m);
        if m.kind().is_session() && other != m.nonce {
            prop_assert_eq!(decode(&b, other), Err(DecodeError::Checksum));
        } else {
            prop_assert_eq!(decode(&b, other), Ok(m));
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(b in prop::collection::vec(any::<u8>(), 0..1400), n in any::<u64>()) {
        let _ = decode(&b, n);
        let _ = peek(&b);
    }

    /// Valid messages with bytes changed, truncated or extended: an error or a message
    /// of the declared kind, never a panic; a change that leaves the structure valid is
    /// caught by the checksum.
    #[test]
    fn mutated_messages_never_panic(
        m in arb_msg(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
        extend in prop::collection::vec(any::<u8>(), 0..16),
    ) {
        let orig = encode(&m);
        let mut b = orig.clone();
        for (i, v) in &edits {
            let i = i.index(b.len());
            b[i] = *v;
        }
        let _ = decode(&b[..cut.index(b.len() + 1)], m.nonce);
        let mut l = b.clone();
        l.extend_from_slice(&extend);
        let _ = decode(&l, m.nonce);
        if b != orig && b[16..24] == orig[16..24] {
            // Payload or covered header bytes changed, checksum field untouched.
            prop_assert!(decode(&b, m.nonce).is_err());
        }
    }
}

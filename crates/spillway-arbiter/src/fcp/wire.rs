//! FCP wire format: fixed layout, big-endian, versioned, every size known in advance.
//!
//! Every message starts with the same 24-byte header:
//!
//! | offset | size | field |
//! | --- | --- | --- |
//! | 0 | 1 | version ([`VERSION`]) |
//! | 1 | 1 | kind ([`Kind`]) |
//! | 2 | 2 | length of the whole message in bytes |
//! | 4 | 4 | epoch of the arbiter the message belongs to |
//! | 8 | 4 | sequence number (per sender and peer, wrapping) |
//! | 12 | 4 | endpoint id (the endpoint sending or addressed; the arbiter's rank in a watchdog) |
//! | 16 | 8 | checksum ([`checksum`]) |
//!
//! The checksum is FNV-1a (64 bits) over bytes 0..16 and the body, its state seeded with
//! the nonce agreed at the last reset. Session messages (report, query, allocation,
//! reset ack) are keyed with the session nonce; control messages (reset request, reset, watchdog),
//! which must be readable by a peer that is out of sync, with [`CONTROL_NONCE`] (0). Each
//! FNV step is a bijection of the state, so the same bytes under two different nonces
//! always have different checksums: a wrong nonce is always rejected.
//!
//! The simulator need not encode: a [`Msg`] carries the nonce it is keyed with
//! ([`Msg::nonce`], not on the wire) and the receiver compares it with its own, which is
//! what checking the checksum amounts to; [`Msg::wire_len`] gives the packet length.

/// Wire format version (2: allocations acknowledge the endpoint's messages by sequence
/// number, and a query asks for the arbiter's counts).
pub const VERSION: u8 = 2;
/// Bytes of the common header.
pub const HEADER_LEN: usize = 24;
/// Nonce keying the checksum of control messages (reset request, reset, watchdog).
pub const CONTROL_NONCE: u64 = 0;

/// Report: header, entry count (u16), entries.
pub const REPORT_FIXED_LEN: usize = HEADER_LEN + 2;
/// One report entry: destination (u32), running total requested (u64).
pub const REPORT_ENTRY_LEN: usize = 12;
/// Most entries in one report (a report of this many is [`report_len`]`(100)` = 1226 bytes).
pub const MAX_REPORT_ENTRIES: usize = 100;

/// Allocation: header, base timeslot (u64), ack (u32), ack vector (u32), grant count
/// (u16), totals count (u16).
pub const ALLOC_FIXED_LEN: usize = HEADER_LEN + 20;
/// One grant: slot offset from the base (u16), path id (u16), destination (u32).
pub const GRANT_LEN: usize = 8;
/// One totals entry: destination (u32), requested total the arbiter holds (u64),
/// allocated total (u64), both in the endpoint's count.
pub const TOTALS_LEN: usize = 20;
/// Most grants in one allocation: a batch's width ([`crate::MAX_WIDTH`]); a source has at
/// most one grant per timeslot.
pub const MAX_GRANTS: usize = 64;
/// Most totals entries in one allocation (more are split over several messages).
pub const MAX_TOTALS: usize = 32;

/// Reset request (endpoint to arbiter): header only.
pub const RESET_REQUEST_LEN: usize = HEADER_LEN;
/// Reset (arbiter to endpoint): header, new nonce (u64).
pub const RESET_LEN: usize = HEADER_LEN + 8;
/// Reset ack (endpoint to arbiter): header, the nonce adopted (u64).
pub const RESET_ACK_LEN: usize = HEADER_LEN + 8;
/// Watchdog (arbiter to the arbiters' group): header only.
pub const WATCHDOG_LEN: usize = HEADER_LEN;

/// Bytes of a report of `entries` destinations.
pub const fn report_len(entries: usize) -> usize {
    REPORT_FIXED_LEN + REPORT_ENTRY_LEN * entries
}

/// Bytes of an allocation of `grants` grants and `totals` totals entries.
pub const fn alloc_len(grants: usize, totals: usize) -> usize {
    ALLOC_FIXED_LEN + GRANT_LEN * grants + TOTALS_LEN * totals
}

/// Largest message: a full report (1226 bytes; a full allocation is 1196).
pub const MAX_MSG_LEN: usize = {
    let r = report_len(MAX_REPORT_ENTRIES);
    let a = alloc_len(MAX_GRANTS, MAX_TOTALS);
    if r > a {
        r
    } else {
        a
    }
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    Report = 1,
    Alloc = 2,
    ResetRequest = 3,
    Reset = 4,
    ResetAck = 5,
    Watchdog = 6,
    Query = 7,
}

impl Kind {
    pub fn from_u8(b: u8) -> Option<Kind> {
        Some(match b {
            1 => Kind::Report,
            2 => Kind::Alloc,
            3 => Kind::ResetRequest,
            4 => Kind::Reset,
            5 => Kind::ResetAck,
            6 => Kind::Watchdog,
            7 => Kind::Query,
            _ => return None,
        })
    }

    /// Whether the checksum is keyed with the session nonce (else [`CONTROL_NONCE`]).
    pub fn is_session(self) -> bool {
        matches!(
            self,
            Kind::Report | Kind::Query | Kind::Alloc | Kind::ResetAck
        )
    }
}

/// Per destination: a running total (modular u64, §5.3), in the endpoint's count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Demand {
    pub dst: u32,
    pub total: u64,
}

/// One allocated timeslot for the addressed endpoint: send to `dst` in timeslot
/// `base + offset` along path `path` (the caller's path selection's id).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotGrant {
    pub offset: u16,
    pub path: u16,
    pub dst: u32,
}

/// The arbiter's counts for one destination, in the endpoint's count: the last total it
/// accepted (`requested`, an ack of reports) and how many timeslots it has allocated
/// (`allocated`, so the endpoint can detect lost allocations).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Totals {
    pub dst: u32,
    pub requested: u64,
    pub allocated: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alloc {
    pub base: u64,
    /// The sequence number of the addressed endpoint's latest message the arbiter has
    /// verified, and (bit i) whether message `ack - 1 - i` was verified too: the
    /// acknowledgement of its reports (§5.3), whatever they carried.
    pub ack: u32,
    pub ack_vec: u32,
    pub grants: Vec<SlotGrant>,
    pub totals: Vec<Totals>,
}

impl Alloc {
    /// Whether the endpoint's message `seq` is acknowledged.
    pub fn acks(&self, seq: u32) -> bool {
        match self.ack.wrapping_sub(seq) {
            0 => true,
            d @ 1..=32 => self.ack_vec & (1 << (d - 1)) != 0,
            _ => false,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// Endpoint to arbiter: running totals, batched.
    Report(Vec<Demand>),
    /// Endpoint to arbiter: running totals, and the arbiter's counts for them wanted in
    /// answer (the endpoint may have missed allocations: §5.3).
    Query(Vec<Demand>),
    /// Arbiter to endpoint: grants and the counts behind them.
    Alloc(Alloc),
    /// Endpoint to arbiter: please reset me (at start, or after a burst of bad checksums).
    ResetRequest,
    /// Arbiter to endpoint: counts are zero from now, checksums keyed with `nonce`.
    Reset { nonce: u64 },
    /// Endpoint to arbiter: `nonce` adopted.
    ResetAck { nonce: u64 },
    /// Arbiter to arbiters: the primary of `epoch` is alive.
    Watchdog,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Msg {
    pub epoch: u32,
    pub seq: u32,
    /// The endpoint sending or addressed (a watchdog: the sending arbiter's rank).
    pub endpoint: u32,
    /// The nonce keying the checksum: not on the wire (decoding fills in the one that
    /// verified). [`CONTROL_NONCE`] for control kinds.
    pub nonce: u64,
    pub body: Body,
}

/// Why bytes are not a message. Decoding never panics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Fewer bytes than the header or the body's counts need.
    Truncated {
        need: usize,
        got: usize,
    },
    Version(u8),
    Kind(u8),
    /// The header's length field is not the number of bytes received, or not what the
    /// body's counts make.
    Length {
        declared: usize,
        actual: usize,
    },
    /// A count above the kind's maximum.
    TooManyEntries {
        kind: Kind,
        count: usize,
        max: usize,
    },
    /// The checksum does not verify under the expected nonce.
    Checksum,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            DecodeError::Truncated { need, got } => {
                write!(f, "truncated FCP message: {got} bytes, need {need}")
            }
            DecodeError::Version(v) => write!(f, "FCP version {v}, expected {VERSION}"),
            DecodeError::Kind(k) => write!(f, "unknown FCP message kind {k}"),
            DecodeError::Length { declared, actual } => {
                write!(f, "FCP length {declared} but {actual} bytes")
            }
            DecodeError::TooManyEntries { kind, count, max } => {
                write!(f, "FCP {kind:?} with {count} entries, at most {max}")
            }
            DecodeError::Checksum => write!(f, "FCP checksum mismatch"),
        }
    }
}
impl std::error::Error for DecodeError {}

/// Why a message cannot be encoded (a caller's error, still not a panic).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncodeError {
    BufferTooSmall {
        need: usize,
        got: usize,
    },
    TooManyEntries {
        kind: Kind,
        count: usize,
        max: usize,
    },
}

impl std::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            EncodeError::BufferTooSmall { need, got } => {
                write!(f, "buffer of {got} bytes, FCP message needs {need}")
            }
            EncodeError::TooManyEntries { kind, count, max } => {
                write!(f, "FCP {kind:?} with {count} entries, at most {max}")
            }
        }
    }
}
impl std::error::Error for EncodeError {}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

/// The checksum of an encoded message (`msg.len() >= HEADER_LEN`; the checksum field
/// itself is skipped) keyed with `nonce`.
pub fn checksum(msg: &[u8], nonce: u64) -> u64 {
    let h = FNV_OFFSET ^ nonce;
    let h = fnv(h, msg.get(..16).unwrap_or(msg));
    fnv(h, msg.get(HEADER_LEN..).unwrap_or(&[]))
}

impl Msg {
    pub fn kind(&self) -> Kind {
        match self.body {
            Body::Report(_) => Kind::Report,
            Body::Query(_) => Kind::Query,
            Body::Alloc(_) => Kind::Alloc,
            Body::ResetRequest => Kind::ResetRequest,
            Body::Reset { .. } => Kind::Reset,
            Body::ResetAck { .. } => Kind::ResetAck,
            Body::Watchdog => Kind::Watchdog,
        }
    }

    /// Bytes on the wire (what the simulator charges for the packet).
    pub fn wire_len(&self) -> usize {
        match &self.body {
            Body::Report(d) | Body::Query(d) => report_len(d.len()),
            Body::Alloc(a) => alloc_len(a.grants.len(), a.totals.len()),
            Body::ResetRequest => RESET_REQUEST_LEN,
            Body::Reset { .. } => RESET_LEN,
            Body::ResetAck { .. } => RESET_ACK_LEN,
            Body::Watchdog => WATCHDOG_LEN,
        }
    }

    /// The nonce the checksum is keyed with: `self.nonce` for session kinds, else
    /// [`CONTROL_NONCE`].
    pub fn key(&self) -> u64 {
        if self.kind().is_session() {
            self.nonce
        } else {
            CONTROL_NONCE
        }
    }

    /// Encode into `buf`; returns the bytes written.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        let kind = self.kind();
        let too_many = |count: usize, max: usize| {
            if count > max {
                Err(EncodeError::TooManyEntries { kind, count, max })
            } else {
                Ok(())
            }
        };
        match &self.body {
            Body::Report(d) | Body::Query(d) => too_many(d.len(), MAX_REPORT_ENTRIES)?,
            Body::Alloc(a) => {
                too_many(a.grants.len(), MAX_GRANTS)?;
                too_many(a.totals.len(), MAX_TOTALS)?;
            }
            _ => {}
        }
        let len = self.wire_len();
        if buf.len() < len {
            return Err(EncodeError::BufferTooSmall {
                need: len,
                got: buf.len(),
            });
        }
        let mut w = Writer { buf, at: 0 };
        w.u8(VERSION);
        w.u8(kind as u8);
        w.u16(len as u16);
        w.u32(self.epoch);
        w.u32(self.seq);
        w.u32(self.endpoint);
        w.u64(0);
        match &self.body {
            Body::Report(d) | Body::Query(d) => {
                w.u16(d.len() as u16);
                for e in d {
                    w.u32(e.dst);
                    w.u64(e.total);
                }
            }
            Body::Alloc(a) => {
                w.u64(a.base);
                w.u32(a.ack);
                w.u32(a.ack_vec);
                w.u16(a.grants.len() as u16);
                w.u16(a.totals.len() as u16);
                for g in &a.grants {
                    w.u16(g.offset);
                    w.u16(g.path);
                    w.u32(g.dst);
                }
                for t in &a.totals {
                    w.u32(t.dst);
                    w.u64(t.requested);
                    w.u64(t.allocated);
                }
            }
            Body::Reset { nonce } | Body::ResetAck { nonce } => w.u64(*nonce),
            Body::ResetRequest | Body::Watchdog => {}
        }
        debug_assert_eq!(w.at, len);
        let c = checksum(&buf[..len], self.key());
        buf[16..24].copy_from_slice(&c.to_be_bytes());
        Ok(len)
    }
}

struct Writer<'a> {
    buf: &'a mut [u8],
    at: usize,
}

impl Writer<'_> {
    fn put(&mut self, b: &[u8]) {
        self.buf[self.at..self.at + b.len()].copy_from_slice(b);
        self.at += b.len();
    }
    fn u8(&mut self, v: u8) {
        self.put(&[v]);
    }
    fn u16(&mut self, v: u16) {
        self.put(&v.to_be_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.put(&v.to_be_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.put(&v.to_be_bytes());
    }
}

/// A bounds-checked reader: every read is a `Result`.
struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let end = self.at + N;
        let s = self.buf.get(self.at..end).ok_or(DecodeError::Truncated {
            need: end,
            got: self.buf.len(),
        })?;
        self.at = end;
        let mut a = [0; N];
        a.copy_from_slice(s);
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take::<1>()?[0])
    }
    fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(self.take()?))
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.take()?))
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_be_bytes(self.take()?))
    }
}

/// The header fields of a message, read without verifying the checksum: the arbiter
/// reads the endpoint id to find which nonce to verify with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub kind: Kind,
    pub len: usize,
    pub epoch: u32,
    pub seq: u32,
    pub endpoint: u32,
    pub checksum: u64,
}

/// Read and check the header: version, kind, and that the length field is the number of
/// bytes given.
pub fn peek(bytes: &[u8]) -> Result<Header, DecodeError> {
    let mut r = Reader { buf: bytes, at: 0 };
    let version = r.u8()?;
    if version != VERSION {
        return Err(DecodeError::Version(version));
    }
    let k = r.u8()?;
    let kind = Kind::from_u8(k).ok_or(DecodeError::Kind(k))?;
    let len = r.u16()? as usize;
    let epoch = r.u32()?;
    let seq = r.u32()?;
    let endpoint = r.u32()?;
    let checksum = r.u64()?;
    if len != bytes.len() {
        return Err(DecodeError::Length {
            declared: len,
            actual: bytes.len(),
        });
    }
    Ok(Header {
        kind,
        len,
        epoch,
        seq,
        endpoint,
        checksum,
    })
}

/// Decode a message whose session kinds are keyed with `nonce` (control kinds are always
/// keyed with [`CONTROL_NONCE`]). Never panics; any malformed input is a [`DecodeError`].
pub fn decode(bytes: &[u8], nonce: u64) -> Result<Msg, DecodeError> {
    let h = peek(bytes)?;
    let key = if h.kind.is_session() {
        nonce
    } else {
        CONTROL_NONCE
    };
    let mut r = Reader {
        buf: bytes,
        at: HEADER_LEN,
    };
    let check_count = |count: usize, max: usize| {
        if count > max {
            Err(DecodeError::TooManyEntries {
                kind: h.kind,
                count,
                max,
            })
        } else {
            Ok(())
        }
    };
    let body = match h.kind {
        Kind::Report | Kind::Query => {
            let n = r.u16()? as usize;
            check_count(n, MAX_REPORT_ENTRIES)?;
            exact(report_len(n), bytes.len())?;
            let mut d = Vec::with_capacity(n);
            for _ in 0..n {
                d.push(Demand {
                    dst: r.u32()?,
                    total: r.u64()?,
                });
            }
            if h.kind == Kind::Query {
                Body::Query(d)
            } else {
                Body::Report(d)
            }
        }
        Kind::Alloc => {
            let base = r.u64()?;
            let ack = r.u32()?;
            let ack_vec = r.u32()?;
            let g = r.u16()? as usize;
            let t = r.u16()? as usize;
            check_count(g, MAX_GRANTS)?;
            check_count(t, MAX_TOTALS)?;
            exact(alloc_len(g, t), bytes.len())?;
            let mut grants = Vec::with_capacity(g);
            for _ in 0..g {
                grants.push(SlotGrant {
                    offset: r.u16()?,
                    path: r.u16()?,
                    dst: r.u32()?,
                });
            }
            let mut totals = Vec::with_capacity(t);
            for _ in 0..t {
                totals.push(Totals {
                    dst: r.u32()?,
                    requested: r.u64()?,
                    allocated: r.u64()?,
                });
            }
            Body::Alloc(Alloc {
                base,
                ack,
                ack_vec,
                grants,
                totals,
            })
        }
        Kind::ResetRequest => {
            exact(RESET_REQUEST_LEN, bytes.len())?;
            Body::ResetRequest
        }
        Kind::Reset => {
            exact(RESET_LEN, bytes.len())?;
            Body::Reset { nonce: r.u64()? }
        }
        Kind::ResetAck => {
            exact(RESET_ACK_LEN, bytes.len())?;
            Body::ResetAck { nonce: r.u64()? }
        }
        Kind::Watchdog => {
            exact(WATCHDOG_LEN, bytes.len())?;
            Body::Watchdog
        }
    };
    if checksum(bytes, key) != h.checksum {
        return Err(DecodeError::Checksum);
    }
    Ok(Msg {
        epoch: h.epoch,
        seq: h.seq,
        endpoint: h.endpoint,
        nonce: key,
        body,
    })
}

/// The body's counts make `need` bytes; `got` were received.
fn exact(need: usize, got: usize) -> Result<(), DecodeError> {
    if got < need {
        Err(DecodeError::Truncated { need, got })
    } else if got > need {
        Err(DecodeError::Length {
            declared: need,
            actual: got,
        })
    } else {
        Ok(())
    }
}

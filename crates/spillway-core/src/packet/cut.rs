//! CP's payload-cut packet (§4.2, §4.6): a data packet whose payload a switch removed,
//! keeping its headers (and its original IP length, so the receiver knows which bytes).

/// A payload-cut packet before framing: IP 20 + TCP 20 + 12 B timestamp option, the 66 B
/// of CP §4.6 (footnote 5) once the 14 B MAC header is added; our framing also counts the
/// FCS, preamble and inter-frame gap.
pub const CUT_IP_BYTES: u32 = 20 + 20 + 12;

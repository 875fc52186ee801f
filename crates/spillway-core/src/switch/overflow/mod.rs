//! Overflow actions: what a switch port does with a packet it cannot keep, and with the
//! congestion signals its marker raises. `drop` is plain loss; FastLane turns the victim
//! into a notification to its source; Source Quench tells the source when the marker marks;
//! CP cuts the victim's payload and forwards its header to the receiver.

pub mod cut_payload;
pub mod fastlane;
pub mod source_quench;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    Drop,
    FastLane,
    SourceQuench,
    CutPayload,
}

//! Overflow actions: what a switch port does with a packet it cannot keep, and with the
//! congestion signals its marker raises. `drop` is plain loss; FastLane turns the victim
//! into a notification to its source; Source Quench tells the source when CoDel marks.

pub mod fastlane;
pub mod source_quench;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    Drop,
    FastLane,
    SourceQuench,
}

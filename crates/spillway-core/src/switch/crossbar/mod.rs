//! The crossbar of a combined input/output-queued switch and its scheduler.

pub mod islip;

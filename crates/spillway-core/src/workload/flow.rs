//! What a workload hands the hosts and gets back: a new flow, a finished query's record,
//! and the flow classes.

use crate::units::Ps;

/// Flow class labels, the `class` column of flows.parquet.
pub const CLASS_LABELS: &[&str] = &[
    "incast",
    "flow",
    "request",
    "response",
    "trace",
    "short",
    "long",
    "background",
];
pub const CLASS_INCAST: u8 = 0;
pub const CLASS_FLOW: u8 = 1;
pub const CLASS_REQUEST: u8 = 2;
pub const CLASS_RESPONSE: u8 = 3;
pub const CLASS_TRACE: u8 = 4;
pub const CLASS_SHORT: u8 = 5;
pub const CLASS_LONG: u8 = 6;
pub const CLASS_BACKGROUND: u8 = 7;

pub const NO_QUERY: u64 = u64::MAX;

/// A flow the workload wants started now.
#[derive(Debug, Clone, Copy)]
pub struct NewFlow {
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub class: u8,
    pub query: u64,
    /// The workload's own handle, returned on completion.
    pub tag: u64,
    /// The priority class (0 highest .. 7) of the flow's data and ACKs; `None`: the
    /// transport's (`transport.data_class`, `transport.ack_class`).
    pub priority: Option<u8>,
}

/// What a finished flow makes the workload do: flows to start (a worker's response),
/// queries that completed. The hosts' applications keep one and drain it.
#[derive(Debug, Default)]
pub struct Emitted {
    pub flows: Vec<NewFlow>,
    pub queries: Vec<QueryRecord>,
}

/// One finished query (an incast round, a request with its responses, a sequential web
/// request or one of its queries).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct QueryRecord {
    pub query_id: u64,
    pub start: Ps,
    pub finish: Ps,
    pub size_bytes: u64,
    pub flows: u32,
    /// The web request a query of a sequential workload belongs to.
    pub parent: Option<u64>,
}

/// As derived, but `parent` is shown only when there is one, so a record of a
/// workload without web requests reads as it did before the field came (the digest
/// comparison of a change that must not alter results reads these lines).
impl std::fmt::Debug for QueryRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("QueryRecord");
        d.field("query_id", &self.query_id)
            .field("start", &self.start)
            .field("finish", &self.finish)
            .field("size_bytes", &self.size_bytes)
            .field("flows", &self.flows);
        if let Some(p) = self.parent {
            d.field("parent", &p);
        }
        d.finish()
    }
}

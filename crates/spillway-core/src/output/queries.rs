//! The query records: one row per query (queries.parquet), for workloads with queries
//! (incast rounds, request/response, partition/aggregate, short_long).

use super::records;
use crate::workload::QueryRecord;

records! {
    /// Completed queries as columns.
    pub struct QueryRecords {
        /// Incast round number, or query number.
        query_id: u64;
        /// Incast: the round's start; queries: when the requests were issued.
        start_ps: u64;
        /// When the last flow of the query (incast: the round's last sender; queries: the
        /// last response) completed.
        finish_ps: u64;
        /// Query completion time: `finish_ps - start_ps`.
        qct_ps: u64;
        /// Payload bytes of the query's data (incast: senders x size; queries: all
        /// responses).
        size_bytes: u64;
        /// Flows whose completion the query waits for.
        flows: u64;
    }
}

impl QueryRecords {
    pub fn of(queries: &[QueryRecord]) -> QueryRecords {
        let mut r = QueryRecords::default();
        for q in queries {
            r.query_id.push(q.query_id);
            r.start_ps.push(q.start);
            r.finish_ps.push(q.finish);
            r.qct_ps.push(q.finish - q.start);
            r.size_bytes.push(q.size_bytes);
            r.flows.push(q.flows as u64);
        }
        r
    }
}

//! The query records: one row per query (queries.parquet), for workloads with queries
//! (incast rounds, request/response, partition/aggregate, short_long, and sequential web
//! requests: a row for each web request and one for each of its queries).

use super::records;
use crate::workload::QueryRecord;

records! {
    /// Completed queries as columns.
    pub struct QueryRecords {
        /// Incast round number, or query number (unique across web requests and their
        /// queries).
        query_id: u64;
        /// Incast: the round's start; queries: when the requests were issued; a web
        /// request: when it arrived (its first query's start).
        start_ps: u64;
        /// When the last flow of the query (incast: the round's last sender; queries: the
        /// last response; a web request: its last query's last response) completed.
        finish_ps: u64;
        /// Query completion time: `finish_ps - start_ps`.
        qct_ps: u64;
        /// Payload bytes of the query's data (incast: senders x size; queries: all
        /// responses; a web request: all its queries' responses).
        size_bytes: u64;
        /// Flows whose completion the query waits for (queries: its responses; a web
        /// request: its queries' responses).
        flows: u64;
        /// The web request (its `query_id`) a query of the `sequential` workload
        /// belongs to; null for the web request itself and every other query.
        parent: u64, null = Max;
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
            r.parent.push(q.parent.unwrap_or(u64::MAX));
        }
        r
    }
}

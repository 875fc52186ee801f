//! What a run hands out as it goes and at its end: the flow and query records, every
//! port's record, and the samplers' and the pinger's rows.

use super::Sim;
use crate::output::flow_throughput::FlowThroughputRecords;
use crate::output::flows::FlowRecords;
use crate::output::pings::PingRecords;
use crate::output::ports::PortRecords;
use crate::output::timeseries::TimeseriesRecords;
use crate::workload::QueryRecord;

impl Sim {
    /// Takes the flow records produced since the last call (stream them out).
    pub fn take_flows(&mut self) -> FlowRecords {
        self.hosts.take_flows()
    }

    pub fn take_queries(&mut self) -> Vec<QueryRecord> {
        self.hosts.take_queries()
    }

    /// Every port's record, node by node (hosts' NICs first), port by port.
    pub fn port_records(&self) -> PortRecords {
        let now = self.cx.now;
        let mut r = PortRecords::default();
        // Rows in the samplers' port order.
        let mut k = 0;
        for (h, rep) in self.hosts.reports(now).into_iter().enumerate() {
            r.push(h as u32, 0, false, &rep, self.sampling.queue_row(k));
            k += 1;
        }
        let hosts = self.cx.fabric.hosts();
        for (s, sw) in self.switches.iter().enumerate() {
            for (i, rep) in sw.reports(now).iter().enumerate() {
                r.push(
                    hosts + s as u32,
                    i as u32,
                    true,
                    rep,
                    self.sampling.queue_row(k),
                );
                k += 1;
            }
        }
        r
    }

    /// `run.timeseries_interval`'s samples taken since the last call.
    pub fn take_timeseries(&mut self) -> TimeseriesRecords {
        self.sampling.take_timeseries()
    }

    /// `run.timeseries_interval` is set: the run writes timeseries.parquet.
    pub fn has_timeseries(&self) -> bool {
        self.sampling.has_timeseries()
    }

    /// `run.flow_throughput_interval`'s rows written since the last call.
    pub fn take_flow_throughput(&mut self) -> FlowThroughputRecords {
        self.hosts.take_flow_throughput()
    }

    /// `run.flow_throughput_interval` is set: the run writes flow_throughput.parquet.
    pub fn has_flow_throughput(&self) -> bool {
        self.hosts.tracks_flow_throughput()
    }

    /// `[ping]`'s rows that are final: while the run goes on, those up to the first
    /// request still unanswered; once it has ended, all (unanswered ones with no RTT).
    pub fn take_pings(&mut self) -> PingRecords {
        self.hosts.take_pings(self.ended)
    }

    /// `[ping]` is on: the run writes pings.parquet.
    pub fn has_pings(&self) -> bool {
        self.hosts.has_pings()
    }
}

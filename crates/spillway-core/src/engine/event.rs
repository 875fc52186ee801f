//! The engine's events: 16 bytes each, so a calendar-queue node (time, event, link) is
//! 32. A component that needs an event kind adds it here, and nothing else in the engine.

/// `Ev::Arrive::egress` when the egress is chosen on arrival.
pub const ROUTE_ON_ARRIVAL: u16 = u16::MAX;

#[derive(Debug, Clone, Copy)]
pub enum Ev {
    /// A packet has been fully received at a node (store-and-forward), by `port`. At a
    /// switch with fixed routes (one next hop, or ECMP's hash) it carries the egress
    /// port, chosen when the packet was sent toward it: the event before it can then
    /// prefetch that port's line (`Sim::prefetch_for`). `ROUTE_ON_ARRIVAL` otherwise
    /// (hosts, spraying, weighted random forwarding: drawn when the packet arrives).
    Arrive {
        node: u32,
        pkt: u32,
        port: u16,
        egress: u16,
    },
    /// A port finished serializing and has more queued. This stays an event of its own,
    /// at its place in the (time, insertion) order: what was processed before it decides
    /// which packet goes next (strict priority), the bytes that same-time arrivals find
    /// queued, and the insertion rank of the next packet's `Arrive`, which orders it among
    /// same-time arrivals at the next node. Starting the next packet early (when the
    /// previous one starts, or at enqueue) would push that `Arrive` earlier and reorder
    /// such ties into the same egress FIFO: at least 234 in fattree_websearch's 20 ms,
    /// 647 in examples/websearch.toml's first 40 ms, so results would change.
    PortFree { node: u32, port: u32 },
    /// A flow's earliest timer (RTO or delayed ACK) may be due.
    Timer { slot: u32 },
    /// A receiving host finished processing a packet (server model).
    HostDone { host: u32, pkt: u32 },
    /// A received packet's host-side latency (`host.rx_jitter`) has passed.
    HostRx { host: u32, pkt: u32 },
    /// `host.gro`: the interrupt batch that a flow's held segment came in has been
    /// handled; the merged segment is acknowledged now.
    GroFlush { slot: u32 },
    /// The workload has arrivals due.
    Workload,
    /// A combined input/output-queued switch's crossbar has moved `pkt` from input
    /// `input` to output `output` (both free again).
    Crossed {
        node: u32,
        pkt: u32,
        input: u16,
        output: u16,
    },
    /// Pause frame `pkt`, received by `node` on `port`, takes effect (its response time
    /// has passed).
    PauseTakes { node: u32, port: u32, pkt: u32 },
    /// With flow control: time to look for a deadlock (a cycle of paused ports).
    DeadlockCheck,
    /// `run.progress_limit`: time to see whether any byte was acknowledged.
    ProgressCheck,
    /// A sampler's interval has passed: it samples.
    Sample(Sampled),
    /// `[ping]`: the pinger sends its next request.
    Ping,
    /// Fastpass: `host` may send to `dst` by `path` in the granted timeslot whose low 16
    /// bits are `lo`.
    FpSlot {
        host: u32,
        dst: u32,
        path: u16,
        lo: u16,
    },
    /// Fastpass: `host`'s FCP endpoint has a timer due.
    FpEndpoint { host: u32 },
    /// Fastpass: arbiter `rank` has a timer or a batch due.
    FpArbiter { rank: u32 },
    /// Fastpass: FCP message `msg` reaches `host` off the network (the ideal channel, or
    /// a host's own arbiter).
    FpDeliver { host: u32, msg: u32 },
    /// Fastpass: arbiter `rank` handles message `msg` (its processing latency has
    /// passed).
    FpHandle { rank: u32, msg: u32 },
    /// Cut-through (`switch.cut_through`): the header of `pkt` has reached switch
    /// `node` by `port`; `egress` as for `Arrive`. If the packet cannot start at once,
    /// the switch schedules its `Arrive` for when its last byte is in.
    Header {
        node: u32,
        pkt: u32,
        port: u16,
        egress: u16,
    },
}

/// What a `Sample` event samples; each at its own interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampled {
    /// `run.timeseries_interval`: the network's state (timeseries.parquet).
    Timeseries,
    /// `run.queue_sample_interval`: every port's queued bytes (ports.parquet).
    Queues,
    /// `run.flow_throughput_interval`: every active flow's acknowledged bytes
    /// (flow_throughput.parquet).
    FlowThroughput,
}

impl Ev {
    /// An event that recurs on its own clock, whatever else happens: it never keeps the
    /// run going (`Sim::step` drops it when only such events are left).
    #[inline(always)]
    pub fn periodic(&self) -> bool {
        matches!(
            self,
            Ev::DeadlockCheck | Ev::ProgressCheck | Ev::Sample(_) | Ev::Ping
        )
    }
}

// The event queue's nodes hold time, event and link: 8 + 16 + 4 (+ 4) = 32 bytes
// (queue.rs).
const _: () = assert!(std::mem::size_of::<Ev>() == 16);

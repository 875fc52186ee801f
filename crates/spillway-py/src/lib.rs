//! `spillway._core`: PyO3 bindings. Thin by design: conversions only, no logic.
//! Columns leave Rust as NumPy arrays (via `numpy.frombuffer`, no extra crates);
//! scenario errors become `spillway.errors.ScenarioError(key, value, message)`.

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use spillway_core::config::{reference_markdown, Scenario, ScenarioError};
use spillway_core::engine::run::Run;
use spillway_core::output::counters::Counters;
use spillway_core::output::flow_throughput::FlowThroughputRecords;
use spillway_core::output::flows::FlowRecords;
use spillway_core::output::hpcc::FctWriter;
use spillway_core::output::pings::PingRecords;
use spillway_core::output::ports::PortRecords;
use spillway_core::output::queries::QueryRecords;
use spillway_core::output::timeseries::TimeseriesRecords;
use spillway_core::output::{ColumnDef, ColumnRef, Null};
use std::path::Path;

fn scenario_err(py: Python<'_>, e: ScenarioError) -> PyErr {
    let made = (|| -> PyResult<PyErr> {
        let cls = py.import("spillway.errors")?.getattr("ScenarioError")?;
        let inst = cls.call1((e.key.clone(), e.value.clone(), e.message.clone()))?;
        Ok(PyErr::from_value(inst))
    })();
    made.unwrap_or_else(|_| PyValueError::new_err(e.to_string()))
}

fn parse(
    py: Python<'_>,
    text: &str,
    overrides: Vec<String>,
    base_dir: Option<String>,
) -> PyResult<Scenario> {
    Scenario::parse(text, &overrides, base_dir.as_deref().map(Path::new))
        .map_err(|e| scenario_err(py, e))
}

/// A NumPy array viewing a copy of `data` (plain-old-data element types only).
fn array<'py, T: Copy>(
    py: Python<'py>,
    np: &Bound<'py, PyModule>,
    data: &[T],
    dtype: &str,
) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: T is a primitive number type; we only reinterpret its bytes.
    let bytes = unsafe {
        std::slice::from_raw_parts(data.as_ptr() as *const u8, std::mem::size_of_val(data))
    };
    np.call_method1("frombuffer", (PyBytes::new(py, bytes), dtype))
}

/// A table's columns as NumPy arrays, by name.
fn columns_dict<'py>(
    py: Python<'py>,
    cols: Vec<(&'static str, ColumnRef<'_>)>,
) -> PyResult<Bound<'py, PyDict>> {
    let np = py.import("numpy")?;
    let d = PyDict::new(py);
    for (name, c) in cols {
        let a = match c {
            ColumnRef::U64(v) => array(py, &np, v, "<u8")?,
            ColumnRef::U32(v) => array(py, &np, v, "<u4")?,
            ColumnRef::U8(v) => array(py, &np, v, "u1")?,
            ColumnRef::F64(v) => array(py, &np, v, "<f8")?,
            ColumnRef::Bool(v) => {
                let b: Vec<u8> = v.iter().map(|&x| x as u8).collect();
                array(py, &np, &b, "u1")?.call_method1("astype", ("bool",))?
            }
        };
        d.set_item(name, a)?;
    }
    Ok(d)
}

/// Documentation gathered from doc comments, one space between words.
fn tidy(doc: &str) -> String {
    doc.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A schema as a list of dicts: name, type, null ("never", "max", "nan"), labels, doc.
fn schema_list<'py>(py: Python<'py>, schema: &[ColumnDef]) -> PyResult<Vec<Bound<'py, PyDict>>> {
    schema
        .iter()
        .map(|c| {
            let d = PyDict::new(py);
            d.set_item("name", c.name)?;
            d.set_item("type", c.ty)?;
            d.set_item(
                "null",
                match c.null {
                    Null::Never => "never",
                    Null::Max => "max",
                    Null::Nan => "nan",
                },
            )?;
            d.set_item("labels", c.labels.map(|l| l.to_vec()))?;
            d.set_item("doc", tidy(c.doc))?;
            Ok(d)
        })
        .collect()
}

/// The output tables' schemas (flows, queries, ports, timeseries, flow_throughput, pings)
/// and the counters', defined in the simulator once: what `spillway run` builds its files
/// from.
#[pyfunction]
fn schemas<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("flows", schema_list(py, FlowRecords::SCHEMA)?)?;
    d.set_item("queries", schema_list(py, QueryRecords::SCHEMA)?)?;
    d.set_item("ports", schema_list(py, PortRecords::SCHEMA)?)?;
    d.set_item("timeseries", schema_list(py, TimeseriesRecords::SCHEMA)?)?;
    d.set_item(
        "flow_throughput",
        schema_list(py, FlowThroughputRecords::SCHEMA)?,
    )?;
    d.set_item("pings", schema_list(py, PingRecords::SCHEMA)?)?;
    let counters: Vec<(&str, String)> = Counters::SCHEMA
        .iter()
        .map(|&(name, doc)| (name, tidy(doc)))
        .collect();
    d.set_item("counters", counters)?;
    Ok(d)
}

/// Sizes the simulator uses, for Python's analyses, with the scenario defaults (MSS,
/// header, Ethernet framing): a full segment's frame, an ACK's, a CP payload-cut
/// packet's, a FastLane notification's, a quench's IP packet.
#[pyfunction]
fn constants<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    use spillway_core::packet::{cut, notification, quench, wire::wire_bytes};
    let sc = Scenario::parse("", &[], None).map_err(|e| scenario_err(py, e))?;
    let (mss, header) = (sc.transport.mss(), sc.transport.header_bytes());
    let framing = sc.topology.framing_bytes;
    let d = PyDict::new(py);
    d.set_item("mss", mss)?;
    d.set_item("header_bytes", header)?;
    d.set_item("framing_bytes", framing)?;
    d.set_item("full_frame_bytes", wire_bytes(mss + header, framing))?;
    d.set_item("ack_frame_bytes", wire_bytes(header, framing))?;
    d.set_item("cut_frame_bytes", wire_bytes(cut::CUT_IP_BYTES, framing))?;
    d.set_item("notification_frame_bytes", notification::NOTIFICATION_FRAME)?;
    d.set_item("quench_ip_bytes", quench::QUENCH_IP_BYTES)?;
    Ok(d)
}

/// Parses and validates a scenario; returns the resolved TOML.
#[pyfunction]
#[pyo3(signature = (text, overrides=Vec::new(), base_dir=None))]
fn validate(
    py: Python<'_>,
    text: &str,
    overrides: Vec<String>,
    base_dir: Option<String>,
) -> PyResult<String> {
    let sc = parse(py, text, overrides, base_dir)?;
    // Building the network checks what parsing cannot (reachability, buffer vs packet size).
    Run::new(&sc).map_err(|e| scenario_err(py, e))?;
    Ok(sc.resolved)
}

/// A time in the scenario syntax (`"3s"`, `"1.5ms"`, `"200us"`) in picoseconds, so that
/// the command line takes times as scenarios do; ValueError with the reason otherwise.
#[pyfunction]
fn parse_time(text: &str) -> PyResult<u64> {
    spillway_core::units::parse_time(text).map_err(PyValueError::new_err)
}

/// The scenario key reference (Markdown), generated from the key table.
/// Fastpass's Appendix model on the real allocator (`spillway_arbiter::voq`, GIL
/// released): uniform traffic of load `load` among `endpoints`, Poisson packets per
/// request, `speedup` matchings a timeslot; a dict of the result's fields. Bad
/// parameters raise ValueError naming them.
#[pyfunction]
#[pyo3(signature = (endpoints, load, speedup, warmup = 5_000, timeslots = 50_000, seed = 1))]
fn appendix_queue<'py>(
    py: Python<'py>,
    endpoints: usize,
    load: f64,
    speedup: u32,
    warmup: u64,
    timeslots: u64,
    seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    use spillway_arbiter::voq::{simulate, VoqParams};
    let mut p = VoqParams::uniform(endpoints, load, speedup);
    p.warmup = warmup;
    p.timeslots = timeslots;
    p.seed = seed;
    let r = py
        .detach(|| simulate(&p))
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    let d = PyDict::new(py);
    for (k, v) in [
        ("load", r.load),
        ("mean_packets", r.mean_packets),
        ("v", r.v),
        ("mean_queue", r.mean_queue),
        ("mean_queue_stderr", r.mean_queue_stderr),
        ("mean_queue_after_service", r.mean_queue_after_service),
        ("lindley_mean", r.lindley_mean),
        ("lower_bound", r.lower_bound),
        ("upper_bound", r.upper_bound),
        ("arrival_rate", r.arrival_rate),
        ("throughput", r.throughput),
    ] {
        d.set_item(k, v)?;
    }
    d.set_item("max_queue", r.max_queue)?;
    Ok(d)
}

#[pyfunction]
fn reference() -> String {
    reference_markdown()
}

#[pyfunction]
fn bench_names() -> Vec<(&'static str, &'static str)> {
    spillway_core::bench::BENCHMARKS
        .iter()
        .map(|b| (b.0, b.1))
        .collect()
}

/// The pFabric queue micro-benchmark (GIL released): one dict per (form, serve order,
/// queue length), `ops` operations each.
#[pyfunction]
#[pyo3(signature = (ops = spillway_core::bench::QUEUE_BENCH_OPS))]
fn bench_pfabric_queue<'py>(py: Python<'py>, ops: u64) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let rows = py.detach(move || spillway_core::bench::pfabric_queue_bench(ops.max(1)));
    rows.into_iter()
        .map(|r| {
            let d = PyDict::new(py);
            d.set_item("form", r.form)?;
            d.set_item("order", r.order)?;
            d.set_item("packets", r.packets)?;
            d.set_item("ops", r.ops)?;
            d.set_item("evictions", r.evictions)?;
            d.set_item("ns_per_op", r.ns_per_op)?;
            Ok(d)
        })
        .collect()
}

/// Runs one standard benchmark (GIL released), with `overrides` (`key=value`) after its
/// own, and returns its figures.
#[pyfunction]
#[pyo3(name = "bench", signature = (name, overrides=Vec::new()))]
fn run_bench<'py>(
    py: Python<'py>,
    name: &str,
    overrides: Vec<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let name = name.to_string();
    let r = py
        .detach(move || spillway_core::bench::run_benchmark_with(&name, &overrides))
        .ok_or_else(|| PyValueError::new_err("unknown benchmark"))?
        .map_err(|e| scenario_err(py, e))?;
    let d = PyDict::new(py);
    d.set_item("name", r.name)?;
    d.set_item("description", r.description)?;
    d.set_item("events", r.events)?;
    d.set_item("packet_hops", r.packet_hops)?;
    d.set_item("flows", r.flows)?;
    d.set_item("sim_time_ps", r.sim_time_ps)?;
    d.set_item("wall_s", r.wall_s)?;
    d.set_item("cpu_s", r.cpu_s)?;
    d.set_item("partitions", r.partitions)?;
    d.set_item("threads", r.threads)?;
    d.set_item("events_per_s", r.events_per_s)?;
    d.set_item("packet_hops_per_s", r.packet_hops_per_s)?;
    Ok(d)
}

/// One simulation run, stepped from Python so results stream out as it goes.
#[pyclass(module = "spillway._core")]
struct Simulation {
    sim: Run,
    resolved: String,
    duration: Option<u64>,
    /// `run.fct_txt`: the finished flows, kept for HPCC's fct.txt.
    fct: Option<FctWriter>,
}

#[pymethods]
impl Simulation {
    #[new]
    #[pyo3(signature = (text, overrides=Vec::new(), base_dir=None))]
    fn new(
        py: Python<'_>,
        text: &str,
        overrides: Vec<String>,
        base_dir: Option<String>,
    ) -> PyResult<Self> {
        let sc = parse(py, text, overrides, base_dir)?;
        let sim = Run::new(&sc).map_err(|e| scenario_err(py, e))?;
        let fct = sim.fct_writer(&sc);
        Ok(Simulation {
            sim,
            resolved: sc.resolved,
            duration: sc.run.duration,
            fct,
        })
    }

    /// Runs up to `budget` events without the GIL; True once the run has ended.
    fn step(&mut self, py: Python<'_>, budget: u64) -> bool {
        let sim = &mut self.sim;
        py.detach(move || sim.step(budget))
    }

    #[getter]
    fn resolved(&self) -> &str {
        &self.resolved
    }
    #[getter]
    fn now_ps(&self) -> u64 {
        self.sim.now()
    }
    #[getter]
    fn duration_ps(&self) -> Option<u64> {
        self.duration
    }
    #[getter]
    fn finished(&self) -> bool {
        self.sim.finished()
    }
    #[getter]
    fn stop_reason(&self) -> &'static str {
        self.sim.stop_reason().as_str()
    }
    /// Why the run stopped, in words, when the reason needs them (a deadlock's ports);
    /// empty otherwise.
    #[getter]
    fn stop_detail(&self) -> String {
        self.sim.stop_detail().to_string()
    }
    #[getter]
    fn active_flows(&self) -> u64 {
        self.sim.active_flows()
    }
    #[getter]
    fn has_queries(&self) -> bool {
        self.sim.has_queries()
    }
    #[getter]
    fn hosts(&self) -> u32 {
        self.sim.hosts()
    }

    /// Flow records finished since the last call, as NumPy columns.
    fn take_flows<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = self.sim.take_flows();
        if let Some(w) = &mut self.fct {
            w.add(&r);
        }
        columns_dict(py, r.columns())
    }

    /// Writes HPCC's fct.txt of the flows taken so far to `path` (`run.fct_txt`); False
    /// (and no file) when off.
    fn write_fct_txt(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<bool> {
        let Some(w) = self.fct.as_ref() else {
            return Ok(false);
        };
        let fabric = self.sim.fabric();
        py.detach(|| w.write_file(fabric, &path))
            .map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())))?;
        Ok(true)
    }

    /// Query records finished since the last call, as NumPy columns.
    fn take_queries<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let q = QueryRecords::of(&self.sim.take_queries());
        columns_dict(py, q.columns())
    }

    /// Per-port statistics, as NumPy columns.
    fn ports<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = self.sim.port_records();
        columns_dict(py, r.columns())
    }

    /// `run.timeseries_interval` is set: the run writes timeseries.parquet.
    #[getter]
    fn has_timeseries(&self) -> bool {
        self.sim.has_timeseries()
    }

    /// Samples of the network's state taken since the last call, as NumPy columns.
    fn take_timeseries<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = self.sim.take_timeseries();
        columns_dict(py, r.columns())
    }

    /// `run.flow_throughput_interval` is set: the run writes flow_throughput.parquet.
    #[getter]
    fn has_flow_throughput(&self) -> bool {
        self.sim.has_flow_throughput()
    }

    /// Flows' goodput rows written since the last call, as NumPy columns.
    fn take_flow_throughput<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = self.sim.take_flow_throughput();
        columns_dict(py, r.columns())
    }

    /// `[ping]` is on: the run writes pings.parquet.
    #[getter]
    fn has_pings(&self) -> bool {
        self.sim.has_pings()
    }

    /// Ping rows that are final (all of them once the run has ended), as NumPy columns.
    fn take_pings<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = self.sim.take_pings();
        columns_dict(py, r.columns())
    }

    /// (logical processes, threads): (1, 1) for a run of the whole fabric in one.
    #[getter]
    fn partitions(&self) -> (u32, u32) {
        self.sim.partitions()
    }

    /// A parallel run's windows and waits (None for a whole run): windows, parcels
    /// (packets across cut links), lookahead_ps, wall_s, barrier_wait_s,
    /// events_per_partition.
    fn parallel_stats<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(st) = self.sim.parallel_stats() else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("partitions", st.partitions)?;
        d.set_item("threads", st.threads)?;
        d.set_item("lookahead_ps", st.lookahead_ps)?;
        d.set_item("windows", st.windows)?;
        d.set_item("parcels", st.parcels)?;
        d.set_item("wall_s", st.wall_s)?;
        d.set_item("barrier_wait_s", st.barrier_wait_s)?;
        d.set_item("events_per_partition", st.events_per_partition.clone())?;
        Ok(Some(d))
    }

    /// Run counters (events, hops, drops, ...).
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (name, v) in self.sim.counters().values() {
            d.set_item(name, v)?;
        }
        d.set_item("sim_time_ps", self.sim.now())?;
        Ok(d)
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(reference, m)?)?;
    m.add_function(wrap_pyfunction!(parse_time, m)?)?;
    m.add_function(wrap_pyfunction!(appendix_queue, m)?)?;
    m.add_function(wrap_pyfunction!(schemas, m)?)?;
    m.add_function(wrap_pyfunction!(constants, m)?)?;
    m.add_function(wrap_pyfunction!(bench_names, m)?)?;
    m.add_function(wrap_pyfunction!(run_bench, m)?)?;
    m.add_function(wrap_pyfunction!(bench_pfabric_queue, m)?)?;
    m.add_class::<Simulation>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

//! `spillway._core`: PyO3 bindings. Thin by design: conversions only, no logic.
//! Columns leave Rust as NumPy arrays (via `numpy.frombuffer`, no extra crates);
//! scenario errors become `spillway.errors.ScenarioError(key, value, message)`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use spillway_core::config::{reference_markdown, Scenario, ScenarioError};
use spillway_core::engine::Sim;
use spillway_core::output::flows::FlowRecords;
use spillway_core::workload::CLASS_LABELS;
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

fn flows_dict<'py>(py: Python<'py>, r: &FlowRecords) -> PyResult<Bound<'py, PyDict>> {
    let np = py.import("numpy")?;
    let d = PyDict::new(py);
    d.set_item("flow_id", array(py, &np, &r.flow_id, "<u8")?)?;
    d.set_item("src", array(py, &np, &r.src, "<u4")?)?;
    d.set_item("dst", array(py, &np, &r.dst, "<u4")?)?;
    d.set_item("size_bytes", array(py, &np, &r.size_bytes, "<u8")?)?;
    d.set_item("start_ps", array(py, &np, &r.start_ps, "<u8")?)?;
    d.set_item("finish_ps", array(py, &np, &r.finish_ps, "<u8")?)?;
    d.set_item("fct_ps", array(py, &np, &r.fct_ps, "<u8")?)?;
    d.set_item("ideal_fct_ps", array(py, &np, &r.ideal_fct_ps, "<u8")?)?;
    d.set_item("slowdown", array(py, &np, &r.slowdown, "<f8")?)?;
    d.set_item("priority", array(py, &np, &r.priority, "u1")?)?;
    d.set_item("class", array(py, &np, &r.class, "u1")?)?;
    d.set_item("query_id", array(py, &np, &r.query_id, "<u8")?)?;
    d.set_item("retransmits", array(py, &np, &r.retransmits, "<u4")?)?;
    d.set_item("timeouts", array(py, &np, &r.timeouts, "<u4")?)?;
    d.set_item("drops", array(py, &np, &r.drops, "<u4")?)?;
    d.set_item("notifications", array(py, &np, &r.notifications, "<u4")?)?;
    d.set_item(
        "delivered_bytes",
        array(py, &np, &r.delivered_bytes, "<u8")?,
    )?;
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
    Sim::new(&sc).map_err(|e| scenario_err(py, e))?;
    Ok(sc.resolved)
}

/// The scenario key reference (Markdown), generated from the key table.
#[pyfunction]
fn reference() -> String {
    reference_markdown()
}

#[pyfunction]
fn class_labels() -> Vec<&'static str> {
    CLASS_LABELS.to_vec()
}

#[pyfunction]
fn bench_names() -> Vec<(&'static str, &'static str)> {
    spillway_core::bench::BENCHMARKS
        .iter()
        .map(|b| (b.0, b.1))
        .collect()
}

/// Runs one standard benchmark (GIL released) and returns its figures.
#[pyfunction]
#[pyo3(name = "bench")]
fn run_bench<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
    let name = name.to_string();
    let r = py
        .detach(move || spillway_core::bench::run_benchmark(&name))
        .ok_or_else(|| PyValueError::new_err("unknown benchmark"))?;
    let d = PyDict::new(py);
    d.set_item("name", r.name)?;
    d.set_item("description", r.description)?;
    d.set_item("events", r.events)?;
    d.set_item("packet_hops", r.packet_hops)?;
    d.set_item("flows", r.flows)?;
    d.set_item("sim_time_ps", r.sim_time_ps)?;
    d.set_item("wall_s", r.wall_s)?;
    d.set_item("events_per_s", r.events_per_s)?;
    d.set_item("packet_hops_per_s", r.packet_hops_per_s)?;
    Ok(d)
}

/// One simulation run, stepped from Python so results stream out as it goes.
#[pyclass(module = "spillway._core")]
struct Simulation {
    sim: Sim,
    resolved: String,
    duration: Option<u64>,
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
        let sim = Sim::new(&sc).map_err(|e| scenario_err(py, e))?;
        Ok(Simulation {
            sim,
            resolved: sc.resolved,
            duration: sc.run.duration,
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
        flows_dict(py, &r)
    }

    /// Query records finished since the last call, as NumPy columns.
    fn take_queries<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let q = self.sim.take_queries();
        let np = py.import("numpy")?;
        let col = |f: fn(&spillway_core::workload::QueryRecord) -> u64| {
            q.iter().map(f).collect::<Vec<u64>>()
        };
        let d = PyDict::new(py);
        d.set_item("query_id", array(py, &np, &col(|r| r.query_id), "<u8")?)?;
        d.set_item("start_ps", array(py, &np, &col(|r| r.start), "<u8")?)?;
        d.set_item("finish_ps", array(py, &np, &col(|r| r.finish), "<u8")?)?;
        d.set_item(
            "qct_ps",
            array(py, &np, &col(|r| r.finish - r.start), "<u8")?,
        )?;
        d.set_item("size_bytes", array(py, &np, &col(|r| r.size_bytes), "<u8")?)?;
        d.set_item("flows", array(py, &np, &col(|r| r.flows as u64), "<u8")?)?;
        Ok(d)
    }

    /// Per-port statistics, as NumPy columns.
    fn ports<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = self.sim.port_records();
        let np = py.import("numpy")?;
        let d = PyDict::new(py);
        d.set_item("node", array(py, &np, &r.node, "<u4")?)?;
        d.set_item("port", array(py, &np, &r.port, "<u4")?)?;
        d.set_item("peer", array(py, &np, &r.peer, "<u4")?)?;
        let sw: Vec<u8> = r.is_switch.iter().map(|&b| b as u8).collect();
        d.set_item(
            "is_switch",
            array(py, &np, &sw, "u1")?.call_method1("astype", ("bool",))?,
        )?;
        d.set_item("capacity_bytes", array(py, &np, &r.capacity, "<u8")?)?;
        d.set_item("enqueued", array(py, &np, &r.enqueued, "<u8")?)?;
        d.set_item("dropped", array(py, &np, &r.dropped, "<u8")?)?;
        d.set_item("max_bytes", array(py, &np, &r.max_bytes, "<u8")?)?;
        d.set_item("mean_bytes", array(py, &np, &r.mean_bytes, "<f8")?)?;
        d.set_item("rate_bps", array(py, &np, &r.rate_bps, "<u8")?)?;
        d.set_item("ecn_marked", array(py, &np, &r.marked, "<u8")?)?;
        d.set_item(
            "notif_generated",
            array(py, &np, &r.notif_generated, "<u8")?,
        )?;
        d.set_item("notif_dropped", array(py, &np, &r.notif_dropped, "<u8")?)?;
        d.set_item("notif_sent", array(py, &np, &r.notif_sent, "<u8")?)?;
        d.set_item(
            "notif_sent_bytes",
            array(py, &np, &r.notif_sent_bytes, "<u8")?,
        )?;
        d.set_item(
            "notif_sent_idle",
            array(py, &np, &r.notif_sent_idle, "<u8")?,
        )?;
        d.set_item(
            "notif_max_bytes",
            array(py, &np, &r.notif_max_bytes, "<u8")?,
        )?;
        d.set_item(
            "notif_capacity_bytes",
            array(py, &np, &r.notif_capacity, "<u8")?,
        )?;
        d.set_item("cut", array(py, &np, &r.cut, "<u8")?)?;
        d.set_item("cut_dropped", array(py, &np, &r.cut_dropped, "<u8")?)?;
        Ok(d)
    }

    /// Run counters (events, hops, drops, ...).
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = &self.sim.counters;
        let d = PyDict::new(py);
        d.set_item("events", c.events)?;
        d.set_item("packet_hops", c.packet_hops)?;
        d.set_item("drops", c.drops)?;
        d.set_item("retransmits", c.retransmits)?;
        d.set_item("timeouts", c.timeouts)?;
        d.set_item("flows_started", c.flows_started)?;
        d.set_item("flows_finished", c.flows_finished)?;
        d.set_item("flows_unfinished", c.flows_unfinished)?;
        d.set_item("queries_unfinished", c.queries_unfinished)?;
        d.set_item("bytes_offered", c.bytes_offered)?;
        d.set_item("bytes_delivered", c.bytes_delivered)?;
        d.set_item("duplicate_bytes", c.dup_bytes)?;
        d.set_item("stale_packets", c.stale_packets)?;
        d.set_item("peak_active_flows", c.peak_active_flows)?;
        d.set_item("peak_packets", c.peak_packets)?;
        d.set_item("notifications_generated", c.notifications_generated)?;
        d.set_item("notifications_dropped", c.notifications_dropped)?;
        d.set_item("notifications_delivered", c.notifications_delivered)?;
        d.set_item("notifications_stale", c.notifications_stale)?;
        d.set_item("quenches_sent", c.quenches_sent)?;
        d.set_item("quenches_delivered", c.quenches_delivered)?;
        d.set_item("ecn_marks", c.ecn_marks)?;
        d.set_item("ecn_reductions", c.ecn_reductions)?;
        d.set_item("probes", c.probes)?;
        d.set_item("cut_packets", c.cut_packets)?;
        d.set_item("cut_bytes", c.cut_bytes)?;
        d.set_item("cut_dropped", c.cut_dropped)?;
        d.set_item("packs", c.packs)?;
        d.set_item("undos", c.undos)?;
        d.set_item("sim_time_ps", self.sim.now())?;
        Ok(d)
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(reference, m)?)?;
    m.add_function(wrap_pyfunction!(class_labels, m)?)?;
    m.add_function(wrap_pyfunction!(bench_names, m)?)?;
    m.add_function(wrap_pyfunction!(run_bench, m)?)?;
    m.add_class::<Simulation>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

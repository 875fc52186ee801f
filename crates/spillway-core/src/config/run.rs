//! `[run]`: seed and limits.

use super::error::ScenarioError;
use super::reader::Reader;
use crate::output::hpcc::FctTxt;
use crate::units::Ps;

#[derive(Debug, Clone)]
pub struct RunSpec {
    pub seed: u64,
    pub duration: Option<Ps>,
    pub max_events: Option<u64>,
    /// `run.timeseries_interval`.
    pub timeseries: Option<Ps>,
    /// `run.queue_sample_interval`.
    pub queue_samples: Option<Ps>,
    /// `run.flow_throughput_interval`.
    pub flow_throughput: Option<Ps>,
    /// `run.progress_limit`: stop a run whose active flows have had no byte acknowledged
    /// for this long (a livelock).
    pub progress_limit: Option<Ps>,
    /// `run.partitions`: logical processes (None: `auto`, `Partition::auto`).
    pub partitions: Option<u32>,
    /// `run.threads` (None: `auto`).
    pub threads: Option<u32>,
    /// `run.fct_txt`: also write HPCC's fct.txt (None: off).
    pub fct_txt: Option<FctTxt>,
}

pub(super) fn read_run(r: &mut Reader) -> Result<RunSpec, ScenarioError> {
    let run = RunSpec {
        seed: r.uint("run.seed", 0, u64::MAX)?,
        duration: r.opt_time("run.duration")?,
        max_events: r.opt_uint("run.max_events", 1)?,
        timeseries: r.opt_time("run.timeseries_interval")?,
        queue_samples: r.opt_time("run.queue_sample_interval")?,
        flow_throughput: r.opt_time("run.flow_throughput_interval")?,
        progress_limit: r.opt_time("run.progress_limit")?,
        partitions: r.uint_or_auto("run.partitions", 1, 4096)?.map(|n| n as u32),
        threads: r.uint_or_auto("run.threads", 1, 1024)?.map(|n| n as u32),
        fct_txt: match r.choice("run.fct_txt")? {
            "hpcc" => Some(FctTxt::Hpcc),
            "hpcc9" => Some(FctTxt::Hpcc9),
            _ => None,
        },
    };
    for (key, every) in [
        ("run.timeseries_interval", run.timeseries),
        ("run.queue_sample_interval", run.queue_samples),
        ("run.flow_throughput_interval", run.flow_throughput),
        ("run.progress_limit", run.progress_limit),
    ] {
        if every == Some(0) {
            return Err(r.err(key, "must be positive"));
        }
    }
    if run.duration == Some(0) {
        return Err(r.err("run.duration", "must be positive"));
    }
    Ok(run)
}

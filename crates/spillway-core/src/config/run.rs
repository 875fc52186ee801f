//! `[run]`: seed and limits.

use super::error::ScenarioError;
use super::reader::Reader;
use crate::units::Ps;

#[derive(Debug, Clone)]
pub struct RunSpec {
    pub seed: u64,
    pub duration: Option<Ps>,
    pub max_events: Option<u64>,
    /// `run.timeseries_interval`.
    pub timeseries: Option<Ps>,
}

pub(super) fn read_run(r: &mut Reader) -> Result<RunSpec, ScenarioError> {
    let run = RunSpec {
        seed: r.uint("run.seed", 0, u64::MAX)?,
        duration: r.opt_time("run.duration")?,
        max_events: r.opt_uint("run.max_events", 1)?,
        timeseries: r.opt_time("run.timeseries_interval")?,
    };
    if run.timeseries == Some(0) {
        return Err(r.err("run.timeseries_interval", "must be positive"));
    }
    if run.duration == Some(0) {
        return Err(r.err("run.duration", "must be positive"));
    }
    Ok(run)
}

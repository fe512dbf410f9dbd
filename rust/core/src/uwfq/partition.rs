//! Runtime partitioning (the UWFQ paper's §3.2): split a stage into tasks that each run about an
//! advisory task runtime (ATR), so no task holds a slot much longer than that. The count is
//! `stage runtime / ATR`; the hints reply can carry it to the ApplicationMaster.

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum PartitionError {
    #[error("runtime partitioning field {field} = {value} is out of range: expected {expected}")]
    InvalidInput { field: &'static str, value: f64, expected: &'static str },
}

/// Tasks to split a stage into. `stage_runtime_sec` is the stage's total slot-time (its tasks
/// run one after another on one slot); `target_task_sec` the ATR; `max_tasks` caps the count
/// (scheduling overhead grows with it; the UWFQ paper warns against a too-small ATR).
///
/// The UWFQ paper divides without saying how to round. We round up, so that no task is expected to
/// run longer than the ATR, and return at least one task.
pub fn partition_count(stage_runtime_sec: f64, target_task_sec: f64, max_tasks: u32) -> Result<u32, PartitionError> {
    if !(stage_runtime_sec.is_finite() && stage_runtime_sec >= 0.0) {
        return Err(PartitionError::InvalidInput {
            field: "stage-runtime-sec",
            value: stage_runtime_sec,
            expected: "a non-negative finite number of seconds",
        });
    }
    if !(target_task_sec.is_finite() && target_task_sec > 0.0) {
        return Err(PartitionError::InvalidInput {
            field: "target-task-sec",
            value: target_task_sec,
            expected: "a positive finite number of seconds",
        });
    }
    if max_tasks == 0 {
        return Err(PartitionError::InvalidInput { field: "max-tasks", value: 0.0, expected: "at least 1" });
    }
    // A hair of tolerance so that 10 / (10 / 3) is 3 tasks, not 4, despite rounding.
    let n = (stage_runtime_sec / target_task_sec * (1.0 - 1e-12)).ceil();
    Ok(n.clamp(1.0, max_tasks as f64) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_up_to_keep_tasks_within_the_target() {
        assert_eq!(partition_count(100.0, 10.0, 1000), Ok(10));
        assert_eq!(partition_count(101.0, 10.0, 1000), Ok(11));
        assert_eq!(partition_count(10.0, 10.0 / 3.0, 1000), Ok(3));
        assert_eq!(partition_count(0.0, 5.0, 1000), Ok(1));
        assert_eq!(partition_count(1e9, 1.0, 200), Ok(200));
        assert!(matches!(
            partition_count(10.0, 0.0, 10),
            Err(PartitionError::InvalidInput { field: "target-task-sec", .. })
        ));
        assert!(partition_count(f64::NAN, 1.0, 10).is_err());
        assert!(partition_count(1.0, 1.0, 0).is_err());
    }
}

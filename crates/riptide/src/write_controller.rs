//! Write back-pressure: slows writers smoothly as background work falls behind, and stops
//! them only as a last resort.
//!
//! Pressure comes from three sources, per column family: L0 table count (between
//! `l0_slowdown_trigger` and `l0_stop_trigger`), bytes waiting for compaction (between the
//! soft and hard limits), and frozen memtables waiting for flush. Each gives a fraction in
//! `[0, 1]`; the worst one sets the state:
//!
//! - below every slowdown threshold: [`WriteState::Normal`];
//! - in between: [`WriteState::Delayed`] at a rate falling geometrically from
//!   `delayed_write_rate` to 1/16 of it as the fraction goes from 0 to 1, so throughput
//!   degrades gradually instead of falling off a cliff;
//! - at or past a stop threshold: [`WriteState::Stopped`] until background work catches up.
//!
//! The leader of each write group pays the delay for the bytes it writes, by sleeping (not
//! spinning) before it writes; a stop waits on the background condition variable.

use std::time::Duration;

/// What the write path must do before writing.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum WriteState {
    /// Write at full speed.
    Normal,
    /// Write at most this many bytes per second.
    Delayed {
        /// The allowed rate.
        bytes_per_sec: u64,
        /// Which pressure set the rate (for statistics and logs).
        cause: &'static str,
    },
    /// Wait for background work.
    Stopped {
        /// Why.
        cause: &'static str,
    },
}

/// Thresholds, from the options.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Thresholds {
    pub(crate) l0_slowdown: usize,
    pub(crate) l0_stop: usize,
    pub(crate) pending_soft: u64,
    pub(crate) pending_hard: u64,
    pub(crate) max_immutable_memtables: usize,
    pub(crate) delayed_write_rate: u64,
}

/// The pressure of one column family.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Pressure {
    pub(crate) l0_files: usize,
    pub(crate) pending_compaction_bytes: u64,
    pub(crate) immutable_memtables: usize,
}

/// Where `value` sits between `low` (0.0) and `high` (1.0); `None` below `low`.
fn fraction(value: f64, low: f64, high: f64) -> Option<f64> {
    if value < low {
        None
    } else if value >= high || high <= low {
        Some(1.0)
    } else {
        Some((value - low) / (high - low))
    }
}

/// The state for the worst of `pressures`.
pub(crate) fn decide(t: &Thresholds, pressures: &[Pressure]) -> WriteState {
    let mut worst: Option<(f64, &'static str)> = None;
    let mut consider = |f: Option<f64>, cause: &'static str| {
        if let Some(f) = f
            && worst.is_none_or(|(w, _)| f > w)
        {
            worst = Some((f, cause));
        }
    };
    for p in pressures {
        consider(
            fraction(p.l0_files as f64, t.l0_slowdown as f64, t.l0_stop as f64),
            "too many L0 tables",
        );
        consider(
            fraction(
                p.pending_compaction_bytes as f64,
                t.pending_soft as f64,
                t.pending_hard as f64,
            ),
            "too many bytes waiting for compaction",
        );
        // Frozen memtables: slow down one short of the limit (when the limit leaves room
        // for that), stop at it.
        let max = t.max_immutable_memtables;
        let imm = if p.immutable_memtables >= max {
            Some(1.0)
        } else if max >= 3 && p.immutable_memtables + 1 >= max {
            Some(0.5)
        } else {
            None
        };
        consider(imm, "too many memtables waiting for flush");
    }
    match worst {
        None => WriteState::Normal,
        Some((f, cause)) if f >= 1.0 => WriteState::Stopped { cause },
        Some((f, cause)) => {
            // Geometric fall from the full delayed rate to 1/16 of it: every step of pressure
            // costs the same fraction of throughput, so there is no cliff anywhere.
            let scale = (1.0f64 / 16.0).powf(f);
            let rate = (t.delayed_write_rate as f64 * scale).max(1.0) as u64;
            WriteState::Delayed {
                bytes_per_sec: rate,
                cause,
            }
        }
    }
}

/// How long writing `bytes` at `bytes_per_sec` takes.
pub(crate) fn delay_for(bytes: u64, bytes_per_sec: u64) -> Duration {
    Duration::from_secs_f64(bytes as f64 / bytes_per_sec.max(1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t() -> Thresholds {
        Thresholds {
            l0_slowdown: 20,
            l0_stop: 36,
            pending_soft: 64 << 30,
            pending_hard: 256 << 30,
            max_immutable_memtables: 4,
            delayed_write_rate: 16 << 20,
        }
    }

    fn l0(n: usize) -> Pressure {
        Pressure {
            l0_files: n,
            ..Pressure::default()
        }
    }

    #[test]
    fn normal_below_thresholds_stop_at_them() {
        assert_eq!(decide(&t(), &[l0(0), l0(19)]), WriteState::Normal);
        assert!(matches!(
            decide(&t(), &[l0(36)]),
            WriteState::Stopped { .. }
        ));
        let imm = Pressure {
            immutable_memtables: 4,
            ..Pressure::default()
        };
        assert!(matches!(decide(&t(), &[imm]), WriteState::Stopped { .. }));
    }

    #[test]
    fn rate_falls_smoothly_and_monotonically() {
        let mut last = u64::MAX;
        for n in 20..36 {
            let WriteState::Delayed { bytes_per_sec, .. } = decide(&t(), &[l0(n)]) else {
                panic!("{n} L0 files should delay");
            };
            assert!(bytes_per_sec < last, "rate rose at {n} files");
            // No step bigger than a fifth of the previous rate: smooth, not a cliff.
            if last != u64::MAX {
                assert!(
                    bytes_per_sec * 5 >= last * 4 - last / 100,
                    "cliff at {n} files"
                );
            }
            last = bytes_per_sec;
        }
        assert!(last >= (16 << 20) / 16);
    }

    #[test]
    fn worst_column_family_decides() {
        let pending = Pressure {
            pending_compaction_bytes: 300 << 30,
            ..Pressure::default()
        };
        match decide(&t(), &[l0(21), pending]) {
            WriteState::Stopped { cause } => assert!(cause.contains("compaction")),
            other => panic!("expected a stop, got {other:?}"),
        }
    }

    #[test]
    fn delay_matches_rate() {
        assert_eq!(delay_for(1 << 20, 1 << 20), Duration::from_secs(1));
    }
}

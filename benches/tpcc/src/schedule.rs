//! The order in which the engines load and run: all of one engine, then the next
//! (`sequential`), or the loads first and then each run of every engine before the next
//! run of any (`interleaved`, the default), the engines' order reversed on every other run.
//!
//! Why: on these machines a benchmark that follows another one runs slower (the twenty-fourth
//! session measured the same Riptide build 18-25% slower, with 15-20% more server CPU per
//! New-Order, when it ran second: benches/RESULTS.md, "Picking compactions by overlap").
//! Run sequentially, the first engine gets the fast part of the hour and the last one the
//! slow part. Interleaved runs in the order A B / B A / A B put every engine at every
//! position, so a drift over the hour falls on all of them alike.

use clap::ValueEnum;

/// How the engines' measured runs are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Order {
    /// Every engine loads first; then run 1 of each engine, run 2 of each in the reverse
    /// order, and so on. Each run starts its own server on the engine's data, with its own
    /// warm-up.
    Interleaved,
    /// One engine after the other: load, restart, warm-up, all its runs.
    Sequential,
}

impl Order {
    /// The name used on the command line and in the report.
    pub fn name(self) -> &'static str {
        match self {
            Order::Interleaved => "interleaved",
            Order::Sequential => "sequential",
        }
    }
}

/// One server session of the schedule, for the engine at an index of the engine list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Create the tables, load them, check the load.
    Load(usize),
    /// Warm up, then the measured runs `first..=last` (1-based).
    Runs {
        /// Index of the engine.
        engine: usize,
        /// First run of the session.
        first: u64,
        /// Last run of the session.
        last: u64,
    },
}

/// Every session of an invocation with `engines` engines and `runs` runs, in order.
pub fn steps(engines: usize, runs: u64, order: Order) -> Vec<Step> {
    let mut out = Vec::new();
    match order {
        Order::Sequential => {
            for e in 0..engines {
                out.push(Step::Load(e));
                out.push(Step::Runs {
                    engine: e,
                    first: 1,
                    last: runs,
                });
            }
        }
        Order::Interleaved => {
            out.extend((0..engines).map(Step::Load));
            for run in 1..=runs {
                let mut order: Vec<usize> = (0..engines).collect();
                if run % 2 == 0 {
                    order.reverse();
                }
                out.extend(order.into_iter().map(|engine| Step::Runs {
                    engine,
                    first: run,
                    last: run,
                }));
            }
        }
    }
    out
}

/// The progress bar's length: one step per load, one per warm-up, one per measured run.
pub fn progress_len(steps: &[Step]) -> u64 {
    steps
        .iter()
        .map(|s| match s {
            Step::Load(_) => 1,
            Step::Runs { first, last, .. } => 1 + last + 1 - first,
        })
        .sum()
}

/// The engines' order in each run, for the report: "run 1: a, b; run 2: b, a".
pub fn describe(steps: &[Step], names: &[&str]) -> String {
    let mut runs: Vec<(u64, Vec<&str>)> = Vec::new();
    for s in steps {
        if let Step::Runs {
            engine,
            first,
            last,
        } = s
        {
            let name = names.get(*engine).copied().unwrap_or("?");
            for run in *first..=*last {
                match runs.iter_mut().find(|(r, _)| *r == run) {
                    Some((_, v)) => v.push(name),
                    None => runs.push((run, vec![name])),
                }
            }
        }
    }
    runs.sort_by_key(|(r, _)| *r);
    runs.iter()
        .map(|(r, v)| format!("run {r}: {}", v.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(e: usize, first: u64, last: u64) -> Step {
        Step::Runs {
            engine: e,
            first,
            last,
        }
    }

    #[test]
    fn interleaved_loads_first_then_alternates_the_engines_order() {
        let s = steps(2, 3, Order::Interleaved);
        assert_eq!(
            s,
            vec![
                Step::Load(0),
                Step::Load(1),
                runs(0, 1, 1),
                runs(1, 1, 1),
                runs(1, 2, 2),
                runs(0, 2, 2),
                runs(0, 3, 3),
                runs(1, 3, 3),
            ]
        );
        assert_eq!(progress_len(&s), 2 + 6 * 2);
        assert_eq!(
            describe(&s, &["riptide", "innodb"]),
            "run 1: riptide, innodb; run 2: innodb, riptide; run 3: riptide, innodb"
        );
    }

    #[test]
    fn sequential_runs_each_engine_whole() {
        let s = steps(3, 2, Order::Sequential);
        assert_eq!(
            s,
            vec![
                Step::Load(0),
                runs(0, 1, 2),
                Step::Load(1),
                runs(1, 1, 2),
                Step::Load(2),
                runs(2, 1, 2),
            ]
        );
        assert_eq!(progress_len(&s), 3 * (1 + 1 + 2));
        assert_eq!(
            describe(&s, &["a", "b", "c"]),
            "run 1: a, b, c; run 2: a, b, c"
        );
    }

    #[test]
    fn every_engine_gets_every_run_once() {
        for order in [Order::Interleaved, Order::Sequential] {
            let s = steps(3, 4, order);
            for e in 0..3 {
                let mut got: Vec<u64> = s
                    .iter()
                    .filter_map(|st| match st {
                        Step::Runs {
                            engine,
                            first,
                            last,
                        } if *engine == e => Some(*first..=*last),
                        _ => None,
                    })
                    .flatten()
                    .collect();
                got.sort();
                assert_eq!(got, vec![1, 2, 3, 4], "{order:?} engine {e}");
            }
        }
    }
}

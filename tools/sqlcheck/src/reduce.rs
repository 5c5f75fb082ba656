//! Delta debugging: shrink a statement sequence (or a schedule) while the difference
//! persists, replaying each candidate from a fresh schema.

use std::time::Instant;

use anyhow::Result;

use crate::concurrent::{self, Schedule, Step, StepOutcome};
use crate::exec::Outcome;
use crate::generate::Stmt;
use crate::schema::{INNO_DB, RIP_DB, Table};
use crate::session::{Pair, fresh_schema};
use crate::{Ctl, differs};

/// `items` with the `len` items from `at` left out.
fn without<T: Clone>(items: &[T], at: usize, len: usize) -> Vec<T> {
    items
        .iter()
        .take(at)
        .chain(items.iter().skip(at + len))
        .cloned()
        .collect()
}

/// Removes chunks of `items` (halves, quarters, ... single items) as long as `test` still
/// holds for what is left (`test` holds for `items` itself). Stops early at `deadline`.
pub fn ddmin<T: Clone>(
    mut items: Vec<T>,
    deadline: Instant,
    mut test: impl FnMut(&[T]) -> Result<bool>,
) -> Result<Vec<T>> {
    let mut chunk = items.len().div_ceil(2).max(1);
    while !items.is_empty() {
        let mut removed = false;
        let mut i = 0;
        while i < items.len() {
            if Instant::now() > deadline {
                return Ok(items);
            }
            let cand = without(&items, i, chunk);
            if test(&cand)? {
                items = cand;
                removed = true;
            } else {
                i += chunk;
            }
        }
        if chunk == 1 && !removed {
            break;
        }
        if !removed {
            chunk = chunk.div_ceil(2);
        }
        chunk = chunk.min(items.len().div_ceil(2)).max(1);
    }
    Ok(items)
}

/// A statement's outcomes on both engines during a replay.
pub type Pairwise = (Outcome, Outcome);

/// Replays `stmts` from a fresh schema until the first difference; returns each statement
/// run with its two outcomes, and the index of the difference (the last one run).
pub fn replay(
    ctl: &mut Ctl,
    tables: &[Table],
    stmts: &[Stmt],
) -> Result<(Vec<Pairwise>, Option<usize>)> {
    ctl.ensure_running()?;
    fresh_schema(&ctl.server, tables)?;
    let mut pair = Pair::connect(&ctl.server)?;
    let mut out = Vec::new();
    for (i, s) in stmts.iter().enumerate() {
        let (a, b) = pair.run(s);
        let d = differs(s, &a, &b);
        out.push((a, b));
        if d {
            return Ok((out, Some(i)));
        }
    }
    Ok((out, None))
}

/// The result of reducing a statement sequence.
pub struct Reduced {
    /// The difference showed again on the first replay of the whole sequence.
    pub reproduced: bool,
    /// The statements left (the differing one last).
    pub stmts: Vec<Stmt>,
    /// Their outcomes on the last replay (RIPTIDE, InnoDB).
    pub outcomes: Vec<Pairwise>,
    /// Replays run.
    pub replays: u64,
}

/// Reduces `stmts` (whose last statement differs) to a minimal sequence whose last statement
/// still differs first.
pub fn reduce(
    ctl: &mut Ctl,
    tables: &[Table],
    stmts: Vec<Stmt>,
    deadline: Instant,
    say: &dyn Fn(String),
) -> Result<Reduced> {
    let mut replays = 0u64;
    let Some((target, prefix)) = stmts.split_last() else {
        return Ok(Reduced {
            reproduced: false,
            stmts,
            outcomes: Vec::new(),
            replays,
        });
    };
    let mut target = target.clone();
    let mut check = |ctl: &mut Ctl, prefix: &[Stmt], target: &Stmt| -> Result<bool> {
        replays += 1;
        let mut all = prefix.to_vec();
        all.push(target.clone());
        let (_, at) = replay(ctl, tables, &all)?;
        Ok(at == Some(prefix.len()))
    };
    if !check(ctl, prefix, &target)? {
        let (outcomes, _) = replay(ctl, tables, &stmts)?;
        return Ok(Reduced {
            reproduced: false,
            stmts,
            outcomes,
            replays: replays + 1,
        });
    }
    say(format!(
        "the difference reproduces on a fresh schema; reducing {} statements",
        stmts.len()
    ));
    let mut prefix = ddmin(prefix.to_vec(), deadline, |cand| check(ctl, cand, &target))?;
    say(format!(
        "{} statements left; reducing multi-row INSERTs",
        prefix.len() + 1
    ));
    // The rows of multi-row statements, the differing one included.
    for p in 0..=prefix.len() {
        let stmt = match prefix.get(p) {
            Some(s) => s.clone(),
            None => target.clone(),
        };
        let n = stmt.tuples.as_ref().map_or(0, |t| t.rows.len());
        if n < 2 {
            continue;
        }
        let keep = ddmin((0..n).collect::<Vec<usize>>(), deadline, |keep| {
            if keep.is_empty() {
                return Ok(false);
            }
            let s = stmt.keep_rows(keep);
            if p < prefix.len() {
                let mut cand = prefix.clone();
                if let Some(slot) = cand.get_mut(p) {
                    *slot = s;
                }
                check(ctl, &cand, &target)
            } else {
                check(ctl, &prefix, &s)
            }
        })?;
        let s = stmt.keep_rows(&keep);
        match prefix.get_mut(p) {
            Some(slot) => *slot = s,
            None => target = s,
        }
    }
    // Fewer rows may let more statements go.
    prefix = ddmin(prefix, deadline, |cand| check(ctl, cand, &target))?;
    let mut all = prefix;
    all.push(target);
    let (outcomes, _) = replay(ctl, tables, &all)?;
    Ok(Reduced {
        reproduced: true,
        stmts: all,
        outcomes,
        replays: replays + 1,
    })
}

/// One run of a schedule on both engines.
pub struct ScheduleRun {
    /// Each step's outcome on RIPTIDE.
    pub rip: Vec<StepOutcome>,
    /// Each step's outcome on InnoDB.
    pub inno: Vec<StepOutcome>,
    /// CHECK TABLE's answer afterwards on RIPTIDE and InnoDB.
    pub checks: [String; 2],
    /// The index (into the steps run) of the first difference. A CHECK TABLE answer that
    /// differs is a difference at the last step.
    pub at: Option<usize>,
}

/// Runs a schedule (the steps `steps`) on both engines and compares.
pub fn run_schedule(ctl: &mut Ctl, sched: &Schedule, steps: &[Step]) -> Result<ScheduleRun> {
    ctl.ensure_running()?;
    let (rip, ca) = concurrent::run(&ctl.server, RIP_DB, sched, steps, ctl.block)?;
    let (inno, cb) = concurrent::run(&ctl.server, INNO_DB, sched, steps, ctl.block)?;
    let mut at = concurrent::first_difference(&rip, &inno);
    if at.is_none() && ca != cb {
        at = Some(steps.len().saturating_sub(1));
    }
    Ok(ScheduleRun {
        rip,
        inno,
        checks: [ca, cb],
        at,
    })
}

/// The result of reducing a schedule.
pub struct ReducedSchedule {
    /// The steps left.
    pub steps: Vec<Step>,
    /// The last run of them (one that showed the difference, if any did).
    pub run: ScheduleRun,
    /// Of the last three runs of the reduced schedule, how many showed the difference.
    pub confirmed: u32,
}

/// Reduces a schedule whose step `sched.steps[at]` differs: steps are dropped while the
/// first difference stays on that step; then the result is run three more times.
pub fn reduce_schedule(
    ctl: &mut Ctl,
    sched: &Schedule,
    at: usize,
    deadline: Instant,
) -> Result<ReducedSchedule> {
    let target_id = sched.steps.get(at).map_or(usize::MAX, |s| s.id);
    let upto: Vec<Step> = sched.steps.iter().take(at + 1).cloned().collect();
    let test = |ctl: &mut Ctl, steps: &[Step]| -> Result<bool> {
        let r = run_schedule(ctl, sched, steps)?;
        Ok(r.at
            .and_then(|i| steps.get(i))
            .is_some_and(|s| s.id == target_id))
    };
    let Some((last, prefix)) = upto.split_last() else {
        let run = run_schedule(ctl, sched, &upto)?;
        return Ok(ReducedSchedule {
            steps: upto,
            run,
            confirmed: 0,
        });
    };
    let last = last.clone();
    let prefix = ddmin(prefix.to_vec(), deadline, |cand| {
        let mut all = cand.to_vec();
        all.push(last.clone());
        test(ctl, &all)
    })?;
    let mut steps = prefix;
    steps.push(last);
    let mut confirmed = 0;
    let mut final_run: Option<ScheduleRun> = None;
    for _ in 0..3 {
        let r = run_schedule(ctl, sched, &steps)?;
        if r.at.is_some() {
            confirmed += 1;
        }
        if final_run.is_none() || r.at.is_some() {
            final_run = Some(r);
        }
    }
    let run = match final_run {
        Some(r) => r,
        None => run_schedule(ctl, sched, &steps)?,
    };
    Ok(ReducedSchedule {
        steps,
        run,
        confirmed,
    })
}

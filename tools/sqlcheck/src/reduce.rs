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
    // Only the tables the statements name: a short candidate then replays in milliseconds.
    let used: Vec<Table> = tables
        .iter()
        .filter(|t| {
            stmts
                .iter()
                .any(|s| crate::report::mentions(&s.sql, t.name))
        })
        .cloned()
        .collect();
    fresh_schema(&ctl.server, &used)?;
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
    /// The reduced sequence did not show it in five more replays (the outcomes are from the
    /// last of them): it comes and goes.
    pub flaky: bool,
    /// The statements left (the differing one last).
    pub stmts: Vec<Stmt>,
    /// The tables, without the indexes and columns the difference does not need.
    pub tables: Vec<Table>,
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
            flaky: false,
            stmts,
            tables: tables.to_vec(),
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
            flaky: false,
            stmts,
            tables: tables.to_vec(),
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
    // Columns of multi-row statements, then the schema: indexes, then columns.
    say(format!(
        "{} statements left; dropping columns and indexes",
        all.len()
    ));
    let mut tables = tables.to_vec();
    let mut test = |ctl: &mut Ctl, tables: &[Table], all: &[Stmt]| -> Result<bool> {
        replays += 1;
        let (_, at) = replay(ctl, tables, all)?;
        Ok(at == Some(all.len().saturating_sub(1)))
    };
    for p in 0..all.len() {
        let ncols = all.get(p).map_or(0, insert_columns);
        for col in (0..ncols).rev() {
            if Instant::now() > deadline {
                break;
            }
            let Some(s) = all.get(p).and_then(|s| drop_insert_column(s, col)) else {
                continue;
            };
            let mut cand = all.clone();
            if let Some(slot) = cand.get_mut(p) {
                *slot = s;
            }
            if test(ctl, &tables, &cand)? {
                all = cand;
            }
        }
    }
    for t in 0..tables.len() {
        let name = tables.get(t).map_or("", |t| t.name);
        if !all.iter().any(|s| crate::report::mentions(&s.sql, name)) {
            continue;
        }
        let nidx = tables.get(t).map_or(0, |t| t.indexes.len());
        for i in (0..nidx).rev() {
            if Instant::now() > deadline {
                break;
            }
            let mut cand = tables.clone();
            if let Some(tab) = cand.get_mut(t) {
                if tab.indexes.get(i).is_none_or(|x| x.primary()) {
                    continue;
                }
                tab.indexes.remove(i);
            }
            if test(ctl, &cand, &all)? {
                tables = cand;
            }
        }
        let ncols = tables.get(t).map_or(0, |t| t.columns.len());
        for c in (0..ncols).rev() {
            if Instant::now() > deadline {
                break;
            }
            let mut cand = tables.clone();
            if let Some(tab) = cand.get_mut(t) {
                if tab.columns.len() < 2 {
                    continue;
                }
                let col = tab.columns.remove(c).name;
                tab.indexes.retain(|x| !x.parts.iter().any(|p| p.0 == col));
            }
            if test(ctl, &cand, &all)? {
                tables = cand;
            }
        }
    }
    // The last replay gives the script's outcomes: one that shows the difference (a
    // difference that comes and goes, with the engine's state or the plan, may need a few).
    let mut shown = 0;
    let mut outcomes = Vec::new();
    for _ in 0..5 {
        let (o, at) = replay(ctl, &tables, &all)?;
        replays += 1;
        if at == Some(all.len().saturating_sub(1)) {
            shown += 1;
            outcomes = o;
            break;
        }
        outcomes = o;
    }
    Ok(Reduced {
        reproduced: true,
        flaky: shown == 0,
        stmts: all,
        tables,
        outcomes,
        replays,
    })
}

/// Splits `s` at the commas outside quotes and parentheses.
fn split_top(s: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let (mut depth, mut quote, mut escaped) = (0i32, false, false);
    for ch in s.chars() {
        if quote {
            cur.push(ch);
            if escaped {
                escaped = false;
            } else if ch == '\\' {
                escaped = true;
            } else if ch == '\'' {
                quote = false;
            }
            continue;
        }
        match ch {
            '\'' => quote = true,
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.trim().is_empty() {
        parts.push(cur.trim().to_string());
    }
    parts
}

/// The column list of an `INSERT ... (cols) VALUES ` head: text before, columns, text after.
fn head_columns(head: &str) -> Option<(&str, Vec<String>, &str)> {
    let open = head.find(" (")?;
    let close = head.find(") VALUES")?;
    let cols = split_top(head.get(open + 2..close)?);
    Some((head.get(..open + 2)?, cols, head.get(close..)?))
}

/// How many columns a multi-row INSERT lists (0 for other statements).
fn insert_columns(s: &Stmt) -> usize {
    s.tuples
        .as_ref()
        .and_then(|t| head_columns(&t.head))
        .map_or(0, |h| h.1.len())
}

/// `s` without its `col`-th column (in the column list and every row).
fn drop_insert_column(s: &Stmt, col: usize) -> Option<Stmt> {
    let t = s.tuples.as_ref()?;
    let (before, mut cols, after) = head_columns(&t.head)?;
    if cols.len() < 2 || col >= cols.len() {
        return None;
    }
    cols.remove(col);
    let head = format!("{before}{}{after}", cols.join(", "));
    let mut rows = Vec::new();
    for r in &t.rows {
        let inner = r.trim().strip_prefix('(')?.strip_suffix(')')?;
        let mut vals = split_top(inner);
        if col >= vals.len() {
            return None;
        }
        vals.remove(col);
        rows.push(format!("({})", vals.join(", ")));
    }
    let mut out = s.clone();
    if let Some(tt) = &mut out.tuples {
        tt.head = head;
        tt.rows = rows;
        out.sql = format!("{}{}{}", tt.head, tt.rows.join(", "), tt.tail);
    }
    Some(out)
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

/// Reduces a schedule whose step `sched.steps[at]` differs: other steps (before and after
/// it) are dropped while the first difference stays on that step; then the result is run
/// three more times.
pub fn reduce_schedule(
    ctl: &mut Ctl,
    sched: &Schedule,
    at: usize,
    deadline: Instant,
) -> Result<ReducedSchedule> {
    let Some(target) = sched.steps.get(at).cloned() else {
        let run = run_schedule(ctl, sched, &sched.steps)?;
        return Ok(ReducedSchedule {
            steps: sched.steps.clone(),
            run,
            confirmed: 0,
        });
    };
    // Every other step may go, those after the differing one too (a blocked step's answer
    // depends on the COMMIT or ROLLBACK that follows it).
    let with_target = |others: &[Step]| -> Vec<Step> {
        let mut all = others.to_vec();
        all.push(target.clone());
        all.sort_by_key(|s| s.id);
        all
    };
    let others: Vec<Step> = sched
        .steps
        .iter()
        .filter(|s| s.id != target.id)
        .cloned()
        .collect();
    let others = ddmin(others, deadline, |cand| {
        let steps = with_target(cand);
        let r = run_schedule(ctl, sched, &steps)?;
        Ok(r.at
            .and_then(|i| steps.get(i))
            .is_some_and(|s| s.id == target.id))
    })?;
    let steps = with_target(&others);
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

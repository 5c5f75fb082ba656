//! The replayable scripts printed for a difference: an mtr test (`mysql-test/riptide/t/`)
//! that creates the tables it needs in ENGINE=RIPTIDE, runs the statements with each one's
//! outcome as a comment, and ends with the differing statement and both answers. With
//! ENGINE=InnoDB in place of RIPTIDE the script gives InnoDB's answers.

use std::fmt::Write as _;

use crate::concurrent::{NAMES, Schedule, Step, StepOutcome, session_init};
use crate::exec::{self, Outcome};
use crate::generate::Stmt;
use crate::reduce::Pairwise;
use crate::schema::{CONC_TABLE, Table, conc_ddl};

/// Whether `sql` names table `t` (as a word).
pub fn mentions(sql: &str, t: &str) -> bool {
    sql.match_indices(t).any(|(i, _)| {
        let before = sql.get(..i).and_then(|s| s.chars().last());
        let after = sql.get(i + t.len()..).and_then(|s| s.chars().next());
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !word(before) && !word(after)
    })
}

/// `--error N` before a statement InnoDB fails (the regression test expects InnoDB's answer).
fn expect_error(inno: &Outcome) -> Option<String> {
    match inno {
        Outcome::Err { code, .. } => Some(format!("--error {code}")),
        _ => None,
    }
}

fn comment(text: &str) -> String {
    text.lines()
        .map(|l| format!("# {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The script of a single-session difference. `header` says where it comes from.
pub fn script(header: &str, tables: &[Table], stmts: &[Stmt], outcomes: &[Pairwise]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}", comment(header));
    let _ = writeln!(
        s,
        "# mtr test (mysql-test/riptide/t/<name>.test). With ENGINE=InnoDB instead of RIPTIDE\n\
         # the last statement gives InnoDB's answer. Tables and statements as generated."
    );
    let _ = writeln!(s, "--source include/have_riptide.inc");
    let used: Vec<&Table> = tables
        .iter()
        .filter(|t| stmts.iter().any(|st| mentions(&st.sql, t.name)))
        .collect();
    for t in &used {
        let _ = writeln!(s, "{};", t.ddl("RIPTIDE"));
    }
    let n = stmts.len();
    for (i, st) in stmts.iter().enumerate() {
        let (rip, inno) = match outcomes.get(i) {
            Some((a, b)) => (Some(a), Some(b)),
            None => (None, None),
        };
        let last = i + 1 == n;
        if let Some(e) = inno.and_then(expect_error) {
            let _ = writeln!(s, "{e}");
        }
        let _ = writeln!(s, "{};", st.sql);
        match (rip, inno) {
            (Some(a), Some(b)) if last => {
                let rows = matches!(
                    (a, b),
                    (
                        Outcome::Ok { rows: Some(_), .. },
                        Outcome::Ok { rows: Some(_), .. }
                    )
                );
                let how = match (rows, st.ordered) {
                    (false, _) => "",
                    (true, true) => " (rows compared in order)",
                    (true, false) => " (rows compared as a multiset)",
                };
                let _ = writeln!(s, "# ^ DIFFERENT{how}:");
                let _ = writeln!(s, "{}", comment(&format!("RIPTIDE: {}", exec::full(a, 40))));
                let _ = writeln!(s, "{}", comment(&format!("InnoDB:  {}", exec::full(b, 40))));
                if rows {
                    let _ = writeln!(s, "{}", comment(&exec::diff(a, b, st.ordered)));
                }
            }
            (Some(a), Some(b)) if a == b => {
                let _ = writeln!(s, "# both: {}", exec::brief(a));
            }
            (Some(a), Some(b)) => {
                let _ = writeln!(
                    s,
                    "# RIPTIDE: {} / InnoDB: {}",
                    exec::brief(a),
                    exec::brief(b)
                );
            }
            _ => {}
        }
    }
    if !used.is_empty() {
        let _ = writeln!(
            s,
            "DROP TABLE {};",
            used.iter().map(|t| t.name).collect::<Vec<_>>().join(", ")
        );
    }
    s
}

fn describe(o: &StepOutcome) -> String {
    if o.blocked {
        format!("blocked, then {}", exec::brief(&o.outcome))
    } else {
        exec::brief(&o.outcome)
    }
}

/// The script of a two-session difference: mtr syntax with two connections; a step that
/// blocked on either engine is sent (`--send`) and reaped before its session's next step.
pub fn schedule_script(
    header: &str,
    sched: &Schedule,
    steps: &[Step],
    rip: &[StepOutcome],
    inno: &[StepOutcome],
    checks: &[String; 2],
    at: Option<usize>,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}", comment(header));
    let _ = writeln!(
        s,
        "# mtr test (mysql-test/riptide/t/<name>.test): two sessions at {}. A step marked\n\
         # blocked waited for a lock (it ran past the blocking threshold); with ENGINE=InnoDB\n\
         # instead of RIPTIDE the script gives InnoDB's answers.",
        sched.level
    );
    let _ = writeln!(s, "--source include/have_riptide.inc");
    let _ = writeln!(s, "{};", conc_ddl("RIPTIDE"));
    for st in &sched.setup {
        let _ = writeln!(s, "{st};");
    }
    for name in NAMES {
        let _ = writeln!(
            s,
            "--connect (con_{},localhost,root,,test)",
            name.to_lowercase()
        );
        for i in session_init(sched.level) {
            let _ = writeln!(s, "{i};");
        }
    }
    let mut current = usize::MAX;
    let mut sent: [Option<usize>; 2] = [None, None];
    let reap = |s: &mut String, current: &mut usize, k: usize, p: usize| {
        if *current != k {
            let _ = writeln!(
                s,
                "--connection con_{}",
                NAMES.get(k).unwrap_or(&"a").to_lowercase()
            );
            *current = k;
        }
        if let Some(e) = inno.get(p).and_then(|o| expect_error(&o.outcome)) {
            let _ = writeln!(s, "{e}");
        }
        let _ = writeln!(s, "--reap");
    };
    for (i, st) in steps.iter().enumerate() {
        let k = st.session;
        if let Some(p) = sent.get_mut(k).and_then(Option::take) {
            reap(&mut s, &mut current, k, p);
        }
        if current != k {
            let _ = writeln!(
                s,
                "--connection con_{}",
                NAMES.get(k).unwrap_or(&"a").to_lowercase()
            );
            current = k;
        }
        let (a, b) = (rip.get(i), inno.get(i));
        let blocked = a.is_some_and(|o| o.blocked) || b.is_some_and(|o| o.blocked);
        if blocked {
            let _ = writeln!(s, "--send {}", st.sql);
            if let Some(slot) = sent.get_mut(k) {
                *slot = Some(i);
            }
        } else {
            if let Some(e) = b.and_then(|o| expect_error(&o.outcome)) {
                let _ = writeln!(s, "{e}");
            }
            let _ = writeln!(s, "{};", st.sql);
        }
        let mark = if Some(i) == at { "DIFFERENT: " } else { "" };
        match (a, b) {
            (Some(a), Some(b)) if Some(i) == at => {
                let _ = writeln!(
                    s,
                    "{}",
                    comment(&format!(
                        "^ {mark}step {} of session {}\nRIPTIDE: {}\nInnoDB:  {}",
                        st.id,
                        NAMES.get(k).unwrap_or(&"?"),
                        describe(a).replace('\n', "\n  ") + &full_rows(&a.outcome),
                        describe(b).replace('\n', "\n  ") + &full_rows(&b.outcome)
                    ))
                );
            }
            (Some(a), Some(b)) if a == b => {
                let _ = writeln!(s, "# both: {}", describe(a));
            }
            (Some(a), Some(b)) => {
                let _ = writeln!(s, "# RIPTIDE: {} / InnoDB: {}", describe(a), describe(b));
            }
            _ => {}
        }
    }
    for k in 0..2 {
        if let Some(p) = sent.get_mut(k).and_then(Option::take) {
            reap(&mut s, &mut current, k, p);
        }
    }
    let _ = writeln!(s, "--connection default");
    let _ = writeln!(s, "--disconnect con_a\n--disconnect con_b");
    let _ = writeln!(s, "CHECK TABLE {CONC_TABLE};");
    let _ = writeln!(
        s,
        "# RIPTIDE: {} / InnoDB: {}",
        checks[0].as_str(),
        checks[1].as_str()
    );
    let _ = writeln!(s, "DROP TABLE {CONC_TABLE};");
    s
}

fn full_rows(o: &Outcome) -> String {
    let f = exec::full(o, 30);
    match f.split_once('\n') {
        Some((_, rows)) => format!("\n{rows}"),
        None => String::new(),
    }
}

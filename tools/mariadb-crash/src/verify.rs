//! After a restart: every table against the expected state, every secondary index against
//! the primary key, CHECK TABLE, and no prepared transaction left over.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use anyhow::{Context, Result, bail};
use mysql::Conn;
use mysql::prelude::Queryable;

use crate::model::{Cell, Part, fences, num, t1_cells, t2_cells, t3_cells};
use crate::worker::cells;

/// What a verification looked at.
#[derive(Clone, Debug, Default)]
pub struct Verified {
    /// Rows compared through the primary key (or the table scan, for `t2`).
    pub rows: u64,
    /// Rows compared through a secondary index (each one an index entry followed to its row).
    pub index_entries: u64,
    /// Tables CHECK TABLE passed.
    pub checked_tables: u64,
}

impl Verified {
    /// Adds `o` to these counters.
    pub fn add(&mut self, o: &Verified) {
        self.rows += o.rows;
        self.index_entries += o.index_entries;
        self.checked_tables += o.checked_tables;
    }
}

/// A sort key built from result cells: NULL first, then numbers, then text (lowercased:
/// the test's strings are ASCII, compared case-insensitively as their collations do).
#[derive(PartialEq, Eq, PartialOrd, Ord, Debug)]
enum KeyPart {
    Null,
    Int(i64),
    Text(String),
}

fn key_part(c: &Cell) -> KeyPart {
    match c {
        None => KeyPart::Null,
        Some(s) => s
            .parse::<i64>()
            .map_or_else(|_| KeyPart::Text(s.to_ascii_lowercase()), KeyPart::Int),
    }
}

fn key_of(row: &[Cell], cols: &[usize]) -> Vec<KeyPart> {
    cols.iter()
        .map(|i| row.get(*i).map_or(KeyPart::Null, key_part))
        .collect()
}

fn sort_rows(rows: &mut [Vec<Cell>], cols: &[usize]) {
    rows.sort_by_key(|r| key_of(r, cols));
}

/// Compares two row lists (both sorted the same way); an error shows what differs.
fn compare(what: &str, got: &[Vec<Cell>], want: &[Vec<Cell>]) -> Result<()> {
    if got == want {
        return Ok(());
    }
    let mut count: BTreeMap<&Vec<Cell>, i64> = BTreeMap::new();
    for r in got {
        *count.entry(r).or_default() += 1;
    }
    for r in want {
        *count.entry(r).or_default() -= 1;
    }
    let extra: Vec<String> = count
        .iter()
        .filter(|(_, n)| **n > 0)
        .take(8)
        .map(|(r, n)| format!("{r:?} x{n}"))
        .collect();
    let missing: Vec<String> = count
        .iter()
        .filter(|(_, n)| **n < 0)
        .take(8)
        .map(|(r, n)| format!("{r:?} x{}", -n))
        .collect();
    bail!(
        "{what}: {} rows, expected {}\n  unexpected (first 8): {}\n  missing (first 8): {}{}",
        got.len(),
        want.len(),
        if extra.is_empty() {
            "none".into()
        } else {
            extra.join("\n    ")
        },
        if missing.is_empty() {
            "none".into()
        } else {
            missing.join("\n    ")
        },
        if extra.is_empty() && missing.is_empty() {
            "\n  (same rows, different order)"
        } else {
            ""
        }
    )
}

fn query(conn: &mut Conn, sql: &str) -> Result<Vec<Vec<Cell>>> {
    let rows: Vec<mysql::Row> = conn.query(sql).with_context(|| format!("`{sql}`"))?;
    Ok(rows.into_iter().map(cells).collect())
}

/// Fails unless EXPLAIN shows `sql` reading `table` through `index`.
fn uses_index(conn: &mut Conn, sql: &str, index: &str) -> Result<()> {
    let plan = query(conn, &format!("EXPLAIN {sql}"))?;
    let key = plan.first().and_then(|r| r.get(5)).cloned().flatten();
    if key.as_deref() != Some(index) {
        bail!("`{sql}` does not read through index {index}: EXPLAIN says {plan:?}");
    }
    Ok(())
}

/// One secondary index check: the rows read through `index` (in index order) are exactly
/// the table's rows, and come in the order of the index's columns.
struct IndexCheck {
    table: &'static str,
    index: &'static str,
    /// Columns selected (the whole row, so each entry is followed to its row).
    columns: &'static str,
    /// ORDER BY: the index's columns.
    order_by: &'static str,
    /// Positions of the ORDER BY columns in the selected columns.
    order_cols: &'static [usize],
    /// Positions to sort by for the comparison with the expected rows.
    identity_cols: &'static [usize],
}

const INDEX_CHECKS: &[IndexCheck] = &[
    IndexCheck {
        table: "t1",
        index: "ka",
        columns: "id, a, b, c, u, pad",
        order_by: "a",
        order_cols: &[1],
        identity_cols: &[0],
    },
    IndexCheck {
        table: "t1",
        index: "kbc",
        columns: "id, a, b, c, u, pad",
        order_by: "b, c",
        order_cols: &[2, 3],
        identity_cols: &[0],
    },
    IndexCheck {
        table: "t1",
        index: "ku",
        columns: "id, a, b, c, u, pad",
        order_by: "u",
        order_cols: &[4],
        identity_cols: &[0],
    },
    IndexCheck {
        table: "t2",
        index: "kk",
        columns: "k, v, w",
        order_by: "k",
        order_cols: &[0],
        identity_cols: &[0, 1, 2],
    },
    IndexCheck {
        table: "t2",
        index: "kv",
        columns: "k, v, w",
        order_by: "v",
        order_cols: &[1],
        identity_cols: &[0, 1, 2],
    },
    IndexCheck {
        table: "t3",
        index: "uv",
        columns: "g, n, v, note",
        order_by: "v",
        order_cols: &[2],
        identity_cols: &[0, 1],
    },
    IndexCheck {
        table: "t3",
        index: "kn",
        columns: "g, n, v, note",
        order_by: "n, v",
        order_cols: &[1, 2],
        identity_cols: &[0, 1],
    },
    IndexCheck {
        table: "ledger",
        index: "kc",
        columns: "txn, conn, round, stmts",
        order_by: "conn, round",
        order_cols: &[1, 2],
        identity_cols: &[0],
    },
];

/// The whole expected content of each table, as the text protocol returns it.
struct Expected {
    t1: Vec<Vec<Cell>>,
    t2: Vec<Vec<Cell>>,
    t3: Vec<Vec<Cell>>,
    ledger: Vec<Vec<Cell>>,
    ledger_inno: Vec<Vec<Cell>>,
}

fn expected(parts: &[Part]) -> Expected {
    let mut e = Expected {
        t1: Vec::new(),
        t2: Vec::new(),
        t3: Vec::new(),
        ledger: Vec::new(),
        ledger_inno: Vec::new(),
    };
    for (w, p) in parts.iter().enumerate() {
        e.t1.extend(p.t1.iter().map(|(id, r)| t1_cells(*id, r)));
        e.t2.extend(p.t2.iter().map(|(k, r)| t2_cells(*k, r)));
        e.t3.extend(p.t3.iter().map(|((_, n), r)| t3_cells(*n, r)));
        e.ledger.extend(
            p.ledger
                .iter()
                .map(|(t, l)| vec![num(*t), num(w as i64), num(l.round), num(l.stmts)]),
        );
        e.ledger_inno
            .extend(p.ledger_inno.iter().map(|t| vec![num(*t), num(w as i64)]));
        let (_, [f1, f2, f3]) = fences(w);
        e.t1.push(f1);
        e.t2.push(f2);
        e.t3.push(f3);
    }
    sort_rows(&mut e.t1, &[0]);
    sort_rows(&mut e.t2, &[0, 1, 2]);
    sort_rows(&mut e.t3, &[0, 1]);
    sort_rows(&mut e.ledger, &[0]);
    sort_rows(&mut e.ledger_inno, &[0]);
    e
}

/// Checks everything against `parts` (the committed state of every connection).
pub fn verify(conn: &mut Conn, parts: &[Part]) -> Result<Verified> {
    let mut v = Verified::default();
    let prepared = query(conn, "XA RECOVER")?;
    if !prepared.is_empty() {
        bail!("prepared transactions left after recovery (XA RECOVER): {prepared:?}");
    }
    let e = expected(parts);
    /// A table, the query reading it whole, its identity columns, its expected rows.
    type Full<'a> = (&'a str, &'a str, &'a [usize], &'a Vec<Vec<Cell>>);
    let full: [Full<'_>; 5] = [
        (
            "ledger",
            "SELECT txn, conn, round, stmts FROM ledger FORCE INDEX (PRIMARY) ORDER BY txn",
            &[0],
            &e.ledger,
        ),
        (
            "ledger_inno (InnoDB)",
            "SELECT txn, conn FROM ledger_inno ORDER BY txn",
            &[0],
            &e.ledger_inno,
        ),
        (
            "t1",
            "SELECT id, a, b, c, u, pad FROM t1 FORCE INDEX (PRIMARY) ORDER BY id",
            &[0],
            &e.t1,
        ),
        ("t2", "SELECT k, v, w FROM t2", &[0, 1, 2], &e.t2),
        (
            "t3",
            "SELECT g, n, v, note FROM t3 FORCE INDEX (PRIMARY) ORDER BY g, n",
            &[0, 1],
            &e.t3,
        ),
    ];
    for (what, sql, cols, want) in full {
        let mut got = query(conn, sql)?;
        sort_rows(&mut got, cols);
        compare(&format!("table {what} (`{sql}`)"), &got, want)?;
        v.rows += got.len() as u64;
    }
    for check in INDEX_CHECKS {
        let sql = format!(
            "SELECT {} FROM {} FORCE INDEX ({}) ORDER BY {}",
            check.columns, check.table, check.index, check.order_by
        );
        uses_index(conn, &sql, check.index)?;
        let mut got = query(conn, &sql)?;
        for pair in got.windows(2) {
            if let [a, b] = pair
                && key_of(a, check.order_cols).cmp(&key_of(b, check.order_cols))
                    == Ordering::Greater
            {
                bail!(
                    "index {}.{} returns rows out of order: {a:?} before {b:?}",
                    check.table,
                    check.index
                );
            }
        }
        sort_rows(&mut got, check.identity_cols);
        let want = match check.table {
            "t1" => &e.t1,
            "t2" => &e.t2,
            "t3" => &e.t3,
            _ => &e.ledger,
        };
        compare(
            &format!(
                "secondary index {}.{} against the primary key (`{sql}`)",
                check.table, check.index
            ),
            &got,
            want,
        )?;
        v.index_entries += got.len() as u64;
    }
    let report = query(conn, "CHECK TABLE t1, t2, t3, ledger, ledger_inno")?;
    let bad: Vec<&Vec<Cell>> = report
        .iter()
        .filter(|r| {
            !(r.get(2).cloned().flatten().as_deref() == Some("status")
                && r.get(3).cloned().flatten().as_deref() == Some("OK"))
        })
        .collect();
    if !bad.is_empty() || report.len() != 5 {
        bail!("CHECK TABLE did not report OK for every table: {report:?}");
    }
    v.checked_tables += report.len() as u64;
    Ok(v)
}

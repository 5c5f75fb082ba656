//! Running one statement and describing what the server answered: the rows (text
//! protocol: every value as its bytes), affected rows, last insert id, the OK packet's info
//! ("Rows matched: 2  Changed: 1  Warnings: 0"), the warnings' codes, or the error; and
//! comparing two such answers.

use std::fmt::Write as _;

use mysql::prelude::Queryable;
use mysql::{Conn, Value};

/// One value of a result row: NULL or its bytes.
pub type Cell = Option<Vec<u8>>;

/// What the server answered to one statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It succeeded.
    Ok {
        /// Its result rows (None for a statement without a result set).
        rows: Option<Vec<Vec<Cell>>>,
        /// Affected rows (changed rows: the connection has no `CLIENT_FOUND_ROWS`).
        affected: u64,
        /// The OK packet's last insert id.
        insert_id: u64,
        /// The OK packet's info string.
        info: String,
        /// The warnings' codes, in the server's order.
        warnings: Vec<u16>,
    },
    /// It failed with a server error.
    Err {
        /// The error code.
        code: u16,
        /// The message (shown, not compared, except the key name of a duplicate).
        message: String,
    },
    /// The connection failed (the server died or the statement ran past the client's
    /// read timeout): never equal to anything.
    Lost(String),
}

/// MariaDB's duplicate-key errors.
pub const DUP_CODES: &[u16] = &[1062, 1586];

fn cell(v: Value) -> Cell {
    match v {
        Value::NULL => None,
        Value::Bytes(b) => Some(b),
        other => Some(other.as_sql(true).trim_matches('\'').as_bytes().to_vec()),
    }
}

/// Runs `sql` on `conn` (text protocol) and returns what the server answered.
pub fn run(conn: &mut Conn, sql: &str) -> Outcome {
    let result = (|| -> Result<Option<Vec<Vec<Cell>>>, mysql::Error> {
        let mut q = conn.query_iter(sql)?;
        let mut rows: Option<Vec<Vec<Cell>>> = None;
        while let Some(set) = q.iter() {
            let has_columns = !set.columns().as_ref().is_empty();
            let mut these = Vec::new();
            for row in set {
                let row = row?;
                these.push(row.unwrap().into_iter().map(cell).collect());
            }
            if has_columns {
                rows.get_or_insert_with(Vec::new).extend(these);
            }
        }
        Ok(rows)
    })();
    match result {
        Ok(rows) => {
            // The connection keeps the last OK packet (a result set's ends with one too).
            let affected = conn.affected_rows();
            let insert_id = conn.last_insert_id();
            let info = conn.info_str().into_owned();
            let warnings = if conn.warnings() > 0 {
                warning_codes(conn).unwrap_or_else(|| vec![u16::MAX])
            } else {
                Vec::new()
            };
            Outcome::Ok {
                rows,
                affected,
                insert_id,
                info,
                warnings,
            }
        }
        Err(mysql::Error::MySqlError(e)) => Outcome::Err {
            code: e.code,
            message: e.message,
        },
        Err(e) => Outcome::Lost(e.to_string()),
    }
}

fn warning_codes(conn: &mut Conn) -> Option<Vec<u16>> {
    let rows: Vec<(String, u16, String)> = conn.query("SHOW WARNINGS").ok()?;
    Some(rows.into_iter().map(|r| r.1).collect())
}

/// The key name in a duplicate-key message (`... for key 'u_b'`).
fn dup_key(message: &str) -> Option<&str> {
    message.rsplit("for key '").next()?.strip_suffix('\'')
}

fn sorted(rows: &[Vec<Cell>]) -> Vec<Vec<Cell>> {
    let mut r = rows.to_vec();
    r.sort();
    r
}

/// Whether two answers to one statement agree; `ordered`: compare the rows in order (else
/// as multisets). Warnings are compared as multisets of codes; as sets for a statement that
/// returns rows or when `warning_set` (a multi-table UPDATE evaluates its SET once per
/// joined row, so once or more per changed row, as the plan has it).
pub fn same(a: &Outcome, b: &Outcome, ordered: bool, warning_set: bool) -> bool {
    match (a, b) {
        (
            Outcome::Ok {
                rows: ra,
                affected: aa,
                insert_id: ia,
                info: fa,
                warnings: wa,
            },
            Outcome::Ok {
                rows: rb,
                affected: ab,
                insert_id: ib,
                info: fb,
                warnings: wb,
            },
        ) => {
            let rows_same = match (ra, rb) {
                (Some(x), Some(y)) if ordered => x == y,
                (Some(x), Some(y)) => x.len() == y.len() && sorted(x) == sorted(y),
                (None, None) => true,
                _ => false,
            };
            // A read's warnings come from the rows it evaluated, which depends on the plan:
            // only which codes, not how many.
            let as_set = warning_set || ra.is_some();
            let norm = |w: &Vec<u16>| {
                let mut w = w.clone();
                w.sort_unstable();
                if as_set {
                    w.dedup();
                }
                w
            };
            let (wa, wb) = (norm(wa), norm(wb));
            // The info string counts the warnings too ("Rows matched: 1  Changed: 1
            // Warnings: 2"): with `warning_set`, that count is the plan's as well.
            let info = |f: &String| {
                if warning_set {
                    without_warning_count(f)
                } else {
                    f.clone()
                }
            };
            rows_same && aa == ab && ia == ib && info(fa) == info(fb) && wa == wb
        }
        (
            Outcome::Err {
                code: ca,
                message: ma,
            },
            Outcome::Err {
                code: cb,
                message: mb,
            },
        ) => ca == cb && (!DUP_CODES.contains(ca) || dup_key(ma) == dup_key(mb)),
        _ => false,
    }
}

/// An OK packet's info string without its `Warnings: N` part.
fn without_warning_count(info: &str) -> String {
    match info.find("Warnings:") {
        Some(at) => info.get(..at).unwrap_or(info).trim_end().to_string(),
        None => info.to_string(),
    }
}

/// A value as SQL-ish text: NULL, a quoted string, or X'..' when not printable UTF-8.
pub fn show_cell(c: &Cell) -> String {
    match c {
        None => "NULL".into(),
        Some(b) => match std::str::from_utf8(b) {
            Ok(s) if !s.chars().any(|ch| ch.is_control()) => {
                if s.parse::<f64>().is_ok() && !s.starts_with(' ') && !s.ends_with(' ') {
                    s.to_string()
                } else {
                    format!("'{}'", s.replace('\'', "\\'"))
                }
            }
            _ => {
                let mut h = String::from("X'");
                for byte in b {
                    let _ = write!(h, "{byte:02X}");
                }
                h.push('\'');
                h
            }
        },
    }
}

/// A row as `(v1, v2, ...)`.
pub fn show_row(r: &[Cell]) -> String {
    format!(
        "({})",
        r.iter().map(show_cell).collect::<Vec<_>>().join(", ")
    )
}

/// A short one-line description (for the comments of a script).
pub fn brief(o: &Outcome) -> String {
    match o {
        Outcome::Ok {
            rows,
            affected,
            insert_id,
            info,
            warnings,
        } => {
            let mut s = match rows {
                Some(r) => format!("{} row(s)", r.len()),
                None => format!("{affected} affected"),
            };
            if *insert_id != 0 {
                let _ = write!(s, ", insert id {insert_id}");
            }
            if !info.is_empty() {
                let _ = write!(s, " ({info})");
            }
            if !warnings.is_empty() {
                let _ = write!(s, ", warnings {warnings:?}");
            }
            s
        }
        Outcome::Err { code, message } => format!("error {code}: {message}"),
        Outcome::Lost(e) => format!("connection lost: {e}"),
    }
}

/// A full description: [`brief`] and every row (up to `max_rows`).
pub fn full(o: &Outcome, max_rows: usize) -> String {
    let mut s = brief(o);
    if let Outcome::Ok {
        rows: Some(rows), ..
    } = o
    {
        for r in rows.iter().take(max_rows) {
            let _ = write!(s, "\n      {}", show_row(r));
        }
        if rows.len() > max_rows {
            let _ = write!(s, "\n      ... {} more", rows.len() - max_rows);
        }
    }
    s
}

/// What differs between two answers, for the report: the rows only one side returned
/// (multisets) or the first position where ordered rows differ, and the other fields.
pub fn diff(rip: &Outcome, inno: &Outcome, ordered: bool) -> String {
    let mut s = String::new();
    if let (
        Outcome::Ok {
            rows: Some(a),
            affected: aa,
            insert_id: ia,
            info: fa,
            warnings: wa,
        },
        Outcome::Ok {
            rows: Some(b),
            affected: ab,
            insert_id: ib,
            info: fb,
            warnings: wb,
        },
    ) = (rip, inno)
    {
        let _ = writeln!(s, "  rows: RIPTIDE {}, InnoDB {}", a.len(), b.len());
        if ordered && sorted(a) == sorted(b) {
            let at = a
                .iter()
                .zip(b.iter())
                .position(|(x, y)| x != y)
                .unwrap_or(0);
            let _ = writeln!(
                s,
                "  same rows in another order; first difference at row {at}"
            );
        }
        let (only_a, only_b) = multiset_diff(a, b);
        for (name, only) in [("RIPTIDE", only_a), ("InnoDB", only_b)] {
            if only.is_empty() {
                continue;
            }
            let _ = writeln!(s, "  only in {name} ({}):", only.len());
            for r in only.iter().take(20) {
                let _ = writeln!(s, "      {}", show_row(r));
            }
            if only.len() > 20 {
                let _ = writeln!(s, "      ...");
            }
        }
        if aa != ab || ia != ib || fa != fb || wa != wb {
            let _ = writeln!(
                s,
                "  RIPTIDE: affected {aa}, insert id {ia}, info '{fa}', warnings {wa:?}\n  \
                 InnoDB:  affected {ab}, insert id {ib}, info '{fb}', warnings {wb:?}"
            );
        }
        return s;
    }
    let _ = writeln!(s, "  RIPTIDE: {}", full(rip, 30).replace('\n', "\n  "));
    let _ = writeln!(s, "  InnoDB:  {}", full(inno, 30).replace('\n', "\n  "));
    s
}

/// Rows only in `a` and rows only in `b`, with multiplicity.
fn multiset_diff(a: &[Vec<Cell>], b: &[Vec<Cell>]) -> (Vec<Vec<Cell>>, Vec<Vec<Cell>>) {
    let (sa, sb) = (sorted(a), sorted(b));
    let (mut i, mut j) = (0, 0);
    let (mut oa, mut ob) = (Vec::new(), Vec::new());
    loop {
        match (sa.get(i), sb.get(j)) {
            (Some(x), Some(y)) if x == y => {
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x < y => {
                oa.push(x.clone());
                i += 1;
            }
            (Some(_), Some(y)) => {
                ob.push(y.clone());
                j += 1;
            }
            (Some(x), None) => {
                oa.push(x.clone());
                i += 1;
            }
            (None, Some(y)) => {
                ob.push(y.clone());
                j += 1;
            }
            (None, None) => break,
        }
    }
    (oa, ob)
}

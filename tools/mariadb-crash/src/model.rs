//! The expected state and the statements that change it.
//!
//! Every connection owns a *partition*: a range of every key and of every indexed value
//! (`base(w) .. base(w) + PARTITION`), so no two connections ever touch the same row, index
//! entry or unique value, and the expected content of a partition is exactly the committed
//! history of its connection. [`next_stmt`] draws a random statement, predicts its outcome
//! (rows affected, duplicate-key error, or the rows a read returns) from the transaction's
//! working copy of the partition, and applies the predicted effect to that copy.

use std::collections::{BTreeMap, BTreeSet};

use rand::Rng;
use rand::rngs::StdRng;

/// Width of one connection's range of keys and indexed values.
pub const PARTITION: i64 = 10_000_000;
/// `t1` primary keys a connection draws from (about half are live at a time).
const T1_IDS: i64 = 400;
/// `t1.u` (UNIQUE) values a connection draws from.
const T1_US: i64 = 600;
/// `t1.a` (indexed, not unique) values new rows draw from.
const T1_AS: i64 = 40;
/// `t1.b` (first part of an index, not unique) values.
const T1_BS: i64 = 30;
/// `t2.k` values (the table has no primary key: rows live under a hidden row id).
const T2_KS: i64 = 300;
/// `t3.g` values (first part of the primary key, a case-insensitive VARCHAR).
const T3_GS: i64 = 20;
/// `t3.n` values (second part of the primary key).
const T3_NS: i64 = 15;
/// `t3.v` (UNIQUE) values.
const T3_VS: i64 = 500;

/// The schema: every table the test writes, in a fixed order.
pub const SCHEMA: &[&str] = &[
    "CREATE TABLE t1 (id BIGINT NOT NULL PRIMARY KEY, a BIGINT NOT NULL, \
     b VARCHAR(40) NULL, c BIGINT NOT NULL, u BIGINT NULL, pad VARCHAR(300) NOT NULL, \
     KEY ka (a), KEY kbc (b, c), UNIQUE KEY ku (u)) ENGINE=RIPTIDE",
    "CREATE TABLE t2 (k BIGINT NOT NULL, v BIGINT NOT NULL, w VARCHAR(100) NOT NULL, \
     KEY kk (k), KEY kv (v)) ENGINE=RIPTIDE",
    "CREATE TABLE t3 (g VARCHAR(24) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL, \
     n BIGINT NOT NULL, v BIGINT NOT NULL, note VARCHAR(60) NOT NULL, PRIMARY KEY (g, n), \
     UNIQUE KEY uv (v), KEY kn (n, v)) ENGINE=RIPTIDE",
    "CREATE TABLE ledger (txn BIGINT NOT NULL PRIMARY KEY, conn BIGINT NOT NULL, \
     round BIGINT NOT NULL, stmts BIGINT NOT NULL, KEY kc (conn, round)) ENGINE=RIPTIDE",
    "CREATE TABLE ledger_inno (txn BIGINT NOT NULL PRIMARY KEY, conn BIGINT NOT NULL) \
     ENGINE=InnoDB",
];

/// The first key of connection `w`'s partition.
pub fn base(w: usize) -> i64 {
    (w as i64 + 1) * PARTITION
}

/// The most connections (partitions) the string keys keep in order (`w9...` < `w10...` is
/// not true byte-wise).
pub const MAX_CONNECTIONS: usize = 10;

/// The *fence* rows of partition `w`: one row per table at the very end of the partition in
/// every index a statement scans (primary keys, `t1.ka`, `t1.kbc`, `t2.kk`), never changed.
/// A locking range scan reads, and locks, the first row past its range (the server decides
/// it is out of range after the engine returned it, as with InnoDB's next-key locks); the
/// fence makes that row one of the partition's own instead of the next partition's first
/// row, so connections never lock each other's rows and never deadlock. Returned as the
/// INSERT statements and the expected rows of `t1`, `t2`, `t3`.
pub fn fences(w: usize) -> (Vec<String>, [Vec<Cell>; 3]) {
    let last = base(w) + PARTITION - 1;
    let r1 = R1 {
        a: last,
        b: Some(format!("w{w}zz")),
        c: 0,
        u: Some(last),
        pad: "fence".into(),
    };
    let r2 = R2 {
        v: last,
        w: "fence".into(),
    };
    let r3 = R3 {
        g: format!("w{w}zz"),
        v: last,
        note: "fence".into(),
    };
    let sql = vec![
        t1_insert_sql("INSERT", &[(last, r1.clone())]),
        format!(
            "INSERT INTO t2 (k, v, w) VALUES ({last}, {}, {})",
            r2.v,
            sq(&r2.w)
        ),
        format!(
            "INSERT INTO t3 (g, n, v, note) VALUES ({}, 0, {}, {})",
            sq(&r3.g),
            r3.v,
            sq(&r3.note)
        ),
    ];
    (
        sql,
        [t1_cells(last, &r1), t2_cells(last, &r2), t3_cells(0, &r3)],
    )
}

/// A row of `t1` (key: `id`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct R1 {
    /// Indexed (`ka`).
    pub a: i64,
    /// First part of `kbc`; NULL sometimes.
    pub b: Option<String>,
    /// Second part of `kbc`.
    pub c: i64,
    /// UNIQUE (`ku`); NULL sometimes (NULLs never conflict).
    pub u: Option<i64>,
    /// Not indexed; 0-250 characters.
    pub pad: String,
}

/// A row of `t2` (no primary key; `k` is unique by construction, not by constraint).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct R2 {
    /// Indexed (`kv`).
    pub v: i64,
    /// Not indexed.
    pub w: String,
}

/// A row of `t3` (key: lowercase `g`, `n`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct R3 {
    /// `g` as it was inserted (any case: the collation is case-insensitive).
    pub g: String,
    /// UNIQUE (`uv`).
    pub v: i64,
    /// Not indexed.
    pub note: String,
}

/// A row of `ledger` (key: the transaction id).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LedgerRow {
    /// The round the transaction ran in.
    pub round: i64,
    /// How many statements it ran before COMMIT.
    pub stmts: i64,
}

/// One connection's partition of every table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Part {
    /// `t1` by `id`.
    pub t1: BTreeMap<i64, R1>,
    /// `t2` by `k`.
    pub t2: BTreeMap<i64, R2>,
    /// `t3` by (lowercase `g`, `n`).
    pub t3: BTreeMap<(String, i64), R3>,
    /// `ledger` by transaction id.
    pub ledger: BTreeMap<i64, LedgerRow>,
    /// `ledger_inno` (InnoDB): transaction ids that also wrote there (two-engine commits).
    pub ledger_inno: BTreeSet<i64>,
}

/// A value as the text protocol returns it (`None` is SQL NULL).
pub type Cell = Option<String>;

/// What a statement must do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Succeed with this many rows affected (found rows, not changed rows).
    Affected(u64),
    /// Fail with a duplicate-key error, changing nothing.
    Dup,
    /// Succeed and return exactly these rows, in this order.
    Rows(Vec<Vec<Cell>>),
}

/// A statement and its predicted outcome.
#[derive(Clone, Debug)]
pub struct Stmt {
    /// The SQL text.
    pub sql: String,
    /// What it must do.
    pub expect: Expect,
}

/// SQL string literal.
pub fn sq(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for ch in s.chars() {
        match ch {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            _ => out.push(ch),
        }
    }
    out.push('\'');
    out
}

fn opt_num(v: Option<i64>) -> String {
    v.map_or_else(|| "NULL".to_string(), |v| v.to_string())
}

fn opt_str(v: &Option<String>) -> String {
    v.as_deref().map_or_else(|| "NULL".to_string(), sq)
}

/// A cell holding a number.
pub fn num(v: i64) -> Cell {
    Some(v.to_string())
}

/// Random lowercase letters and digits, 0..=max characters.
fn word(rng: &mut StdRng, max: usize) -> String {
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let len = rng.random_range(0..=max);
    (0..len)
        .map(|_| {
            let i = rng.random_range(0..CHARS.len());
            CHARS.get(i).copied().map_or('x', char::from)
        })
        .collect()
}

/// `s` with each letter upper-cased at random (the same key under a `_ci` collation).
fn random_case(rng: &mut StdRng, s: &str) -> String {
    s.chars()
        .map(|c| {
            if rng.random_bool(0.3) {
                c.to_ascii_uppercase()
            } else {
                c
            }
        })
        .collect()
}

/// The expected `t1` row as the text protocol returns it.
pub fn t1_cells(id: i64, r: &R1) -> Vec<Cell> {
    vec![
        num(id),
        num(r.a),
        r.b.clone(),
        num(r.c),
        r.u.map(|u| u.to_string()),
        Some(r.pad.clone()),
    ]
}

/// The expected `t2` row (k, v, w).
pub fn t2_cells(k: i64, r: &R2) -> Vec<Cell> {
    vec![num(k), num(r.v), Some(r.w.clone())]
}

/// The expected `t3` row (g, n, v, note).
pub fn t3_cells(n: i64, r: &R3) -> Vec<Cell> {
    vec![Some(r.g.clone()), num(n), num(r.v), Some(r.note.clone())]
}

/// Draws the random parts of a new `t1` row of partition `w`.
fn new_r1(rng: &mut StdRng, w: usize) -> R1 {
    let base = base(w);
    let pad_max = if rng.random_bool(0.2) { 250 } else { 30 };
    R1 {
        a: base + rng.random_range(0..T1_AS),
        b: (!rng.random_bool(0.1)).then(|| format!("w{w}b{:02}", rng.random_range(0..T1_BS))),
        c: rng.random_range(0..1_000_000),
        u: (!rng.random_bool(0.3)).then(|| base + rng.random_range(0..T1_US)),
        pad: word(rng, pad_max),
    }
}

/// The id of the row holding unique value `u` (never for NULL).
fn t1_holder(st: &Part, u: Option<i64>) -> Option<i64> {
    let u = u?;
    st.t1
        .iter()
        .find(|(_, r)| r.u == Some(u))
        .map(|(id, _)| *id)
}

fn t1_insert_sql(verb: &str, rows: &[(i64, R1)]) -> String {
    let values: Vec<String> = rows
        .iter()
        .map(|(id, r)| {
            format!(
                "({id}, {}, {}, {}, {}, {})",
                r.a,
                opt_str(&r.b),
                r.c,
                opt_num(r.u),
                sq(&r.pad)
            )
        })
        .collect();
    format!(
        "{verb} INTO t1 (id, a, b, c, u, pad) VALUES {}",
        values.join(", ")
    )
}

/// A random id of partition `w`'s `t1`: a live one 70% of the time (when there is one).
fn pick_t1_id(rng: &mut StdRng, st: &Part, w: usize) -> i64 {
    if !st.t1.is_empty() && rng.random_bool(0.7) {
        let i = rng.random_range(0..st.t1.len());
        if let Some(id) = st.t1.keys().nth(i) {
            return *id;
        }
    }
    base(w) + rng.random_range(0..T1_IDS)
}

fn pick_t2_k(rng: &mut StdRng, st: &Part, w: usize) -> i64 {
    if !st.t2.is_empty() && rng.random_bool(0.7) {
        let i = rng.random_range(0..st.t2.len());
        if let Some(k) = st.t2.keys().nth(i) {
            return *k;
        }
    }
    base(w) + rng.random_range(0..T2_KS)
}

fn pick_t3_key(rng: &mut StdRng, st: &Part, w: usize) -> (String, i64) {
    if !st.t3.is_empty() && rng.random_bool(0.7) {
        let i = rng.random_range(0..st.t3.len());
        if let Some(k) = st.t3.keys().nth(i) {
            return k.clone();
        }
    }
    (
        format!("w{w}g{:02}", rng.random_range(0..T3_GS)),
        rng.random_range(0..T3_NS),
    )
}

/// Draws a random data statement (or read) for connection `w`, predicts its outcome from
/// `st` (the transaction's working copy) and applies the predicted effect to `st`.
pub fn next_stmt(rng: &mut StdRng, w: usize, st: &mut Part) -> Stmt {
    let base = base(w);
    let roll = rng.random_range(0..100u32);
    match roll {
        // INSERT of 1-4 rows: the whole statement fails if any row has a taken id or u.
        0..=13 => {
            let n = rng.random_range(1..=4);
            let mut rows: Vec<(i64, R1)> = Vec::new();
            let mut dup = false;
            for _ in 0..n {
                let id = base + rng.random_range(0..T1_IDS);
                let r = new_r1(rng, w);
                dup |= st.t1.contains_key(&id)
                    || t1_holder(st, r.u).is_some()
                    || rows
                        .iter()
                        .any(|(i, o)| *i == id || (r.u.is_some() && o.u == r.u));
                rows.push((id, r));
            }
            let sql = t1_insert_sql("INSERT", &rows);
            if dup {
                return Stmt {
                    sql,
                    expect: Expect::Dup,
                };
            }
            let count = rows.len() as u64;
            st.t1.extend(rows);
            Stmt {
                sql,
                expect: Expect::Affected(count),
            }
        }
        // UPDATE of a column no index covers.
        14..=21 => {
            let id = pick_t1_id(rng, st, w);
            let pad = word(rng, 60);
            let sql = format!("UPDATE t1 SET pad = {} WHERE id = {id}", sq(&pad));
            let found = st.t1.get_mut(&id).map(|r| r.pad = pad).is_some();
            Stmt {
                sql,
                expect: Expect::Affected(u64::from(found)),
            }
        }
        // UPDATE of indexed columns (both secondary indexes of t1).
        22..=29 => {
            let id = pick_t1_id(rng, st, w);
            let fresh = new_r1(rng, w);
            let sql = format!(
                "UPDATE t1 SET a = {}, b = {}, c = c + 1 WHERE id = {id}",
                fresh.a,
                opt_str(&fresh.b)
            );
            let found = st
                .t1
                .get_mut(&id)
                .map(|r| {
                    r.a = fresh.a;
                    r.b = fresh.b;
                    r.c += 1;
                })
                .is_some();
            Stmt {
                sql,
                expect: Expect::Affected(u64::from(found)),
            }
        }
        // UPDATE of the UNIQUE column: a duplicate when another row holds the value.
        30..=34 => {
            let id = pick_t1_id(rng, st, w);
            let u = (!rng.random_bool(0.2)).then(|| base + rng.random_range(0..T1_US));
            let sql = format!("UPDATE t1 SET u = {} WHERE id = {id}", opt_num(u));
            let expect = if !st.t1.contains_key(&id) {
                Expect::Affected(0)
            } else if t1_holder(st, u).is_some_and(|h| h != id) {
                Expect::Dup
            } else {
                if let Some(r) = st.t1.get_mut(&id) {
                    r.u = u;
                }
                Expect::Affected(1)
            };
            Stmt { sql, expect }
        }
        // UPDATE of the primary key (the row moves: delete + insert in every index).
        35..=37 => {
            let from = pick_t1_id(rng, st, w);
            let to = base + rng.random_range(0..T1_IDS);
            let sql = format!("UPDATE t1 SET id = {to} WHERE id = {from}");
            let expect = if !st.t1.contains_key(&from) {
                Expect::Affected(0)
            } else if from == to {
                Expect::Affected(1)
            } else if st.t1.contains_key(&to) {
                Expect::Dup
            } else {
                if let Some(r) = st.t1.remove(&from) {
                    st.t1.insert(to, r);
                }
                Expect::Affected(1)
            };
            Stmt { sql, expect }
        }
        // Range UPDATE on the primary key.
        38..=41 => {
            let lo = base + rng.random_range(0..T1_IDS);
            let hi = lo + rng.random_range(0..20);
            let sql = format!("UPDATE t1 SET c = c + 1 WHERE id BETWEEN {lo} AND {hi}");
            let mut n = 0;
            for (_, r) in st.t1.range_mut(lo..=hi) {
                r.c += 1;
                n += 1;
            }
            Stmt {
                sql,
                expect: Expect::Affected(n),
            }
        }
        // UPDATE found through a secondary index.
        42..=44 => {
            let a = st
                .t1
                .values()
                .nth(rng.random_range(0..st.t1.len().max(1)))
                .map_or(base, |r| r.a);
            let pad = word(rng, 40);
            let sql = format!("UPDATE t1 SET pad = {}, c = c + 7 WHERE a = {a}", sq(&pad));
            let mut n = 0;
            for r in st.t1.values_mut().filter(|r| r.a == a) {
                r.pad.clone_from(&pad);
                r.c += 7;
                n += 1;
            }
            Stmt {
                sql,
                expect: Expect::Affected(n),
            }
        }
        // UPDATE of the very index column the statement searches by (Halloween problem).
        45..=46 => {
            let a = st
                .t1
                .values()
                .nth(rng.random_range(0..st.t1.len().max(1)))
                .map_or(base, |r| r.a);
            let sql = format!("UPDATE t1 SET a = a + 1 WHERE a = {a}");
            let mut n = 0;
            for r in st.t1.values_mut().filter(|r| r.a == a) {
                r.a += 1;
                n += 1;
            }
            Stmt {
                sql,
                expect: Expect::Affected(n),
            }
        }
        // DELETE by primary key.
        47..=52 => {
            let id = pick_t1_id(rng, st, w);
            let found = st.t1.remove(&id).is_some();
            Stmt {
                sql: format!("DELETE FROM t1 WHERE id = {id}"),
                expect: Expect::Affected(u64::from(found)),
            }
        }
        // DELETE through the first part of a secondary index.
        53..=54 => {
            let b = format!("w{w}b{:02}", rng.random_range(0..T1_BS));
            let before = st.t1.len();
            st.t1.retain(|_, r| r.b.as_deref() != Some(b.as_str()));
            Stmt {
                sql: format!("DELETE FROM t1 WHERE b = {}", sq(&b)),
                expect: Expect::Affected((before - st.t1.len()) as u64),
            }
        }
        // REPLACE: deletes every row it conflicts with (by id and by u), then inserts.
        55..=57 => {
            let id = pick_t1_id(rng, st, w);
            let r = new_r1(rng, w);
            let mut gone = BTreeSet::new();
            if st.t1.contains_key(&id) {
                gone.insert(id);
            }
            if let Some(h) = t1_holder(st, r.u) {
                gone.insert(h);
            }
            for g in &gone {
                st.t1.remove(g);
            }
            let sql = t1_insert_sql("REPLACE", &[(id, r.clone())]);
            st.t1.insert(id, r);
            Stmt {
                sql,
                expect: Expect::Affected(1 + gone.len() as u64),
            }
        }
        // INSERT ... ON DUPLICATE KEY UPDATE (u NULL: only the primary key can conflict).
        58..=60 => {
            let id = pick_t1_id(rng, st, w);
            let mut r = new_r1(rng, w);
            r.u = None;
            let sql = format!(
                "{} ON DUPLICATE KEY UPDATE c = c + 1, pad = 'odku'",
                t1_insert_sql("INSERT", &[(id, r.clone())])
            );
            let expect = if let Some(old) = st.t1.get_mut(&id) {
                old.c += 1;
                old.pad = "odku".into();
                Expect::Affected(2)
            } else {
                st.t1.insert(id, r);
                Expect::Affected(1)
            };
            Stmt { sql, expect }
        }
        // One UPDATE giving two rows the same unique value: fails on the second row, and the
        // first row's change must be rolled back with the statement.
        61..=62 => {
            let x = pick_t1_id(rng, st, w);
            let y = pick_t1_id(rng, st, w);
            let u = base + rng.random_range(0..T1_US);
            let sql = format!("UPDATE t1 SET u = {u} WHERE id IN ({x}, {y})");
            let hits: BTreeSet<i64> = [x, y]
                .into_iter()
                .filter(|i| st.t1.contains_key(i))
                .collect();
            let holder = t1_holder(st, Some(u));
            let expect = if hits.is_empty() {
                Expect::Affected(0)
            } else if hits.len() > 1 || holder.is_some_and(|h| !hits.contains(&h)) {
                Expect::Dup
            } else {
                for i in &hits {
                    if let Some(r) = st.t1.get_mut(i) {
                        r.u = Some(u);
                    }
                }
                Expect::Affected(hits.len() as u64)
            };
            Stmt { sql, expect }
        }
        // t2 (hidden primary key): INSERT of a k not present.
        63..=68 => {
            let mut rows = Vec::new();
            for _ in 0..rng.random_range(1..=3) {
                let k = base + rng.random_range(0..T2_KS);
                if st.t2.contains_key(&k) || rows.iter().any(|(o, _)| *o == k) {
                    continue;
                }
                let r = R2 {
                    v: base + rng.random_range(0..1000),
                    w: word(rng, 80),
                };
                rows.push((k, r));
            }
            if rows.is_empty() {
                return read_t2(rng, st, w);
            }
            let values: Vec<String> = rows
                .iter()
                .map(|(k, r)| format!("({k}, {}, {})", r.v, sq(&r.w)))
                .collect();
            let sql = format!("INSERT INTO t2 (k, v, w) VALUES {}", values.join(", "));
            let n = rows.len() as u64;
            st.t2.extend(rows);
            Stmt {
                sql,
                expect: Expect::Affected(n),
            }
        }
        69..=72 => {
            let k = pick_t2_k(rng, st, w);
            let v = base + rng.random_range(0..1000);
            let wv = word(rng, 80);
            let sql = format!("UPDATE t2 SET v = {v}, w = {} WHERE k = {k}", sq(&wv));
            let found = st
                .t2
                .get_mut(&k)
                .map(|r| {
                    r.v = v;
                    r.w = wv;
                })
                .is_some();
            Stmt {
                sql,
                expect: Expect::Affected(u64::from(found)),
            }
        }
        73..=75 => {
            let k = pick_t2_k(rng, st, w);
            let found = st.t2.remove(&k).is_some();
            Stmt {
                sql: format!("DELETE FROM t2 WHERE k = {k}"),
                expect: Expect::Affected(u64::from(found)),
            }
        }
        76 => {
            let lo = base + rng.random_range(0..T2_KS);
            let hi = lo + rng.random_range(0..6);
            let before = st.t2.len();
            st.t2.retain(|k, _| !(lo..=hi).contains(k));
            Stmt {
                sql: format!("DELETE FROM t2 WHERE k BETWEEN {lo} AND {hi}"),
                expect: Expect::Affected((before - st.t2.len()) as u64),
            }
        }
        // t3: composite primary key on a case-insensitive VARCHAR, UNIQUE v.
        77..=81 => {
            let (g, n) = pick_t3_key(rng, st, w);
            let r = R3 {
                g: random_case(rng, &g),
                v: base + rng.random_range(0..T3_VS),
                note: word(rng, 50),
            };
            let sql = format!(
                "INSERT INTO t3 (g, n, v, note) VALUES ({}, {n}, {}, {})",
                sq(&r.g),
                r.v,
                sq(&r.note)
            );
            let key = (g, n);
            if st.t3.contains_key(&key) || st.t3.values().any(|o| o.v == r.v) {
                return Stmt {
                    sql,
                    expect: Expect::Dup,
                };
            }
            st.t3.insert(key, r);
            Stmt {
                sql,
                expect: Expect::Affected(1),
            }
        }
        82..=84 => {
            let (g, n) = pick_t3_key(rng, st, w);
            let note = word(rng, 50);
            let sql = format!(
                "UPDATE t3 SET note = {} WHERE g = {} AND n = {n}",
                sq(&note),
                sq(&random_case(rng, &g))
            );
            let found = st.t3.get_mut(&(g, n)).map(|r| r.note = note).is_some();
            Stmt {
                sql,
                expect: Expect::Affected(u64::from(found)),
            }
        }
        85..=86 => {
            let key = pick_t3_key(rng, st, w);
            let v = base + rng.random_range(0..T3_VS);
            let sql = format!(
                "UPDATE t3 SET v = {v} WHERE g = {} AND n = {}",
                sq(&key.0),
                key.1
            );
            let expect = if !st.t3.contains_key(&key) {
                Expect::Affected(0)
            } else if st.t3.iter().any(|(k, r)| r.v == v && *k != key) {
                Expect::Dup
            } else {
                if let Some(r) = st.t3.get_mut(&key) {
                    r.v = v;
                }
                Expect::Affected(1)
            };
            Stmt { sql, expect }
        }
        87 => {
            let g = format!("w{w}g{:02}", rng.random_range(0..T3_GS));
            let before = st.t3.len();
            st.t3.retain(|(kg, _), _| *kg != g);
            Stmt {
                sql: format!("DELETE FROM t3 WHERE g = {}", sq(&random_case(rng, &g))),
                expect: Expect::Affected((before - st.t3.len()) as u64),
            }
        }
        88..=89 => {
            let key = pick_t3_key(rng, st, w);
            let to = rng.random_range(0..T3_NS);
            let sql = format!(
                "UPDATE t3 SET n = {to} WHERE g = {} AND n = {}",
                sq(&key.0),
                key.1
            );
            let new_key = (key.0.clone(), to);
            let expect = if !st.t3.contains_key(&key) {
                Expect::Affected(0)
            } else if to == key.1 {
                Expect::Affected(1)
            } else if st.t3.contains_key(&new_key) {
                Expect::Dup
            } else {
                if let Some(r) = st.t3.remove(&key) {
                    st.t3.insert(new_key, r);
                }
                Expect::Affected(1)
            };
            Stmt { sql, expect }
        }
        // Reads of the transaction's own (uncommitted) writes.
        90..=92 => {
            let id = pick_t1_id(rng, st, w);
            Stmt {
                sql: format!("SELECT id, a, b, c, u, pad FROM t1 WHERE id = {id}"),
                expect: Expect::Rows(
                    st.t1
                        .get(&id)
                        .map(|r| t1_cells(id, r))
                        .into_iter()
                        .collect(),
                ),
            }
        }
        93..=94 => {
            let a = st
                .t1
                .values()
                .nth(rng.random_range(0..st.t1.len().max(1)))
                .map_or(base, |r| r.a);
            let rows = st
                .t1
                .iter()
                .filter(|(_, r)| r.a == a)
                .map(|(id, r)| t1_cells(*id, r))
                .collect();
            Stmt {
                sql: format!(
                    "SELECT id, a, b, c, u, pad FROM t1 FORCE INDEX (ka) WHERE a = {a} ORDER BY id"
                ),
                expect: Expect::Rows(rows),
            }
        }
        95..=96 => Stmt {
            sql: format!(
                "SELECT COUNT(*) FROM t1 WHERE id BETWEEN {base} AND {}",
                base + PARTITION - 2
            ),
            expect: Expect::Rows(vec![vec![num(st.t1.len() as i64)]]),
        },
        97 => read_t2(rng, st, w),
        _ => {
            let g = format!("w{w}g{:02}", rng.random_range(0..T3_GS));
            let rows = st
                .t3
                .iter()
                .filter(|((kg, _), _)| *kg == g)
                .map(|((_, n), r)| t3_cells(*n, r))
                .collect();
            Stmt {
                sql: format!(
                    "SELECT g, n, v, note FROM t3 WHERE g = {} ORDER BY n",
                    sq(&random_case(rng, &g))
                ),
                expect: Expect::Rows(rows),
            }
        }
    }
}

/// A range read of `t2` through its index on `k`.
fn read_t2(rng: &mut StdRng, st: &Part, w: usize) -> Stmt {
    let lo = base(w) + rng.random_range(0..T2_KS);
    let hi = lo + 20;
    Stmt {
        sql: format!("SELECT k, v, w FROM t2 WHERE k BETWEEN {lo} AND {hi} ORDER BY k"),
        expect: Expect::Rows(st.t2.range(lo..=hi).map(|(k, r)| t2_cells(*k, r)).collect()),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use rand::SeedableRng;

    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(sq("a'b\\c"), "'a''b\\\\c'");
        assert_eq!(opt_num(None), "NULL");
        assert_eq!(opt_str(&Some("x".into())), "'x'");
    }

    /// The model keeps the constraints the server enforces, and never leaves its partition:
    /// otherwise a prediction would disagree with a correct server.
    #[test]
    fn predictions_keep_the_constraints() {
        let mut rng = StdRng::seed_from_u64(7);
        for w in [0usize, 3] {
            let mut st = Part::default();
            let (mut dups, mut reads) = (0, 0);
            for _ in 0..20_000 {
                let stmt = next_stmt(&mut rng, w, &mut st);
                match stmt.expect {
                    Expect::Dup => dups += 1,
                    Expect::Rows(_) => reads += 1,
                    Expect::Affected(_) => {}
                }
                let us: Vec<i64> = st.t1.values().filter_map(|r| r.u).collect();
                let distinct: BTreeSet<i64> = us.iter().copied().collect();
                assert_eq!(us.len(), distinct.len(), "t1.u unique after `{}`", stmt.sql);
                let vs: BTreeSet<i64> = st.t3.values().map(|r| r.v).collect();
                assert_eq!(vs.len(), st.t3.len(), "t3.v unique after `{}`", stmt.sql);
                let range = base(w)..base(w) + PARTITION;
                assert!(st.t1.iter().all(|(id, r)| range.contains(id)
                    && range.contains(&r.a)
                    && r.u.is_none_or(|u| range.contains(&u))));
                assert!(
                    st.t2
                        .iter()
                        .all(|(k, r)| range.contains(k) && range.contains(&r.v))
                );
                assert!(
                    st.t3
                        .iter()
                        .all(|((g, _), r)| g.starts_with(&format!("w{w}g"))
                            && g.eq_ignore_ascii_case(&r.g)
                            && range.contains(&r.v))
                );
            }
            assert!(dups > 1000, "duplicate-key statements are common ({dups})");
            assert!(reads > 1000, "reads are common ({reads})");
            assert!(!st.t1.is_empty() && !st.t2.is_empty() && !st.t3.is_empty());
        }
    }
}

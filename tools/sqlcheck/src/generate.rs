//! The random statement generator of the single-session stream: seeded, and independent of
//! what the server answers except for the table sizes seen by the periodic checks (equal
//! on both engines until a difference), so a seed always gives the same statements.
//!
//! Every statement's result is comparable between two engines whatever plan each one gets:
//! LIMIT only under an ORDER BY that orders rows totally (a unique key, or every column by
//! its bytes); GROUP BY, DISTINCT, MIN and MAX only over columns whose equal values look
//! the same; no SUM over FLOAT/DOUBLE; UPDATEs that may change several rows' unique
//! columns, INSERT ... SELECT and LIMITed UPDATE/DELETE with a total ORDER BY (the order
//! decides which row fails or is skipped); multi-table UPDATEs take values only from a
//! side matched by a unique key; no functions of time or chance.

use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};

use crate::kinds::{Enabled, Kind};
use crate::schema::{Column, Index, JOINS, Table, Ty, tables};
use crate::session::OPTIMIZER_DEFAULT;
use crate::values::{Features, literal, quote, two, value};

/// Statements between two full checks of every table.
pub const CHECK_EVERY: u64 = 100;

/// The rows of a multi-row INSERT / REPLACE, kept apart so the reducer can drop some.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tuples {
    /// Everything before the first row (`INSERT INTO t (a, b) VALUES `).
    pub head: String,
    /// Each row's parenthesized values.
    pub rows: Vec<String>,
    /// Everything after the last row (` ON DUPLICATE KEY UPDATE ...`).
    pub tail: String,
}

/// One generated statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stmt {
    /// Its kind.
    pub kind: Kind,
    /// Its text.
    pub sql: String,
    /// Its result's row order is fully determined (compared in order; else as a multiset).
    pub ordered: bool,
    /// The rows of a multi-row INSERT / REPLACE.
    pub tuples: Option<Tuples>,
}

impl Stmt {
    fn new(kind: Kind, sql: String) -> Stmt {
        Stmt {
            kind,
            sql,
            ordered: false,
            tuples: None,
        }
    }

    fn ordered(mut self, ordered: bool) -> Stmt {
        self.ordered = ordered;
        self
    }

    fn with_tuples(kind: Kind, head: String, rows: Vec<String>, tail: String) -> Stmt {
        let t = Tuples { head, rows, tail };
        Stmt {
            kind,
            sql: t.text(),
            ordered: false,
            tuples: Some(t),
        }
    }

    /// The same statement with only the rows `keep` (indexes into its tuples).
    pub fn keep_rows(&self, keep: &[usize]) -> Stmt {
        let mut s = self.clone();
        if let Some(t) = &mut s.tuples {
            t.rows = keep
                .iter()
                .filter_map(|i| t.rows.get(*i).cloned())
                .collect();
            s.sql = t.text();
        }
        s
    }
}

impl Tuples {
    fn text(&self) -> String {
        format!("{}{}{}", self.head, self.rows.join(", "), self.tail)
    }
}

/// The generator's state.
pub struct Gen {
    rng: StdRng,
    tables: Rc<Vec<Table>>,
    on: Enabled,
    f: Features,
    in_txn: bool,
    savepoints: u8,
    since_check: u64,
    /// Rows per table as the last check saw them.
    sizes: BTreeMap<&'static str, usize>,
    pending: VecDeque<Stmt>,
}

/// The join pair `(left table, left column, right table, right column)`.
type Pair = (&'static str, &'static str, &'static str, &'static str);

fn pick<'a, T>(rng: &mut StdRng, xs: &'a [T]) -> Option<&'a T> {
    xs.choose(rng)
}

impl Gen {
    /// A generator seeded with `seed`, generating the kinds `on`.
    pub fn new(seed: u64, on: Enabled) -> Gen {
        let f = Features {
            nul_strings: on.has(Kind::NulStrings),
            bad_values: on.has(Kind::BadValues),
        };
        Gen {
            rng: StdRng::seed_from_u64(seed),
            tables: Rc::new(tables()),
            on,
            f,
            in_txn: false,
            savepoints: 0,
            since_check: 0,
            sizes: BTreeMap::new(),
            pending: VecDeque::new(),
        }
    }

    /// Stops generating `k`.
    pub fn disable(&mut self, k: Kind) {
        self.on.disable(k);
        self.f.nul_strings = self.on.has(Kind::NulStrings);
        self.f.bad_values = self.on.has(Kind::BadValues);
    }

    /// The statements that fill a fresh schema (multi-row INSERT IGNOREs of 10 rows).
    pub fn load(&mut self) -> Vec<Stmt> {
        let tables = Rc::clone(&self.tables);
        let mut out = Vec::new();
        let f = Features {
            bad_values: false,
            ..self.f
        };
        for t in tables.iter() {
            let cols: Vec<&Column> = t.columns.iter().collect();
            let names = cols.iter().map(|c| c.name).collect::<Vec<_>>().join(", ");
            let mut rows = Vec::new();
            for _ in 0..t.initial_rows {
                let vals: Vec<String> = cols
                    .iter()
                    .map(|c| {
                        if c.auto_inc {
                            "NULL".to_string()
                        } else {
                            literal(&mut self.rng, c, f)
                        }
                    })
                    .collect();
                rows.push(format!("({})", vals.join(", ")));
            }
            for chunk in rows.chunks(10) {
                out.push(Stmt::with_tuples(
                    Kind::Load,
                    format!("INSERT IGNORE INTO {} ({names}) VALUES ", t.name),
                    chunk.to_vec(),
                    String::new(),
                ));
            }
        }
        self.in_txn = false;
        self.savepoints = 0;
        self.since_check = 0;
        out
    }

    /// The full, ordered read of every table (a `check`).
    pub fn checks(&self) -> Vec<Stmt> {
        self.tables
            .iter()
            .map(|t| {
                Stmt::new(
                    Kind::Check,
                    format!("SELECT * FROM {} ORDER BY {}", t.name, t.total_order("")),
                )
                .ordered(true)
            })
            .collect()
    }

    /// `CHECK TABLE` of every table.
    pub fn check_table(&self) -> Stmt {
        Stmt::new(
            Kind::CheckTable,
            format!(
                "CHECK TABLE {}",
                self.tables
                    .iter()
                    .map(|t| t.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
        .ordered(true)
    }

    /// The statement that ends an open transaction (COMMIT), if one is open.
    pub fn end_transaction(&mut self) -> Option<Stmt> {
        if self.in_txn {
            self.in_txn = false;
            self.savepoints = 0;
            Some(Stmt::new(Kind::Commit, "COMMIT".into()))
        } else {
            None
        }
    }

    /// Tells the generator how many rows a check found in `table` (it then leans towards
    /// inserts or deletes to keep tables between about 15 and 120 rows).
    pub fn observe_size(&mut self, table: &str, rows: usize) {
        if let Some(t) = self.tables.iter().find(|t| t.name == table) {
            self.sizes.insert(t.name, rows);
        }
    }

    /// The name of the table a check statement reads.
    pub fn checked_table(sql: &str) -> Option<&str> {
        sql.strip_prefix("SELECT * FROM ")?.split(' ').next()
    }

    /// The next statement.
    pub fn next(&mut self) -> Stmt {
        if let Some(s) = self.pending.pop_front() {
            return s;
        }
        self.since_check += 1;
        if self.since_check >= CHECK_EVERY {
            self.since_check = 0;
            self.pending.extend(self.checks());
            // CHECK TABLE commits an open transaction: only outside one.
            if !self.in_txn {
                self.pending.push_back(self.check_table());
            }
            if let Some(s) = self.pending.pop_front() {
                return s;
            }
        }
        if let Some(s) = self.transaction_control() {
            return s;
        }
        loop {
            let kind = self.draw_kind();
            if let Some(s) = self.make(kind) {
                return s;
            }
        }
    }

    fn transaction_control(&mut self) -> Option<Stmt> {
        let r = self.rng.random_range(0..1000);
        if self.in_txn {
            if r < 50 {
                self.in_txn = false;
                self.savepoints = 0;
                return Some(Stmt::new(Kind::Commit, "COMMIT".into()));
            }
            if r < 70 && self.on.has(Kind::Rollback) {
                self.in_txn = false;
                self.savepoints = 0;
                return Some(Stmt::new(Kind::Rollback, "ROLLBACK".into()));
            }
            if r < 100 && self.on.has(Kind::Savepoint) {
                let n = self.rng.random_range(1..=3u8);
                self.savepoints = self.savepoints.max(n);
                return Some(Stmt::new(Kind::Savepoint, format!("SAVEPOINT sp{n}")));
            }
            if r < 125 && self.on.has(Kind::RollbackToSavepoint) && self.savepoints > 0 {
                let n = self.rng.random_range(1..=self.savepoints);
                return Some(Stmt::new(
                    Kind::RollbackToSavepoint,
                    format!("ROLLBACK TO SAVEPOINT sp{n}"),
                ));
            }
            if r < 135 && self.on.has(Kind::ReleaseSavepoint) && self.savepoints > 0 {
                let n = self.rng.random_range(1..=self.savepoints);
                return Some(Stmt::new(
                    Kind::ReleaseSavepoint,
                    format!("RELEASE SAVEPOINT sp{n}"),
                ));
            }
        } else if r < 60 && self.on.has(Kind::Begin) {
            self.in_txn = true;
            self.savepoints = 0;
            let sql = match self.rng.random_range(0..10) {
                0..=5 => "BEGIN",
                6..=8 => "START TRANSACTION",
                _ => "START TRANSACTION WITH CONSISTENT SNAPSHOT",
            };
            return Some(Stmt::new(Kind::Begin, sql.into()));
        }
        None
    }

    fn draw_kind(&mut self) -> Kind {
        let avg = if self.sizes.is_empty() {
            30
        } else {
            self.sizes.values().sum::<usize>() / self.sizes.len()
        };
        let mut choices: Vec<(Kind, u32)> = Vec::new();
        for g in [
            "select", "join", "subquery", "insert", "update", "delete", "session",
        ] {
            for k in self.on.of_group(g) {
                let mut w = k.weight() * 4;
                if g == "insert" && avg > 120 {
                    w /= 3;
                } else if g == "insert" && avg < 15 {
                    w *= 2;
                } else if g == "delete" && avg > 120 {
                    w *= 3;
                } else if g == "delete" && avg < 15 {
                    w /= 4;
                }
                if w > 0 {
                    choices.push((k, w));
                }
            }
        }
        let total: u32 = choices.iter().map(|c| c.1).sum();
        if total == 0 {
            return Kind::Check;
        }
        let mut x = self.rng.random_range(0..total);
        for (k, w) in &choices {
            if x < *w {
                return *k;
            }
            x -= w;
        }
        Kind::Check
    }

    fn make(&mut self, kind: Kind) -> Option<Stmt> {
        let tables = Rc::clone(&self.tables);
        let t = pick(&mut self.rng, &tables)?;
        match kind {
            Kind::Point => self.point(t),
            Kind::Range => self.range(t),
            Kind::OrderLimit => self.order_limit(t),
            Kind::IndexMerge => self.index_merge(t),
            Kind::ForceIndex => self.force_index(t),
            Kind::IgnoreIndex => self.ignore_index(t),
            Kind::Covering => self.covering(t),
            Kind::Aggregate => self.aggregate(t),
            Kind::JoinInner | Kind::JoinLeft | Kind::JoinRight => self.join(kind),
            Kind::JoinMulti => self.join_multi(),
            Kind::SubqueryIn => self.subquery_in(),
            Kind::SubqueryExists => self.subquery_exists(),
            Kind::SubqueryScalar => self.subquery_scalar(),
            Kind::Semijoin => self.semijoin(),
            Kind::LockingRead => self.locking_read(t),
            Kind::Insert => self.insert(t, kind, 1, ""),
            Kind::InsertMulti => {
                let n = self.rng.random_range(2..=5);
                self.insert(t, kind, n, "")
            }
            Kind::InsertAutoinc => self.insert_autoinc(),
            Kind::InsertIgnore => {
                let n = self.rng.random_range(1..=4);
                self.insert(t, kind, n, "IGNORE ")
            }
            Kind::InsertSelect => self.insert_select(),
            Kind::Replace => {
                let n = self.rng.random_range(1..=3);
                self.insert(t, kind, n, "")
            }
            Kind::InsertOdku => self.insert_odku(t),
            Kind::Update => self.update(t),
            Kind::UpdateKey => self.update_key(t),
            Kind::UpdatePkViaSecondary => self.update_pk_via_secondary(t),
            Kind::UpdateMulti => self.update_multi(),
            Kind::Delete => self.delete(t),
            Kind::DeleteMulti => self.delete_multi(),
            Kind::Optimizer => Some(self.optimizer()),
            _ => None,
        }
    }

    fn chance(&mut self, pct: u32) -> bool {
        self.rng.random_range(0..100) < pct
    }

    // ---- pieces -------------------------------------------------------------------------

    /// A select list over `t` with qualifier `q` (`"l."` or `""`).
    fn columns(&mut self, t: &Table, q: &str) -> String {
        match self.rng.random_range(0..10) {
            0..=3 => format!("{q}*"),
            4..=7 => {
                let mut cols: Vec<String> = t
                    .columns
                    .iter()
                    .filter(|_| self.rng.random_bool(0.4))
                    .map(|c| format!("{q}{}", c.name))
                    .collect();
                if cols.is_empty() {
                    cols.push(format!("{q}{}", t.columns.first().map_or("a", |c| c.name)));
                }
                cols.join(", ")
            }
            _ => {
                let mut cols: Vec<String> =
                    t.pk_columns().iter().map(|c| format!("{q}{c}")).collect();
                if let Some(c) = pick(&mut self.rng, &t.columns) {
                    let s = format!("{q}{}", c.name);
                    if !cols.contains(&s) {
                        cols.push(s);
                    }
                }
                cols.join(", ")
            }
        }
    }

    /// A column of `t`: mostly an index's leading column, sometimes another part, sometimes
    /// any column.
    fn some_column<'t>(&mut self, t: &'t Table) -> Option<&'t Column> {
        let r = self.rng.random_range(0..100);
        let idx = pick(&mut self.rng, &t.indexes)?;
        let name = if r < 65 {
            idx.parts.first()?.0
        } else if r < 82 {
            pick(&mut self.rng, &idx.parts)?.0
        } else {
            pick(&mut self.rng, &t.columns)?.name
        };
        t.col(name)
    }

    /// A condition on column `c` (qualified by `q`).
    fn pred_on(&mut self, c: &Column, q: &str) -> String {
        let f = self.f;
        let n = format!("{q}{}", c.name);
        let r = self.rng.random_range(0..100);
        match r {
            0..=29 => format!("{n} = {}", value(&mut self.rng, c, f, false)),
            30..=39 => {
                let vs: Vec<String> = (0..self.rng.random_range(2..=4))
                    .map(|_| value(&mut self.rng, c, f, false))
                    .collect();
                format!("{n} IN ({})", vs.join(", "))
            }
            40..=49 => {
                let (a, b) = two(&mut self.rng, c, f);
                // The range optimizer reads a BETWEEN over a string column whose ends are
                // equal in the connection's collation (utf8mb4_general_ci) as an equality of
                // its first end, whatever the column's collation says (`BETWEEN 'Ab' AND
                // 'aB'` in utf8mb4_bin, `'e' AND 'é'` in utf8mb4_nopad_bin, `'Ä' AND 'a '` in
                // utf8mb4_general_nopad_ci: "ref const"), on any engine, and misses the rows a
                // scan finds; which plan runs is the optimizer's business. The same range
                // written with >= and <= is read as a range.
                if c.is_string() {
                    format!("({n} >= {a} AND {n} <= {b})")
                } else {
                    format!("{n} BETWEEN {a} AND {b}")
                }
            }
            50..=57 => format!("{n} > {}", value(&mut self.rng, c, f, false)),
            58..=65 => format!("{n} < {}", value(&mut self.rng, c, f, false)),
            66..=70 => format!("{n} >= {}", value(&mut self.rng, c, f, false)),
            71..=75 => format!("{n} <= {}", value(&mut self.rng, c, f, false)),
            // A join's hash key (BNLH, BKAH: join_cache_level 3 and up) may take a key part
            // compared with NULL as a constant part of the key, and then never matches: the
            // join loses rows on any engine (seen with InnoDB on MariaDB 10.11.18). In a join
            // (a qualified column) the NULL test goes through an expression no index reads.
            76..=80 if !q.is_empty() => format!("CONCAT({n}) IS NULL"),
            76..=80 => format!("{n} IS NULL"),
            81..=85 => format!("{n} IS NOT NULL"),
            86..=89 => {
                let v = value(&mut self.rng, c, f, false);
                if v == "NULL" && !q.is_empty() {
                    format!("CONCAT({n}) IS NULL")
                } else {
                    format!("{n} <=> {v}")
                }
            }
            90..=93 => format!("{n} <> {}", value(&mut self.rng, c, f, false)),
            _ => {
                if c.is_string() && self.on.has(Kind::Like) {
                    let p = pick(&mut self.rng, &["a%", "A%", "%b", "a_", "_", "%", "ab%"])
                        .copied()
                        .unwrap_or("a%");
                    // The range the optimizer makes of `LIKE 'a%'` on a PAD SPACE string
                    // starts at 'a' padded with spaces, above 'a' + CHAR(0), which the LIKE
                    // matches: an index read misses that row on any engine, a scan finds it.
                    // Such a column is read through an expression (no index) instead.
                    if matches!(c.ty, Ty::Str { .. }) && !c.is_nopad() {
                        format!("CONCAT({n}) LIKE {}", quote(p))
                    } else {
                        format!("{n} LIKE {}", quote(p))
                    }
                } else {
                    format!("{n} = {}", value(&mut self.rng, c, f, false))
                }
            }
        }
    }

    /// A condition on a column of `t`.
    fn pred(&mut self, t: &Table, q: &str) -> String {
        match self.some_column(t) {
            Some(c) => self.pred_on(c, q),
            None => "1".into(),
        }
    }

    /// One to three conditions on `t`, joined by AND (mostly) or OR.
    fn cond(&mut self, t: &Table, q: &str) -> String {
        let n = match self.rng.random_range(0..10) {
            0..=5 => 1,
            6..=8 => 2,
            _ => 3,
        };
        let mut s = self.pred(t, q);
        for _ in 1..n {
            let op = if self.chance(70) { "AND" } else { "OR" };
            let p = self.pred(t, q);
            s = format!("({s}) {op} ({p})");
        }
        s
    }

    /// A primary-key (or unique-key) equality on `t`.
    fn key_eq(&mut self, t: &Table, q: &str) -> String {
        let f = self.f;
        let uniques: Vec<&Index> = t.indexes.iter().filter(|i| i.unique).collect();
        let idx = if self.chance(70) {
            t.pk().or_else(|| uniques.first().copied())
        } else {
            pick(&mut self.rng, &uniques).copied()
        };
        let Some(idx) = idx else {
            return self.pred(t, q);
        };
        idx.parts
            .iter()
            .filter_map(|(c, _)| t.col(c))
            .map(|c| format!("{q}{} = {}", c.name, value(&mut self.rng, c, f, false)))
            .collect::<Vec<_>>()
            .join(" AND ")
    }

    /// ` ORDER BY <total order> [DESC]` and whether it is total.
    fn total_order(&mut self, t: &Table, q: &str) -> String {
        let desc = self.chance(30);
        let list = t.total_order(q);
        if desc {
            list.split(", ")
                .map(|p| format!("{p} DESC"))
                .collect::<Vec<_>>()
                .join(", ")
        } else {
            list
        }
    }

    fn limit(&mut self) -> String {
        let n = self.rng.random_range(1..=8);
        if self.chance(25) {
            format!(" LIMIT {n} OFFSET {}", self.rng.random_range(1..=5))
        } else {
            format!(" LIMIT {n}")
        }
    }

    /// `o`, an ORDER BY list, as it must be under a LIMIT: a NO PAD string column followed by
    /// its bytes (`c, HEX(c)`, see `Table::order_term`) is ordered by the bytes alone. With a
    /// LIMIT, filesort keeps the best rows in a priority queue, which ties 'A' and 'a' +
    /// CHAR(0) (`_nopad_ci`) whatever the next term says, so which of them survives the LIMIT
    /// depends on the order the rows came in (a LIMIT 3 even disagreed with the first three
    /// rows of the full sort, on InnoDB too: the 60-minute run of 2026-11-26).
    fn limited(o: &str) -> String {
        let parts: Vec<&str> = o.split(", ").collect();
        let bare = |p: &str| p.trim_end_matches(" DESC").to_string();
        parts
            .iter()
            .enumerate()
            .filter(|(i, p)| {
                parts
                    .get(i + 1)
                    .is_none_or(|next| bare(next) != format!("HEX({})", bare(p)))
            })
            .map(|(_, p)| *p)
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn index_other_than_primary<'t>(&mut self, t: &'t Table) -> Option<&'t Index> {
        let ks: Vec<&Index> = t.indexes.iter().filter(|i| !i.primary()).collect();
        pick(&mut self.rng, &ks).copied()
    }

    fn pair(&mut self) -> Option<Pair> {
        pick(&mut self.rng, JOINS).copied()
    }

    /// An index of `t` whose first part is `col`.
    fn index_led_by<'t>(t: &'t Table, col: &str) -> Option<&'t Index> {
        t.indexes
            .iter()
            .find(|i| i.parts.first().is_some_and(|p| p.0 == col))
    }

    // ---- reads --------------------------------------------------------------------------

    fn point(&mut self, t: &Table) -> Option<Stmt> {
        let cols = self.columns(t, "");
        let w = self.key_eq(t, "");
        Some(Stmt::new(
            Kind::Point,
            format!("SELECT {cols} FROM {} WHERE {w}", t.name),
        ))
    }

    fn range(&mut self, t: &Table) -> Option<Stmt> {
        let cols = self.columns(t, "");
        let w = self.cond(t, "");
        if self.chance(30) {
            let o = self.total_order(t, "");
            return Some(
                Stmt::new(
                    Kind::Range,
                    format!("SELECT {cols} FROM {} WHERE {w} ORDER BY {o}", t.name),
                )
                .ordered(true),
            );
        }
        Some(Stmt::new(
            Kind::Range,
            format!("SELECT {cols} FROM {} WHERE {w}", t.name),
        ))
    }

    fn order_limit(&mut self, t: &Table) -> Option<Stmt> {
        let cols = self.columns(t, "");
        let w = if self.chance(60) {
            format!(" WHERE {}", self.cond(t, ""))
        } else {
            String::new()
        };
        let desc = self.chance(35);
        // Through an index's order (its columns, then the total order), or the total order.
        let o = if self.chance(50)
            && let Some(k) = self.index_other_than_primary(t)
        {
            let mut parts: Vec<String> = k.columns().iter().map(|c| t.order_term(c, "")).collect();
            parts.push(t.total_order(""));
            parts.join(", ")
        } else {
            t.total_order("")
        };
        let o = if desc {
            o.split(", ")
                .map(|p| format!("{p} DESC"))
                .collect::<Vec<_>>()
                .join(", ")
        } else {
            o
        };
        let l = self.limit();
        let o = Self::limited(&o);
        Some(
            Stmt::new(
                Kind::OrderLimit,
                format!("SELECT {cols} FROM {}{w} ORDER BY {o}{l}", t.name),
            )
            .ordered(true),
        )
    }

    fn index_merge(&mut self, t: &Table) -> Option<Stmt> {
        let mut leads: Vec<(&str, &str)> = Vec::new();
        for i in &t.indexes {
            let c = i.parts.first()?.0;
            if !leads.iter().any(|l| l.1 == c) {
                leads.push((i.name, c));
            }
        }
        if leads.len() < 2 {
            return None;
        }
        let n = if leads.len() > 2 && self.chance(30) {
            3
        } else {
            2
        };
        let chosen: Vec<(&str, &str)> = leads.choose_multiple(&mut self.rng, n).copied().collect();
        let op = if self.chance(70) { "OR" } else { "AND" };
        let mut preds = Vec::new();
        for (_, c) in &chosen {
            let col = t.col(c)?;
            preds.push(format!("({})", self.pred_on(col, "")));
        }
        let hint = if self.chance(40) {
            format!(
                " FORCE INDEX ({})",
                chosen.iter().map(|c| c.0).collect::<Vec<_>>().join(", ")
            )
        } else {
            String::new()
        };
        let cols = self.columns(t, "");
        Some(Stmt::new(
            Kind::IndexMerge,
            format!(
                "SELECT {cols} FROM {}{hint} WHERE {}",
                t.name,
                preds.join(&format!(" {op} "))
            ),
        ))
    }

    fn force_index(&mut self, t: &Table) -> Option<Stmt> {
        let k = pick(&mut self.rng, &t.indexes)?;
        let hint = match self.rng.random_range(0..10) {
            0..=5 => "FORCE INDEX",
            6 => "FORCE INDEX FOR ORDER BY",
            7 => "FORCE INDEX FOR JOIN",
            _ => "USE INDEX",
        };
        let lead = t.col(k.parts.first()?.0)?;
        let mut w = self.pred_on(lead, "");
        if self.chance(30) {
            w = format!("{w} AND {}", self.pred(t, ""));
        }
        let cols = self.columns(t, "");
        let (o, ordered) = if self.chance(40) {
            let mut parts: Vec<String> = k.columns().iter().map(|c| t.order_term(c, "")).collect();
            parts.push(t.total_order(""));
            let desc = if self.chance(30) { " DESC" } else { "" };
            let o = parts
                .join(", ")
                .split(", ")
                .map(|p| format!("{p}{desc}"))
                .collect::<Vec<_>>()
                .join(", ");
            let (o, l) = if self.chance(50) {
                (Self::limited(&o), self.limit())
            } else {
                (o, String::new())
            };
            (format!(" ORDER BY {o}{l}"), true)
        } else {
            (String::new(), false)
        };
        Some(
            Stmt::new(
                Kind::ForceIndex,
                format!(
                    "SELECT {cols} FROM {} {hint} ({}) WHERE {w}{o}",
                    t.name, k.name
                ),
            )
            .ordered(ordered),
        )
    }

    fn ignore_index(&mut self, t: &Table) -> Option<Stmt> {
        let k = pick(&mut self.rng, &t.indexes)?;
        let lead = t.col(k.parts.first()?.0)?;
        let w = self.pred_on(lead, "");
        let cols = self.columns(t, "");
        Some(Stmt::new(
            Kind::IgnoreIndex,
            format!(
                "SELECT {cols} FROM {} IGNORE INDEX ({}) WHERE {w}",
                t.name, k.name
            ),
        ))
    }

    fn covering(&mut self, t: &Table) -> Option<Stmt> {
        let ks: Vec<&Index> = t
            .indexes
            .iter()
            .filter(|i| !i.primary() && i.whole_columns())
            .collect();
        let k = *pick(&mut self.rng, &ks)?;
        let mut cols: Vec<&str> = k.columns();
        for c in t.pk_columns() {
            if !cols.contains(&c) {
                cols.push(c);
            }
        }
        let lead = t.col(k.parts.first()?.0)?;
        let w = if self.chance(85) {
            format!(" WHERE {}", self.pred_on(lead, ""))
        } else {
            String::new()
        };
        let hint = if self.chance(50) {
            format!(" FORCE INDEX ({})", k.name)
        } else {
            String::new()
        };
        if self.chance(15) {
            return Some(Stmt::new(
                Kind::Covering,
                format!("SELECT COUNT(*) FROM {}{hint}{w}", t.name),
            ));
        }
        let list = cols.join(", ");
        if t.pk().is_some() && self.chance(50) {
            let desc = if self.chance(40) { " DESC" } else { "" };
            let o = cols
                .iter()
                .map(|c| t.order_term(c, ""))
                .collect::<Vec<_>>()
                .join(", ")
                .split(", ")
                .map(|p| format!("{p}{desc}"))
                .collect::<Vec<_>>()
                .join(", ");
            let (o, l) = if self.chance(40) {
                (Self::limited(&o), self.limit())
            } else {
                (o, String::new())
            };
            return Some(
                Stmt::new(
                    Kind::Covering,
                    format!("SELECT {list} FROM {}{hint}{w} ORDER BY {o}{l}", t.name),
                )
                .ordered(true),
            );
        }
        Some(Stmt::new(
            Kind::Covering,
            format!("SELECT {list} FROM {}{hint}{w}", t.name),
        ))
    }

    fn aggregate(&mut self, t: &Table) -> Option<Stmt> {
        let exact: Vec<&Column> = t.columns.iter().filter(|c| c.exact()).collect();
        let summable: Vec<&Column> = t
            .columns
            .iter()
            .filter(|c| c.is_int() || c.ty == Ty::Decimal)
            .collect();
        let w = if self.chance(70) {
            format!(" WHERE {}", self.cond(t, ""))
        } else {
            String::new()
        };
        match self.rng.random_range(0..5) {
            0 => {
                let any = pick(&mut self.rng, &t.columns)?.name;
                let s = pick(&mut self.rng, &summable)?.name;
                let m = pick(&mut self.rng, &exact)?.name;
                Some(Stmt::new(
                    Kind::Aggregate,
                    format!(
                        "SELECT COUNT(*), COUNT({any}), SUM({s}), MIN({m}), MAX({m}) FROM {}{w}",
                        t.name
                    ),
                ))
            }
            1 => {
                // GROUP BY an exact index prefix (loose index scan / group by index).
                let ks: Vec<&Index> = t
                    .indexes
                    .iter()
                    .filter(|i| {
                        i.parts
                            .first()
                            .and_then(|p| t.col(p.0))
                            .is_some_and(Column::exact)
                            && i.parts.first().is_some_and(|p| p.1.is_none())
                    })
                    .collect();
                let k = *pick(&mut self.rng, &ks)?;
                let g = k.parts.first()?.0;
                let m = match k.parts.get(1).and_then(|p| t.col(p.0)) {
                    Some(c) if c.exact() && k.parts.get(1).is_some_and(|p| p.1.is_none()) => c.name,
                    _ => pick(&mut self.rng, &exact)?.name,
                };
                Some(Stmt::new(
                    Kind::Aggregate,
                    format!(
                        "SELECT {g}, COUNT(*), MIN({m}), MAX({m}) FROM {}{w} GROUP BY {g}",
                        t.name
                    ),
                ))
            }
            2 => {
                let g = pick(&mut self.rng, &exact)?.name;
                Some(Stmt::new(
                    Kind::Aggregate,
                    format!("SELECT COUNT(DISTINCT {g}) FROM {}{w}", t.name),
                ))
            }
            3 => {
                let g = pick(&mut self.rng, &exact)?.name;
                Some(Stmt::new(
                    Kind::Aggregate,
                    format!("SELECT DISTINCT {g} FROM {}{w}", t.name),
                ))
            }
            _ => {
                let k = self.index_other_than_primary(t).or(t.pk())?;
                let c = t.col(k.parts.first()?.0)?;
                if !c.exact() || k.parts.first()?.1.is_some() {
                    return None;
                }
                Some(Stmt::new(
                    Kind::Aggregate,
                    format!("SELECT MIN({0}), MAX({0}) FROM {1}{w}", c.name, t.name),
                ))
            }
        }
    }

    fn join(&mut self, kind: Kind) -> Option<Stmt> {
        let (lt, lc, rt, rc) = self.pair()?;
        let tables = Rc::clone(&self.tables);
        let l = tables.iter().find(|t| t.name == lt)?;
        let r = tables.iter().find(|t| t.name == rt)?;
        let cols = match self.rng.random_range(0..4) {
            0 => "l.*, r.*".to_string(),
            1 => {
                // Covering on the inner side: its index's columns and primary key.
                let k = Self::index_led_by(r, rc)?;
                let mut cs: Vec<String> = k.columns().iter().map(|c| format!("r.{c}")).collect();
                for c in r.pk_columns() {
                    let s = format!("r.{c}");
                    if !cs.contains(&s) {
                        cs.push(s);
                    }
                }
                let lcols = self.columns(l, "l.");
                format!("{lcols}, {}", cs.join(", "))
            }
            _ => {
                let a = self.columns(l, "l.");
                let b = self.columns(r, "r.");
                format!("{a}, {b}")
            }
        };
        let hint = if self.chance(30) {
            match Self::index_led_by(r, rc) {
                Some(k) => format!(" FORCE INDEX ({})", k.name),
                None => String::new(),
            }
        } else {
            String::new()
        };
        let mut on = format!("l.{lc} = r.{rc}");
        if self.chance(30) {
            on = format!("{on} AND {}", self.pred(r, "r."));
        }
        let from = match kind {
            Kind::JoinLeft => format!("{lt} AS l LEFT JOIN {rt} AS r{hint} ON {on}"),
            Kind::JoinRight => format!("{rt} AS r{hint} RIGHT JOIN {lt} AS l ON {on}"),
            _ => format!("{lt} AS l JOIN {rt} AS r{hint} ON {on}"),
        };
        let mut wheres = Vec::new();
        if self.chance(60) {
            wheres.push(self.cond(l, "l."));
        }
        if kind == Kind::JoinLeft && self.chance(20) {
            let c = r.columns.iter().find(|c| c.not_null).map_or(rc, |c| c.name);
            wheres.push(format!("r.{c} IS NULL"));
        } else if self.chance(25) {
            wheres.push(self.pred(r, "r."));
        }
        let w = if wheres.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", wheres.join(" AND "))
        };
        let (o, ordered) = if self.chance(35) {
            let lo = self.total_order(l, "l.");
            let ro = self.total_order(r, "r.");
            let lim = if l.pk().is_some() && r.pk().is_some() && self.chance(50) {
                self.limit()
            } else {
                String::new()
            };
            let mut o = format!("{lo}, {ro}");
            if !lim.is_empty() {
                o = Self::limited(&o);
            }
            (format!(" ORDER BY {o}{lim}"), true)
        } else {
            (String::new(), false)
        };
        Some(Stmt::new(kind, format!("SELECT {cols} FROM {from}{w}{o}")).ordered(ordered))
    }

    fn join_multi(&mut self) -> Option<Stmt> {
        let (lt, lc, mt, mc) = self.pair()?;
        let next: Vec<Pair> = JOINS
            .iter()
            .copied()
            .filter(|p| p.0 == mt && p.2 != lt)
            .collect();
        let (_, mc2, rt, rc) = *pick(&mut self.rng, &next)?;
        let tables = Rc::clone(&self.tables);
        let l = tables.iter().find(|t| t.name == lt)?;
        let r = tables.iter().find(|t| t.name == rt)?;
        let j2 = if self.chance(50) { "LEFT JOIN" } else { "JOIN" };
        let w = self.cond(l, "l.");
        let cols = format!(
            "{}, m.{mc}, m.{mc2}, {}",
            self.columns(l, "l."),
            self.columns(r, "r.")
        );
        Some(Stmt::new(
            Kind::JoinMulti,
            format!(
                "SELECT {cols} FROM {lt} AS l JOIN {mt} AS m ON l.{lc} = m.{mc} \
                 {j2} {rt} AS r ON m.{mc2} = r.{rc} WHERE {w}"
            ),
        ))
    }

    fn subquery_in(&mut self) -> Option<Stmt> {
        let (lt, lc, rt, rc) = self.pair()?;
        let tables = Rc::clone(&self.tables);
        let l = tables.iter().find(|t| t.name == lt)?;
        let r = tables.iter().find(|t| t.name == rt)?;
        let not = if self.chance(25) { "NOT " } else { "" };
        let rw = self.cond(r, "r.");
        let cols = self.columns(l, "l.");
        let extra = if self.chance(40) {
            format!(" AND {}", self.pred(l, "l."))
        } else {
            String::new()
        };
        Some(Stmt::new(
            Kind::SubqueryIn,
            format!(
                "SELECT {cols} FROM {lt} AS l WHERE l.{lc} {not}IN \
                 (SELECT r.{rc} FROM {rt} AS r WHERE {rw}){extra}"
            ),
        ))
    }

    fn subquery_exists(&mut self) -> Option<Stmt> {
        let (lt, lc, rt, rc) = self.pair()?;
        let tables = Rc::clone(&self.tables);
        let l = tables.iter().find(|t| t.name == lt)?;
        let r = tables.iter().find(|t| t.name == rt)?;
        let not = if self.chance(30) { "NOT " } else { "" };
        let rw = if self.chance(60) {
            format!(" AND {}", self.pred(r, "r."))
        } else {
            String::new()
        };
        let cols = self.columns(l, "l.");
        let lw = if self.chance(40) {
            format!(" AND {}", self.pred(l, "l."))
        } else {
            String::new()
        };
        Some(Stmt::new(
            Kind::SubqueryExists,
            format!(
                "SELECT {cols} FROM {lt} AS l WHERE {not}EXISTS \
                 (SELECT 1 FROM {rt} AS r WHERE r.{rc} = l.{lc}{rw}){lw}"
            ),
        ))
    }

    fn subquery_scalar(&mut self) -> Option<Stmt> {
        let (lt, lc, rt, rc) = self.pair()?;
        let tables = Rc::clone(&self.tables);
        let l = tables.iter().find(|t| t.name == lt)?;
        let r = tables.iter().find(|t| t.name == rt)?;
        let cols = self.columns(l, "l.");
        match self.rng.random_range(0..3) {
            0 => {
                let w = self.cond(l, "l.");
                Some(Stmt::new(
                    Kind::SubqueryScalar,
                    format!(
                        "SELECT {cols}, (SELECT COUNT(*) FROM {rt} AS r WHERE r.{rc} = l.{lc}) \
                         AS n FROM {lt} AS l WHERE {w}"
                    ),
                ))
            }
            1 => {
                let exact: Vec<&Column> = r.columns.iter().filter(|c| c.exact()).collect();
                let x = pick(&mut self.rng, &exact)?.name;
                Some(Stmt::new(
                    Kind::SubqueryScalar,
                    format!(
                        "SELECT {cols}, (SELECT MAX(r.{x}) FROM {rt} AS r WHERE r.{rc} = l.{lc}) \
                         AS m FROM {lt} AS l"
                    ),
                ))
            }
            _ => {
                let rw = self.cond(r, "r.");
                let o = self.total_order(r, "r.");
                let o = Self::limited(&o);
                let op = pick(&mut self.rng, &["=", "<", ">=", "<=>"])
                    .copied()
                    .unwrap_or("=");
                Some(Stmt::new(
                    Kind::SubqueryScalar,
                    format!(
                        "SELECT {cols} FROM {lt} AS l WHERE l.{lc} {op} \
                         (SELECT r.{rc} FROM {rt} AS r WHERE {rw} ORDER BY {o} LIMIT 1)"
                    ),
                ))
            }
        }
    }

    fn semijoin(&mut self) -> Option<Stmt> {
        let (lt, lc, rt, rc) = self.pair()?;
        let next: Vec<Pair> = JOINS
            .iter()
            .copied()
            .filter(|p| p.0 == rt && p.2 != lt)
            .collect();
        let tables = Rc::clone(&self.tables);
        let l = tables.iter().find(|t| t.name == lt)?;
        let cols = self.columns(l, "l.");
        let lw = if self.chance(40) {
            format!(" AND {}", self.pred(l, "l."))
        } else {
            String::new()
        };
        let sub = match pick(&mut self.rng, &next) {
            Some(&(_, rc2, mt, mc)) if self.chance(70) => {
                let m = tables.iter().find(|t| t.name == mt)?;
                let mw = self.pred(m, "m.");
                format!(
                    "SELECT r.{rc} FROM {rt} AS r JOIN {mt} AS m ON r.{rc2} = m.{mc} WHERE {mw}"
                )
            }
            _ => {
                let r = tables.iter().find(|t| t.name == rt)?;
                let rw = self.cond(r, "r.");
                format!("SELECT DISTINCT r.{rc} FROM {rt} AS r WHERE {rw}")
            }
        };
        Some(Stmt::new(
            Kind::Semijoin,
            format!("SELECT {cols} FROM {lt} AS l WHERE l.{lc} IN ({sub}){lw}"),
        ))
    }

    fn locking_read(&mut self, t: &Table) -> Option<Stmt> {
        let cols = self.columns(t, "");
        let w = if self.chance(50) {
            self.key_eq(t, "")
        } else {
            self.cond(t, "")
        };
        let lock = pick(
            &mut self.rng,
            &[
                "FOR UPDATE",
                "LOCK IN SHARE MODE",
                "FOR UPDATE NOWAIT",
                "FOR UPDATE SKIP LOCKED",
                "LOCK IN SHARE MODE SKIP LOCKED",
            ],
        )
        .copied()
        .unwrap_or("FOR UPDATE");
        Some(Stmt::new(
            Kind::LockingRead,
            format!("SELECT {cols} FROM {} WHERE {w} {lock}", t.name),
        ))
    }

    // ---- writes -------------------------------------------------------------------------

    /// A column list for an INSERT into `t` and the row generator's choice per column:
    /// all columns mostly, else a subset (NOT NULL ones kept, except rarely).
    fn insert_columns<'t>(&mut self, t: &'t Table) -> Vec<&'t Column> {
        if self.chance(75) {
            return t.columns.iter().collect();
        }
        let drop_not_null = self.f.bad_values && self.chance(5);
        let cols: Vec<&Column> = t
            .columns
            .iter()
            .filter(|c| (c.not_null && !c.auto_inc && !drop_not_null) || self.rng.random_bool(0.5))
            .collect();
        if cols.is_empty() {
            t.columns.iter().collect()
        } else {
            cols
        }
    }

    fn row(&mut self, cols: &[&Column]) -> String {
        let f = self.f;
        let vals: Vec<String> = cols
            .iter()
            .map(|c| {
                if c.auto_inc {
                    self.autoinc_value(c)
                } else {
                    literal(&mut self.rng, c, f)
                }
            })
            .collect();
        format!("({})", vals.join(", "))
    }

    fn autoinc_value(&mut self, c: &Column) -> String {
        let explicit = self.on.has(Kind::ExplicitAutoinc);
        match self.rng.random_range(0..10) {
            0..=5 => "NULL".into(),
            6 => "0".into(),
            // Explicit values from the usual domain (the type's maximum would end the
            // table's inserts: 1467 on both engines).
            _ if explicit => match c.ty {
                Ty::Int { lo, hi, .. } => self.rng.random_range(lo..=hi).to_string(),
                _ => "NULL".into(),
            },
            _ => "NULL".into(),
        }
    }

    fn insert(&mut self, t: &Table, kind: Kind, n: usize, ignore: &str) -> Option<Stmt> {
        let cols = self.insert_columns(t);
        let names = cols.iter().map(|c| c.name).collect::<Vec<_>>().join(", ");
        let rows: Vec<String> = (0..n).map(|_| self.row(&cols)).collect();
        let verb = if kind == Kind::Replace {
            "REPLACE"
        } else {
            "INSERT"
        };
        Some(Stmt::with_tuples(
            kind,
            format!("{verb} {ignore}INTO {} ({names}) VALUES ", t.name),
            rows,
            String::new(),
        ))
    }

    fn insert_autoinc(&mut self) -> Option<Stmt> {
        let tables = Rc::clone(&self.tables);
        let ts: Vec<&Table> = tables.iter().filter(|t| t.auto_inc().is_some()).collect();
        let t = *pick(&mut self.rng, &ts)?;
        let omit = self.chance(40);
        let cols: Vec<&Column> = t.columns.iter().filter(|c| !(omit && c.auto_inc)).collect();
        let names = cols.iter().map(|c| c.name).collect::<Vec<_>>().join(", ");
        let n = self.rng.random_range(1..=4);
        let rows: Vec<String> = (0..n).map(|_| self.row(&cols)).collect();
        let ignore = if self.chance(30) { "IGNORE " } else { "" };
        Some(Stmt::with_tuples(
            Kind::InsertAutoinc,
            format!("INSERT {ignore}INTO {} ({names}) VALUES ", t.name),
            rows,
            String::new(),
        ))
    }

    fn insert_select(&mut self) -> Option<Stmt> {
        let tables = Rc::clone(&self.tables);
        let t1 = tables.iter().find(|t| t.name == "t1")?;
        let t2 = tables.iter().find(|t| t.name == "t2")?;
        let t4 = tables.iter().find(|t| t.name == "t4")?;
        let (dst, cols, sel, src) = match self.rng.random_range(0..6) {
            0 => (
                "t5",
                "a, b, v, w",
                "s.id, s.tu % 10, NULL, s.ti".to_string(),
                t1,
            ),
            1 => ("t4", "a, b, c, d, e", "s.a, NULL, s.bu, NULL, NULL".into(), t1),
            2 => (
                "t2",
                "a, dt, tm, dtm, ts, yr, e, st",
                "s.a, s.dt, s.tm, NULL, s.ts, s.yr, s.e, s.st".into(),
                t2,
            ),
            3 => (
                "t1",
                "id, a, ti, tu, si, su, mi, mu, i, bi, bu, d, f, db, bt",
                "s.id + 20, s.a, s.ti, s.tu, s.si, s.su, s.mi, s.mu, s.i, s.bi, s.bu, s.d, s.f, s.db, s.bt"
                    .into(),
                t1,
            ),
            4 => (
                "t6",
                "a, b, c, d, e, g",
                "s.id, CONCAT('s', s.ti), s.ti, s.d, NULL, s.tu".into(),
                t1,
            ),
            _ => (
                "t3",
                "name, n, nb, gn, lc",
                "s.b, s.a % 10, s.e, s.e, s.b".into(),
                t4,
            ),
        };
        let w = self.cond(src, "s.");
        let o = self.total_order(src, "s.");
        let (o, lim) = if self.chance(30) {
            (
                Self::limited(&o),
                format!(" LIMIT {}", self.rng.random_range(1..=6)),
            )
        } else {
            (o, String::new())
        };
        let (ignore, odku) = match self.rng.random_range(0..10) {
            0..=4 => ("IGNORE ", String::new()),
            5..=6 if dst != "t1" => ("", String::new()),
            7..=8 => {
                let tables = Rc::clone(&self.tables);
                let d = tables.iter().find(|t| t.name == dst)?;
                let c = self.non_unique_column(d)?;
                (
                    "",
                    format!(" ON DUPLICATE KEY UPDATE {} = VALUES({0})", c.name),
                )
            }
            _ => ("", String::new()),
        };
        Some(Stmt::new(
            Kind::InsertSelect,
            format!(
                "INSERT {ignore}INTO {dst} ({cols}) SELECT {sel} FROM {} AS s WHERE {w} ORDER BY {o}{lim}{odku}",
                src.name
            ),
        ))
    }

    /// A column of `t` in no unique index and not the auto-increment counter.
    fn non_unique_column<'t>(&mut self, t: &'t Table) -> Option<&'t Column> {
        let cs: Vec<&Column> = t
            .columns
            .iter()
            .filter(|c| {
                !c.auto_inc
                    && !t
                        .indexes
                        .iter()
                        .any(|i| i.unique && i.parts.iter().any(|p| p.0 == c.name))
            })
            .collect();
        pick(&mut self.rng, &cs).copied()
    }

    /// A column of `t` in a unique index (the primary key included).
    fn unique_column<'t>(&mut self, t: &'t Table) -> Option<&'t Column> {
        let cs: Vec<&Column> = t
            .columns
            .iter()
            .filter(|c| {
                t.indexes
                    .iter()
                    .any(|i| i.unique && i.parts.iter().any(|p| p.0 == c.name))
            })
            .collect();
        pick(&mut self.rng, &cs).copied()
    }

    /// `c = <new value>` for an UPDATE or ON DUPLICATE KEY UPDATE (qualifier `q`).
    fn assignment(&mut self, c: &Column, q: &str) -> String {
        let f = self.f;
        let n = format!("{q}{}", c.name);
        // The counter's column keeps to its usual values: at the type's maximum every later
        // insert into the table fails (1467 / 167 on both engines).
        if let (true, Ty::Int { lo, hi, .. }) = (c.auto_inc, c.ty) {
            return format!("{n} = {}", self.rng.random_range(lo..=hi));
        }
        match self.rng.random_range(0..10) {
            0..=5 => format!("{n} = {}", literal(&mut self.rng, c, f)),
            6..=7 if c.is_int() => {
                let d = self.rng.random_range(1..=3);
                if self.chance(50) {
                    format!("{n} = {n} + {d}")
                } else {
                    format!("{n} = {n} - {d}")
                }
            }
            8 if !c.not_null => format!("{n} = NULL"),
            _ => format!("{n} = {}", value(&mut self.rng, c, f, true)),
        }
    }

    fn insert_odku(&mut self, t: &Table) -> Option<Stmt> {
        let cols = self.insert_columns(t);
        let names = cols.iter().map(|c| c.name).collect::<Vec<_>>().join(", ");
        let n = self.rng.random_range(1..=3);
        let rows: Vec<String> = (0..n).map(|_| self.row(&cols)).collect();
        let mut sets = Vec::new();
        for _ in 0..self.rng.random_range(1..=2) {
            let c = if self.chance(80) {
                self.non_unique_column(t)?
            } else {
                self.unique_column(t)?
            };
            if self.chance(40) && cols.iter().any(|x| x.name == c.name) {
                sets.push(format!("{0} = VALUES({0})", c.name));
            } else {
                sets.push(self.assignment(c, ""));
            }
        }
        Some(Stmt::with_tuples(
            Kind::InsertOdku,
            format!("INSERT INTO {} ({names}) VALUES ", t.name),
            rows,
            format!(" ON DUPLICATE KEY UPDATE {}", sets.join(", ")),
        ))
    }

    fn update(&mut self, t: &Table) -> Option<Stmt> {
        let mut sets = Vec::new();
        for _ in 0..self.rng.random_range(1..=3) {
            let c = self.non_unique_column(t)?;
            if !sets
                .iter()
                .any(|s: &String| s.starts_with(&format!("{} =", c.name)))
            {
                sets.push(self.assignment(c, ""));
            }
        }
        let ignore = if self.chance(20) { "IGNORE " } else { "" };
        let w = if self.chance(30) {
            self.key_eq(t, "")
        } else {
            self.cond(t, "")
        };
        let tail = if self.chance(25) {
            let o = self.total_order(t, "");
            let o = Self::limited(&o);
            format!(" ORDER BY {o} LIMIT {}", self.rng.random_range(1..=5))
        } else {
            String::new()
        };
        Some(Stmt::new(
            Kind::Update,
            format!(
                "UPDATE {ignore}{} SET {} WHERE {w}{tail}",
                t.name,
                sets.join(", ")
            ),
        ))
    }

    fn update_key(&mut self, t: &Table) -> Option<Stmt> {
        let c = self.unique_column(t)?;
        let mut sets = vec![self.assignment(c, "")];
        if self.chance(30)
            && let Some(o) = self.non_unique_column(t)
        {
            sets.push(self.assignment(o, ""));
        }
        let ignore = if self.chance(25) { "IGNORE " } else { "" };
        let w = match self.rng.random_range(0..10) {
            0..=3 => self.key_eq(t, ""),
            4..=6 => {
                // Through a secondary index (not the primary key: the scan that moves rows).
                match self.index_other_than_primary(t) {
                    Some(k) => {
                        let lead = t.col(k.parts.first()?.0)?;
                        self.pred_on(lead, "")
                    }
                    None => self.cond(t, ""),
                }
            }
            _ => self.cond(t, ""),
        };
        // The order decides which row hits a duplicate first (and which IGNORE skips).
        let o = self.total_order(t, "");
        let (o, lim) = if self.chance(20) {
            (
                Self::limited(&o),
                format!(" LIMIT {}", self.rng.random_range(1..=4)),
            )
        } else {
            (o, String::new())
        };
        Some(Stmt::new(
            Kind::UpdateKey,
            format!(
                "UPDATE {ignore}{} SET {} WHERE {w} ORDER BY {o}{lim}",
                t.name,
                sets.join(", ")
            ),
        ))
    }

    fn update_pk_via_secondary(&mut self, t: &Table) -> Option<Stmt> {
        let pk = t.pk()?;
        let ints: Vec<&Column> = pk
            .parts
            .iter()
            .filter_map(|p| t.col(p.0))
            .filter(|c| c.is_int())
            .collect();
        let c = *pick(&mut self.rng, &ints)?;
        let k = self.index_other_than_primary(t)?;
        let lead = t.col(k.parts.first()?.0)?;
        let w = self.pred_on(lead, "");
        // Only rows whose key part is in 0..=999 move, to 1000..=1999: no row moves onto a
        // key another moved row leaves, so the order the rows are updated in (the plan's)
        // cannot decide whether the statement meets a duplicate. FORCE INDEX keeps the scan
        // on the secondary index, where the moved rows' new entries lie ahead of the scan.
        Some(Stmt::new(
            Kind::UpdatePkViaSecondary,
            format!(
                "UPDATE {} FORCE INDEX ({}) SET {2} = {2} + 1000 WHERE {w} AND {2} BETWEEN 0 AND 999",
                t.name, k.name, c.name
            ),
        ))
    }

    fn update_multi(&mut self) -> Option<Stmt> {
        let (lt, lc, rt, rc) = self.pair()?;
        let tables = Rc::clone(&self.tables);
        let l = tables.iter().find(|t| t.name == lt)?;
        let r = tables.iter().find(|t| t.name == rt)?;
        // Not a join column: a row updated on the fly could stop (or start) matching rows
        // of the other table read after it, and which are read after it is the plan's choice.
        let c = self.non_unique_column(l)?;
        if c.name == lc {
            return None;
        }
        // A value from the inner side only when at most one inner row matches (its primary
        // key is the join column): else which row's value wins depends on the plan.
        let r_unique = r.pk_columns() == [rc];
        let mut sets = vec![];
        let r_ints: Vec<&Column> = r.columns.iter().filter(|x| x.is_int()).collect();
        if r_unique && c.is_int() && self.chance(50) {
            let x = *pick(&mut self.rng, &r_ints)?;
            sets.push(format!("l.{} = r.{}", c.name, x.name));
        } else {
            sets.push(self.assignment(c, "l."));
        }
        if self.chance(25)
            && let Some(rcol) = self.non_unique_column(r)
            && rcol.name != rc
        {
            sets.push(self.assignment(rcol, "r."));
        }
        let w = self.cond(l, "l.");
        Some(Stmt::new(
            Kind::UpdateMulti,
            format!(
                "UPDATE {lt} AS l JOIN {rt} AS r ON l.{lc} = r.{rc} SET {} WHERE {w}",
                sets.join(", ")
            ),
        ))
    }

    fn delete(&mut self, t: &Table) -> Option<Stmt> {
        let w = if self.chance(45) {
            self.key_eq(t, "")
        } else {
            self.pred(t, "")
        };
        let tail = if self.chance(25) {
            let o = self.total_order(t, "");
            let o = Self::limited(&o);
            format!(" ORDER BY {o} LIMIT {}", self.rng.random_range(1..=3))
        } else {
            String::new()
        };
        Some(Stmt::new(
            Kind::Delete,
            format!("DELETE FROM {} WHERE {w}{tail}", t.name),
        ))
    }

    fn delete_multi(&mut self) -> Option<Stmt> {
        let (lt, lc, rt, rc) = self.pair()?;
        let tables = Rc::clone(&self.tables);
        let l = tables.iter().find(|t| t.name == lt)?;
        let r = tables.iter().find(|t| t.name == rt)?;
        let which = if self.chance(25) { "l, r" } else { "l" };
        let w = format!("{} AND {}", self.pred(l, "l."), self.pred(r, "r."));
        Some(Stmt::new(
            Kind::DeleteMulti,
            format!("DELETE {which} FROM {lt} AS l JOIN {rt} AS r ON l.{lc} = r.{rc} WHERE {w}"),
        ))
    }

    // ---- session settings ---------------------------------------------------------------

    fn optimizer(&mut self) -> Stmt {
        const SWITCHES: &[&str] = &[
            "mrr=on,mrr_sort_keys=on,mrr_cost_based=off",
            "mrr=off",
            "join_cache_bka=on",
            "join_cache_bka=off",
            "join_cache_hashed=off",
            "join_cache_incremental=off",
            "outer_join_with_cache=off",
            "semijoin_with_cache=off",
            "index_merge=off",
            "index_merge=on,index_merge_union=on,index_merge_sort_union=on,index_merge_intersection=on",
            "index_merge_union=off",
            "index_merge_sort_union=off",
            "index_merge_intersection=off",
            "semijoin=off",
            "materialization=off",
            "firstmatch=off",
            "loosescan=off",
            "index_condition_pushdown=off",
            "condition_pushdown_for_subquery=off",
            "orderby_uses_equalities=off",
            "derived_merge=off",
            "split_materialized=off",
            "extended_keys=off",
            "exists_to_in=off",
        ];
        let sql = match self.rng.random_range(0..12) {
            0..=3 => format!(
                "SET SESSION join_cache_level = {}",
                self.rng.random_range(0..=8)
            ),
            4..=8 => format!(
                "SET SESSION optimizer_switch = '{}'",
                pick(&mut self.rng, SWITCHES).copied().unwrap_or("mrr=on")
            ),
            9 => format!("SET SESSION optimizer_switch = '{OPTIMIZER_DEFAULT}'"),
            10 => pick(
                &mut self.rng,
                &[
                    "SET SESSION join_buffer_size = 256",
                    "SET SESSION join_buffer_size = DEFAULT",
                    "SET SESSION mrr_buffer_size = 8192",
                    "SET SESSION optimizer_use_condition_selectivity = 1",
                    "SET SESSION optimizer_use_condition_selectivity = 5",
                    "SET SESSION eq_range_index_dive_limit = 0",
                    "SET SESSION eq_range_index_dive_limit = 1",
                ],
            )
            .copied()
            .unwrap_or("SET SESSION join_buffer_size = DEFAULT")
            .into(),
            _ => format!(
                "SET SESSION TRANSACTION ISOLATION LEVEL {}",
                pick(
                    &mut self.rng,
                    &[
                        "READ COMMITTED",
                        "REPEATABLE READ",
                        "SERIALIZABLE",
                        "READ UNCOMMITTED"
                    ]
                )
                .copied()
                .unwrap_or("REPEATABLE READ")
            ),
        };
        Stmt::new(Kind::Optimizer, sql)
    }

    /// The table definitions.
    pub fn tables(&self) -> &[Table] {
        &self.tables
    }
}

#[cfg(test)]
mod tests {
    use super::Gen;

    #[test]
    fn under_a_limit_no_pad_columns_are_ordered_by_their_bytes() {
        assert_eq!(
            Gen::limited("gn DESC, HEX(gn) DESC, name DESC, n DESC"),
            "HEX(gn) DESC, name DESC, n DESC"
        );
        assert_eq!(Gen::limited("a, b"), "a, b");
        assert_eq!(Gen::limited("l.b, HEX(l.b), r.id"), "HEX(l.b), r.id");
        // A HEX term of a column that is not the one before it stays as it is.
        assert_eq!(Gen::limited("a, HEX(b)"), "a, HEX(b)");
    }
}

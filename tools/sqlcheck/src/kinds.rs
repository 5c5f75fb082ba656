//! The statement kinds, schedule shapes and value features the tester generates, each with
//! the name `--skip` / `--enable` take, and which of them are on by default.

use std::collections::BTreeSet;

use anyhow::{Result, bail};

macro_rules! kinds {
    ($( $(#[doc = $doc:literal])* $v:ident = $name:literal, $group:literal, $weight:expr, $on:expr; )*) => {
        /// A kind of generated statement (or a schedule shape, or a value feature).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Kind {
            $( $(#[doc = $doc])* $v, )*
        }

        impl Kind {
            /// Every kind, in declaration order.
            pub const ALL: &'static [Kind] = &[$(Kind::$v),*];

            /// Its name on the command line and in the summary.
            pub fn name(self) -> &'static str {
                match self { $(Kind::$v => $name,)* }
            }

            /// Its group (`--skip <group>` switches off every kind of it).
            pub fn group(self) -> &'static str {
                match self { $(Kind::$v => $group,)* }
            }

            /// Relative weight when drawing the next statement (or schedule) of its group.
            pub fn weight(self) -> u32 {
                match self { $(Kind::$v => $weight,)* }
            }

            /// On unless `--enable` names it.
            pub fn default_on(self) -> bool {
                match self { $(Kind::$v => $on,)* }
            }

            /// Its description (for `--list-kinds`).
            pub fn doc(self) -> &'static str {
                match self { $(Kind::$v => concat!($($doc),*),)* }
            }
        }
    };
}

kinds! {
    /// The initial rows of a fresh schema (never skipped).
    Load = "load", "setup", 0, true;
    /// A full, ordered read of a table (every 100 statements and at the end).
    Check = "check", "setup", 0, true;
    /// CHECK TABLE of every table (with the checks, outside transactions, and at the end):
    /// compared without the table's name; any answer but OK is a failure.
    CheckTable = "check_table", "setup", 0, true;
    /// A point read by primary key or UNIQUE key.
    Point = "point", "select", 5, true;
    /// A read with a random WHERE over indexed and other columns.
    Range = "range", "select", 6, true;
    /// ORDER BY over a unique key with LIMIT (and OFFSET), ascending or descending.
    OrderLimit = "order_limit", "select", 4, true;
    /// OR (and AND) of conditions on different indexes: index merge union, sort-union,
    /// intersection.
    IndexMerge = "index_merge", "select", 3, true;
    /// FORCE INDEX (also FOR ORDER BY) or USE INDEX on every index in turn.
    ForceIndex = "force_index", "select", 4, true;
    /// IGNORE INDEX on an index.
    IgnoreIndex = "ignore_index", "select", 2, true;
    /// A read of only an index's columns and the primary key (index-only plans).
    Covering = "covering", "select", 4, true;
    /// COUNT / SUM / MIN / MAX, GROUP BY (loose index scans), COUNT(DISTINCT).
    Aggregate = "aggregate", "select", 3, true;
    /// INNER JOIN on a primary key (eq_ref) or a secondary key (ref).
    JoinInner = "join_inner", "join", 3, true;
    /// LEFT JOIN, sometimes as an anti-join (WHERE the inner side IS NULL).
    JoinLeft = "join_left", "join", 3, true;
    /// RIGHT JOIN.
    JoinRight = "join_right", "join", 2, true;
    /// Three tables joined in a chain (inner and outer).
    JoinMulti = "join_multi", "join", 1, true;
    /// `x [NOT] IN (SELECT ...)`.
    SubqueryIn = "subquery_in", "subquery", 2, true;
    /// `[NOT] EXISTS (correlated SELECT)`.
    SubqueryExists = "subquery_exists", "subquery", 2, true;
    /// A scalar subquery in the select list or the WHERE clause.
    SubqueryScalar = "subquery_scalar", "subquery", 2, true;
    /// IN over a joined subquery (semi-join: first match, loose scan, materialization,
    /// duplicate weedout).
    Semijoin = "semijoin", "subquery", 2, true;
    /// SELECT ... FOR UPDATE / LOCK IN SHARE MODE.
    LockingRead = "locking_read", "select", 1, true;
    /// INSERT of one row.
    Insert = "insert", "insert", 5, true;
    /// INSERT of 2-5 rows.
    InsertMulti = "insert_multi", "insert", 3, true;
    /// INSERT into an AUTO_INCREMENT table with NULL (or 0, or no value) for the counter.
    InsertAutoinc = "insert_autoinc", "insert", 2, true;
    /// INSERT IGNORE (duplicates and bad values become warnings).
    InsertIgnore = "insert_ignore", "insert", 3, true;
    /// INSERT [IGNORE] ... SELECT ... ORDER BY (also into the table it reads).
    InsertSelect = "insert_select", "insert", 2, true;
    /// REPLACE of one or more rows.
    Replace = "replace", "insert", 2, true;
    /// INSERT ... ON DUPLICATE KEY UPDATE.
    InsertOdku = "insert_odku", "insert", 2, true;
    /// UPDATE of non-unique columns.
    Update = "update", "update", 4, true;
    /// UPDATE of primary-key and UNIQUE columns (ORDER BY a unique key when several rows
    /// can change), also UPDATE IGNORE.
    UpdateKey = "update_key", "update", 4, true;
    /// `UPDATE t FORCE INDEX (k) SET pk = pk + 1000 WHERE <condition on k> AND pk BETWEEN 0
    /// AND 999`: rows move ahead of the scan of the secondary index (the Halloween problem).
    UpdatePkViaSecondary = "update_pk_via_secondary", "update", 2, true;
    /// Multi-table UPDATE.
    UpdateMulti = "update_multi", "update", 2, true;
    /// DELETE with a WHERE (ORDER BY and LIMIT sometimes).
    Delete = "delete", "delete", 3, true;
    /// Multi-table DELETE.
    DeleteMulti = "delete_multi", "delete", 1, true;
    /// BEGIN / START TRANSACTION [WITH CONSISTENT SNAPSHOT].
    Begin = "begin", "txn", 3, true;
    /// COMMIT.
    Commit = "commit", "txn", 0, true;
    /// ROLLBACK.
    Rollback = "rollback", "txn", 0, true;
    /// SAVEPOINT.
    Savepoint = "savepoint", "txn", 0, true;
    /// ROLLBACK TO SAVEPOINT.
    RollbackToSavepoint = "rollback_to_savepoint", "txn", 0, true;
    /// RELEASE SAVEPOINT.
    ReleaseSavepoint = "release_savepoint", "txn", 0, true;
    /// SET SESSION optimizer_switch / join_cache_level / buffer sizes / isolation level:
    /// BNL, BNLH, BKA, MRR, index merge and semi-join strategies on and off.
    Optimizer = "optimizer", "session", 1, true;
    /// Two sessions: reads of snapshot data before and after the other's commit.
    CSnapshotRead = "c_snapshot_read", "concurrency", 3, true;
    /// Two sessions: an UPDATE of a row the other session changed and committed after the
    /// snapshot, then reads of it.
    CUpdateCommitted = "c_update_committed", "concurrency", 3, true;
    /// Two sessions: DELETE of a unique value, the other inserts it (waits), COMMIT or
    /// ROLLBACK.
    CDeleteInsert = "c_delete_insert", "concurrency", 3, true;
    /// Two sessions: both insert one key; the second waits for the first's end.
    CInsertInsert = "c_insert_insert", "concurrency", 2, true;
    /// Two sessions: both write one row; the second waits for the first's end.
    CWriteWait = "c_write_wait", "concurrency", 2, true;
    /// Two sessions: FOR UPDATE / LOCK IN SHARE MODE (or SERIALIZABLE reads) block the
    /// other's writes.
    CLockingRead = "c_locking_read", "concurrency", 2, true;
    /// Two sessions: NOWAIT on a locked row.
    CNowait = "c_nowait", "concurrency", 1, true;
    /// Two sessions: SKIP LOCKED over locked rows.
    CSkipLocked = "c_skip_locked", "concurrency", 1, true;
    /// Schedules at READ COMMITTED.
    IsoReadCommitted = "read_committed", "isolation", 1, true;
    /// Schedules at REPEATABLE READ.
    IsoRepeatableRead = "repeatable_read", "isolation", 1, true;
    /// Schedules at SERIALIZABLE.
    IsoSerializable = "serializable", "isolation", 1, true;
    /// Strings with NUL bytes ('a\0'), which NO PAD collations tell from 'a'.
    NulStrings = "nul_strings", "values", 0, true;
    /// Values a column cannot hold (errors in strict mode, warnings under IGNORE).
    BadValues = "bad_values", "values", 0, true;
    /// LIKE conditions on string columns (ranges over an index for a prefix pattern).
    Like = "like", "values", 0, true;
    /// Explicit values for AUTO_INCREMENT columns (the counter must move past them).
    ExplicitAutoinc = "explicit_autoinc", "values", 0, true;
}

/// The kinds switched on for a run.
#[derive(Clone, Debug)]
pub struct Enabled {
    on: BTreeSet<Kind>,
}

impl Enabled {
    /// The defaults, minus `skip`, plus `enable` (names of kinds or groups, comma separated).
    pub fn new(skip: &[String], enable: &[String]) -> Result<Enabled> {
        let mut on: BTreeSet<Kind> = Kind::ALL
            .iter()
            .copied()
            .filter(|k| k.default_on())
            .collect();
        for name in names(enable) {
            for k in resolve(&name)? {
                on.insert(k);
            }
        }
        for name in names(skip) {
            for k in resolve(&name)? {
                if k.group() == "setup" {
                    bail!("`{name}` cannot be skipped");
                }
                on.remove(&k);
            }
        }
        Ok(Enabled { on })
    }

    /// Switches `k` off.
    pub fn disable(&mut self, k: Kind) {
        self.on.remove(&k);
    }

    /// `k` is on.
    pub fn has(&self, k: Kind) -> bool {
        self.on.contains(&k)
    }

    /// The kinds of `group` that are on.
    pub fn of_group(&self, group: &str) -> Vec<Kind> {
        self.on
            .iter()
            .copied()
            .filter(|k| k.group() == group)
            .collect()
    }

    /// The default kinds that are off (for the start line).
    pub fn skipped(&self) -> Vec<&'static str> {
        Kind::ALL
            .iter()
            .filter(|k| k.default_on() && !self.on.contains(k))
            .map(|k| k.name())
            .collect()
    }

    /// The non-default kinds that are on.
    pub fn extra(&self) -> Vec<&'static str> {
        Kind::ALL
            .iter()
            .filter(|k| !k.default_on() && self.on.contains(k))
            .map(|k| k.name())
            .collect()
    }
}

fn names(list: &[String]) -> Vec<String> {
    list.iter()
        .flat_map(|s| s.split(','))
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn resolve(name: &str) -> Result<Vec<Kind>> {
    let by_name: Vec<Kind> = Kind::ALL
        .iter()
        .copied()
        .filter(|k| k.name() == name)
        .collect();
    if !by_name.is_empty() {
        return Ok(by_name);
    }
    let by_group: Vec<Kind> = Kind::ALL
        .iter()
        .copied()
        .filter(|k| k.group() == name)
        .collect();
    if by_group.is_empty() {
        bail!("unknown kind or group `{name}` (see --list-kinds)");
    }
    Ok(by_group)
}

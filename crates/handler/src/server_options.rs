//! The options a MariaDB server exposes as the plugin's system variables
//! (`riptide_<name>`), declared once here: which engine options of
//! [`riptide::Options::TABLE`] a server sets (their type, bounds and doc come from that
//! table; only a default the server wants different is given here), and the options of
//! this layer itself (`lock_wait_timeout`, per session) and of the server's embedding
//! (`data_dir`, the directory it opens).
//!
//! The C ABI exports this table (`riptide_server_option_at`); the plugin builds its
//! `system_vars` array from it with a loop, applies the engine options at init with
//! `riptide_options_set_by_name`, passes a `SET GLOBAL` of a dynamic engine option to the open
//! engine with `riptide_db_set_option`, and reads `lock_wait_timeout` per statement. Adding a
//! server variable for an engine option is one line here (and its row in
//! `plugin-shim/README.md`, which a test checks against this table).

use std::sync::LazyLock;

use riptide::{OptionType, OptionValue, Options};

use crate::session::SessionOptions;

/// Whether a server option has one value for the server or one per connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One value for the whole server.
    Global,
    /// A value per connection (a session variable), its global value the default of new
    /// connections.
    Session,
}

/// Where a server option's value goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The engine option of the same name, set when the database is opened
    /// ([`Options::set_by_name`], `riptide_options_set_by_name` in C).
    Engine,
    /// A setting of this layer the server reads per session (see the option's doc).
    Session,
    /// A setting the server itself interprets (see the option's doc).
    Server,
}

/// One option of [`server_options`].
#[derive(Debug, Clone, PartialEq)]
pub struct ServerOption {
    /// The name without the server's prefix (`block_cache_size` for
    /// `riptide_block_cache_size`).
    pub name: &'static str,
    /// One line: the variable's comment.
    pub doc: &'static str,
    /// The values it takes, with their bounds.
    pub value_type: OptionType,
    /// The server's default.
    pub default: OptionValue,
    /// Global or per session.
    pub scope: Scope,
    /// Whether it can be changed while the server runs (else it is read-only, taken at
    /// startup).
    pub dynamic: bool,
    /// Where the value goes.
    pub target: Target,
}

/// How an entry of [`SERVER_OPTIONS`] is declared.
enum Decl {
    /// The engine option `name` (dynamic if the open engine takes it: `OptionSpec::is_dynamic`);
    /// `default` (as text) replaces the engine's.
    Engine {
        name: &'static str,
        default: Option<&'static str>,
    },
    /// An option of this layer or of the server.
    Own(fn() -> ServerOption),
}

const fn engine(name: &'static str) -> Decl {
    Decl::Engine {
        name,
        default: None,
    }
}

/// The server's options, in the order a server lists them when it does not sort them.
const SERVER_OPTIONS: &[Decl] = &[
    engine("block_cache_size"),
    engine("write_buffer_size"),
    engine("db_write_buffer_size"),
    engine("memtable_bloom_size_ratio"),
    // A server fsyncs the WAL once a second in the background by default: a crash of the
    // server process loses no committed transaction, a power loss at most the last second
    // (InnoDB's innodb_flush_log_at_trx_commit=2). The engine's own default is `full`.
    Decl::Engine {
        name: "sync_mode",
        default: Some("interval"),
    },
    engine("sync_interval_ms"),
    engine("compression"),
    engine("max_background_compactions"),
    engine("max_background_flushes"),
    engine("l0_compaction_trigger"),
    engine("compaction_pri"),
    engine("l0_slowdown_trigger"),
    engine("l0_stop_trigger"),
    engine("bloom_bits_per_key"),
    // Data blocks of a server's tables start on page boundaries, so a block read from disk
    // is one page: half the bytes read per miss, and the page cache holds twice the blocks
    // (benches/RESULTS.md, 2026-12-01: sysbench oltp_point_select beyond memory 6.1 -> 3.1
    // KiB read and 5% less CPU per transaction; TPC-C 29% fewer bytes read, NOPM level;
    // tables 3% larger). The engine's own default is off, as RocksDB's.
    Decl::Engine {
        name: "block_align",
        default: Some("ON"),
    },
    engine("block_size"),
    engine("max_open_files"),
    engine("target_file_size"),
    engine("max_total_wal_size"),
    engine("young_space_bound"),
    engine("bytes_per_sync"),
    // A transaction holds its whole write set in memory until it commits: without a bound,
    // one huge statement (a 10M-row INSERT ... SELECT) grows the server by gigabytes and can
    // get it killed. A server refuses the write past 1 GiB instead (MyRocks refuses a
    // transaction's millionth row lock, rocksdb_max_row_locks); the engine's default is 0,
    // no limit.
    Decl::Engine {
        name: "max_txn_write_set_bytes",
        default: Some("1073741824"),
    },
    // An in-place index build sorts its entries in this much memory (runs beyond it go to
    // temporary files): half the engine's 64 MiB, next to a 256 MiB budget (MyRocks'
    // rocksdb_merge_buf_size is 64 MiB, InnoDB's innodb_sort_buffer_size 1 MiB per index).
    Decl::Engine {
        name: "sort_buffer_size",
        default: Some("33554432"),
    },
    Decl::Engine {
        name: "ingest_min_bytes",
        default: None,
    },
    Decl::Own(|| ServerOption {
        name: "data_dir",
        doc: "Directory of the Riptide database (default: #riptide in the datadir; a relative \
              path is relative to the datadir)",
        value_type: OptionType::Text,
        default: OptionValue::Text(None),
        scope: Scope::Global,
        dynamic: false,
        target: Target::Server,
    }),
    Decl::Own(|| ServerOption {
        name: "lock_wait_timeout",
        doc: "Seconds a statement waits for a row lock before giving up with \
              ER_LOCK_WAIT_TIMEOUT (innodb_lock_wait_timeout); read at each statement's start \
              (NOWAIT and WAIT n override it for one statement)",
        value_type: OptionType::Unsigned {
            bits: 64,
            min: 1,
            max: 1 << 30,
        },
        default: OptionValue::Unsigned(SessionOptions::default().lock_timeout.as_secs()),
        scope: Scope::Session,
        dynamic: true,
        target: Target::Session,
    }),
    Decl::Own(|| ServerOption {
        name: "bulk_load",
        doc: "Rows a transaction inserts are sorted on the side; at commit, those that fill \
              vacant key ranges (an empty table, appends) are written as tables straight \
              into the deepest level (no WAL, no memtable, no per-row lock or unique read; \
              rocksdb_bulk_load), the others the ordinary way; duplicates fail the commit; \
              not visible before commit; no two-phase commit",
        value_type: OptionType::Bool,
        default: OptionValue::Bool(false),
        scope: Scope::Session,
        dynamic: true,
        target: Target::Session,
    }),
    Decl::Own(|| ServerOption {
        name: "create_checkpoint",
        doc: "SET GLOBAL riptide_create_checkpoint = 'path' writes a consistent checkpoint of \
              the whole engine into the new directory path while writes go on (tables \
              hard-linked, WAL and manifest copied); a relative path is relative to the \
              datadir; it reads as empty (rocksdb_create_checkpoint)",
        value_type: OptionType::Text,
        default: OptionValue::Text(None),
        scope: Scope::Global,
        dynamic: true,
        target: Target::Server,
    }),
    Decl::Own(|| ServerOption {
        name: "analyze_sample_points",
        doc: "ANALYZE TABLE: a table of more than 64 times this many rows has its index \
              cardinalities estimated from this many evenly spread places, 32 entries read at \
              each (1,024 at every eighth), and keeps its maintained row count; a smaller one \
              is read whole and counted exactly; 0 reads every table whole \
              (innodb_stats_persistent_sample_pages)",
        value_type: OptionType::Unsigned {
            bits: 32,
            min: 0,
            max: 65536,
        },
        default: OptionValue::Unsigned(512),
        scope: Scope::Session,
        dynamic: true,
        target: Target::Server,
    }),
    Decl::Own(|| ServerOption {
        name: "print_all_deadlocks",
        doc: "Write every deadlock to the server's error log (innodb_print_all_deadlocks): the \
              victim's transaction, the lock it wanted, and the cycle of transactions it \
              would have closed",
        value_type: OptionType::Bool,
        default: OptionValue::Bool(false),
        scope: Scope::Global,
        dynamic: true,
        target: Target::Server,
    }),
];

/// The engine option `name` as a global server option (dynamic where the open engine takes
/// it), with `default` (text) in place of the engine's default. `None` if there is no such engine option or the default
/// does not parse (the tests rule both out).
fn engine_option(name: &str, default: Option<&str>) -> Option<ServerOption> {
    let spec = Options::option(name)?;
    let default = match default {
        Some(text) => spec.value_type.parse(text).ok()?,
        None => spec.default_value(),
    };
    Some(ServerOption {
        name: spec.name,
        doc: spec.doc,
        value_type: spec.value_type,
        default,
        scope: Scope::Global,
        // The server passes a new value to the open engine (`riptide_db_set_option`).
        dynamic: spec.is_dynamic(),
        target: Target::Engine,
    })
}

/// The options a MariaDB server exposes as its `riptide_*` system variables (see the module
/// docs).
pub fn server_options() -> &'static [ServerOption] {
    static TABLE: LazyLock<Vec<ServerOption>> = LazyLock::new(|| {
        SERVER_OPTIONS
            .iter()
            .filter_map(|d| match d {
                Decl::Engine { name, default } => engine_option(name, *default),
                Decl::Own(make) => Some(make()),
            })
            .collect()
    });
    &TABLE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_declaration_resolves_with_a_valid_default() {
        assert_eq!(server_options().len(), SERVER_OPTIONS.len());
        let mut names: Vec<&str> = server_options().iter().map(|o| o.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), SERVER_OPTIONS.len(), "duplicate names");
        for o in server_options() {
            o.value_type
                .check(&o.default)
                .unwrap_or_else(|e| panic!("{}: {e}", o.name));
            assert!(!o.doc.is_empty() && !o.doc.contains('\n'), "{}", o.name);
            // An engine option changes at run time exactly when the engine takes it while
            // open (Db::set_option); every session option does (a connection sets its own).
            if o.target == Target::Engine {
                let spec = Options::option(o.name).unwrap();
                assert_eq!(o.dynamic, spec.is_dynamic(), "{}", o.name);
                assert_eq!(o.scope, Scope::Global, "{}", o.name);
            }
            if o.scope == Scope::Session {
                assert!(o.dynamic, "{}", o.name);
            }
            assert_eq!(
                o.target == Target::Engine,
                Options::option(o.name).is_some()
            );
        }
    }

    #[test]
    fn the_server_defaults_differ_from_the_engine_only_where_declared() {
        let by_name = |n: &str| server_options().iter().find(|o| o.name == n).unwrap();
        let sync = by_name("sync_mode");
        assert_eq!(sync.value_type.format(&sync.default), "interval");
        let engine = Options::option("sync_mode").unwrap();
        assert_eq!(engine.value_type.format(&engine.default_value()), "full");
        let cache = by_name("block_cache_size");
        assert_eq!(cache.default, OptionValue::Unsigned(64 << 20));
        let timeout = by_name("lock_wait_timeout");
        assert_eq!(timeout.default, OptionValue::Unsigned(50));
        assert_eq!(timeout.scope, Scope::Session);
        // The server's defaults open a database with the engine options a server gets.
        let mut opts = Options::default();
        for o in server_options()
            .iter()
            .filter(|o| o.target == Target::Engine)
        {
            let text = o.value_type.format(&o.default);
            opts = opts.set_by_name(o.name, &text).unwrap();
        }
        let dir = tempfile::tempdir().unwrap();
        riptide::Db::open(dir.path(), opts)
            .unwrap()
            .close()
            .unwrap();
    }
}

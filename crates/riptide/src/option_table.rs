//! The engine's options by name: [`Options::TABLE`] declares every option of [`Options`]
//! once, with its name, value type and bounds, a one-line doc and how it reads and sets the
//! builder. Defaults are not repeated: an option's default is what it reads from
//! `Options::default()`.
//!
//! Whoever configures the engine from text goes through this table: the C ABI
//! (`riptide_options_set_by_name`, and `riptide_option_at` to list the options), and a server
//! that turns options into its own settings (the MariaDB plugin's read-only `riptide_*`
//! system variables are entries of this table, picked by `riptide_handler::server_options`).
//! A new option is one entry here next to its builder method.

use std::fmt;
use std::time::Duration;

use riptide_common::{Error, Result};
use riptide_compaction::CompactionPriority;
use riptide_sstable::TableOptions;

use crate::options::{Compression, Options, RecoveryMode, SyncMode};

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
const TIB: u64 = 1 << 40;

/// The values an option takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OptionType {
    /// On or off; as text `ON`/`OFF` (also `TRUE`/`FALSE`, `YES`/`NO`, `1`/`0`).
    Bool,
    /// An unsigned integer in `min..=max` that fits in `bits` (32 or 64) bits; as text a
    /// decimal number, optionally followed by `K`, `M`, `G` or `T` (binary multiples).
    Unsigned {
        /// 32 or 64: the width a caller should store the value in.
        bits: u32,
        /// The smallest value accepted.
        min: u64,
        /// The largest value accepted.
        max: u64,
    },
    /// A signed integer in `min..=max`; as text a decimal number with an optional `-`.
    Signed {
        /// The smallest value accepted.
        min: i64,
        /// The largest value accepted.
        max: i64,
    },
    /// A finite floating-point number in `min..=max`.
    Float {
        /// The smallest value accepted.
        min: f64,
        /// The largest value accepted.
        max: f64,
    },
    /// One of `names` (as text, case-insensitive); the value is its index.
    Enum {
        /// The value names, in index order.
        names: &'static [&'static str],
    },
    /// Any text (a path, for instance).
    Text,
}

/// A value of an option, as [`OptionType::parse`] reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum OptionValue {
    /// Of an [`OptionType::Bool`] option.
    Bool(bool),
    /// Of an [`OptionType::Unsigned`] option.
    Unsigned(u64),
    /// Of an [`OptionType::Signed`] option.
    Signed(i64),
    /// Of an [`OptionType::Float`] option.
    Float(f64),
    /// Of an [`OptionType::Enum`] option: the index of its name.
    Enum(usize),
    /// Of an [`OptionType::Text`] option; `None` for no value (a default that leaves the
    /// choice to the caller).
    Text(Option<String>),
}

impl OptionType {
    /// Reads `text` as a value of this type and checks its bounds. The error says what is
    /// wrong with the value; the caller adds which option it was for.
    pub fn parse(&self, text: &str) -> std::result::Result<OptionValue, String> {
        let t = text.trim();
        let value = match *self {
            OptionType::Bool => match t.to_ascii_uppercase().as_str() {
                "ON" | "TRUE" | "YES" | "1" => OptionValue::Bool(true),
                "OFF" | "FALSE" | "NO" | "0" => OptionValue::Bool(false),
                _ => return Err(format!("`{text}` is not ON or OFF")),
            },
            OptionType::Unsigned { .. } => OptionValue::Unsigned(parse_unsigned(t)?),
            OptionType::Signed { .. } => OptionValue::Signed(
                t.parse::<i64>()
                    .map_err(|e| format!("`{text}` is not an integer: {e}"))?,
            ),
            OptionType::Float { .. } => OptionValue::Float(
                t.parse::<f64>()
                    .map_err(|e| format!("`{text}` is not a number: {e}"))?,
            ),
            OptionType::Enum { names } => OptionValue::Enum(
                names
                    .iter()
                    .position(|n| n.eq_ignore_ascii_case(t))
                    .ok_or_else(|| format!("`{text}` is not one of {}", names.join(", ")))?,
            ),
            OptionType::Text => OptionValue::Text(Some(text.to_string())),
        };
        self.check(&value)?;
        Ok(value)
    }

    /// Checks that `value` is of this type and within its bounds.
    pub fn check(&self, value: &OptionValue) -> std::result::Result<(), String> {
        match (*self, value) {
            (OptionType::Bool, OptionValue::Bool(_)) | (OptionType::Text, OptionValue::Text(_)) => {
                Ok(())
            }
            (OptionType::Unsigned { min, max, .. }, OptionValue::Unsigned(v)) => {
                in_bounds(*v, min, max)
            }
            (OptionType::Signed { min, max }, OptionValue::Signed(v)) => in_bounds(*v, min, max),
            (OptionType::Float { min, max }, OptionValue::Float(v)) => {
                if v.is_finite() {
                    in_bounds(*v, min, max)
                } else {
                    Err(format!("{v} is not a finite number"))
                }
            }
            (OptionType::Enum { names }, OptionValue::Enum(i)) => {
                if *i < names.len() {
                    Ok(())
                } else {
                    Err(format!("{i} is not an index of {}", names.join(", ")))
                }
            }
            (ty, v) => Err(format!("a {v:?} is not a value of a {ty:?} option")),
        }
    }

    /// `value` as text that [`OptionType::parse`] reads back: `ON`/`OFF`, a decimal number,
    /// an enum value's name, the text itself (empty for no text).
    pub fn format(&self, value: &OptionValue) -> String {
        match (*self, value) {
            (OptionType::Enum { names }, OptionValue::Enum(i)) => names
                .get(*i)
                .map_or_else(|| i.to_string(), |n| (*n).to_string()),
            (_, v) => v.to_string(),
        }
    }
}

impl fmt::Display for OptionValue {
    /// As [`OptionType::format`], with an enum value shown as its index.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionValue::Bool(true) => f.write_str("ON"),
            OptionValue::Bool(false) => f.write_str("OFF"),
            OptionValue::Unsigned(v) => write!(f, "{v}"),
            OptionValue::Signed(v) => write!(f, "{v}"),
            OptionValue::Float(v) => write!(f, "{v}"),
            OptionValue::Enum(i) => write!(f, "{i}"),
            OptionValue::Text(t) => f.write_str(t.as_deref().unwrap_or("")),
        }
    }
}

fn in_bounds<T: PartialOrd + fmt::Display>(
    v: T,
    min: T,
    max: T,
) -> std::result::Result<(), String> {
    if v < min {
        Err(format!("{v} is below the minimum {min}"))
    } else if v > max {
        Err(format!("{v} is above the maximum {max}"))
    } else {
        Ok(())
    }
}

/// A decimal number with an optional binary suffix K, M, G or T.
fn parse_unsigned(t: &str) -> std::result::Result<u64, String> {
    let (digits, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => return Err(format!("`{t}` has an unknown suffix (K, M, G or T)")),
            };
            (t.get(..i).unwrap_or(""), shift)
        }
        _ => (t, 0),
    };
    let n = digits
        .parse::<u64>()
        .map_err(|e| format!("`{t}` is not an unsigned integer: {e}"))?;
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("`{t}` is larger than {}", u64::MAX))
}

/// How an option reads and sets [`Options`], by value type (the constructors below pair
/// each with its [`OptionType`], so the two cannot disagree).
#[derive(Clone, Copy)]
enum Access {
    Bool(fn(&Options) -> bool, fn(Options, bool) -> Options),
    Unsigned(fn(&Options) -> u64, fn(Options, u64) -> Result<Options>),
    Signed(fn(&Options) -> i64, fn(Options, i64) -> Result<Options>),
    Float(fn(&Options) -> f64, fn(Options, f64) -> Options),
    Enum(fn(&Options) -> usize, fn(Options, usize) -> Options),
}

/// One option of [`Options::TABLE`].
#[derive(Clone, Copy)]
pub struct OptionSpec {
    /// The option's name: the builder method's (`block_cache_size`).
    pub name: &'static str,
    /// One line: what the option does, its unit, and the nearest RocksDB option.
    pub doc: &'static str,
    /// The values it takes.
    pub value_type: OptionType,
    access: Access,
}

impl fmt::Debug for OptionSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OptionSpec")
            .field("name", &self.name)
            .field("value_type", &self.value_type)
            .finish_non_exhaustive()
    }
}

impl OptionSpec {
    /// The option's value in `options`.
    pub fn get(&self, options: &Options) -> OptionValue {
        match self.access {
            Access::Bool(get, _) => OptionValue::Bool(get(options)),
            Access::Unsigned(get, _) => OptionValue::Unsigned(get(options)),
            Access::Signed(get, _) => OptionValue::Signed(get(options)),
            Access::Float(get, _) => OptionValue::Float(get(options)),
            Access::Enum(get, _) => OptionValue::Enum(get(options)),
        }
    }

    /// Whether a running database takes a new value of this option
    /// ([`Db::set_option`](crate::Db::set_option)): true for the options the engine reads
    /// where it uses them (see [`DYNAMIC_OPTIONS`]).
    pub fn is_dynamic(&self) -> bool {
        DYNAMIC_OPTIONS.contains(&self.name)
    }

    /// The engine's default: the option's value in `Options::default()`.
    pub fn default_value(&self) -> OptionValue {
        self.get(&Options::default())
    }

    /// `options` with this option set to `value`. `InvalidArgument` naming the option if
    /// the value is of another type or out of bounds.
    pub fn apply(&self, options: Options, value: &OptionValue) -> Result<Options> {
        self.value_type.check(value).map_err(|e| self.error(&e))?;
        match (self.access, value) {
            (Access::Bool(_, set), OptionValue::Bool(v)) => Ok(set(options, *v)),
            (Access::Unsigned(_, set), OptionValue::Unsigned(v)) => set(options, *v),
            (Access::Signed(_, set), OptionValue::Signed(v)) => set(options, *v),
            (Access::Float(_, set), OptionValue::Float(v)) => Ok(set(options, *v)),
            (Access::Enum(_, set), OptionValue::Enum(v)) => Ok(set(options, *v)),
            // `check` accepted the value, so its type is the option's.
            (_, v) => return Err(self.error(&format!("{v:?} is not a value of this option"))),
        }
        .map_err(|e| e.with_context(format_args!("option `{}`", self.name)))
    }

    /// `options` with this option set to the value `text` reads as (see [`OptionType`]).
    pub fn set(&self, options: Options, text: &str) -> Result<Options> {
        let value = self.value_type.parse(text).map_err(|e| self.error(&e))?;
        self.apply(options, &value)
    }

    fn error(&self, what: &str) -> Error {
        Error::invalid_argument(format!("option `{}`: {what}", self.name))
    }
}

const fn boolean(
    name: &'static str,
    doc: &'static str,
    get: fn(&Options) -> bool,
    set: fn(Options, bool) -> Options,
) -> OptionSpec {
    OptionSpec {
        name,
        doc,
        value_type: OptionType::Bool,
        access: Access::Bool(get, set),
    }
}

/// An unsigned option that callers store in `bits` (32 or 64) bits; its `max` must fit.
const fn unsigned(
    bits: u32,
    name: &'static str,
    doc: &'static str,
    min: u64,
    max: u64,
    get: fn(&Options) -> u64,
    set: fn(Options, u64) -> Result<Options>,
) -> OptionSpec {
    OptionSpec {
        name,
        doc,
        value_type: OptionType::Unsigned { bits, min, max },
        access: Access::Unsigned(get, set),
    }
}

const fn float(
    name: &'static str,
    doc: &'static str,
    min: f64,
    max: f64,
    get: fn(&Options) -> f64,
    set: fn(Options, f64) -> Options,
) -> OptionSpec {
    OptionSpec {
        name,
        doc,
        value_type: OptionType::Float { min, max },
        access: Access::Float(get, set),
    }
}

const fn enumeration(
    name: &'static str,
    doc: &'static str,
    names: &'static [&'static str],
    get: fn(&Options) -> usize,
    set: fn(Options, usize) -> Options,
) -> OptionSpec {
    OptionSpec {
        name,
        doc,
        value_type: OptionType::Enum { names },
        access: Access::Enum(get, set),
    }
}

/// `v` as a `usize` (a value within the table's bounds always fits on 64-bit targets).
fn size(v: u64) -> Result<usize> {
    usize::try_from(v)
        .map_err(|_| Error::invalid_argument(format!("{v} does not fit this platform's usize")))
}

/// The options a running database takes a new value of ([`OptionSpec::is_dynamic`]): each
/// is read where it is used (a compaction pick, a write's back-pressure check, a table or
/// memtable being made, a transaction's write), or handed by
/// [`Db::set_option`](crate::Db::set_option) to the part that holds it (the block cache's
/// capacity, shrinking it at once; the WAL's sync mode and interval, with its background
/// sync thread). A change applies from the next use on: tables already written keep their
/// format, a running compaction its inputs. The thread counts (`max_background_compactions`,
/// `max_background_flushes`) start the missing threads when raised; when lowered, the threads
/// beyond the new count finish their job and wait.
pub const DYNAMIC_OPTIONS: &[&str] = &[
    "max_background_compactions",
    "max_background_flushes",
    "block_cache_size",
    "sync_mode",
    "sync_interval_ms",
    "l0_compaction_trigger",
    "l0_slowdown_trigger",
    "l0_stop_trigger",
    "soft_pending_compaction_bytes",
    "hard_pending_compaction_bytes",
    "delayed_write_rate",
    "max_bytes_for_level_base",
    "level_size_ratio",
    "target_file_size",
    "max_compaction_bytes",
    "compaction_pri",
    "max_subcompactions",
    "tombstone_ratio_trigger",
    "tombstone_min_entries",
    "tombstone_coalesce_min_run",
    "memtable_scan_flush_trigger",
    "compression",
    "compression_level",
    "bloom_bits_per_key",
    "max_txn_write_set_bytes",
    "ingest_min_bytes",
    "sort_buffer_size",
];

/// The `sync_mode` values, in index order.
const SYNC_MODES: &[&str] = &["none", "interval", "full"];
/// The `recovery_mode` values, in index order.
const RECOVERY_MODES: &[&str] = &[
    "tolerate_corrupted_tail",
    "absolute_consistency",
    "point_in_time",
];
/// The `compaction_pri` values, in index order.
const COMPACTION_PRIORITIES: &[&str] = &["min_overlapping_ratio", "round_robin"];
/// The `compression` values, in index order.
const COMPRESSIONS: &[&str] = &["none", "zstd"];

/// An entry of [`Options::TABLE`] for an option that is a builder method of the same name,
/// reading the field of that name: `opt!(name: bool, doc)`, `opt!(name: f64(min, max), doc)`,
/// `opt!(name: u64(bits, min, max), doc)` (the builder takes a `u64`) or
/// `opt!(name: usize(bits, min, max), doc)` (it takes a `usize`).
macro_rules! opt {
    ($f:ident: bool, $doc:expr) => {
        boolean(stringify!($f), $doc, |o| o.$f, |o, v| o.$f(v))
    };
    ($f:ident: f64($min:expr, $max:expr), $doc:expr) => {
        float(stringify!($f), $doc, $min, $max, |o| o.$f, |o, v| o.$f(v))
    };
    ($f:ident: u64($bits:expr, $min:expr, $max:expr), $doc:expr) => {
        unsigned(
            $bits,
            stringify!($f),
            $doc,
            $min,
            $max,
            |o| o.$f,
            |o, v| Ok(o.$f(v)),
        )
    };
    ($f:ident: usize($bits:expr, $min:expr, $max:expr), $doc:expr) => {
        unsigned(
            $bits,
            stringify!($f),
            $doc,
            $min,
            $max,
            |o| o.$f as u64,
            |o, v| Ok(o.$f(size(v)?)),
        )
    };
}

impl Options {
    /// Every engine option settable by name, in the order of the builder methods (see the
    /// module docs of `option_table`). [`Options::set_by_name`] applies one.
    pub const TABLE: &'static [OptionSpec] = &[
        opt!(
            create_if_missing: bool,
            "Create the database if the directory holds none (RocksDB create_if_missing)"
        ),
        opt!(
            error_if_exists: bool,
            "Fail to open if a database already exists (RocksDB error_if_exists)"
        ),
        opt!(
            write_buffer_size: usize(64, 4 * KIB, TIB),
            "Memtable size at which it is frozen and flushed, in bytes (RocksDB \
             write_buffer_size)"
        ),
        opt!(
            max_immutable_memtables: usize(32, 1, u32::MAX as u64),
            "Frozen memtables per column family that may wait for flush before writers stop \
             (RocksDB max_write_buffer_number - 1)"
        ),
        opt!(
            memtable_bloom_size_ratio: f64(0.0, 0.25),
            "Size of each memtable's key filter as a fraction of write_buffer_size, 0 for \
             none: a point read skips a memtable the filter rules out (RocksDB \
             memtable_prefix_bloom_size_ratio with whole-key filtering)"
        ),
        enumeration(
            "sync_mode",
            "When the WAL is fsynced: none (never; survives a process crash, not a power \
             loss), interval (every sync_interval_ms in the background) or full (before \
             every commit returns)",
            SYNC_MODES,
            |o| match o.sync_mode {
                SyncMode::None => 0,
                SyncMode::Interval(_) => 1,
                SyncMode::Full => 2,
            },
            |o, v| {
                let mode = match v {
                    0 => SyncMode::None,
                    1 => SyncMode::Interval(o.sync_interval),
                    _ => SyncMode::Full,
                };
                o.sync_mode(mode)
            },
        ),
        unsigned(
            64,
            "sync_interval_ms",
            "Milliseconds between WAL fsyncs with sync_mode=interval",
            1,
            3600 * 1000,
            |o| u64::try_from(o.sync_interval.as_millis()).unwrap_or(u64::MAX),
            |mut o, v| {
                o.sync_interval = Duration::from_millis(v);
                if let SyncMode::Interval(_) = o.sync_mode {
                    o.sync_mode = SyncMode::Interval(o.sync_interval);
                }
                Ok(o)
            },
        ),
        enumeration(
            "recovery_mode",
            "What WAL damage is tolerated at open: tolerate_corrupted_tail (a torn tail is \
             cut off), absolute_consistency (none) or point_in_time (replay stops at the \
             first damaged record) (RocksDB wal_recovery_mode)",
            RECOVERY_MODES,
            |o| match o.recovery_mode {
                RecoveryMode::TolerateCorruptedTail => 0,
                RecoveryMode::AbsoluteConsistency => 1,
                RecoveryMode::PointInTime => 2,
            },
            |o, v| {
                o.recovery_mode(match v {
                    0 => RecoveryMode::TolerateCorruptedTail,
                    1 => RecoveryMode::AbsoluteConsistency,
                    _ => RecoveryMode::PointInTime,
                })
            },
        ),
        opt!(
            max_txn_write_set_bytes: u64(64, 0, TIB),
            "The most a transaction's write set may hold in memory (keys, values, undo and \
             lock records): once it holds more, its further writes fail and do nothing, the \
             transaction stays usable; 0 for no limit (RocksDB max_write_batch_size)"
        ),
        opt!(
            wal_preallocate_bytes: u64(64, 0, GIB),
            "When the WAL is synced (sync_mode interval or full), extend its segment with \
             zeros up to this many bytes at a time ahead of the records, so a sync flushes \
             data without committing the file system's journal; 0 to append instead"
        ),
        opt!(
            block_cache_size: u64(64, MIB, TIB),
            "Capacity of the shared block cache, in bytes (RocksDB block_cache)"
        ),
        opt!(
            block_size: usize(64, 256, riptide_sstable::options::MAX_BLOCK_SIZE as u64),
            "Target uncompressed size of a data block, in bytes (RocksDB block_size)"
        ),
        opt!(
            restart_interval: usize(32, 1, u32::MAX as u64),
            "Keys between restart points in a block (RocksDB block_restart_interval)"
        ),
        enumeration(
            "compression",
            "Compression of table blocks written from now on: none or zstd (RocksDB \
             compression)",
            COMPRESSIONS,
            |o| match o.compression {
                Compression::None => 0,
                Compression::Zstd { .. } => 1,
            },
            |o, v| {
                let level = o.zstd_level;
                o.compression(match v {
                    0 => Compression::None,
                    _ => Compression::Zstd { level },
                })
            },
        ),
        OptionSpec {
            name: "compression_level",
            doc: "zstd level of compression=zstd; negative levels are zstd's fast modes \
                  (RocksDB CompressionOptions::level)",
            value_type: OptionType::Signed {
                min: -(1 << 17),
                max: 22,
            },
            access: Access::Signed(
                |o| i64::from(o.zstd_level),
                |mut o, v| {
                    let level = i32::try_from(v)
                        .map_err(|_| Error::invalid_argument(format!("zstd level {v}")))?;
                    TableOptions {
                        compression: Compression::Zstd { level },
                        ..TableOptions::default()
                    }
                    .validate()?;
                    o.zstd_level = level;
                    if let Compression::Zstd { .. } = o.compression {
                        o.compression = Compression::Zstd { level };
                    }
                    Ok(o)
                },
            ),
        },
        unsigned(
            32,
            "bloom_bits_per_key",
            "Bloom filter bits per key of tables written from now on, 0 for no filter \
             (RocksDB NewBloomFilterPolicy)",
            0,
            riptide_sstable::options::MAX_BLOOM_BITS_PER_KEY as u64,
            |o| u64::from(o.bloom_bits_per_key),
            |o, v| {
                let bits = u32::try_from(v)
                    .map_err(|_| Error::invalid_argument(format!("bloom bits {v}")))?;
                Ok(o.bloom_bits_per_key(bits))
            },
        ),
        opt!(
            block_align: bool,
            "Start every data block of a table written without compression at a multiple of \
             block_size (a power of two), so a block read is one page (RocksDB block_align; \
             aligned tables need this build or newer)"
        ),
        opt!(
            bytes_per_sync: u64(64, 0, TIB),
            "While a table is written, start writing every further this many bytes to the \
             device, so reads do not queue behind one burst at its sync; 0 for never \
             (RocksDB bytes_per_sync)"
        ),
        opt!(
            l0_compaction_trigger: usize(32, 2, 65536),
            "Number of L0 tables that triggers a merge into L1 (RocksDB \
             level0_file_num_compaction_trigger)"
        ),
        opt!(
            young_space_bound: bool,
            "While a table space is small next to write_buffer_size, flush and merge earlier \
             so the disk holds at most about 1.5x the data (costs more compaction writes \
             until about 1 GiB of data)"
        ),
        opt!(
            target_file_size: u64(64, 4 * KIB, TIB),
            "Target size of tables written by compaction, in bytes (RocksDB \
             target_file_size_base)"
        ),
        opt!(
            sort_buffer_size: usize(64, MIB, TIB),
            "Memory of the sort of each in-place index build, in bytes; past it, sorted \
             runs go to temporary files in the database directory"
        ),
        opt!(
            ingest_min_bytes: u64(64, 0, TIB),
            "Smallest load a bulk load ingests as files, in bytes; smaller ones are written \
             the ordinary way (many small files cost more than they save); 0 for any"
        ),
        opt!(
            l0_slowdown_trigger: usize(32, 1, 65536),
            "Number of L0 tables at which writes slow down (RocksDB \
             level0_slowdown_writes_trigger)"
        ),
        opt!(
            l0_stop_trigger: usize(32, 2, 65536),
            "Number of L0 tables at which writes stop until compaction catches up (RocksDB \
             level0_stop_writes_trigger; kept above l0_slowdown_trigger)"
        ),
        opt!(
            soft_pending_compaction_bytes: u64(64, 0, u64::MAX),
            "Bytes waiting for compaction at which writes start slowing down (RocksDB \
             soft_pending_compaction_bytes_limit)"
        ),
        opt!(
            hard_pending_compaction_bytes: u64(64, 0, u64::MAX),
            "Bytes waiting for compaction at which writes stop (RocksDB \
             hard_pending_compaction_bytes_limit)"
        ),
        opt!(
            delayed_write_rate: u64(64, KIB, u64::MAX),
            "Write rate in bytes per second at the first sign of back-pressure (RocksDB \
             delayed_write_rate)"
        ),
        opt!(
            db_write_buffer_size: usize(64, 4 * KIB, TIB),
            "Memory budget of all memtables together, in bytes (RocksDB db_write_buffer_size)"
        ),
        opt!(
            max_total_wal_size: u64(64, 0, TIB),
            "WAL bytes a column family's memtable may hold back before it is flushed; 0: 4x \
             db_write_buffer_size (RocksDB max_total_wal_size)"
        ),
        opt!(
            max_background_compactions: usize(32, 1, 64),
            "Threads running compactions in parallel (RocksDB max_background_compactions)"
        ),
        opt!(
            max_background_flushes: usize(32, 1, 64),
            "Threads flushing memtables; each column family is flushed by one thread at a \
             time (RocksDB max_background_flushes)"
        ),
        opt!(
            max_subcompactions: usize(32, 1, 64),
            "Threads one big compaction may be split into (RocksDB max_subcompactions)"
        ),
        opt!(
            num_levels: usize(32, 2, 64),
            "Number of levels, L0 included (RocksDB num_levels)"
        ),
        opt!(
            max_bytes_for_level_base: u64(64, 4 * KIB, u64::MAX),
            "Target size of the base level, in bytes (RocksDB max_bytes_for_level_base)"
        ),
        opt!(
            level_size_ratio: f64(2.0, f64::MAX),
            "Size ratio between adjacent levels (RocksDB max_bytes_for_level_multiplier)"
        ),
        opt!(
            dynamic_level_bytes: bool,
            "Size levels from the last level up (RocksDB \
             level_compaction_dynamic_level_bytes)"
        ),
        opt!(
            tombstone_ratio_trigger: f64(0.0, 1.0),
            "Fraction of tombstones that makes a table due for compaction; 0 disables \
             (RocksDB CompactOnDeletionCollector)"
        ),
        opt!(
            tombstone_min_entries: u64(64, 0, u64::MAX),
            "Entries a table needs before tombstone_ratio_trigger applies to it"
        ),
        opt!(
            tombstone_coalesce_min_run: usize(64, 0, u64::MAX),
            "Consecutive deleted keys a flush also writes as one range tombstone; 0 disables"
        ),
        opt!(
            memtable_scan_flush_trigger: u64(64, 0, u64::MAX),
            "Hidden entries one iterator step may pass before the memtable is flushed early; \
             0 disables (RocksDB memtable_op_scan_flush_trigger)"
        ),
        unsigned(
            64,
            "max_compaction_bytes",
            "Upper bound on the input bytes of one compaction (at least 4 KiB); 0: 25x \
             target_file_size (RocksDB max_compaction_bytes)",
            0,
            u64::MAX,
            |o| o.max_compaction_bytes.unwrap_or(0),
            |mut o, v| {
                if v == 0 {
                    o.max_compaction_bytes = None;
                    Ok(o)
                } else {
                    Ok(o.max_compaction_bytes(v))
                }
            },
        ),
        enumeration(
            "compaction_pri",
            "Which table of a level a compaction by size starts from: min_overlapping_ratio \
             (the one that rewrites the fewest bytes of the level below per byte it moves \
             down) or round_robin (each in key order) (RocksDB compaction_pri)",
            COMPACTION_PRIORITIES,
            |o| match o.compaction_pri {
                CompactionPriority::MinOverlappingRatio => 0,
                CompactionPriority::RoundRobin => 1,
            },
            |o, v| {
                o.compaction_pri(match v {
                    0 => CompactionPriority::MinOverlappingRatio,
                    _ => CompactionPriority::RoundRobin,
                })
            },
        ),
        opt!(
            max_open_files: usize(32, 2, 1 << 20),
            "Most table files kept open at once (RocksDB max_open_files)"
        ),
    ];

    /// The option of [`Options::TABLE`] called `name`.
    pub fn option(name: &str) -> Option<&'static OptionSpec> {
        Options::TABLE.iter().find(|o| o.name == name)
    }

    /// These options with the option called `name` set to the value `text` reads as
    /// (`"64M"`, `"ON"`, `"zstd"`: see [`OptionType`]). `InvalidArgument` for an unknown name
    /// or a value of the wrong type or out of the option's bounds, naming the option.
    pub fn set_by_name(self, name: &str, text: &str) -> Result<Options> {
        Options::known_option(name)?.set(self, text)
    }

    /// [`Options::option`], or `InvalidArgument` naming the unknown `name`.
    pub(crate) fn known_option(name: &str) -> Result<&'static OptionSpec> {
        Options::option(name).ok_or_else(|| {
            Error::invalid_argument(format!("unknown option `{name}` (see Options::TABLE)"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn debug(o: &Options) -> String {
        format!("{o:?}")
    }

    #[test]
    fn names_are_unique_and_docs_are_one_line() {
        let mut names: Vec<&str> = Options::TABLE.iter().map(|o| o.name).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "duplicate option names");
        for o in Options::TABLE {
            assert!(!o.doc.is_empty() && !o.doc.contains('\n'), "{}", o.name);
            assert!(!o.doc.contains("  "), "{}: doubled space in doc", o.name);
        }
    }

    #[test]
    fn every_default_is_the_builders_default() {
        let base = debug(&Options::default());
        for o in Options::TABLE {
            let d = o.default_value();
            o.value_type
                .check(&d)
                .unwrap_or_else(|e| panic!("{}: {e}", o.name));
            let set = o.apply(Options::default(), &d).unwrap();
            assert_eq!(debug(&set), base, "{}", o.name);
            // The default's text form reads back as the default.
            let text = o.value_type.format(&d);
            assert_eq!(o.value_type.parse(&text).unwrap(), d, "{}", o.name);
        }
    }

    #[test]
    fn bounds_round_trip_and_outside_is_refused() {
        for o in Options::TABLE {
            match o.value_type {
                OptionType::Unsigned { bits, min, max } => {
                    assert!(bits == 32 || bits == 64, "{}", o.name);
                    assert!(bits == 64 || max <= u64::from(u32::MAX), "{}", o.name);
                    for v in [min, max] {
                        let set = o.apply(Options::default(), &OptionValue::Unsigned(v));
                        assert_eq!(o.get(&set.unwrap()), OptionValue::Unsigned(v), "{}", o.name);
                    }
                    if min > 0 {
                        let e = o.set(Options::default(), &(min - 1).to_string());
                        let e = e.unwrap_err().to_string();
                        assert!(e.contains(o.name) && e.contains("below"), "{e}");
                    }
                    if max < u64::MAX {
                        let e = o.set(Options::default(), &(max + 1).to_string());
                        assert!(e.unwrap_err().to_string().contains("above"), "{}", o.name);
                    }
                }
                OptionType::Signed { min, max } => {
                    for v in [min, max] {
                        let set = o
                            .apply(Options::default(), &OptionValue::Signed(v))
                            .unwrap();
                        assert_eq!(o.get(&set), OptionValue::Signed(v), "{}", o.name);
                    }
                }
                OptionType::Float { min, max } => {
                    for v in [min, max] {
                        let set = o.apply(Options::default(), &OptionValue::Float(v)).unwrap();
                        assert_eq!(o.get(&set), OptionValue::Float(v), "{}", o.name);
                    }
                    assert!(o.set(Options::default(), "NaN").is_err(), "{}", o.name);
                }
                OptionType::Enum { names } => {
                    for (i, name) in names.iter().enumerate() {
                        let set = o.set(Options::default(), &name.to_uppercase()).unwrap();
                        assert_eq!(o.get(&set), OptionValue::Enum(i), "{}", o.name);
                    }
                    assert!(o.set(Options::default(), "nonsense").is_err(), "{}", o.name);
                }
                OptionType::Bool => {
                    for (text, v) in [("ON", true), ("off", false), ("1", true), ("FALSE", false)] {
                        let set = o.set(Options::default(), text).unwrap();
                        assert_eq!(o.get(&set), OptionValue::Bool(v), "{}", o.name);
                    }
                }
                OptionType::Text => panic!("{}: no engine option is text", o.name),
            }
        }
    }

    #[test]
    fn values_reach_the_engine_settings() {
        let o = Options::default()
            .set_by_name("block_cache_size", "128M")
            .unwrap()
            .set_by_name("write_buffer_size", "1G")
            .unwrap()
            .set_by_name("max_open_files", "64")
            .unwrap()
            .set_by_name("young_space_bound", "OFF")
            .unwrap()
            .set_by_name("max_compaction_bytes", "0")
            .unwrap();
        assert_eq!(o.block_cache_size, 128 << 20);
        assert_eq!(o.write_buffer_size, 1 << 30);
        assert_eq!(o.max_open_files, 64);
        assert!(!o.young_space_bound);
        assert_eq!(o.max_compaction_bytes, None);
        let e = Options::default()
            .set_by_name("no_such_option", "1")
            .unwrap_err();
        assert!(
            e.to_string().contains("unknown option `no_such_option`"),
            "{e}"
        );
        let e = Options::default()
            .set_by_name("max_open_files", "12X")
            .unwrap_err();
        assert!(e.to_string().contains("max_open_files"), "{e}");
        let e = Options::default()
            .set_by_name("block_cache_size", "99999999T")
            .unwrap_err();
        assert!(e.to_string().contains("larger than"), "{e}");
    }

    #[test]
    fn sync_mode_and_interval_are_set_in_either_order() {
        let a = Options::default()
            .set_by_name("sync_interval_ms", "250")
            .unwrap()
            .set_by_name("sync_mode", "interval")
            .unwrap();
        let b = Options::default()
            .set_by_name("sync_mode", "interval")
            .unwrap()
            .set_by_name("sync_interval_ms", "250")
            .unwrap();
        let want = SyncMode::Interval(Duration::from_millis(250));
        assert_eq!(a.sync_mode, want);
        assert_eq!(b.sync_mode, want);
        // Another mode keeps the interval for a later switch back.
        let c = b.set_by_name("sync_mode", "full").unwrap();
        assert_eq!(c.sync_mode, SyncMode::Full);
        let d = c.set_by_name("sync_mode", "INTERVAL").unwrap();
        assert_eq!(d.sync_mode, want);
    }

    #[test]
    fn compression_and_level_are_set_in_either_order() {
        let a = Options::default()
            .set_by_name("compression_level", "3")
            .unwrap()
            .set_by_name("compression", "zstd")
            .unwrap();
        assert_eq!(a.compression, Compression::Zstd { level: 3 });
        let b = Options::default()
            .set_by_name("compression", "zstd")
            .unwrap()
            .set_by_name("compression_level", "-5")
            .unwrap();
        assert_eq!(b.compression, Compression::Zstd { level: -5 });
        // The default level is the table format's.
        let c = Options::default()
            .set_by_name("compression", "zstd")
            .unwrap();
        assert_eq!(c.compression, TableOptions::default().compression);
        let off = b.set_by_name("compression", "none").unwrap();
        assert_eq!(off.compression, Compression::None);
        assert!(
            Options::default()
                .set_by_name("compression_level", "23")
                .is_err()
        );
    }

    #[test]
    fn text_forms() {
        let u = OptionType::Unsigned {
            bits: 64,
            min: 0,
            max: u64::MAX,
        };
        assert_eq!(u.parse("4k"), Ok(OptionValue::Unsigned(4096)));
        assert_eq!(u.parse(" 2T "), Ok(OptionValue::Unsigned(2 << 40)));
        assert!(u.parse("-1").is_err());
        assert!(u.parse("M").is_err());
        assert!(u.parse("1Q").unwrap_err().contains("suffix"));
        let e = OptionType::Enum { names: &["a", "b"] };
        assert_eq!(e.format(&OptionValue::Enum(1)), "b");
        assert!(e.check(&OptionValue::Enum(2)).is_err());
        assert!(e.check(&OptionValue::Bool(true)).is_err());
        assert_eq!(
            OptionType::Text.parse("/x y"),
            Ok(OptionValue::Text(Some("/x y".into())))
        );
        assert_eq!(OptionValue::Text(None).to_string(), "");
        assert_eq!(OptionValue::Bool(false).to_string(), "OFF");
    }
}

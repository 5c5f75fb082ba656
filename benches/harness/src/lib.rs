//! The memory-capped MariaDB server harness of the MariaDB-level benchmarks:
//! `riptide-sysbench` (benches/sysbench, `cargo xtask sysbench`), `riptide-tpcc`
//! (benches/tpcc, `cargo xtask tpcc`) and `riptide-ibench` (benches/ibench, `cargo xtask
//! ibench`). All compare Riptide, InnoDB and MyRocks with the same budget, durability, cap
//! and allowance rule, because all run each engine through this
//! crate: [`Lab::run`] makes the data directory and the cgroup, starts the server with
//! [`Budget::server_options`], hands the benchmark a [`Bench`] (the running server; restart
//! after the load, memory samples), and collects the load time, disk use and the cgroup's
//! counters into a [`Footprint`], which [`footprint_section`] and [`engines_csv`] report the
//! same way for every benchmark ([`settings_and_failures`]: the server variables each
//! engine got).
//!
//! # What each engine gets
//!
//! One memory budget `B` (`--budget-mib`, default 256 MiB) per engine:
//!
//! | engine | memory | durability (default / `--durable`) |
//! |---|---|---|
//! | InnoDB | `innodb_buffer_pool_size=B`, `innodb_flush_method=O_DIRECT` | `innodb_flush_log_at_trx_commit=2` / `1` |
//! | MyRocks | `rocksdb_block_cache_size=B-W`, `rocksdb_db_write_buffer_size=W`, `write_buffer_size=W/2` (in `rocksdb_default_cf_options`) | `rocksdb_flush_log_at_trx_commit=2` / `1` |
//! | Riptide | `riptide_block_cache_size=B-W`, `riptide_db_write_buffer_size=W`, `riptide_write_buffer_size=W/2` | `riptide_sync_mode=interval` (1 s) / `full` |
//!
//! `W` = `--write-buffer-mib` (default 64). With 2 the log is written to the OS at every
//! commit and fsynced about once a second by all three. Index and filter blocks count
//! against the block cache in both LSM engines (MyRocks' `rocksdb_cache_index_and_filter_blocks`
//! is ON by default; Riptide always caches them). MyRocks gets Riptide's table defaults:
//! no compression and a 10 bits/key whole-key bloom filter. Every server: no binary log,
//! Aria page cache and MyISAM key buffer 8 MiB (they only hold the system tables),
//! InnoDB buffer pool 8 MiB when InnoDB is not the engine under test; everything else is
//! the server's default. The results print `SHOW GLOBAL VARIABLES` of each server.
//!
//! # The memory cap, and why one server per engine
//!
//! Each engine runs in its own, freshly started `mariadbd` with a fresh data directory, which
//! a shell puts into the cgroup v1 memory group `/sys/fs/cgroup/memory/riptide-sysbench`
//! (one for both benchmarks, so only one capped server runs at a time) before it execs the
//! server; `memory.limit_in_bytes` = budget + `--allowance-mib`
//! (default 320 MiB). The allowance holds what each server needs beyond its budget: the
//! server itself (about 70 MiB resident at idle), connections, the InnoDB log buffer, the
//! LSM engines' own structures and the allocator's overhead. Rule: the largest overhead
//! measured without a cap (peak resident memory during the workloads minus the budget, with
//! the same settings), plus 64 MiB for the page cache of the server's own files, rounded up.
//! Measured (4 x 250,000 rows, uncapped, `MALLOC_ARENA_MAX=2`; benches/RESULTS.md): InnoDB
//! 331 MiB peak (75 over the budget), Riptide 346 MiB (90), MyRocks 474 MiB
//! over the seven workloads and 492 MiB after one minute of `oltp_update_index` alone
//! (236, still growing): 236 + 64 = 300, so 320 ([`DEFAULT_ALLOWANCE_MIB`]). TPC-C sets its
//! own by the same rule (`riptide-tpcc`'s `ALLOWANCE_MIB`, 416: MyRocks' server peaked
//! 349 MiB over its budget uncapped at 36 warehouses). Every server runs with
//! `MALLOC_ARENA_MAX=2` (glibc's per-thread arenas kept 72 MiB of Riptide's and 61 MiB of
//! MyRocks' resident memory). The load (`CREATE INDEX`) needs more than the workloads
//! (peak resident: InnoDB 339 MiB, MyRocks 878 MiB, Riptide 1,974 MiB while it copies each
//! table in one transaction): `--load-allowance-mib`. The cgroup
//! charges the server's anonymous memory *and* the page cache of every file it reads or
//! writes, so the OS page cache cannot hold more than what is left of the cap. InnoDB uses
//! O_DIRECT and so cannot use what the server leaves of the allowance as page cache; the
//! LSM engines (buffered I/O) can. That is the disadvantage InnoDB has here, and it is
//! bounded by the allowance. `--load-allowance-mib` raises the cap during the load only (for
//! engines whose index build does not fit; the report says so); `--no-cap` runs without
//! the cgroup (the report says so). The unmeasured checks between measured phases (TPC-C's
//! consistency conditions) run with the cap raised by [`CHECK_ALLOWANCE_MIB`]
//! ([`Bench::unmeasured`]): MyRocks, at its cap after a 32-warehouse run, was OOM-killed by
//! the check's scans of order_line.
//!
//! The issue asked for one server with all three engines. With one cgroup around one server,
//! the cap must hold all three caches at once (3 x budget + allowance), and the engine under
//! test would then find the idle engines' unused budget free for page cache: exactly the
//! hiding of the disk the cap is there to prevent. A cap of budget + allowance around
//! one server with three filled caches would OOM-kill it instead. So each engine has its
//! own server run (same binary, same options except its engine's), one after the other,
//! each loading only its own plugin.
//!
//! # The restart after the load
//!
//! After the load the server is restarted ([`Bench::restart`]), so the measured phase runs
//! on a fresh process with cold caches: the load leaves memory behind (measured without the
//! cap: MyRocks' server grew from 225 to 850 MB resident while loading 1M rows, and both LSM
//! servers were OOM-killed at the cap as soon as the first workload filled their caches on
//! top of it). The cgroup's peak and limit-hit counters restart with it.

mod args;
mod cache;
mod engine;
mod lab;
mod record;
mod report;
mod server;

pub use args::{Conditions, DEFAULT_ALLOWANCE_MIB, ServerArgs};
pub use cache::CacheCounters;
pub use engine::Engine;
pub use lab::{Bench, CHECK_ALLOWANCE_MIB, Lab};
pub use record::{
    EngineRecord, Footprint, Memory, Wording, engines_csv, footprint_section, settings_and_failures,
};
pub use report::{cap_text, durability_text, engine_table, median, mib, ms, num, opt, ratio};
pub use server::{
    Budget, Cgroup, MALLOC_ARENA_MAX, ProcessCounters, Server, ServerPaths, disk_usage,
    engine_bytes, is_root, reported_variables, tail,
};

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result};
use indicatif::{ProgressBar, ProgressStyle};

/// Prints `msg` above the progress bar (or to stderr when the bar is hidden).
pub fn note(pb: &ProgressBar, msg: impl AsRef<str>) {
    if pb.is_hidden() {
        eprintln!("{}", msg.as_ref());
    } else {
        pb.println(msg.as_ref());
    }
}

/// `p` made absolute against the current directory.
pub fn absolute(p: &Path) -> Result<PathBuf> {
    if p.is_absolute() {
        Ok(p.to_path_buf())
    } else {
        Ok(std::env::current_dir()
            .context("reading the current directory")?
            .join(p))
    }
}

/// `p` made absolute and created (with its parents): the folder for the results.
pub fn out_dir(p: &Path) -> Result<PathBuf> {
    let out = absolute(p)?;
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    Ok(out)
}

/// `date -u` now (empty if `date` fails), for the report's header.
pub fn started() -> String {
    Command::new("date")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// This process's command line, arguments with spaces quoted, for the report's header.
pub fn command_line() -> String {
    std::env::args()
        .map(|a| if a.contains(' ') { format!("'{a}'") } else { a })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The steps bar both benchmarks show: elapsed time, bar, `pos/len steps`, message.
pub fn steps_bar(steps: u64) -> ProgressBar {
    let pb = ProgressBar::new(steps);
    pb.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} steps  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb
}

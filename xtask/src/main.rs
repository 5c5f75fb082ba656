//! Every Riptide workflow as `cargo xtask <verb>`.
//!
//! `cargo xtask test` is the one command CI runs (`.ci/run`); `cargo xtask run` starts a
//! private MariaDB server with Riptide loaded; `cargo xtask demo` is the embedded demo. Each
//! verb prints what it runs.

mod backup;
mod fuzz;
mod mariadb;
mod mariadb_backup;
mod mariadb_crash;
mod mariadb_replication;
mod pgo;
mod sqlcheck;
mod sysbench;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "Riptide's workflows")]
struct Cli {
    #[command(subcommand)]
    verb: Verb,
}

#[derive(Subcommand)]
enum Verb {
    /// Every check and test: formatting, clippy, unit, property, crash and corruption tests,
    /// a 2-minute crash test (`crash`), 20 seconds of each fuzz target (`fuzz`), then the
    /// MariaDB plugin build and its mtr suites (installs MariaDB if missing), a short run of
    /// the differential SQL tester (`sqlcheck`), two rounds of the MariaDB crash test
    /// (`crash --mariadb`), five checkpoints of the online backup test (`backup-test`), two
    /// rounds of the replication test (`replication`), and the benchmarks in their `--quick`
    /// form (`bench`, `sysbench`, `tpcc`, `ibench`).
    Test {
        /// Skip `cargo fmt --check` and clippy (for a quick local loop).
        #[arg(long)]
        no_lint: bool,
    },
    /// What CI runs: exactly `cargo xtask test`.
    Ci,
    /// Builds and runs the embedded demo: opens a database under target/, writes and reads
    /// a million keys, prints throughput and statistics.
    Demo {
        /// Number of keys to write and read.
        #[arg(long, default_value_t = 1_000_000)]
        keys: u64,
    },
    /// Installs the MariaDB server, its test suite and sysbench (Debian packages pinned to one
    /// version) and unpacks that version's source under target/mariadb-src (for the headers).
    /// Idempotent: a no-op when done. Needs root.
    Setup,
    /// Builds the MariaDB plugin target/plugin/ha_riptide.so (runs setup if needed).
    Plugin {
        /// Also a profile-guided build, target/plugin-pgo/ha_riptide.so: instrumented, trained
        /// on `tpcc --quick` and `sysbench --quick` (Riptide only), rebuilt with the profile
        /// (installs Debian's llvm-19 for llvm-profdata if needed; about 10 minutes).
        #[arg(long)]
        pgo: bool,
    },
    /// Starts a private MariaDB server (data in target/mariadb) with Riptide loaded and prints
    /// how to connect. Reuses a running server of ours unless the plugin was rebuilt since it
    /// started (then restarts it).
    Run,
    /// Shuts down the server `cargo xtask run` started.
    Stop,
    /// An online backup of the server `cargo xtask run` started, while it serves writes: a
    /// checkpoint of the Riptide engine (`SET GLOBAL riptide_create_checkpoint`) and the
    /// RIPTIDE tables' definitions, with a RESTORE.md. Not the server's other engines or its
    /// `mysql` schema (mariabackup or mariadb-dump do those).
    Backup {
        /// Where (a new directory; default target/backups/riptide-<UTC time>).
        #[arg(long)]
        to: Option<PathBuf>,
    },
    /// Puts a backup of `cargo xtask backup` back: a new data directory for the `run` server
    /// (the old one kept aside) with the backup's tables, then starts the server. Stop the
    /// server first.
    Restore {
        /// The backup directory.
        #[arg(long)]
        from: PathBuf,
    },
    /// Runs our mtr suites (mysql-test/<suite>; default: riptide) with MariaDB's mtr.
    Mtr {
        /// Suites to run (default: riptide).
        suites: Vec<String>,
        /// Extra arguments for mtr (after `--`), e.g. `-- --record basic`.
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// The crash test: random operations on a database with small memtables, killed with
    /// SIGKILL at random moments, reopened and verified against the expected state, for the
    /// given time (tools/stress; `riptide-stress --help` for more).
    Crash {
        /// How long to keep killing, in minutes.
        #[arg(long, default_value_t = 2.0)]
        minutes: f64,
        /// The MariaDB-level crash test instead (tools/mariadb-crash): transactions on
        /// RIPTIDE tables over several connections, kill -9 of mariadbd, restart, every
        /// acknowledged transaction checked against the client's ledger, CHECK TABLE, every
        /// secondary index against the primary key; rounds alternate the binary log on/off.
        #[arg(long)]
        mariadb: bool,
        /// With --mariadb: run this many rounds instead of --minutes.
        #[arg(long, requires = "mariadb")]
        rounds: Option<u64>,
        /// Seed of the first round (default: from the clock; printed for replay).
        #[arg(long)]
        seed: Option<u64>,
        /// With --mariadb: fail on a deadlock error instead of counting it (what
        /// `cargo xtask test` runs).
        #[arg(long, requires = "mariadb")]
        fail_on_deadlock: bool,
    },
    /// The MariaDB-level online backup test (tools/mariadb-backup): checkpoints
    /// (`SET GLOBAL riptide_create_checkpoint`) taken while several connections write
    /// transfers with a ledger; each checkpoint is started in a second server and checked:
    /// every transaction acknowledged before it is there, none sent after it, none by half,
    /// CHECK TABLE, every index against its table. Reports the writers' stall per checkpoint.
    BackupTest {
        /// Checkpoints to take and verify.
        #[arg(long, default_value_t = 20)]
        checkpoints: u32,
        /// Milliseconds of load between two checkpoints.
        #[arg(long, default_value_t = 1000)]
        interval_ms: u64,
        /// Seed of the load (default: from the clock; printed for replay).
        #[arg(long)]
        seed: Option<u64>,
    },
    /// The MariaDB-level replication test (tools/mariadb-replication): a primary and a GTID
    /// replica (4 optimistic parallel threads, `gtid_pos_auto_engines=RIPTIDE`) with RIPTIDE
    /// tables under a write load with a ledger; each round kills the replica and the primary
    /// with SIGKILL (alternating which goes first) and restarts them; then the replica must
    /// catch up and every table must have the same CHECKSUM TABLE and row count on both,
    /// with CHECK TABLE passing and every acknowledged transaction present. Ends with the
    /// replica's apply rate.
    Replication {
        /// Rounds per engine.
        #[arg(long, default_value_t = 6)]
        rounds: u32,
        /// Seed of the load and the kill moments (default: from the clock; printed for replay).
        #[arg(long)]
        seed: Option<u64>,
        /// Engines to run the test with, one after the other, comma-separated: `riptide`
        /// (default), `innodb` (`riptide,innodb` compares the replica's apply rate).
        #[arg(long, value_delimiter = ',')]
        engines: Vec<String>,
        /// Seconds of load per round.
        #[arg(long, default_value_t = 9.0)]
        round_seconds: f64,
        /// Seconds of load for the apply-rate measurement at the end (0: none).
        #[arg(long, default_value_t = 10.0)]
        apply_seconds: f64,
        /// Extra arguments for riptide-mariadb-replication (after `--`), e.g.
        /// `-- --parallel-mode conservative` (`-- --help` lists them).
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// The randomized differential SQL tester (tools/sqlcheck): random statements and
    /// two-session schedules on RIPTIDE and InnoDB tables in one private server, every
    /// outcome compared; a difference is reduced to a minimal mtr script and fails the run.
    /// Builds the plugin first. Default length: 5,000 statements (`-- --statements N`).
    Sqlcheck {
        /// Run for this many minutes.
        #[arg(long)]
        minutes: Option<f64>,
        /// Seed (default: from the clock; printed for replay).
        #[arg(long)]
        seed: Option<u64>,
        /// Extra arguments for riptide-sqlcheck (after `--`), e.g.
        /// `-- --skip covering,join_left --keep-going` (`-- --list-kinds`).
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// Fuzzing: builds the cargo-fuzz targets of `fuzz/` with the nightly toolchain, writes
    /// their seed corpora, then runs each for the given time, one after the other
    /// (docs/TESTING.md).
    Fuzz {
        /// Seconds to run each target.
        #[arg(long, default_value_t = 60)]
        seconds: u64,
        /// Targets to run (default: all).
        targets: Vec<String>,
    },
    /// Benchmarks: the db_bench suite on Riptide, RocksDB and fjall (default; 1M keys, 3
    /// repetitions, each engine in its own process; markdown table with ratios, JSON, CSV and
    /// PNG charts in target/bench-results/dbbench-<time>/), the Riptide-only workloads with
    /// `-- --workload sustained|queue|txn`, or the criterion micro-benchmarks (`--micro`).
    Bench {
        /// Run the criterion micro-benchmarks (WAL, memtable, blocks, bloom filter).
        #[arg(long)]
        micro: bool,
        /// Include RocksDB in a `--quick` run too (the full db_bench run always includes it).
        /// RocksDB is compiled from C++ into target/rocks-prebuild, a target directory of its
        /// own: slow on 2 cores the first time, reused after.
        #[arg(long)]
        rocksdb: bool,
        /// A small, fast run (the db_bench suite: 50,000 keys, one repetition; for CI).
        #[arg(long)]
        quick: bool,
        /// Extra arguments for the benchmark binary (after `--`).
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// The MariaDB-level comparison: sysbench OLTP workloads on Riptide, InnoDB and MyRocks,
    /// each in its own server inside a memory cgroup (benches/sysbench; needs root). Results
    /// in target/sysbench-results/.
    Sysbench {
        /// A small run (minutes): the smoke test `cargo xtask test` runs.
        #[arg(long)]
        quick: bool,
        /// Riptide from the profile-guided build (`cargo xtask plugin --pgo`, rebuilt first;
        /// benches/RESULTS.md has what it gains).
        #[arg(long)]
        pgo: bool,
        /// Extra arguments for riptide-sysbench (after `--`), e.g. `-- --durable`.
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// TPC-C (our own driver of revision 5.11, benches/tpcc) on Riptide, InnoDB and MyRocks,
    /// each in its own server inside the same memory cgroup as `sysbench` (needs root):
    /// NOPM, TPM, latency per transaction type, consistency checks after the load and every
    /// run (a failure fails the command). Results in target/tpcc-results/.
    Tpcc {
        /// A small run (2 warehouses, one 20 s run, Riptide and InnoDB): the smoke test
        /// `cargo xtask test` runs.
        #[arg(long)]
        quick: bool,
        /// Riptide from the profile-guided build (`cargo xtask plugin --pgo`, rebuilt first;
        /// benches/RESULTS.md has what it gains).
        #[arg(long)]
        pgo: bool,
        /// Extra arguments for riptide-tpcc (after `--`), e.g. `-- --warehouses 10
        /// --terminals 4 --runs 2` (`-- --help` lists them).
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// The insert benchmark (benches/ibench: l.i0, l.x, l.i1, l.i2, qr100, qp100) on Riptide,
    /// InnoDB and MyRocks, each in its own server inside the same memory cgroup as `sysbench`
    /// (needs root): rows or queries per second, CPU and KiB per row, space, per-second
    /// chart; rows counted by every index at the end (a mismatch fails the command).
    /// Results in target/ibench-results/.
    Ibench {
        /// A small run (40,000 rows, 5 s phases, Riptide and InnoDB): the smoke test
        /// `cargo xtask test` runs.
        #[arg(long)]
        quick: bool,
        /// Riptide from the profile-guided build (`cargo xtask plugin --pgo`, rebuilt first).
        #[arg(long)]
        pgo: bool,
        /// Extra arguments for riptide-ibench (after `--`), e.g. `-- --rows 10000000
        /// --clients 2` (`-- --help` lists them).
        #[arg(last = true)]
        args: Vec<String>,
    },
}

/// Statements of the differential SQL tester in `cargo xtask test` (with a schedule every
/// 60: about 75 s on two cores).
const SQLCHECK_TEST_STATEMENTS: u64 = 12_000;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root());
    c
}

/// Set by `cargo xtask test` once one `cargo build --workspace --all-targets --profile ci`
/// has built every binary of the workspace: the tools then run from `target/ci/` as built.
/// A `cargo run -p <tool>` instead resolves features for that one package, which differ
/// from the workspace's (dev-dependencies and other members turn features on), so each tool
/// would recompile the engine crates and the `mysql` client: about four minutes of CI.
static WORKSPACE_BUILT: AtomicBool = AtomicBool::new(false);

/// A command running `package`'s binary (its bin target has the package's name) in the
/// `ci` profile; the caller adds the binary's own arguments. Before the test verb's
/// workspace build this is `cargo run --profile ci -p <package> --`.
fn ci_tool(package: &str) -> Command {
    if WORKSPACE_BUILT.load(Ordering::Relaxed) {
        let mut c = Command::new(root().join("target").join("ci").join(package));
        c.current_dir(root());
        c
    } else {
        let mut c = cargo();
        c.args(["run", "--profile", "ci", "-p", package, "--"]);
        c
    }
}

fn run(step: &str, mut cmd: Command) -> Result<()> {
    eprintln!("\n==> {step}: {cmd:?}");
    let start = Instant::now();
    let status = cmd
        .status()
        .with_context(|| format!("could not start {step}"))?;
    eprintln!(
        "<== {step}: {status} in {:.1}s",
        start.elapsed().as_secs_f64()
    );
    if !status.success() {
        bail!("{step} failed ({status})");
    }
    Ok(())
}

fn test(no_lint: bool) -> Result<()> {
    let start = Instant::now();
    if !no_lint {
        let mut fmt = cargo();
        fmt.args(["fmt", "--all", "--", "--check"]);
        run("format check", fmt)?;
        let mut clippy = cargo();
        clippy.args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]);
        run("clippy", clippy)?;
    }
    // Every target in one build, so the tests and the tools after them share one feature
    // resolution (see `WORKSPACE_BUILT`); the test run then compiles only the doctests.
    let mut b = cargo();
    b.args(["build", "--workspace", "--all-targets", "--profile", "ci"]);
    run("build every target (ci profile)", b)?;
    WORKSPACE_BUILT.store(true, Ordering::Relaxed);
    let mut t = cargo();
    t.args(["test", "--workspace", "--profile", "ci", "--no-fail-fast"]);
    run("tests (unit, property, crash, corruption, doc)", t)?;
    crash(2.0, None)?;
    fuzz::fuzz(20, Vec::new())?;
    // The MariaDB plugin: install the server and its source if missing, build
    // ha_riptide.so, run our mtr suite and MariaDB's storage_engine suite (root, parts and
    // trx: every test passes or is disabled with its reason, see
    // mysql-test/storage_engine/README.md) against it.
    mariadb::mtr(
        [
            "riptide",
            "storage_engine-riptide",
            "storage_engine/parts-riptide",
            "storage_engine/trx-riptide",
        ]
        .map(String::from)
        .to_vec(),
        Vec::new(),
    )?;
    // The base suite disables some tests for stale results (MDEV-10252); they run here too,
    // against full result files that match InnoDB's output (mysql-test/storage_engine/README.md).
    mariadb::mtr(
        vec!["storage_engine-riptide".to_string()],
        std::iter::once("--enable-disabled")
            .chain(mariadb::UPSTREAM_DISABLED_THAT_PASS)
            .map(String::from)
            .collect(),
    )?;
    free_disk(&mariadb::mtr_vardir());
    // The differential SQL tester, about a minute and a half with a fixed seed: every
    // statement kind and schedule shape, compared with InnoDB (docs/TESTING.md).
    sqlcheck::sqlcheck(
        sqlcheck::Length::Statements(SQLCHECK_TEST_STATEMENTS),
        Some(1),
        vec!["--schedule-every".into(), "60".into()],
    )?;
    // Two rounds of the MariaDB crash test: one with the binary log, one without; a
    // deadlock fails them.
    mariadb_crash::crash_mariadb(mariadb_crash::Length::Rounds(2), None, true)?;
    // The online backup test in short form: five checkpoints under load, each restored in a
    // second server and verified (`cargo xtask backup-test` takes 20).
    mariadb_backup::backup_test(5, 1000, None)?;
    // The replication test in short form: a primary and a parallel replica (optimistic
    // mode, which needs the engine's lock waits reported to the server), two rounds of 3 s
    // of load, each killing both (`cargo xtask replication` runs 6 of 9 s).
    mariadb_replication::replication(2, None, &[], 3.0, 2.0, Vec::new())?;
    free_disk(&root().join("target").join("mariadb-replication"));
    // The side-by-side benchmarks in their small form (issues 7 and 17), as smoke tests of
    // the whole pipeline, not measurements: the library suite on Riptide and fjall (built
    // with the tests' profile, whose artifacts the test build above already made, instead of
    // a second optimized build of every crate: two and a half minutes on two cores), then
    // sysbench on Riptide, InnoDB and MyRocks in a memory cgroup with 5 s runs after a 2 s
    // warm-up (`cargo xtask sysbench --quick` alone keeps 10 s after 5 s).
    bench(false, false, true, Vec::new(), BenchProfile::Tests)?;
    sysbench::sysbench(
        true,
        false,
        ["--time", "5", "--warmup", "2"].map(String::from).to_vec(),
    )?;
    // TPC-C in its small form on Riptide and InnoDB (MyRocks left out to stay within CI's
    // time budget: it would add about a minute and a half and checks nothing of ours); any
    // consistency failure fails the run.
    sysbench::tpcc(true, false, Vec::new())?;
    // The insert benchmark in its small form on Riptide and InnoDB (about a minute): every
    // phase, and the rows counted by each index at the end.
    sysbench::ibench(true, false, Vec::new())?;
    eprintln!(
        "\nall checks passed in {:.0}s",
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Removes `dir`, the working files of a test step that passed (servers' data directories
/// and logs: half a gigabyte each for mtr and the replication test), so the rest of
/// `cargo xtask test` has the disk: CI's machine is small, and a full disk kills the build.
/// A step that fails stops the run before this, so its files stay for inspection.
fn free_disk(dir: &Path) {
    if let Err(e) = std::fs::remove_dir_all(dir)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        eprintln!("could not remove {}: {e}", dir.display());
    }
}

/// `cargo xtask crash`: builds and runs `riptide-stress crash` (tools/stress).
fn crash(minutes: f64, seed: Option<u64>) -> Result<()> {
    let mut c = ci_tool("riptide-stress");
    c.args(["crash", "--minutes", &minutes.to_string(), "--dir"])
        .arg(root().join("target").join("stress"));
    if let Some(seed) = seed {
        c.args(["--seed", &seed.to_string()]);
    }
    run("crash test", c)
}

fn demo(keys: u64) -> Result<()> {
    let dir = root().join("target").join("demo-db");
    let mut c = cargo();
    c.args([
        "run",
        "--release",
        "-p",
        "riptide",
        "--example",
        "demo",
        "--",
    ])
    .arg(&dir)
    .arg(keys.to_string());
    run("embedded demo", c)
}

/// Which build of `riptide-bench` a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BenchProfile {
    /// `--release`: what every measurement uses.
    Release,
    /// `--profile ci` (optimized, with debug assertions): the smoke run of `cargo xtask test`.
    Tests,
}

fn bench(
    micro: bool,
    rocksdb: bool,
    quick: bool,
    args: Vec<String>,
    profile: BenchProfile,
) -> Result<()> {
    if micro {
        let mut c = cargo();
        c.args(["bench", "-p", "riptide-micro-bench"]);
        if quick {
            c.args(["--", "--warm-up-time", "1", "--measurement-time", "2"]);
        }
        return run("criterion micro-benchmarks", c);
    }
    let with_rocksdb = rocksdb || (!quick && runs_dbbench(&args));
    // The tests' build without RocksDB is the one `ci_tool` runs (arguments follow `--`).
    let tests_build = profile == BenchProfile::Tests && !with_rocksdb;
    let mut c = if tests_build {
        ci_tool("riptide-bench")
    } else {
        let mut c = cargo();
        match profile {
            BenchProfile::Release => c.args(["run", "--release", "-p", "riptide-bench"]),
            BenchProfile::Tests => c.args(["run", "--profile", "ci", "-p", "riptide-bench"]),
        };
        c
    };
    // The full db_bench run always compares with RocksDB; the quick one (CI) leaves out its
    // long C++ build unless asked, and so do the Riptide-only workloads.
    if with_rocksdb {
        ensure_libclang()?;
        c.args(["--features", "rocksdb"]);
        // Its own target directory: turning the feature on and off then rebuilds neither
        // RocksDB nor the plain binary.
        c.env(
            "CARGO_TARGET_DIR",
            root().join("target").join("rocks-prebuild"),
        );
    }
    if !tests_build {
        c.arg("--");
    }
    if quick {
        c.arg("--quick");
    }
    c.args(args);
    run("benchmark (riptide-bench)", c)
}

/// Whether the benchmark binary's arguments select the db_bench suite (its default
/// `--workload`), the one workload that compares engines.
fn runs_dbbench(args: &[String]) -> bool {
    let mut workload = "dbbench";
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--workload" {
            workload = it.next().map_or(workload, String::as_str);
        } else if let Some(w) = a.strip_prefix("--workload=") {
            workload = w;
        }
    }
    workload == "dbbench"
}

/// The `rocksdb` crate generates its bindings with libclang: install Debian's libclang-dev
/// when no libclang is on the machine (needs root, as on the project's machines).
fn ensure_libclang() -> Result<()> {
    let mut check = Command::new("sh");
    check.args([
        "-c",
        "ldconfig -p | grep -q 'libclang\\(-[0-9.]*\\)\\?\\.so'",
    ]);
    if check.status().map(|s| s.success()).unwrap_or(false) {
        return Ok(());
    }
    let mut update = Command::new("apt-get");
    update.args(["update", "-qq"]);
    run("apt-get update (for libclang)", update)?;
    let mut install = Command::new("apt-get");
    install
        .args(["install", "-y", "-qq", "libclang-dev"])
        .env("DEBIAN_FRONTEND", "noninteractive");
    run("install libclang-dev (RocksDB bindings)", install)
}

fn main() -> Result<()> {
    match Cli::parse().verb {
        Verb::Test { no_lint } => test(no_lint),
        Verb::Ci => test(false),
        Verb::Demo { keys } => demo(keys),
        Verb::Setup => mariadb::setup().map(|_| ()),
        Verb::Plugin { pgo } => {
            mariadb::plugin()?;
            if pgo {
                pgo::plugin_pgo()?;
            }
            Ok(())
        }
        Verb::Run => mariadb::run_server(),
        Verb::Stop => mariadb::stop(),
        Verb::Mtr { suites, args } => mariadb::mtr(suites, args),
        Verb::Backup { to } => backup::backup(to),
        Verb::Restore { from } => backup::restore(&from),
        Verb::BackupTest {
            checkpoints,
            interval_ms,
            seed,
        } => mariadb_backup::backup_test(checkpoints, interval_ms, seed),
        Verb::Replication {
            rounds,
            seed,
            engines,
            round_seconds,
            apply_seconds,
            args,
        } => mariadb_replication::replication(
            rounds,
            seed,
            &engines,
            round_seconds,
            apply_seconds,
            args,
        ),
        Verb::Crash {
            minutes,
            seed,
            mariadb: false,
            ..
        } => crash(minutes, seed),
        Verb::Crash {
            minutes,
            seed,
            rounds,
            mariadb: true,
            fail_on_deadlock,
        } => mariadb_crash::crash_mariadb(
            rounds.map_or(
                mariadb_crash::Length::Minutes(minutes),
                mariadb_crash::Length::Rounds,
            ),
            seed,
            fail_on_deadlock,
        ),
        Verb::Sqlcheck {
            minutes,
            seed,
            args,
        } => sqlcheck::sqlcheck(
            minutes.map_or(sqlcheck::Length::Default, sqlcheck::Length::Minutes),
            seed,
            args,
        ),
        Verb::Fuzz { seconds, targets } => fuzz::fuzz(seconds, targets),
        Verb::Bench {
            micro,
            rocksdb,
            quick,
            args,
        } => bench(micro, rocksdb, quick, args, BenchProfile::Release),
        Verb::Sysbench { quick, pgo, args } => sysbench::sysbench(quick, pgo, args),
        Verb::Tpcc { quick, pgo, args } => sysbench::tpcc(quick, pgo, args),
        Verb::Ibench { quick, pgo, args } => sysbench::ibench(quick, pgo, args),
    }
}

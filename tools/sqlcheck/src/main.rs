//! `riptide-sqlcheck`: a randomized differential SQL tester of ENGINE=RIPTIDE against InnoDB
//! (`cargo xtask sqlcheck`, docs/TESTING.md), in the manner of MariaDB's Random Query
//! Generator and SQLancer.
//!
//! A private `mariadbd` holds the same schema twice ([`schema`]): database `rip` in RIPTIDE
//! and `inno` in InnoDB. A seeded generator ([`generate`]) draws statements (reads with every
//! kind of plan, DML of every kind, transactions and savepoints, optimizer switches) and each
//! runs on both databases through two connections; every answer is compared ([`exec`]): the
//! rows (as a multiset unless the order is fully determined), affected rows, the info string
//! (rows matched), last insert id, warning codes, error codes. Every so often a two-session
//! schedule ([`concurrent`]) runs on both engines and each step's outcome, blocking included,
//! is compared. At the first difference the statements are reduced by delta debugging
//! ([`reduce`]: replays from a fresh schema) and printed as an mtr test with both answers
//! ([`report`]). At the end CHECK TABLE must be OK everywhere and the tables equal.
//!
//! Exit status 0 only if no difference was found.

mod concurrent;
mod exec;
mod generate;
mod kinds;
mod reduce;
mod report;
mod schema;
mod session;
mod values;

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result, bail};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use mysql::prelude::Queryable;
use rand::SeedableRng;
use rand::rngs::StdRng;
use riptide_mariadb_server::Server;

use crate::exec::Outcome;
use crate::generate::{Gen, Stmt};
use crate::kinds::{Enabled, Kind};
use crate::schema::{INNO_DB, RIP_DB};
use crate::session::{Pair, fresh_schema};

#[derive(Parser)]
#[command(
    name = "riptide-sqlcheck",
    about = "Randomized differential SQL tester: ENGINE=RIPTIDE against InnoDB in one private \
             mariadbd; every difference reduced to a minimal replayable script"
)]
struct Cli {
    /// Working directory: data directory, socket, error log, the report of a difference.
    /// Emptied at the start.
    #[arg(long, default_value = "target/sqlcheck")]
    dir: PathBuf,
    /// The plugin to test; copied to `<dir>-plugin/` first, so a rebuild of it during the
    /// run does not change the server under test.
    #[arg(long, default_value = "target/plugin/ha_riptide.so")]
    plugin: PathBuf,
    /// `--plugin-maturity` for the server (the plugin declares experimental).
    #[arg(long, default_value = "experimental")]
    plugin_maturity: String,
    /// Seed of the run (default: from the clock); printed for replay.
    #[arg(long)]
    seed: Option<u64>,
    /// Run for this many minutes.
    #[arg(long, conflicts_with = "statements")]
    minutes: Option<f64>,
    /// Run this many statements (default 5,000 when --minutes is not given).
    #[arg(long)]
    statements: Option<u64>,
    /// Kinds (or groups) of statements, schedules and values not to generate, comma
    /// separated (`--list-kinds`), e.g. to leave out a known bug while developing.
    #[arg(long, value_delimiter = ',')]
    skip: Vec<String>,
    /// Kinds that are off by default to generate too (`--list-kinds` marks them `[off]`;
    /// none is today: a kind waiting for an engine fix is switched off here).
    #[arg(long, value_delimiter = ',')]
    enable: Vec<String>,
    /// Lists the kinds and groups and exits.
    #[arg(long)]
    list_kinds: bool,
    /// Run a two-session schedule after every this many statements (0: none).
    #[arg(long, default_value_t = 20)]
    schedule_every: u64,
    /// Start from a fresh schema every this many statements (after checking the tables):
    /// bounds what a difference's reduction has to replay.
    #[arg(long, default_value_t = 1500)]
    epoch: u64,
    /// Longest time spent reducing a difference, in minutes (then the smallest script so
    /// far is printed).
    #[arg(long, default_value_t = 15.0)]
    reduce_minutes: f64,
    /// After a difference, go on (from a fresh schema) with the differing statement's kind
    /// (or schedule shape) switched off, to find more; the exit status is still 1.
    #[arg(long)]
    keep_going: bool,
    /// Print every schedule with both engines' outcomes (to see what the schedules do).
    #[arg(long)]
    show_schedules: bool,
    /// Print the whole statement sequence of a difference without reducing it.
    #[arg(long)]
    no_reduce: bool,
    /// A schedule step still running after this many milliseconds counts as blocked.
    #[arg(long, default_value_t = 200)]
    block_ms: u64,
    /// `riptide_write_buffer_size` (small: flushes and compactions during the run).
    #[arg(long, default_value_t = 256 << 10)]
    write_buffer: u64,
}

/// The server under test and how to restart it (a reduction restarts it if a statement
/// killed it).
pub struct Ctl {
    /// The server.
    pub server: Server,
    /// Its options.
    pub args: Vec<String>,
    /// The blocking threshold of schedule steps.
    pub block: Duration,
}

impl Ctl {
    /// Restarts the server if it died.
    pub fn ensure_running(&mut self) -> Result<()> {
        if !self.server.running() {
            self.server.kill()?;
            self.server
                .start(&self.args)
                .context("restarting mariadbd")?;
        }
        Ok(())
    }
}

/// Whether the two answers to `s` differ (a lost connection always does). CHECK TABLE is
/// compared without its first column (the table's database-qualified name).
pub fn differs(s: &Stmt, rip: &Outcome, inno: &Outcome) -> bool {
    if s.kind == Kind::CheckTable {
        let strip = |o: &Outcome| match o {
            Outcome::Ok {
                rows: Some(rows),
                affected,
                insert_id,
                info,
                warnings,
            } => Outcome::Ok {
                rows: Some(
                    rows.iter()
                        .map(|r| r.iter().skip(1).cloned().collect())
                        .collect(),
                ),
                affected: *affected,
                insert_id: *insert_id,
                info: info.clone(),
                warnings: warnings.clone(),
            },
            other => other.clone(),
        };
        return !exec::same(&strip(rip), &strip(inno), true, false);
    }
    let multi = matches!(s.kind, Kind::UpdateMulti | Kind::DeleteMulti);
    !exec::same(rip, inno, s.ordered, multi)
}

/// Figures of the run.
#[derive(Default)]
struct Summary {
    statements: u64,
    by_kind: BTreeMap<Kind, u64>,
    errors: BTreeMap<u16, u64>,
    with_warnings: u64,
    rows_compared: u64,
    schedules: BTreeMap<(Kind, &'static str), u64>,
    steps: u64,
    blocked_steps: u64,
    epochs: u64,
}

impl Summary {
    fn count(&mut self, s: &Stmt, o: &Outcome) {
        self.statements += 1;
        *self.by_kind.entry(s.kind).or_default() += 1;
        match o {
            Outcome::Err { code, .. } => *self.errors.entry(*code).or_default() += 1,
            Outcome::Ok { rows, warnings, .. } => {
                if !warnings.is_empty() {
                    self.with_warnings += 1;
                }
                self.rows_compared += rows.as_ref().map_or(0, |r| r.len() as u64);
            }
            Outcome::Lost(_) => {}
        }
    }
}

fn main() {
    let cli = Cli::parse();
    if cli.list_kinds {
        for k in Kind::ALL {
            println!(
                "{:<26} {:<12} {}{}",
                k.name(),
                k.group(),
                if k.default_on() { "" } else { "[off] " },
                k.doc().trim()
            );
        }
        return;
    }
    if let Err(e) = run(&cli) {
        eprintln!("\nFAILED: {e:#}");
        std::process::exit(1);
    }
}

fn server_args(cli: &Cli) -> Vec<String> {
    vec![
        "--riptide=FORCE".into(),
        "--riptide-lock-wait-timeout=2".into(),
        "--innodb-lock-wait-timeout=2".into(),
        format!("--riptide-write-buffer-size={}", cli.write_buffer),
        format!("--riptide-db-write-buffer-size={}", cli.write_buffer * 4),
        format!("--riptide-target-file-size={}", cli.write_buffer),
        "--innodb-buffer-pool-size=64M".into(),
        "--max-connections=100".into(),
        "--default-time-zone=+00:00".into(),
        "--character-set-server=utf8mb4".into(),
        "--collation-server=utf8mb4_general_ci".into(),
    ]
}

/// Copies the plugin to `<dir>-plugin/` and returns that folder.
fn copy_plugin(cli: &Cli) -> Result<PathBuf> {
    let mut name = cli.dir.file_name().unwrap_or_default().to_os_string();
    name.push("-plugin");
    let folder = cli.dir.with_file_name(name);
    fs::create_dir_all(&folder).with_context(|| format!("creating {}", folder.display()))?;
    fs::copy(&cli.plugin, folder.join("ha_riptide.so")).with_context(|| {
        format!(
            "copying {} to {} (build it with `cargo xtask plugin`)",
            cli.plugin.display(),
            folder.display()
        )
    })?;
    Ok(folder)
}

fn run(cli: &Cli) -> Result<()> {
    let seed = cli.seed.unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let on = Enabled::new(&cli.skip, &cli.enable)?;
    let limit = match (cli.minutes, cli.statements) {
        (Some(m), _) => format!("{m} minutes"),
        (None, n) => format!("{} statements", n.unwrap_or(5000)),
    };
    eprintln!(
        "riptide-sqlcheck: seed {seed}, {limit}, in {}{}{}",
        cli.dir.display(),
        if on.skipped().is_empty() {
            String::new()
        } else {
            format!(", skipping {}", on.skipped().join(","))
        },
        if on.extra().is_empty() {
            String::new()
        } else {
            format!(", also {}", on.extra().join(","))
        }
    );
    let plugin_dir = copy_plugin(cli)?;
    let mut server = Server::new(&cli.dir, &plugin_dir, &cli.plugin_maturity)?;
    server.install()?;
    let args = server_args(cli);
    server.start(&args).context("starting mariadbd")?;
    let ctl = Ctl {
        server,
        args,
        block: Duration::from_millis(cli.block_ms),
    };
    {
        let mut c = ctl.server.connect_with(ctl.server.opts(None))?;
        let support: Option<String> = c.query_first(
            "SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'RIPTIDE'",
        )?;
        if !matches!(support.as_deref(), Some("YES" | "DEFAULT")) {
            bail!(
                "RIPTIDE is not loaded (support: {support:?}); server log:\n{}",
                ctl.server.log_tail(30)
            );
        }
    }

    let start = Instant::now();
    let deadline = cli
        .minutes
        .map(|m| start + Duration::from_secs_f64(m * 60.0));
    let total = cli.statements.unwrap_or(5000);
    let bar = match deadline {
        Some(_) => ProgressBar::new((cli.minutes.unwrap_or(0.0) * 60.0) as u64),
        None => ProgressBar::new(total),
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {per_sec} {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let g = Gen::new(seed, on.clone());
    let tables = g.tables().to_vec();
    fresh_schema(&ctl.server, g.tables())?;
    let pair = Pair::connect(&ctl.server)?;
    let mut r = Runner {
        cli,
        ctl,
        pair,
        g,
        on,
        conc_rng: StdRng::seed_from_u64(seed ^ 0x5bd1_e995_c0ff_ee11),
        log: Vec::new(),
        summary: Summary::default(),
        bar,
        seed,
        found: Vec::new(),
    };
    r.new_epoch()?;
    let mut in_epoch = 0u64;
    let mut schedules_due = 0u64;
    loop {
        let done = match deadline {
            Some(d) => Instant::now() >= d,
            None => r.summary.statements >= total,
        };
        if done {
            break;
        }
        if in_epoch >= cli.epoch {
            // End the epoch with every table checked, then a fresh schema.
            let mut closing: Vec<Stmt> = r.g.end_transaction().into_iter().collect();
            closing.extend(r.g.checks());
            closing.push(r.g.check_table());
            for s in closing {
                if r.step(&s)? {
                    break;
                }
            }
            r.new_epoch()?;
            in_epoch = 0;
        }
        let s = r.g.next();
        if r.step(&s)? {
            r.new_epoch()?;
            in_epoch = 0;
            continue;
        }
        in_epoch += 1;
        schedules_due += 1;
        if cli.schedule_every > 0 && schedules_due >= cli.schedule_every {
            schedules_due = 0;
            if let Some(sched) = concurrent::generate(&mut r.conc_rng, &r.on) {
                r.schedule(&sched)?;
            }
        }
        match deadline {
            Some(_) => r.bar.set_position(start.elapsed().as_secs()),
            None => r.bar.set_position(r.summary.statements),
        }
        r.bar.set_message(format!(
            "{} schedules, schema {}{}",
            r.summary.schedules.values().sum::<u64>(),
            r.summary.epochs,
            if r.found.is_empty() {
                String::new()
            } else {
                format!(", {} differences", r.found.len())
            }
        ));
    }
    // The end: close the transaction, check every table and compare every table.
    let mut closing: Vec<Stmt> = r.g.end_transaction().into_iter().collect();
    closing.extend(r.g.checks());
    let check_all = r.g.check_table();
    closing.push(check_all.clone());
    for s in closing {
        if r.step(&s)? {
            break;
        }
    }
    let mut not_ok = Vec::new();
    for (db, conn) in [(RIP_DB, &mut r.pair.rip), (INNO_DB, &mut r.pair.inno)] {
        let rows: Vec<(String, String, String, String)> = conn.query(&check_all.sql)?;
        for row in rows {
            if !(row.2 == "status" && row.3 == "OK") {
                not_ok.push(format!("{db}: {} {} {} {}", row.0, row.1, row.2, row.3));
            }
        }
    }
    if !not_ok.is_empty() {
        r.bar.abandon();
        bail!(
            "CHECK TABLE at the end is not OK:\n  {}\n(seed {seed})",
            not_ok.join("\n  ")
        );
    }
    r.bar.finish_and_clear();
    let errors = log_errors(&r.ctl.server);
    let Runner {
        mut ctl,
        pair,
        summary,
        found,
        ..
    } = r;
    drop(pair);
    ctl.server.shutdown().context("clean shutdown")?;
    print_summary(&summary, seed, start.elapsed(), &tables, &errors);
    if !found.is_empty() {
        bail!(
            "{} difference(s) between RIPTIDE and InnoDB (seed {seed}), scripts in:\n  {}",
            found.len(),
            found
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join("\n  ")
        );
    }
    Ok(())
}

fn log_errors(server: &Server) -> Vec<String> {
    server
        .log_since_start()
        .lines()
        .filter(|l| l.contains("[ERROR]"))
        .map(str::to_string)
        .collect()
}

/// The state of a run.
struct Runner<'a> {
    cli: &'a Cli,
    ctl: Ctl,
    pair: Pair,
    g: Gen,
    /// The kinds on (with `--keep-going`, a kind that showed a difference goes off).
    on: Enabled,
    conc_rng: StdRng,
    /// The statements run since the last fresh schema.
    log: Vec<Stmt>,
    summary: Summary,
    bar: ProgressBar,
    seed: u64,
    /// The scripts of the differences found (`--keep-going`).
    found: Vec<PathBuf>,
}

impl Runner<'_> {
    /// A fresh schema, new connections, the initial rows.
    fn new_epoch(&mut self) -> Result<()> {
        self.ctl.ensure_running()?;
        fresh_schema(&self.ctl.server, self.g.tables())?;
        self.pair = Pair::connect(&self.ctl.server)?;
        self.log.clear();
        self.summary.epochs += 1;
        for s in self.g.load() {
            if self.step(&s)? {
                bail!("the initial load differs (see the script above); --skip nul_strings?");
            }
        }
        Ok(())
    }

    /// Runs one statement of the stream on both engines and compares. A difference is
    /// reduced, printed and saved, then returned as the run's error, or (`--keep-going`)
    /// its statement kind is switched off and `true` returned: the caller starts a fresh
    /// schema.
    fn step(&mut self, s: &Stmt) -> Result<bool> {
        let (a, b) = self.pair.run(s);
        self.log.push(s.clone());
        if differs(s, &a, &b) {
            // End this stream's transactions: their metadata locks would block the replays'
            // DROP DATABASE.
            let _ = self.pair.rip.query_drop("ROLLBACK");
            let _ = self.pair.inno.query_drop("ROLLBACK");
            self.difference(&a, &b)?;
            return Ok(true);
        }
        if s.kind == Kind::Check
            && let (Some(t), Outcome::Ok { rows: Some(r), .. }) = (Gen::checked_table(&s.sql), &b)
        {
            let t = t.to_string();
            self.g.observe_size(&t, r.len());
        }
        self.summary.count(s, &b);
        Ok(false)
    }

    fn say(&self, m: String) {
        self.bar.suspend(|| eprintln!("{m}"));
    }

    fn difference(&mut self, a: &Outcome, b: &Outcome) -> Result<()> {
        let cli = self.cli;
        let seed = self.seed;
        let log = std::mem::take(&mut self.log);
        let Some(last) = log.last() else {
            bail!("internal: a difference without a statement");
        };
        let server_died = !self.ctl.server.running();
        self.say(format!(
            "\nDIFFERENCE at statement {} of the run (seed {seed}, {} statements into this schema){}:\n  {}\n{}",
            self.summary.statements + 1,
            log.len(),
            if server_died { " -- mariadbd died" } else { "" },
            last.sql,
            exec::diff(a, b, last.ordered)
        ));
        if server_died {
            self.say(format!("server log:\n{}", self.ctl.server.log_tail(40)));
        }
        let tables = self.g.tables().to_vec();
        let (stmts, outcomes, tables, note) = if cli.no_reduce {
            let (outcomes, at) = reduce::replay(&mut self.ctl, &tables, &log)?;
            let note = format!(
                "not reduced (--no-reduce); outcomes from a replay from a fresh schema, which {}",
                if at == Some(log.len().saturating_sub(1)) {
                    "showed the difference again"
                } else {
                    "did NOT show it at the same statement"
                }
            );
            (log.clone(), outcomes, tables.clone(), note)
        } else {
            self.say("reducing (replays from a fresh schema) ...".into());
            let t0 = Instant::now();
            let deadline = t0 + Duration::from_secs_f64(cli.reduce_minutes * 60.0);
            let bar = self.bar.clone();
            let say = move |m: String| bar.suspend(|| eprintln!("  {m}"));
            let r = reduce::reduce(&mut self.ctl, &tables, log.clone(), deadline, &say)?;
            let note = if r.reproduced {
                format!(
                    "reduced from {} to {} statements ({} replays, {:.0} s{}){}",
                    log.len(),
                    r.stmts.len(),
                    r.replays,
                    t0.elapsed().as_secs_f64(),
                    if Instant::now() > deadline {
                        "; stopped at --reduce-minutes"
                    } else {
                        ""
                    },
                    if r.flaky {
                        format!(
                            "\nFLAKY: the reduced script did not show the difference in 5 more \
                             replays (outcomes below are from the last one); in the run the last \
                             statement gave:\n{}",
                            exec::diff(a, b, last.ordered)
                        )
                    } else {
                        String::new()
                    }
                )
            } else {
                format!(
                    "NOT reproduced by a replay of the {} statements from a fresh schema: the \
                     whole sequence follows, outcomes from that replay. In the run the last \
                     statement gave:\n{}",
                    log.len(),
                    exec::diff(a, b, last.ordered)
                )
            };
            (r.stmts, r.outcomes, r.tables, note)
        };
        let skipped = self.on.skipped();
        let header = format!(
            "riptide-sqlcheck seed {seed}: statement {} of the run answers differently on \
             RIPTIDE and InnoDB\n{note}\nskipped kinds: {}",
            self.summary.statements + 1,
            if skipped.is_empty() {
                "none".to_string()
            } else {
                skipped.join(",")
            }
        );
        let text = report::script(&header, &tables, &stmts, &outcomes);
        let path = self.save(&text)?;
        if !cli.keep_going {
            bail!("RIPTIDE and InnoDB differ (seed {seed}); the script is above");
        }
        // The kind to blame: the differing statement's, or for a check the last statement
        // before it that is not one.
        let blame = stmts
            .iter()
            .rev()
            .map(|s| s.kind)
            .find(|k| k.group() != "setup" && k.group() != "txn");
        let Some(kind) = blame else {
            bail!("the difference needs only the initial load; cannot go on without it");
        };
        self.say(format!(
            "--keep-going: `{}` switched off for the rest of the run",
            kind.name()
        ));
        self.found.push(path);
        self.on.disable(kind);
        self.g.disable(kind);
        Ok(())
    }

    /// Saves a script in the run's directory and prints it.
    fn save(&mut self, text: &str) -> Result<PathBuf> {
        let n = self.found.len() + 1;
        let path = self
            .cli
            .dir
            .join(format!("difference-{}-{n}.test", self.seed));
        fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        self.bar.suspend(|| {
            println!("\n{text}");
            eprintln!("(saved to {})", path.display());
        });
        Ok(path)
    }

    /// Runs a schedule on both engines and compares; a difference is reduced, printed and
    /// returned as the run's error (or, `--keep-going`, its shape switched off).
    fn schedule(&mut self, sched: &concurrent::Schedule) -> Result<()> {
        let cli = self.cli;
        let seed = self.seed;
        let first = reduce::run_schedule(&mut self.ctl, sched, &sched.steps)?;
        let (a, b, checks, at) = (&first.rip, &first.inno, &first.checks, first.at);
        *self
            .summary
            .schedules
            .entry((sched.kind, sched.level))
            .or_default() += 1;
        self.summary.steps += sched.steps.len() as u64;
        self.summary.blocked_steps += b.iter().filter(|o| o.blocked).count() as u64;
        if cli.show_schedules {
            let text = report::schedule_script(
                &format!("schedule {} at {}", sched.kind.name(), sched.level),
                sched,
                &sched.steps,
                a,
                b,
                checks,
                at,
            );
            self.say(text);
        }
        let bad_check = checks.iter().any(|c| c != "status OK");
        let Some(at) = at.or(if bad_check {
            Some(sched.steps.len().saturating_sub(1))
        } else {
            None
        }) else {
            return Ok(());
        };
        // Timing can make a step look blocked on a busy machine: run it twice more first.
        let mut again = 0;
        for _ in 0..2 {
            let r = reduce::run_schedule(&mut self.ctl, sched, &sched.steps)?;
            if r.at.is_some() || r.checks.iter().any(|c| c != "status OK") {
                again += 1;
            }
        }
        if again == 0 {
            self.say(format!(
                "note: a {} schedule at {} differed once (step {at}) but not on two reruns: \
                 taken as timing, not a difference",
                sched.kind.name(),
                sched.level
            ));
            return Ok(());
        }
        let show = |o: Option<&concurrent::StepOutcome>| {
            o.map_or("-".to_string(), |o| {
                format!(
                    "{}{}",
                    if o.blocked { "blocked, then " } else { "" },
                    exec::brief(&o.outcome)
                )
            })
        };
        self.say(format!(
            "\nDIFFERENCE in a two-session schedule ({}, {}), step {at} (seed {seed}): `{}`\n  \
             RIPTIDE: {}\n  InnoDB:  {}\n  CHECK TABLE: {} / {}",
            sched.kind.name(),
            sched.level,
            sched.steps.get(at).map_or("", |s| s.sql.as_str()),
            show(a.get(at)),
            show(b.get(at)),
            checks[0],
            checks[1]
        ));
        let (steps, shown, note) = if cli.no_reduce {
            (
                sched.steps.clone(),
                first,
                "not reduced (--no-reduce)".to_string(),
            )
        } else {
            let deadline = Instant::now() + Duration::from_secs_f64(cli.reduce_minutes * 60.0);
            let r = reduce::reduce_schedule(&mut self.ctl, sched, at, deadline)?;
            if r.confirmed == 0 {
                // The reduction followed a timing accident: show the whole schedule.
                let note = format!(
                    "not reduced: the reduced schedule ({} steps) never showed the difference \
                     again",
                    r.steps.len()
                );
                (sched.steps.clone(), first, note)
            } else {
                let note = format!(
                    "reduced from {} to {} steps; the reduced schedule showed the difference in \
                     {} of 3 runs",
                    sched.steps.len(),
                    r.steps.len(),
                    r.confirmed
                );
                (r.steps, r.run, note)
            }
        };
        let header = format!(
            "riptide-sqlcheck seed {seed}: a two-session schedule ({}, {}) answers differently \
             on RIPTIDE and InnoDB\n{note}; before reduction {} of 3 runs showed it",
            sched.kind.name(),
            sched.level,
            again + 1
        );
        let text = report::schedule_script(
            &header,
            sched,
            &steps,
            &shown.rip,
            &shown.inno,
            &shown.checks,
            shown.at,
        );
        let path = self.save(&text)?;
        if !cli.keep_going {
            bail!(
                "RIPTIDE and InnoDB differ in a two-session schedule (seed {seed}); the script is above"
            );
        }
        self.say(format!(
            "--keep-going: `{}` switched off for the rest of the run",
            sched.kind.name()
        ));
        self.found.push(path);
        self.on.disable(sched.kind);
        Ok(())
    }
}

fn print_summary(
    s: &Summary,
    seed: u64,
    took: Duration,
    tables: &[schema::Table],
    errors: &[String],
) {
    println!(
        "\nriptide-sqlcheck passed: seed {seed}, {:.0} s, {} statements on each engine \
         ({:.0}/s), {} fresh schemas of {} tables",
        took.as_secs_f64(),
        s.statements,
        s.statements as f64 / took.as_secs_f64().max(0.001),
        s.epochs,
        tables.len()
    );
    println!(
        "  compared              {} result rows, {} statements with warnings, {} failing \
         identically",
        s.rows_compared,
        s.with_warnings,
        s.errors.values().sum::<u64>()
    );
    println!("  statements by kind:");
    let mut line = String::new();
    for (k, n) in &s.by_kind {
        let item = format!("{} {n}", k.name());
        if line.len() + item.len() > 88 {
            println!("  {line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push_str(", ");
        }
        line.push_str(&item);
    }
    if !line.is_empty() {
        println!("  {line}");
    }
    println!(
        "  errors by code        {}",
        s.errors
            .iter()
            .map(|(c, n)| format!("{c}: {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "  schedules             {} ({} steps, {} blocked on InnoDB):",
        s.schedules.values().sum::<u64>(),
        s.steps,
        s.blocked_steps
    );
    let mut by_shape: BTreeMap<Kind, Vec<String>> = BTreeMap::new();
    for ((k, level), n) in &s.schedules {
        by_shape
            .entry(*k)
            .or_default()
            .push(format!("{} {n}", level.to_lowercase()));
    }
    for (k, levels) in by_shape {
        println!("    {:<22} {}", k.name(), levels.join(", "));
    }
    println!(
        "  final                 CHECK TABLE OK on every table of both databases, contents equal"
    );
    if !errors.is_empty() {
        println!("  server log [ERROR] lines ({}):", errors.len());
        for e in errors.iter().take(10) {
            println!("    {e}");
        }
    }
}

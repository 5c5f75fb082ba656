//! One engine's run from a fresh data directory to shutdown, the same for every benchmark:
//! data directory, cgroup (with the load's cap), server start and engine check, the
//! benchmark's own work, the restart after the load (workload cap, counters reset, cold
//! caches), memory samples, OOM-kill detection, clean-up.

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use indicatif::ProgressBar;

use crate::Engine;
use crate::args::Conditions;
use crate::record::Footprint;
use crate::server::{
    Cgroup, Server, ServerPaths, disk_usage, engine_bytes, reported_variables, tail,
};

/// How far [`Bench::unmeasured`] raises the cap during the checks between measured phases.
pub const CHECK_ALLOWANCE_MIB: u64 = 256;

/// Where and how every engine's server runs (the same for all engines of one invocation).
pub struct Lab {
    /// Folder holding ha_riptide.so and ha_rocksdb.so.
    pub plugin_dir: PathBuf,
    /// Where each engine's folder (data directory, socket, logs) goes: `<work_dir>/<engine>`.
    pub work_dir: PathBuf,
    /// Memory budget, durability, cgroup limits.
    pub conditions: Conditions,
    /// Keep each engine's data directory after its run.
    pub keep_data: bool,
}

impl Lab {
    /// Fails, saying which file and which xtask `verb` provides it, when a plugin one of
    /// `engines` needs is missing from the plugin folder.
    pub fn check_plugins(&self, engines: &[Engine], verb: &str) -> Result<()> {
        for e in engines {
            if let Some(so) = e.plugin()
                && !self.plugin_dir.join(so).exists()
            {
                bail!(
                    "{} is missing: {} needs it (`cargo xtask {verb}` builds and links it)",
                    self.plugin_dir.join(so).display(),
                    e.display()
                );
            }
        }
        Ok(())
    }

    /// Makes and removes the cgroup once, so a run fails before any loading when it cannot
    /// be made (not root, no controller, a server of another run inside).
    pub fn check_cap(&self) -> Result<()> {
        if let Some(limit) = self.conditions.cap {
            Cgroup::create(limit)?.remove()?;
        }
        Ok(())
    }

    /// One engine: fresh data directory and cgroup (at the load's cap), server started and
    /// the engine checked, then `body` with the running server; afterwards the cgroup's
    /// counters go into `footprint`, an OOM kill in the cgroup becomes the error, and the
    /// data directory is removed unless `keep_data`.
    pub fn run(
        &self,
        engine: Engine,
        pb: &ProgressBar,
        footprint: &mut Footprint,
        body: impl FnOnce(&mut Bench<'_>) -> Result<()>,
    ) -> Result<()> {
        self.session(engine, Session::Whole, pb, footprint, body)
    }

    /// The first part of a run split in sessions (benchmarks that interleave engines): a
    /// fresh data directory and cgroup at the load's cap, the server started and checked,
    /// `body` (the load), shutdown. The data directory is kept for [`Lab::resume`] unless
    /// `body` failed. The cgroup's peak is the load's, so it does not go into `footprint`.
    pub fn load(
        &self,
        engine: Engine,
        pb: &ProgressBar,
        footprint: &mut Footprint,
        body: impl FnOnce(&mut Bench<'_>) -> Result<()>,
    ) -> Result<()> {
        self.session(engine, Session::Load, pb, footprint, body)
    }

    /// A later session of a split run: the server started again on the data directory that
    /// [`Lab::load`] kept, in a fresh cgroup at the workload's cap, then `body`. The
    /// cgroup's peak and limit hits, and the server's peak resident memory, are merged into
    /// `footprint` (the most of every session; limit hits added). The data directory is
    /// removed after the `last` session, or after a failed one, unless `keep_data`.
    pub fn resume(
        &self,
        engine: Engine,
        last: bool,
        pb: &ProgressBar,
        footprint: &mut Footprint,
        body: impl FnOnce(&mut Bench<'_>) -> Result<()>,
    ) -> Result<()> {
        self.session(engine, Session::Resume { last }, pb, footprint, body)
    }

    fn session(
        &self,
        engine: Engine,
        kind: Session,
        pb: &ProgressBar,
        footprint: &mut Footprint,
        body: impl FnOnce(&mut Bench<'_>) -> Result<()>,
    ) -> Result<()> {
        let paths = ServerPaths {
            dir: self.work_dir.join(engine.name()),
        };
        let cap = if let Session::Resume { .. } = kind {
            if !paths.data().is_dir() {
                bail!(
                    "{}: no data directory at {} to resume from (its load did not keep one)",
                    engine.display(),
                    paths.data().display()
                );
            }
            self.conditions.cap
        } else {
            pb.set_message(format!("{}: creating the data directory", engine.display()));
            paths.init()?;
            self.conditions.load_cap
        };
        if let Session::Resume { .. } = kind {
            drop_page_cache(pb);
        }
        let mut cgroup = cap.map(Cgroup::create).transpose()?;
        let mut outcome = self.serve(engine, kind, pb, footprint, &paths, cgroup.as_mut(), body);
        if let Some(cg) = cgroup {
            let m = &mut footprint.memory;
            match kind {
                Session::Whole => {
                    m.peak_memory = Some(cg.max_usage());
                    m.limit_hits = Some(cg.failcnt());
                }
                Session::Resume { .. } => {
                    m.peak_memory = Some(m.peak_memory.unwrap_or(0).max(cg.max_usage()));
                    m.limit_hits = Some(m.limit_hits.unwrap_or(0) + cg.failcnt());
                }
                Session::Load => {}
            }
            let kills = cg.oom_kills();
            if kills > 0 {
                outcome = outcome.context(format!(
                    "the kernel OOM-killed {kills} process(es) in the cgroup (cap {} MiB): raise \
                     --allowance-mib (--load-allowance-mib if it died while loading)",
                    cg.limit() / 1024 / 1024
                ));
            }
            cg.remove()?;
        }
        let done = match kind {
            Session::Whole => true,
            Session::Load => outcome.is_err(),
            Session::Resume { last } => last || outcome.is_err(),
        };
        if done && !self.keep_data {
            let _ = fs::remove_dir_all(paths.data());
        }
        outcome
    }

    #[allow(clippy::too_many_arguments)]
    fn serve(
        &self,
        engine: Engine,
        kind: Session,
        pb: &ProgressBar,
        footprint: &mut Footprint,
        paths: &ServerPaths,
        cgroup: Option<&mut Cgroup>,
        body: impl FnOnce(&mut Bench<'_>) -> Result<()>,
    ) -> Result<()> {
        let name = engine.display();
        pb.set_message(format!("{name}: starting the server"));
        let started = Instant::now();
        let server = Server::start(
            paths.clone(),
            &self.plugin_dir,
            &self.conditions.server_options(engine),
            cgroup.as_deref(),
        )?;
        if let Session::Resume { .. } = kind {
            // The first start on the loaded data is the restart after the load.
            footprint.memory.restart.get_or_insert(started.elapsed());
        }
        let support = server.sql(&format!(
            "SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE='{}'",
            engine.schema_name()
        ))?;
        if !matches!(support.trim(), "YES" | "DEFAULT") {
            bail!(
                "the server started but {name} is not available (support: {:?}); see {}",
                support.trim(),
                paths.error_log().display()
            );
        }
        let mut bench = Bench {
            engine,
            lab: self,
            paths: paths.clone(),
            server,
            cgroup,
            footprint,
            pb,
        };
        if let Session::Resume { .. } = kind {
            bench.sample_rss();
        }
        body(&mut bench)?;
        let peak = bench.server.peak_rss();
        let m = &mut bench.footprint.memory;
        match kind {
            Session::Whole => m.run_peak_rss = peak,
            Session::Resume { .. } => m.run_peak_rss = m.run_peak_rss.max(peak),
            Session::Load => {}
        }
        pb.set_message(format!("{name}: shutting down"));
        bench.server.shutdown()
    }
}

/// Writes dirty pages back and drops the kernel's clean page cache (`/proc/sys/vm/drop_caches`)
/// before a resumed session, so that its server starts with cold caches like any other:
/// the page cache a removed cgroup charged stays in memory, charged to no running cgroup,
/// and a new server reading the same files would otherwise get it beyond its cap (buffered
/// I/O engines only: InnoDB reads with O_DIRECT). Needs root, as the cgroups do; without it
/// the run goes on and says so.
fn drop_page_cache(pb: &ProgressBar) {
    // SAFETY: sync has no preconditions and cannot fail.
    unsafe { libc::sync() };
    if let Err(e) = fs::write("/proc/sys/vm/drop_caches", "1") {
        pb.println(format!(
            "warning: could not drop the page cache before a session ({e}): the server may \
             read what the previous session left cached"
        ));
    }
}

/// What a server session of [`Lab`] starts from and leaves behind.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Session {
    /// [`Lab::run`]: load and workload in one session.
    Whole,
    /// [`Lab::load`]: the load of a split run.
    Load,
    /// [`Lab::resume`]: a workload session of a split run.
    Resume {
        /// The engine's last session: its data directory goes afterwards.
        last: bool,
    },
}

/// One engine's running server inside its [`Lab`], handed to the benchmark's body.
pub struct Bench<'a> {
    /// The engine under test.
    pub engine: Engine,
    /// The server's paths (socket, data directory, error log).
    pub paths: ServerPaths,
    /// The running server (replaced by [`Bench::restart`]).
    pub server: Server,
    lab: &'a Lab,
    cgroup: Option<&'a mut Cgroup>,
    footprint: &'a mut Footprint,
    pb: &'a ProgressBar,
}

impl Bench<'_> {
    /// The server variables that show what the engine got (`SHOW GLOBAL VARIABLES`).
    pub fn settings(&self) -> Result<Vec<(String, String)>> {
        self.server.variables(reported_variables(self.engine))
    }

    /// `e`, with the server's exit status and the last lines of its error log when the
    /// server has exited (the likely cause of a client's error).
    pub fn explain(&mut self, e: anyhow::Error) -> anyhow::Error {
        match self.server.exited() {
            Some(status) => e.context(format!(
                "the server exited ({status}); last lines of {}:\n{}",
                self.paths.error_log().display(),
                tail(&self.paths.error_log(), 5)
            )),
            None => e,
        }
    }

    /// Records the end of the load, which took `load`: the engine's files and the whole data
    /// directory on disk (InnoDB's tablespaces of `database`), the loading server's peak
    /// resident memory and the cgroup's anonymous memory.
    pub fn loaded(&mut self, load: Duration, database: &str) {
        let f = &mut *self.footprint;
        f.load = Some(load);
        f.engine_bytes_loaded = engine_bytes(self.engine, &self.paths.data(), database);
        f.datadir_bytes_loaded = disk_usage(&self.paths.data());
        f.memory.load_peak_rss = self.server.peak_rss();
        f.memory.load_rss = self.cgroup.as_deref().map(Cgroup::rss);
    }

    /// Records the engine's files on disk (of `database`) at the end of the measured phase.
    pub fn finished(&mut self, database: &str) {
        self.footprint.engine_bytes_end = engine_bytes(self.engine, &self.paths.data(), database);
    }

    /// A fresh server for the measured phase: what the load left in memory (index builds,
    /// malloc's retained arenas) is no workload's footprint, and every engine starts the
    /// workloads with cold caches. The cgroup gets the workload cap and its peak and failure
    /// counters restart with the server; the restart time is recorded.
    pub fn restart(&mut self) -> Result<()> {
        self.pb
            .set_message(format!("{}: restarting the server", self.engine.display()));
        self.server.shutdown()?;
        if let (Some(cg), Some(cap)) = (self.cgroup.as_deref_mut(), self.lab.conditions.cap) {
            cg.set_limit(cap)?;
            cg.reset_counters()?;
        }
        let restart = Instant::now();
        self.server = Server::start(
            self.paths.clone(),
            &self.lab.plugin_dir,
            &self.lab.conditions.server_options(self.engine),
            self.cgroup.as_deref(),
        )?;
        self.footprint.memory.restart = Some(restart.elapsed());
        self.sample_rss();
        Ok(())
    }

    /// Runs `f`, an unmeasured phase between the measured ones (a benchmark's consistency
    /// checks), with the cap raised by [`CHECK_ALLOWANCE_MIB`], then puts the cap back. A
    /// server that runs at its cap (MyRocks at 32 TPC-C warehouses) is otherwise OOM-killed
    /// by a check's scans, which are no part of any workload's footprint. Fails if the cap
    /// cannot be put back (the server's memory stayed above it).
    pub fn unmeasured<T>(&mut self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let Some(cg) = self.cgroup.as_deref_mut() else {
            return f();
        };
        let cap = cg.limit();
        cg.set_limit(cap + CHECK_ALLOWANCE_MIB * 1024 * 1024)?;
        let out = f();
        let restored = self
            .cgroup
            .as_deref_mut()
            .map_or(Ok(()), |cg| cg.set_limit(cap))
            .with_context(|| {
                format!(
                    "putting the cap back to {} MiB after an unmeasured phase",
                    cap / 1024 / 1024
                )
            });
        let out = out?;
        restored?;
        Ok(out)
    }

    /// Samples the cgroup's anonymous memory into `Memory::max_rss` (when capped).
    pub fn sample_rss(&mut self) {
        if let Some(cg) = self.cgroup.as_deref() {
            let m = &mut self.footprint.memory;
            m.max_rss = Some(m.max_rss.unwrap_or(0).max(cg.rss()));
        }
    }
}

//! One private `mariadbd` per engine: its data folder, its memory cgroup, its settings, start
//! and clean shutdown, and what it used (disk, CPU, bytes written).

use std::fmt::Write as _;
use std::fs;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::Engine;

/// Where the cgroup v1 memory controller is mounted on these machines.
const MEMORY_CONTROLLER: &str = "/sys/fs/cgroup/memory";
/// The cgroup every benchmark server runs in, riptide-sysbench's and riptide-tpcc's alike (one
/// server at a time, machine-wide: [`Cgroup::create`] refuses while a server is inside).
const CGROUP_NAME: &str = "riptide-sysbench";
/// The maturity ha_riptide.so declares.
const PLUGIN_MATURITY: &str = "experimental";
/// How long a server may take to start or to shut down.
const SERVER_TIMEOUT: Duration = Duration::from_secs(600);

const MIB: u64 = 1024 * 1024;

/// `MALLOC_ARENA_MAX` in every server's environment (all three engines alike). glibc gives
/// each thread that allocates concurrently its own arena (up to 8 per core), and each arena
/// keeps what was freed in it; measured on Riptide's server (4 x 250,000 rows, one minute of
/// `oltp_update_index`, uncapped) that retained memory was 72 MiB of 434 MiB resident, and
/// 61 MiB of MyRocks' 553 MiB (InnoDB, whose buffer pool is one mapping, gained nothing);
/// throughput moved within this machine's noise (benches/RESULTS.md).
pub const MALLOC_ARENA_MAX: &str = "2";

/// The memory and durability settings every engine gets (the crate docs).
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// The engine's memory budget in MiB: InnoDB's buffer pool; MyRocks' and Riptide's block
    /// cache plus all their memtables.
    pub total_mib: u64,
    /// Of `total_mib`, what the LSM engines give their memtables (all together); each memtable
    /// is half of it, so one can be flushed while the other fills.
    pub write_buffer_mib: u64,
    /// Sync the log at every commit (all three) instead of about once a second.
    pub durable: bool,
}

impl Budget {
    /// The LSM engines' block cache: the budget minus the memtables.
    pub fn lsm_cache_mib(&self) -> u64 {
        self.total_mib.saturating_sub(self.write_buffer_mib).max(1)
    }

    /// The `mariadbd` options for a run of `engine` (besides paths and plugin loading).
    pub fn server_options(&self, engine: Engine) -> Vec<String> {
        let mut o: Vec<String> = vec![
            // Identical for every engine: no binary log, small caches for the engines that
            // only hold the system tables (Aria) or nothing (MyISAM).
            "--skip-log-bin".into(),
            "--aria-pagecache-buffer-size=8M".into(),
            "--key-buffer-size=8M".into(),
            "--max-connections=100".into(),
            format!(
                "--innodb-flush-log-at-trx-commit={}",
                if self.durable { 1 } else { 2 }
            ),
            "--innodb-flush-method=O_DIRECT".into(),
        ];
        let cache = self.lsm_cache_mib() * MIB;
        let write_buffers = self.write_buffer_mib * MIB;
        let memtable = (write_buffers / 2).max(MIB);
        match engine {
            Engine::Innodb => {
                o.push(format!(
                    "--innodb-buffer-pool-size={}",
                    self.total_mib * MIB
                ));
            }
            Engine::Rocksdb => {
                o.push("--innodb-buffer-pool-size=8M".into());
                o.push("--plugin-load-add=ha_rocksdb.so".into());
                o.push(format!("--rocksdb-block-cache-size={cache}"));
                o.push(format!("--rocksdb-db-write-buffer-size={write_buffers}"));
                // The same table features as Riptide's defaults: no compression, a 10 bits/key
                // whole-key bloom filter; index and filter blocks live in the block cache
                // (MyRocks' default rocksdb_cache_index_and_filter_blocks=ON).
                o.push(format!(
                    "--rocksdb-default-cf-options=write_buffer_size={memtable};\
                     compression=kNoCompression;\
                     block_based_table_factory={{filter_policy=bloomfilter:10:false;\
                     whole_key_filtering=1}}"
                ));
                o.push(format!(
                    "--rocksdb-flush-log-at-trx-commit={}",
                    if self.durable { 1 } else { 2 }
                ));
            }
            Engine::Riptide => {
                o.push("--innodb-buffer-pool-size=8M".into());
                o.push("--plugin-load-add=ha_riptide.so".into());
                o.push(format!("--riptide-block-cache-size={cache}"));
                o.push(format!("--riptide-db-write-buffer-size={write_buffers}"));
                o.push(format!("--riptide-write-buffer-size={memtable}"));
                o.push(format!(
                    "--riptide-sync-mode={}",
                    if self.durable { "full" } else { "interval" }
                ));
            }
        }
        o
    }
}

/// The server variables printed in the results, to show what each engine really got.
pub fn reported_variables(engine: Engine) -> &'static [&'static str] {
    match engine {
        Engine::Innodb => &[
            "innodb_buffer_pool_size",
            "innodb_flush_method",
            "innodb_flush_log_at_trx_commit",
            "innodb_log_file_size",
            "innodb_log_buffer_size",
            "innodb_doublewrite",
            "log_bin",
        ],
        Engine::Rocksdb => &[
            "rocksdb_block_cache_size",
            "rocksdb_db_write_buffer_size",
            "rocksdb_default_cf_options",
            "rocksdb_flush_log_at_trx_commit",
            "rocksdb_cache_index_and_filter_blocks",
            "rocksdb_max_background_jobs",
            "log_bin",
        ],
        Engine::Riptide => &[
            "riptide_block_cache_size",
            "riptide_db_write_buffer_size",
            "riptide_write_buffer_size",
            "riptide_sync_mode",
            "riptide_sync_interval_ms",
            "riptide_compression",
            "riptide_bloom_bits_per_key",
            "log_bin",
        ],
    }
}

/// True when this process runs as root (the owner of `/proc/self` is the effective user).
pub fn is_root() -> bool {
    fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// The memory cgroup the server runs in: `/sys/fs/cgroup/memory/riptide-sysbench`, created
/// fresh (so its peak and failure counters start at zero) with `memory.limit_in_bytes` set.
pub struct Cgroup {
    path: PathBuf,
    limit: u64,
}

impl Cgroup {
    /// Creates the cgroup with a limit of `limit` bytes. Fails with what to do when not root,
    /// when there is no cgroup v1 memory controller, or when a process is still inside.
    pub fn create(limit: u64) -> Result<Cgroup> {
        let controller = Path::new(MEMORY_CONTROLLER);
        if !controller.join("memory.limit_in_bytes").is_file() {
            bail!(
                "no cgroup v1 memory controller at {MEMORY_CONTROLLER} (no \
                 memory.limit_in_bytes there): the memory cap cannot be applied. Pass \
                 --no-cap to run without it (the results are then marked as uncapped and \
                 the OS page cache may hold the data)"
            );
        }
        if !is_root() {
            bail!(
                "creating the memory cgroup {MEMORY_CONTROLLER}/{CGROUP_NAME} needs root; run \
                 as root or pass --no-cap (results marked as uncapped)"
            );
        }
        let path = controller.join(CGROUP_NAME);
        if path.is_dir() {
            let procs = fs::read_to_string(path.join("cgroup.procs")).unwrap_or_default();
            let pids: Vec<&str> = procs.split_whitespace().collect();
            if !pids.is_empty() {
                bail!(
                    "{} still holds processes {pids:?} (a server of an earlier run?): stop \
                     them first",
                    path.display()
                );
            }
            fs::remove_dir(&path)
                .with_context(|| format!("removing the old cgroup {}", path.display()))?;
        }
        fs::create_dir(&path).with_context(|| format!("creating cgroup {}", path.display()))?;
        let cg = Cgroup { path, limit };
        cg.write("memory.limit_in_bytes", &limit.to_string())?;
        let got = cg.read_u64("memory.limit_in_bytes")?;
        // The kernel rounds the limit down to whole pages.
        if got > limit || got + 64 * 1024 < limit {
            bail!(
                "{}/memory.limit_in_bytes reads {got} after writing {limit}",
                cg.path.display()
            );
        }
        Ok(cg)
    }

    /// The file a process writes its pid to in order to join.
    pub fn procs_file(&self) -> PathBuf {
        self.path.join("cgroup.procs")
    }

    /// The limit in bytes.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    fn write(&self, file: &str, value: &str) -> Result<()> {
        fs::write(self.path.join(file), value)
            .with_context(|| format!("writing {value} to {}/{file}", self.path.display()))
    }

    fn read_u64(&self, file: &str) -> Result<u64> {
        let p = self.path.join(file);
        let text = fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
        text.trim()
            .parse()
            .with_context(|| format!("parsing {} ({text:?})", p.display()))
    }

    /// Highest memory use (page cache included) since the cgroup was created, in bytes.
    pub fn max_usage(&self) -> u64 {
        self.read_u64("memory.max_usage_in_bytes").unwrap_or(0)
    }

    /// The anonymous memory (heap, stacks; no page cache) charged to the cgroup now, in bytes
    /// (`rss` of `memory.stat`).
    pub fn rss(&self) -> u64 {
        self.field("memory.stat", "rss")
    }

    /// The value of the `key value` line `key` of `file` (0 when absent).
    fn field(&self, file: &str, key: &str) -> u64 {
        fs::read_to_string(self.path.join(file))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Changes the limit. Lowering it while a server runs makes the kernel reclaim the page
    /// cache down to it, and fails when the server's own memory stays above it.
    pub fn set_limit(&mut self, limit: u64) -> Result<()> {
        self.write("memory.limit_in_bytes", &limit.to_string())?;
        self.limit = limit;
        Ok(())
    }

    /// Restarts the peak usage and limit-hit counters.
    pub fn reset_counters(&self) -> Result<()> {
        self.write("memory.max_usage_in_bytes", "0")?;
        self.write("memory.failcnt", "0")
    }

    /// How many times an allocation hit the limit (and the kernel had to reclaim).
    pub fn failcnt(&self) -> u64 {
        self.read_u64("memory.failcnt").unwrap_or(0)
    }

    /// Processes the kernel's OOM killer killed in this cgroup.
    pub fn oom_kills(&self) -> u64 {
        self.field("memory.oom_control", "oom_kill")
    }

    /// Removes the cgroup (waits briefly for exited processes to leave it).
    pub fn remove(self) -> Result<()> {
        let start = Instant::now();
        loop {
            match fs::remove_dir(&self.path) {
                Ok(()) => return Ok(()),
                Err(e) if start.elapsed() > Duration::from_secs(10) => {
                    return Err(e)
                        .with_context(|| format!("removing cgroup {}", self.path.display()));
                }
                Err(_) => thread::sleep(Duration::from_millis(100)),
            }
        }
    }
}

/// Paths of one engine's server: everything under `<work>/<engine>/`.
#[derive(Clone)]
pub struct ServerPaths {
    /// The folder of this engine's server.
    pub dir: PathBuf,
}

impl ServerPaths {
    /// The data directory.
    pub fn data(&self) -> PathBuf {
        self.dir.join("data")
    }
    /// The UNIX socket.
    pub fn socket(&self) -> PathBuf {
        self.dir.join("mysqld.sock")
    }
    /// The pid file.
    pub fn pid_file(&self) -> PathBuf {
        self.dir.join("mysqld.pid")
    }
    /// The error log.
    pub fn error_log(&self) -> PathBuf {
        self.dir.join("mysqld.err")
    }
}

/// A running server of ours.
pub struct Server {
    paths: ServerPaths,
    child: Option<Child>,
}

fn client(socket: &Path) -> Command {
    let mut c = Command::new("mariadb");
    c.arg("--no-defaults")
        .arg(format!("--socket={}", socket.display()))
        .arg("-uroot");
    c
}

fn ping(socket: &Path) -> bool {
    socket.exists()
        && Command::new("mariadb-admin")
            .arg("--no-defaults")
            .arg(format!("--socket={}", socket.display()))
            .args(["-uroot", "--connect-timeout=2", "ping"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
}

fn process_alive(pid: u32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

/// The value of a `kB` field (`VmHWM`, `VmRSS`, ...) of a `/proc/<pid>/status` text, in bytes.
fn status_bytes(status: &str, field: &str) -> Option<u64> {
    status.lines().find_map(|l| {
        let rest = l.strip_prefix(field)?.strip_prefix(':')?;
        let kib: u64 = rest.trim().strip_suffix("kB")?.trim().parse().ok()?;
        kib.checked_mul(1024)
    })
}

/// The last `n` lines of a text file, for error messages.
pub fn tail(path: &Path, n: usize) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    for l in lines.iter().skip(lines.len().saturating_sub(n)) {
        let _ = writeln!(out, "  {l}");
    }
    out
}

impl ServerPaths {
    /// Stops a server an earlier (interrupted) run of this tool left running on these paths:
    /// a clean shutdown through its socket, else SIGKILL of the pid in its pid file, and only
    /// if that process's command line names this data directory.
    pub fn stop_leftover(&self) -> Result<()> {
        let Some(pid) = fs::read_to_string(self.pid_file())
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
        else {
            return Ok(());
        };
        let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let ours = String::from_utf8_lossy(&cmdline).contains(&*self.data().to_string_lossy());
        if !process_alive(pid) || !ours {
            return Ok(());
        }
        eprintln!(
            "stopping the server (pid {pid}) an earlier run left in {}",
            self.dir.display()
        );
        let _ = client(&self.socket())
            .args(["-e", "shutdown"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let start = Instant::now();
        while process_alive(pid) {
            if start.elapsed() > Duration::from_secs(120) {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
                thread::sleep(Duration::from_secs(1));
                break;
            }
            thread::sleep(Duration::from_millis(200));
        }
        Ok(())
    }

    /// Creates a fresh data directory (removing an old one).
    pub fn init(&self) -> Result<()> {
        self.stop_leftover()?;
        if self.dir.exists() {
            fs::remove_dir_all(&self.dir)
                .with_context(|| format!("removing {}", self.dir.display()))?;
        }
        fs::create_dir_all(&self.dir)
            .with_context(|| format!("creating {}", self.dir.display()))?;
        if self.socket().as_os_str().len() >= 107 {
            bail!(
                "the socket path {} is too long for a UNIX socket; use a shorter --work-dir",
                self.socket().display()
            );
        }
        let mut install = Command::new("mariadb-install-db");
        install
            .arg("--no-defaults")
            .arg(format!("--datadir={}", self.data().display()))
            .args(["--auth-root-authentication-method=normal", "--skip-test-db"]);
        if is_root() {
            install.arg("--user=root");
        }
        let out = install
            .output()
            .context("could not start mariadb-install-db")?;
        if !out.status.success() {
            bail!(
                "mariadb-install-db failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(())
    }
}

impl Server {
    /// Starts `mariadbd` on `paths` with `options`; inside `cgroup` when given (a shell joins
    /// the cgroup, then execs the server, so every byte the server allocates or pulls into the
    /// page cache is charged to it).
    pub fn start(
        paths: ServerPaths,
        plugin_dir: &Path,
        options: &[String],
        cgroup: Option<&Cgroup>,
    ) -> Result<Server> {
        let mariadbd = ["/usr/sbin/mariadbd", "/usr/sbin/mysqld"]
            .into_iter()
            .find(|p| Path::new(p).is_file())
            .unwrap_or("mariadbd");
        let mut cmd = match cgroup {
            Some(cg) => {
                let mut c = Command::new("sh");
                c.args(["-c", "echo $$ > \"$0\" && exec \"$@\""])
                    .arg(cg.procs_file())
                    .arg(mariadbd);
                c
            }
            None => Command::new(mariadbd),
        };
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", paths.data().display()))
            .arg(format!("--socket={}", paths.socket().display()))
            .arg(format!("--pid-file={}", paths.pid_file().display()))
            .arg(format!("--log-error={}", paths.error_log().display()))
            .arg("--skip-networking")
            .arg(format!("--plugin-dir={}", plugin_dir.display()))
            .arg(format!("--plugin-maturity={PLUGIN_MATURITY}"))
            .args(options);
        if is_root() {
            cmd.arg("--user=root");
        }
        cmd.env("MALLOC_ARENA_MAX", MALLOC_ARENA_MAX)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let _ = fs::remove_file(paths.socket());
        fs::write(paths.dir.join("command.txt"), format!("{cmd:?}\n"))?;
        let child = cmd.spawn().context("could not start mariadbd")?;
        let mut server = Server {
            paths,
            child: Some(child),
        };
        let start = Instant::now();
        loop {
            if let Some(status) = server.exited() {
                bail!(
                    "mariadbd exited during startup ({status}); last lines of {}:\n{}",
                    server.paths.error_log().display(),
                    tail(&server.paths.error_log(), 25)
                );
            }
            if ping(&server.paths.socket()) {
                break;
            }
            if start.elapsed() > SERVER_TIMEOUT {
                bail!("mariadbd did not answer within {SERVER_TIMEOUT:?}");
            }
            thread::sleep(Duration::from_millis(200));
        }
        Ok(server)
    }

    /// The exit status if the server has exited.
    pub fn exited(&mut self) -> Option<String> {
        let child = self.child.as_mut()?;
        match child.try_wait() {
            Ok(Some(status)) => Some(status.to_string()),
            Ok(None) => None,
            Err(e) => Some(format!("unknown ({e})")),
        }
    }

    /// The most memory the server process has had resident since it started (`VmHWM` of
    /// `/proc/<pid>/status`, in bytes): its heap, stacks and mapped binaries, not the page
    /// cache. Works with or without the cgroup (the shell that joins it `exec`s the server,
    /// so the child's pid is the server's). None once the server has exited.
    pub fn peak_rss(&self) -> Option<u64> {
        let pid = self.child.as_ref()?.id();
        let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        status_bytes(&status, "VmHWM")
    }

    /// The server's process id (None once it has exited and been reaped).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The server process's CPU time and bytes written so far (`/proc/<pid>/stat` and
    /// `/proc/<pid>/io`), or None when the server is gone.
    pub fn counters(&self) -> Option<ProcessCounters> {
        ProcessCounters::read(self.pid()?)
    }

    /// Runs SQL through the command-line client; returns its tab-separated output.
    pub fn sql(&self, sql: &str) -> Result<String> {
        let out = client(&self.paths.socket())
            .args(["-N", "-B", "-e", sql])
            .output()
            .context("could not start the mariadb client")?;
        if !out.status.success() {
            bail!(
                "`{sql}` failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The values of the named global variables, in the given order.
    pub fn variables(&self, names: &[&str]) -> Result<Vec<(String, String)>> {
        let list = names
            .iter()
            .map(|n| format!("'{n}'"))
            .collect::<Vec<_>>()
            .join(",");
        let text = self.sql(&format!(
            "SELECT LOWER(VARIABLE_NAME), VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES \
             WHERE VARIABLE_NAME IN ({})",
            list.to_uppercase()
        ))?;
        let found: Vec<(String, String)> = text
            .lines()
            .filter_map(|l| {
                let (k, v) = l.split_once('\t')?;
                Some((k.to_string(), v.to_string()))
            })
            .collect();
        Ok(names
            .iter()
            .map(|n| {
                let v = found
                    .iter()
                    .find(|(k, _)| k == n)
                    .map_or_else(|| "(not set)".to_string(), |(_, v)| v.clone());
                ((*n).to_string(), v)
            })
            .collect())
    }

    /// The numeric values of the named global status variables (case-insensitive names,
    /// as `SHOW GLOBAL STATUS` gives them), in the given order; None for a name the server
    /// does not have or whose value is not a number.
    pub fn status_counters(&self, names: &[&str]) -> Result<Vec<Option<u64>>> {
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let list = names
            .iter()
            .map(|n| format!("'{}'", n.to_uppercase()))
            .collect::<Vec<_>>()
            .join(",");
        let text = self.sql(&format!(
            "SELECT UPPER(VARIABLE_NAME), VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS \
             WHERE VARIABLE_NAME IN ({list})"
        ))?;
        Ok(parse_status_counters(&text, names))
    }

    /// A clean shutdown, waiting for the process to exit (SIGKILL after the timeout).
    pub fn stop(mut self) -> Result<()> {
        self.shutdown()
    }

    /// [`Server::stop`] in place: afterwards this value holds no process.
    pub fn shutdown(&mut self) -> Result<()> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        if child.try_wait()?.is_some() {
            return Ok(());
        }
        let _ = client(&self.paths.socket())
            .args(["-e", "shutdown"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let start = Instant::now();
        loop {
            if child.try_wait()?.is_some() {
                return Ok(());
            }
            if start.elapsed() > SERVER_TIMEOUT {
                let _ = child.kill();
                let _ = child.wait();
                bail!("mariadbd did not exit within {SERVER_TIMEOUT:?} of shutdown: killed");
            }
            thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Err(e) = self.shutdown() {
            eprintln!("stopping the server in {}: {e:#}", self.paths.dir.display());
        }
    }
}

/// What a process has used so far, from `/proc`: the CPU time of all its threads and the
/// bytes it caused to be written to storage.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ProcessCounters {
    /// User plus system CPU time in seconds (`utime + stime` of `/proc/<pid>/stat`).
    pub cpu_seconds: f64,
    /// `write_bytes` of `/proc/<pid>/io`: bytes sent to the block layer on the process's
    /// behalf (page-cache writes count when the page is dirtied).
    pub write_bytes: u64,
    /// `read_bytes` of `/proc/<pid>/io`: bytes the process caused to be read from the
    /// block layer (reads the page cache served do not count).
    pub read_bytes: u64,
}

impl ProcessCounters {
    /// Reads the counters of process `pid` (None if it does not exist).
    pub fn read(pid: u32) -> Option<ProcessCounters> {
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let io = fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
        // SAFETY: sysconf has no preconditions; it returns -1 for an unknown name.
        let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        Some(ProcessCounters {
            cpu_seconds: stat_cpu_ticks(&stat)? as f64 / ticks.max(1) as f64,
            write_bytes: io_field(&io, "write_bytes")?,
            read_bytes: io_field(&io, "read_bytes")?,
        })
    }

    /// What was used between `earlier` and `self`.
    pub fn since(&self, earlier: &ProcessCounters) -> ProcessCounters {
        ProcessCounters {
            cpu_seconds: (self.cpu_seconds - earlier.cpu_seconds).max(0.0),
            write_bytes: self.write_bytes.saturating_sub(earlier.write_bytes),
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
        }
    }
}

/// `utime + stime` (fields 14 and 15) of a `/proc/<pid>/stat` line, in clock ticks. The
/// command name (field 2) may hold spaces and parentheses, so fields are counted after its
/// last `)`.
fn stat_cpu_ticks(stat: &str) -> Option<u64> {
    let (_, rest) = stat.rsplit_once(')')?;
    // rest starts with field 3 (state): utime is the 12th field after the name.
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

/// The values of `names` in `text`, tab-separated `NAME\tvalue` lines (names compared
/// case-insensitively); None for a missing name or a value that is not a whole number.
fn parse_status_counters(text: &str, names: &[&str]) -> Vec<Option<u64>> {
    names
        .iter()
        .map(|n| {
            text.lines().find_map(|l| {
                let (k, v) = l.split_once('\t')?;
                if k.eq_ignore_ascii_case(n) {
                    v.trim().parse().ok()
                } else {
                    None
                }
            })
        })
        .collect()
}

/// A `name: value` field of `/proc/<pid>/io`.
fn io_field(io: &str, name: &str) -> Option<u64> {
    io.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        if k.trim() == name {
            v.trim().parse().ok()
        } else {
            None
        }
    })
}

/// Bytes allocated on disk under `path` (recursively; 0 when absent).
pub fn disk_usage(path: &Path) -> u64 {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return 0;
    };
    if meta.is_dir() {
        fs::read_dir(path)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| disk_usage(&e.path()))
                    .sum::<u64>()
            })
            .unwrap_or(0)
    } else {
        meta.blocks() * 512
    }
}

/// Bytes on disk of the engine's own files in data directory `data`: InnoDB the tablespaces
/// of database `database` (`<database>/*.ibd`; the system tablespace and redo log are not
/// counted), MyRocks `#rocksdb/` and Riptide `#riptide/` (their tables, WAL and manifest).
pub fn engine_bytes(engine: Engine, data: &Path, database: &str) -> u64 {
    match engine {
        Engine::Innodb => fs::read_dir(data.join(database))
            .map(|entries| {
                entries
                    .flatten()
                    .filter(|e| e.path().extension().is_some_and(|x| x == "ibd"))
                    .map(|e| disk_usage(&e.path()))
                    .sum()
            })
            .unwrap_or(0),
        Engine::Rocksdb => disk_usage(&data.join("#rocksdb")),
        Engine::Riptide => disk_usage(&data.join("#riptide")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_splits_the_same_memory() {
        let b = Budget {
            total_mib: 256,
            write_buffer_mib: 64,
            durable: false,
        };
        assert_eq!(b.lsm_cache_mib(), 192);
        let r = b.server_options(Engine::Riptide);
        assert!(r.contains(&format!("--riptide-block-cache-size={}", 192 * MIB)));
        assert!(r.contains(&format!("--riptide-db-write-buffer-size={}", 64 * MIB)));
        assert!(r.contains(&"--riptide-sync-mode=interval".to_string()));
        let i = b.server_options(Engine::Innodb);
        assert!(i.contains(&format!("--innodb-buffer-pool-size={}", 256 * MIB)));
        assert!(i.contains(&"--innodb-flush-log-at-trx-commit=2".to_string()));
        let d = Budget { durable: true, ..b };
        assert!(
            d.server_options(Engine::Rocksdb)
                .contains(&"--rocksdb-flush-log-at-trx-commit=1".to_string())
        );
    }

    #[test]
    fn process_counters_parse_stat_and_io() {
        let stat = "1234 (mariadbd (x) y) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 \
                    40 0 1000 1 1 1";
        assert_eq!(stat_cpu_ticks(stat), Some(300));
        let io = "rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\n\
                  write_bytes: 8192\ncancelled_write_bytes: 0\n";
        assert_eq!(io_field(io, "write_bytes"), Some(8192));
        assert_eq!(io_field(io, "read_bytes"), Some(4096));
        assert_eq!(io_field(io, "bytes"), None);
        let own = ProcessCounters::read(std::process::id());
        assert!(own.is_some_and(|c| c.cpu_seconds >= 0.0));
        let a = ProcessCounters {
            cpu_seconds: 1.5,
            write_bytes: 100,
            read_bytes: 50,
        };
        let b = ProcessCounters {
            cpu_seconds: 4.0,
            write_bytes: 300,
            read_bytes: 40,
        };
        assert_eq!(
            b.since(&a),
            ProcessCounters {
                cpu_seconds: 2.5,
                write_bytes: 200,
                read_bytes: 0,
            }
        );
    }

    #[test]
    fn status_counters_are_matched_by_name_whatever_the_case() {
        let text = "RIPTIDE_BLOCK_CACHE_HITS\t120\nROCKSDB_BLOCK_CACHE_MISS\t7\nX\tnot a number\n";
        assert_eq!(
            parse_status_counters(
                text,
                &[
                    "riptide_block_cache_hits",
                    "Rocksdb_block_cache_miss",
                    "x",
                    "absent"
                ]
            ),
            vec![Some(120), Some(7), None, None]
        );
    }

    #[test]
    fn status_bytes_reads_the_named_kib_field() {
        let status = "Name:\tmariadbd\nVmHWM:\t  370688 kB\nVmRSS:\t  362112 kB\n";
        assert_eq!(status_bytes(status, "VmHWM"), Some(370_688 * 1024));
        assert_eq!(status_bytes(status, "VmRSS"), Some(362_112 * 1024));
        assert_eq!(status_bytes(status, "VmSwap"), None);
        assert_eq!(status_bytes("VmHWMx:\t1 kB\n", "VmHWM"), None);
    }
}

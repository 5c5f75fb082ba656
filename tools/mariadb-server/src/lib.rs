//! A private `mariadbd` for the MariaDB-level test tools (`tools/mariadb-crash`,
//! `tools/sqlcheck`): its data directory (`mariadb-install-db`), start with the caller's
//! options and wait for it to answer, SIGKILL, clean shutdown, connections over its socket.
//!
//! By default the server never listens on TCP (`--skip-networking`); a test that needs TCP
//! (replication: the replica connects to the primary) asks for a port with
//! [`Server::set_tcp_port`] (one [`free_tcp_port`] finds), and the server then listens on
//! 127.0.0.1 only. It loads `ha_riptide.so` from the plugin folder it is given (copy the
//! plugin there first, so a rebuild of target/plugin during a run cannot change the server
//! under test) and keeps everything (data, socket, pid file, error log) under one
//! directory.

use std::fs;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use mysql::consts::CapabilityFlags;
use mysql::{Conn, OptsBuilder};

/// A `mariadbd` we start and kill.
pub struct Server {
    dir: PathBuf,
    plugin_dir: PathBuf,
    maturity: String,
    child: Option<Child>,
    /// Length of the error log when the running server started (its lines follow).
    log_start: u64,
    /// TCP port on 127.0.0.1 (None: `--skip-networking`).
    tcp_port: Option<u16>,
}

/// A TCP port on 127.0.0.1 that is free now: the kernel's pick for a listener bound to port
/// 0, released before returning (another process could take it before the server binds it;
/// then the server fails to start and says so in its log).
pub fn free_tcp_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))
        .context("binding a TCP listener on 127.0.0.1 to find a free port")?;
    Ok(listener
        .local_addr()
        .context("the address of a TCP listener on 127.0.0.1")?
        .port())
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

fn sbin(name: &str) -> PathBuf {
    let p = Path::new("/usr/sbin").join(name);
    if p.is_file() { p } else { PathBuf::from(name) }
}

impl Server {
    /// A server living in `dir` (data in `dir/data`, socket `dir/mysqld.sock`).
    pub fn new(dir: &Path, plugin_dir: &Path, maturity: &str) -> Result<Server> {
        let s = Server {
            dir: std::path::absolute(dir)
                .with_context(|| format!("the absolute path of {}", dir.display()))?,
            plugin_dir: std::path::absolute(plugin_dir)
                .with_context(|| format!("the absolute path of {}", plugin_dir.display()))?,
            maturity: maturity.to_string(),
            child: None,
            log_start: 0,
            tcp_port: None,
        };
        if s.socket().as_os_str().len() >= 100 {
            bail!(
                "the socket path {} is too long for a UNIX socket; use a shorter --dir",
                s.socket().display()
            );
        }
        if !plugin_dir.join("ha_riptide.so").is_file() {
            bail!(
                "{} has no ha_riptide.so (build it with `cargo xtask plugin`)",
                plugin_dir.display()
            );
        }
        Ok(s)
    }

    /// From the next start on, listen on 127.0.0.1:`port` (`--port`, `--bind-address`)
    /// instead of `--skip-networking`; `None` goes back to no TCP (the default). The socket
    /// stays, and [`Server::connect`] keeps using it.
    pub fn set_tcp_port(&mut self, port: Option<u16>) {
        self.tcp_port = port;
    }

    /// The TCP port set with [`Server::set_tcp_port`], if any.
    pub fn tcp_port(&self) -> Option<u16> {
        self.tcp_port
    }

    /// The data directory.
    pub fn datadir(&self) -> PathBuf {
        self.dir.join("data")
    }
    /// The server's UNIX socket.
    pub fn socket(&self) -> PathBuf {
        self.dir.join("mysqld.sock")
    }
    fn pid_file(&self) -> PathBuf {
        self.dir.join("mysqld.pid")
    }
    /// The server's error log (every start appends to it).
    pub fn error_log(&self) -> PathBuf {
        self.dir.join("mysqld.err")
    }

    /// Stops a server a previous run of this tool left running on this directory (its pid
    /// file names it, and its command line must name our data directory), then makes a new
    /// data directory with `mariadb-install-db`.
    pub fn install(&mut self) -> Result<()> {
        if let Some(pid) = fs::read_to_string(self.pid_file())
            .ok()
            .and_then(|p| p.trim().parse::<i32>().ok())
        {
            let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let ours = String::from_utf8_lossy(&cmdline)
                .contains(&format!("--datadir={}", self.datadir().display()));
            if ours {
                eprintln!(
                    "killing mariadbd {pid} left running on {}",
                    self.dir.display()
                );
                // SAFETY: kill(2) with a pid we checked is a mariadbd on our data dir.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                let start = Instant::now();
                while Path::new(&format!("/proc/{pid}")).exists()
                    && start.elapsed() < Duration::from_secs(10)
                {
                    thread::sleep(Duration::from_millis(50));
                }
            }
        }
        if self.dir.exists() {
            fs::remove_dir_all(&self.dir)
                .with_context(|| format!("removing {}", self.dir.display()))?;
        }
        fs::create_dir_all(&self.dir)
            .with_context(|| format!("creating {}", self.dir.display()))?;
        let mut install = Command::new("mariadb-install-db");
        install
            .arg("--no-defaults")
            .arg(format!("--datadir={}", self.datadir().display()))
            .args(["--auth-root-authentication-method=normal", "--skip-test-db"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if is_root() {
            install.arg("--user=root");
        }
        let out = install.output().context(
            "could not run mariadb-install-db (is MariaDB installed? `cargo xtask setup`)",
        )?;
        if !out.status.success() {
            bail!(
                "mariadb-install-db failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(())
    }

    /// Starts `mariadbd` with the options `args` (besides the data directory, socket, pid
    /// file, error log, `--skip-networking` or the TCP port of [`Server::set_tcp_port`], and
    /// the plugin's folder, maturity and load) and returns at once (no wait for readiness).
    pub fn spawn(&mut self, args: &[String]) -> Result<()> {
        if self.child.is_some() {
            bail!("internal: the server is already running");
        }
        let _ = fs::remove_file(self.socket());
        self.log_start = fs::metadata(self.error_log()).map_or(0, |m| m.len());
        let mut d = Command::new(sbin("mariadbd"));
        d.arg("--no-defaults")
            .arg(format!("--datadir={}", self.datadir().display()))
            .arg(format!("--socket={}", self.socket().display()))
            .arg(format!("--pid-file={}", self.pid_file().display()))
            .arg(format!("--log-error={}", self.error_log().display()));
        match self.tcp_port {
            None => d.arg("--skip-networking"),
            Some(port) => d
                .arg(format!("--port={port}"))
                .arg("--bind-address=127.0.0.1"),
        };
        d.arg(format!("--plugin-dir={}", self.plugin_dir.display()))
            .arg("--plugin-load-add=ha_riptide.so")
            .arg(format!("--plugin-maturity={}", self.maturity))
            .args(args);
        if is_root() {
            d.arg("--user=root");
        }
        d.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        self.child = Some(d.spawn().context("could not start mariadbd")?);
        Ok(())
    }

    /// Starts `mariadbd` with the options `args` (as [`Server::spawn`]) and waits until it
    /// answers; returns how long that took (crash recovery included).
    pub fn start(&mut self, args: &[String]) -> Result<Duration> {
        let start = Instant::now();
        self.spawn(args)?;
        loop {
            if let Some(status) = self
                .child
                .as_mut()
                .map(Child::try_wait)
                .transpose()?
                .flatten()
            {
                self.child = None;
                bail!(
                    "mariadbd exited during startup ({status}); its log:\n{}",
                    self.log_tail(40)
                );
            }
            if self.socket().exists() && self.connect(None).is_ok() {
                return Ok(start.elapsed());
            }
            if start.elapsed() > Duration::from_secs(180) {
                bail!(
                    "mariadbd did not answer within 180 s; its log:\n{}",
                    self.log_tail(40)
                );
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// True while the server process we started has not exited.
    pub fn running(&mut self) -> bool {
        match self.child.as_mut().map(Child::try_wait) {
            Some(Ok(None)) => true,
            Some(_) => {
                self.child = None;
                false
            }
            None => false,
        }
    }

    /// SIGKILL, then waits for the process to be gone.
    pub fn kill(&mut self) -> Result<()> {
        if let Some(mut child) = self.child.take() {
            child.kill().context("SIGKILL mariadbd")?;
            child.wait().context("waiting for the killed mariadbd")?;
        }
        Ok(())
    }

    /// Clean shutdown (`SHUTDOWN`), waiting for the process to exit.
    pub fn shutdown(&mut self) -> Result<()> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let mut conn = self.connect(None)?;
        // The server may close the connection before it answers.
        let _ = mysql::prelude::Queryable::query_drop(&mut conn, "SHUTDOWN");
        let start = Instant::now();
        loop {
            if let Some(status) = child.try_wait()? {
                if !status.success() {
                    bail!(
                        "mariadbd exited with {status} after SHUTDOWN; its log:\n{}",
                        self.log_tail(40)
                    );
                }
                return Ok(());
            }
            if start.elapsed() > Duration::from_secs(180) {
                let _ = child.kill();
                let _ = child.wait();
                bail!("mariadbd did not exit within 180 s of SHUTDOWN (killed it)");
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// Connection options for the socket as root (to database `db`, if given), without
    /// `CLIENT_FOUND_ROWS`: statements that take longer than 120 s fail, so a hang ends the
    /// test instead of stalling it.
    pub fn opts(&self, db: Option<&str>) -> OptsBuilder {
        OptsBuilder::new()
            .socket(Some(self.socket().to_string_lossy().into_owned()))
            .user(Some("root"))
            .db_name(db)
            .prefer_socket(true)
            .read_timeout(Some(Duration::from_secs(120)))
            .write_timeout(Some(Duration::from_secs(120)))
    }

    /// A connection with [`Server::opts`] and `CLIENT_FOUND_ROWS` (an UPDATE's affected
    /// rows count the rows it matched, changed or not).
    pub fn connect(&self, db: Option<&str>) -> Result<Conn> {
        let opts = self
            .opts(db)
            .additional_capabilities(CapabilityFlags::CLIENT_FOUND_ROWS);
        self.connect_with(opts)
    }

    /// A connection with the given options (start from [`Server::opts`]).
    pub fn connect_with(&self, opts: OptsBuilder) -> Result<Conn> {
        Conn::new(opts).with_context(|| format!("connecting to {}", self.socket().display()))
    }

    /// The log lines this start of the server wrote.
    pub fn log_since_start(&self) -> String {
        let mut text = String::new();
        if let Ok(mut f) = fs::File::open(self.error_log()) {
            let _ = f.seek(SeekFrom::Start(self.log_start));
            let _ = f.read_to_string(&mut text);
        }
        text
    }

    /// The last `n` lines of this start's log.
    pub fn log_tail(&self, n: usize) -> String {
        let text = self.log_since_start();
        let lines: Vec<&str> = text.lines().collect();
        lines
            .get(lines.len().saturating_sub(n)..)
            .unwrap_or_default()
            .join("\n")
    }
}

impl Drop for Server {
    /// A server still running when the test ends early (a failure) is killed; its data
    /// directory stays for inspection.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

//! The private `mariadbd` under test (`riptide-mariadb-server`: data directory, start,
//! SIGKILL, clean shutdown, connections) and the options of each round.

pub use riptide_mariadb_server::Server;

/// The database holding the test's tables.
pub const DB: &str = "crash";

/// Server options of one round (all of Riptide's are read-only: fixed at startup).
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Binary log on: MariaDB commits through two-phase commit (Riptide prepare, binlog
    /// write, Riptide commit) and recovers prepared transactions from the binlog.
    pub binlog: bool,
    /// `sync_binlog` (with the binlog).
    pub sync_binlog: bool,
    /// `binlog_format`.
    pub binlog_format: &'static str,
    /// `riptide_write_buffer_size` (small: flushes and compactions during the load).
    pub write_buffer: u64,
    /// `riptide_target_file_size`.
    pub target_file: u64,
    /// `riptide_compression`.
    pub zstd: bool,
    /// `riptide_l0_slowdown_trigger` (the stop trigger is 8 more).
    pub l0_slowdown: u32,
    /// `riptide_max_open_files`.
    pub max_open_files: u32,
}

impl ServerConfig {
    /// The command-line options for `mariadbd`.
    pub fn args(&self) -> Vec<String> {
        let mut a = vec![
            "--riptide=FORCE".to_string(),
            "--riptide-sync-mode=full".to_string(),
            format!("--riptide-write-buffer-size={}", self.write_buffer),
            format!("--riptide-db-write-buffer-size={}", self.write_buffer * 4),
            format!("--riptide-target-file-size={}", self.target_file),
            // Every bulk load ingests, however small (the DDL connection's are 2,000 rows).
            "--riptide-ingest-min-bytes=0".to_string(),
            format!(
                "--riptide-compression={}",
                if self.zstd { "zstd" } else { "none" }
            ),
            format!("--riptide-l0-slowdown-trigger={}", self.l0_slowdown),
            format!("--riptide-l0-stop-trigger={}", self.l0_slowdown + 8),
            format!("--riptide-max-open-files={}", self.max_open_files),
            "--riptide-lock-wait-timeout=20".to_string(),
            // A deadlock (which --fail-on-deadlock reports) leaves its cycle in mysqld.err.
            "--riptide-print-all-deadlocks=ON".to_string(),
            "--innodb-buffer-pool-size=32M".to_string(),
            "--max-connections=64".to_string(),
        ];
        if self.binlog {
            a.push("--log-bin=crash-bin".into());
            a.push("--server-id=1".into());
            a.push(format!(
                "--sync-binlog={}",
                if self.sync_binlog { 1 } else { 0 }
            ));
            a.push(format!("--binlog-format={}", self.binlog_format));
        }
        a
    }

    /// One line for the progress output.
    pub fn describe(&self) -> String {
        let bin = if self.binlog {
            format!(
                "binlog {} sync_binlog={}",
                self.binlog_format,
                u8::from(self.sync_binlog)
            )
        } else {
            "no binlog".into()
        };
        format!(
            "{bin}, write buffer {} KiB, target file {} KiB, {}, L0 slowdown {}, max open files {}",
            self.write_buffer / 1024,
            self.target_file / 1024,
            if self.zstd { "zstd" } else { "uncompressed" },
            self.l0_slowdown,
            self.max_open_files
        )
    }
}

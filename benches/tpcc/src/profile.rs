//! `--perf-seconds N`: where each engine's server spends its CPU, by handler entry point.
//!
//! During every measured run, `perf record` samples the server (199 Hz, DWARF call graphs)
//! for N seconds in the middle of the run; `perf script` then gives each sample's stack,
//! and each sample is attributed to the innermost **handler entry point** on it
//! (`handler::ha_index_read_idx_map` is a point read, `ha_index_read_map` a positioning
//! read, `multi_range_read_info_const` the optimizer's estimates, `ha_commit_trans` the
//! commit, ...). A connection thread's sample with none is the SQL layer; a sample of
//! Riptide's own flush or compaction threads (known by their names) counts as such; any
//! other thread's (and a connection's whose stack was cut) is other background work. The
//! same rule for every engine, so InnoDB, whose own functions have no symbols in Debian's
//! `mariadbd`, compares with the others by what the server asked of it. Each category's
//! share of the samples, times the run's server CPU per transaction, gives milliseconds per
//! transaction (perf's own cost inflates both a little). The tables in benches/RESULTS.md since 2026-11-28 were
//! made this way by hand.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context as _, Result, bail};

/// The categories, each with the frames (substrings of symbol names) that open it, in the
/// order they are looked for at each frame from the innermost one out.
pub const CATEGORIES: [(&str, &[&str]); 10] = [
    (
        "point reads (index_read_idx_map)",
        &["handler::ha_index_read_idx_map"],
    ),
    (
        "positioning reads (index_read_map)",
        &["handler::ha_index_read_map"],
    ),
    (
        "optimizer estimates (records_in_range)",
        &["multi_range_read_info_const", "records_in_range"],
    ),
    (
        "index steps (next, prev, first, last)",
        &[
            "handler::ha_index_next",
            "handler::ha_index_prev",
            "handler::ha_index_first",
            "handler::ha_index_last",
            "handler::ha_rnd_next",
        ],
    ),
    ("row updates", &["handler::ha_update_row"]),
    ("row inserts", &["handler::ha_write_row"]),
    ("row deletes", &["handler::ha_delete_row"]),
    (
        "commit",
        &[
            "ha_commit_trans",
            "ha_commit_one_phase",
            "commit_one_phase_2",
        ],
    ),
    ("rollback", &["ha_rollback_trans"]),
    (
        "table locks, statement start",
        &[
            "handler::ha_external_lock",
            "handler::ha_start_stmt",
            "handler::ha_reset",
            "store_lock",
        ],
    ),
];

/// The category of a sample of a connection thread without a handler entry point.
pub const SQL_LAYER: &str = "SQL layer (parser, optimizer, procedures)";
/// The category of a sample of Riptide's flush threads (named `riptide-flush-N`).
pub const RIPTIDE_FLUSH: &str = "Riptide flush threads";
/// The category of a sample of Riptide's compaction threads (`riptide-compact-N`, which
/// the kernel cuts to 15 bytes: `riptide-compact`).
pub const RIPTIDE_COMPACTION: &str = "Riptide compaction threads";
/// The category of every other sample: the server's and the other engines' background
/// threads (InnoDB's and RocksDB's are not told apart: their threads carry the server's
/// name), and connection threads whose stack was cut.
pub const BACKGROUND: &str = "other background threads (and cut stacks)";

/// Thread names (`comm`) that open a category of their own, whatever the stack.
const THREAD_CATEGORIES: [(&str, &str); 2] = [
    ("riptide-flush", RIPTIDE_FLUSH),
    ("riptide-compact", RIPTIDE_COMPACTION),
];

/// Frames that mark a connection thread's stack.
const CONNECTION_FRAMES: [&str; 3] = ["do_command", "dispatch_command", "handle_one_connection"];

/// The category of one sample, from its thread's name and its frames, innermost first.
pub fn category(comm: &str, frames: &[&str]) -> &'static str {
    if let Some((_, name)) = THREAD_CATEGORIES.iter().find(|(c, _)| comm.starts_with(c)) {
        return name;
    }
    for f in frames {
        for (name, marks) in CATEGORIES {
            if marks.iter().any(|m| f.contains(m)) {
                return name;
            }
        }
    }
    if frames
        .iter()
        .any(|f| CONNECTION_FRAMES.iter().any(|m| f.contains(m)))
    {
        SQL_LAYER
    } else {
        BACKGROUND
    }
}

/// Samples per category of `perf script -F comm,tid,ip,sym` output: a header line per
/// sample (`comm tid`), then one `ip symbol` line per frame, innermost first, then a blank
/// line.
pub fn attribute(script: &str) -> BTreeMap<&'static str, u64> {
    let mut counts = BTreeMap::new();
    let mut frames: Vec<&str> = Vec::new();
    let mut comm = "";
    let mut in_sample = false;
    let mut flush = |comm: &str, frames: &mut Vec<&str>, in_sample: &mut bool| {
        if *in_sample {
            *counts.entry(category(comm, frames)).or_insert(0) += 1;
        }
        frames.clear();
        *in_sample = false;
    };
    for line in script.lines() {
        if line.trim().is_empty() {
            flush(comm, &mut frames, &mut in_sample);
        } else if !in_sample {
            in_sample = true;
            comm = line.trim_start();
        } else {
            let sym = line
                .trim()
                .split_once(char::is_whitespace)
                .map_or("", |x| x.1);
            frames.push(sym);
        }
    }
    flush(comm, &mut frames, &mut in_sample);
    counts
}

/// One profile: samples per category.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    /// Samples per category.
    pub samples: BTreeMap<&'static str, u64>,
}

impl Profile {
    /// All samples.
    pub fn total(&self) -> u64 {
        self.samples.values().sum()
    }

    /// The share of `category` (0 when there are no samples).
    pub fn share(&self, category: &str) -> f64 {
        let t = self.total();
        if t == 0 {
            return 0.0;
        }
        self.samples.get(category).copied().unwrap_or(0) as f64 / t as f64
    }
}

/// Every category in report order.
pub fn report_order() -> Vec<&'static str> {
    let mut v = vec![SQL_LAYER];
    v.extend(CATEGORIES.iter().map(|(n, _)| *n));
    v.extend(THREAD_CATEGORIES.iter().map(|(_, n)| *n));
    v.push(BACKGROUND);
    v
}

/// A `perf record` of the server `pid` that starts after `delay` and lasts `seconds`.
pub struct Recording {
    data: PathBuf,
    recorder: std::thread::JoinHandle<Result<()>>,
}

impl Recording {
    /// Starts a thread that waits `delay`, then runs `perf record` on `pid` for `seconds`
    /// into `data` and waits for it.
    pub fn start(pid: u32, delay: Duration, seconds: u64, data: &Path) -> Recording {
        let path = data.to_path_buf();
        let recorder = std::thread::spawn(move || -> Result<()> {
            std::thread::sleep(delay);
            let status = Command::new("perf")
                .args([
                    "record",
                    "-q",
                    "-F",
                    "199",
                    "--call-graph",
                    "dwarf,16384",
                    "-p",
                ])
                .arg(pid.to_string())
                .arg("-o")
                .arg(&path)
                .arg("--")
                .arg("sleep")
                .arg(seconds.to_string())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .context(
                    "running `perf record` (is perf installed? `apt-get install linux-perf`)",
                )?;
            if !status.success() {
                bail!("`perf record -p {pid}` failed ({status})");
            }
            Ok(())
        });
        Recording {
            data: data.to_path_buf(),
            recorder,
        }
    }

    /// Waits for the recording and attributes its samples.
    pub fn finish(self) -> Result<Profile> {
        self.recorder
            .join()
            .map_err(|_| anyhow::anyhow!("the perf thread panicked"))??;
        let out = Command::new("perf")
            .args(["script", "-F", "comm,tid,ip,sym", "--no-inline", "-i"])
            .arg(&self.data)
            .stderr(Stdio::null())
            .output()
            .context("running `perf script`");
        // The recording is large (about 5 MB a second); what it says is kept.
        let _ = std::fs::remove_file(&self.data);
        let out = out?;
        if !out.status.success() {
            bail!(
                "`perf script -i {}` failed ({})",
                self.data.display(),
                out.status
            );
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let samples = attribute(&text);
        Ok(Profile { samples })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_go_to_the_innermost_entry_point() {
        let script = "\
mariadbd 101
\t7f01 riptide::cf::CfView::get
\t7f02 ha_riptide::index_read_idx_map
\t7f03 handler::ha_index_read_idx_map
\t7f04 handler::ha_update_row
\t7f05 do_command

mariadbd 102
\t7f01 JOIN::optimize
\t7f05 dispatch_command

riptide-compact 103
\t7f01 riptide_sstable::block::BlockBuilder::add

riptide-flush-0 105
\t7f01 riptide_memtable::Memtable::iter

mariadbd 104
\t7f06 [unknown]
";
        let c = attribute(script);
        assert_eq!(c.get("point reads (index_read_idx_map)"), Some(&1));
        assert_eq!(c.get(SQL_LAYER), Some(&1));
        assert_eq!(c.get(RIPTIDE_COMPACTION), Some(&1));
        assert_eq!(c.get(RIPTIDE_FLUSH), Some(&1));
        assert_eq!(c.get(BACKGROUND), Some(&1));
        assert_eq!(c.values().sum::<u64>(), 5);
        let p = Profile { samples: c };
        assert!((p.share(SQL_LAYER) - 0.2).abs() < 1e-9);
        assert_eq!(report_order().len(), CATEGORIES.len() + 4);
    }
}

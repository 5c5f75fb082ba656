//! The command-line options every capped benchmark takes (flattened into its own), and the
//! conditions they set: budget, durability, cap, as the reports state them.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

use crate::report::{cap_text, durability_text};
use crate::{Budget, Engine, Lab, absolute};

/// The allowance beyond the budget when neither `--allowance-mib` nor the benchmark sets
/// one: sysbench's measured rule (harness crate docs).
pub const DEFAULT_ALLOWANCE_MIB: u64 = 320;

/// The server options of a capped benchmark (`#[command(flatten)]` into its arguments).
#[derive(clap::Args, Debug, Clone)]
pub struct ServerArgs {
    /// Folder holding ha_riptide.so and ha_rocksdb.so (`cargo xtask <verb>` makes it).
    #[arg(long)]
    pub plugin_dir: PathBuf,
    /// Memory budget per engine in MiB (InnoDB buffer pool; LSM block cache + memtables).
    #[arg(long, default_value_t = 256)]
    pub budget_mib: u64,
    /// Of the budget, the LSM engines' memtables (all together) in MiB.
    #[arg(long, default_value_t = 64)]
    pub write_buffer_mib: u64,
    /// What the cgroup allows beyond the budget for the server itself, in MiB (the largest
    /// measured server overhead plus 64 MiB; harness crate docs). Default: the benchmark's
    /// ([`DEFAULT_ALLOWANCE_MIB`] unless it sets its own with [`ServerArgs::default_allowance`]).
    #[arg(long)]
    pub allowance_mib: Option<u64>,
    /// Raise the cap to budget + this many MiB while loading, back to budget +
    /// --allowance-mib for the measured phase (default: the same cap for both). For engines
    /// whose load does not fit the cap; the report prints it.
    #[arg(long)]
    pub load_allowance_mib: Option<u64>,
    /// Full durability: the log synced at every commit by all three engines.
    #[arg(long)]
    pub durable: bool,
    /// Run without the memory cgroup (the results are marked: the page cache may hold the
    /// data).
    #[arg(long)]
    pub no_cap: bool,
    /// Keep each engine's data directory after its run (default: removed, logs kept).
    #[arg(long)]
    pub keep_data: bool,
    /// One more `mariadbd` option for one engine's server, as `ENGINE:OPTION` (for example
    /// `riptide:--riptide-l0-compaction-trigger=8`), for A/B runs of a setting; repeatable.
    /// It comes after the harness's own settings, so it overrides them; the report lists it.
    #[arg(long = "server-option", value_parser = parse_extra_option)]
    pub server_options: Vec<ExtraOption>,
}

/// A `mariadbd` option given with `--server-option` for one engine's server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtraOption {
    /// The engine whose server gets it.
    pub engine: Engine,
    /// The option as `mariadbd` takes it (`--name=value`).
    pub option: String,
}

/// Parses `ENGINE:OPTION` (`riptide:--riptide-l0-compaction-trigger=8`).
fn parse_extra_option(s: &str) -> std::result::Result<ExtraOption, String> {
    let (engine, option) = s.split_once(':').ok_or_else(|| {
        format!("`{s}`: expected ENGINE:OPTION, e.g. riptide:--riptide-l0-compaction-trigger=8")
    })?;
    let engine = <Engine as clap::ValueEnum>::from_str(engine, true)
        .map_err(|_| format!("`{s}`: unknown engine `{engine}` (riptide, innodb, rocksdb)"))?;
    if !option.starts_with("--") {
        return Err(format!(
            "`{s}`: the option must be a mariadbd option starting with `--`"
        ));
    }
    Ok(ExtraOption {
        engine,
        option: option.to_string(),
    })
}

impl ServerArgs {
    /// The allowance in MiB: `--allowance-mib`, else the benchmark's default.
    pub fn allowance(&self) -> u64 {
        self.allowance_mib.unwrap_or(DEFAULT_ALLOWANCE_MIB)
    }

    /// Sets the allowance a benchmark measured for its own workload (harness crate docs),
    /// unless `--allowance-mib` gave one.
    pub fn default_allowance(&mut self, mib: u64) {
        self.allowance_mib.get_or_insert(mib);
    }

    /// The cap in MiB (budget + allowance), whether applied or not.
    pub fn cap_mib(&self) -> u64 {
        self.budget_mib + self.allowance()
    }

    /// Checks the options and builds the lab for `engines` with its servers under
    /// `work_dir` (created): fails when the memtables do not fit the budget, when a plugin is
    /// missing (built by `cargo xtask <verb>`), or when the cgroup cannot be made.
    pub fn lab(&self, work_dir: &Path, engines: &[Engine], verb: &str) -> Result<Lab> {
        if engines.is_empty() {
            bail!("no engines given");
        }
        if self.write_buffer_mib >= self.budget_mib {
            bail!(
                "--write-buffer-mib ({}) must be below --budget-mib ({})",
                self.write_buffer_mib,
                self.budget_mib
            );
        }
        let mib = 1024 * 1024;
        let cap = (!self.no_cap).then_some(self.cap_mib() * mib);
        let load_cap = cap.map(|c| {
            self.load_allowance_mib
                .map_or(c, |a| (self.budget_mib + a) * mib)
        });
        let lab = Lab {
            plugin_dir: absolute(&self.plugin_dir)?,
            work_dir: absolute(work_dir)?,
            conditions: Conditions {
                budget: Budget {
                    total_mib: self.budget_mib,
                    write_buffer_mib: self.write_buffer_mib,
                    durable: self.durable,
                },
                cap,
                load_cap,
                extra_options: self.server_options.clone(),
            },
            keep_data: self.keep_data,
        };
        lab.check_plugins(engines, verb)?;
        // Fail now, before any loading, if the cgroup cannot be made.
        lab.check_cap()?;
        fs::create_dir_all(&lab.work_dir)
            .with_context(|| format!("creating {}", lab.work_dir.display()))?;
        Ok(lab)
    }
}

/// The memory and durability every engine of one invocation runs under.
#[derive(Clone, Debug)]
pub struct Conditions {
    /// Memory budget and durability.
    pub budget: Budget,
    /// The cgroup limit for the measured phase in bytes (None: no cgroup).
    pub cap: Option<u64>,
    /// The cgroup limit while loading in bytes (None: no cgroup).
    pub load_cap: Option<u64>,
    /// Options given with `--server-option`, after the budget's.
    pub extra_options: Vec<ExtraOption>,
}

impl Conditions {
    /// The `mariadbd` options of `engine`'s server (besides paths and plugin loading): the
    /// budget's, then its `--server-option`s.
    pub fn server_options(&self, engine: Engine) -> Vec<String> {
        let mut o = self.budget.server_options(engine);
        o.extend(
            self.extra_options
                .iter()
                .filter(|x| x.engine == engine)
                .map(|x| x.option.clone()),
        );
        o
    }

    /// ` Extra server options: Riptide `--a=1`.` (empty without any).
    fn extra_text(&self) -> String {
        if self.extra_options.is_empty() {
            return String::new();
        }
        let list: Vec<String> = self
            .extra_options
            .iter()
            .map(|x| format!("{} `{}`", x.engine.display(), x.option))
            .collect();
        format!(" Extra server options: {}.", list.join(", "))
    }

    /// The report's sentences on budget, cap, durability and servers.
    pub fn text(&self) -> String {
        let b = &self.budget;
        format!(
            "Memory budget per engine {} MiB (LSM engines: {} MiB block cache + {} MiB \
             memtables); {}. Durability: {}. One server per engine, started fresh on its own \
             data directory.{}",
            b.total_mib,
            b.total_mib.saturating_sub(b.write_buffer_mib),
            b.write_buffer_mib,
            cap_text(self.cap, self.load_cap),
            durability_text(b.durable),
            self.extra_text()
        )
    }

    /// The short form for the first line of output: `budget 256 MiB/engine, cgroup cap
    /// 576 MiB` (or `NO memory cap`), `, durable` when durable.
    pub fn brief(&self) -> String {
        format!(
            "budget {} MiB/engine, {}{}{}",
            self.budget.total_mib,
            self.cap.map_or("NO memory cap".into(), |c| format!(
                "cgroup cap {} MiB",
                c / 1024 / 1024
            )),
            if self.budget.durable { ", durable" } else { "" },
            if self.extra_options.is_empty() {
                ""
            } else {
                ", extra server options"
            }
        )
    }

    /// What a chart's title adds: `, NO CAP` and `, durable` where they apply.
    pub fn chart_suffix(&self) -> String {
        format!(
            "{}{}",
            if self.cap.is_none() { ", NO CAP" } else { "" },
            if self.budget.durable { ", durable" } else { "" }
        )
    }

    /// ` = 1.2x the cap` for data of `bytes` (empty without a cap).
    pub fn of_cap(&self, bytes: u64) -> String {
        self.cap.map_or(String::new(), |c| {
            format!(" = {:.1}x the cap", bytes as f64 / c as f64)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conditions(cap: Option<u64>, durable: bool) -> Conditions {
        Conditions {
            budget: Budget {
                total_mib: 256,
                write_buffer_mib: 64,
                durable,
            },
            cap,
            load_cap: cap,
            extra_options: Vec::new(),
        }
    }

    #[test]
    fn phrases() {
        let c = conditions(Some(576 << 20), false);
        assert_eq!(c.brief(), "budget 256 MiB/engine, cgroup cap 576 MiB");
        assert!(c.text().starts_with(
            "Memory budget per engine 256 MiB (LSM engines: 192 MiB block cache + 64 MiB \
             memtables); each server in a memory cgroup capped at 576.0 MiB. Durability: no \
             fsync"
        ));
        assert_eq!(c.chart_suffix(), "");
        assert_eq!(c.of_cap(1152 << 20), " = 2.0x the cap");
        let d = conditions(None, true);
        assert_eq!(d.brief(), "budget 256 MiB/engine, NO memory cap, durable");
        assert_eq!(d.chart_suffix(), ", NO CAP, durable");
        assert_eq!(d.of_cap(1), "");
    }

    #[test]
    fn extra_server_options() {
        let x = parse_extra_option("riptide:--riptide-l0-compaction-trigger=8").unwrap();
        assert_eq!(x.engine, Engine::Riptide);
        assert!(parse_extra_option("myrocks:--rocksdb-foo=1").is_ok());
        assert!(parse_extra_option("--riptide-foo=1").is_err());
        assert!(parse_extra_option("tokudb:--x=1").is_err());
        assert!(parse_extra_option("riptide:x=1").is_err());
        let mut c = conditions(None, false);
        c.extra_options.push(x);
        let r = c.server_options(Engine::Riptide);
        assert_eq!(r.last().unwrap(), "--riptide-l0-compaction-trigger=8");
        assert!(
            !c.server_options(Engine::Innodb)
                .iter()
                .any(|o| o.contains("l0-compaction"))
        );
        assert!(
            c.text()
                .ends_with(" Extra server options: Riptide `--riptide-l0-compaction-trigger=8`.")
        );
        assert!(c.brief().ends_with(", extra server options"));
    }
}

//! `cargo xtask fuzz --seconds N [target...]`: the cargo-fuzz targets of `fuzz/`.
//!
//! Installs cargo-fuzz if missing (`cargo install cargo-fuzz --locked`), builds the targets
//! with the installed nightly toolchain (`cargo +nightly fuzz build --debug-assertions`), has
//! each target write its seed corpus (valid WAL segments, tables, manifests and batches made
//! by the engine itself, see `fuzz/src/lib.rs`), then runs the targets one after the other
//! (never two fuzzers at once: the machines have two cores) for `seconds` each, and prints a
//! table of targets, executions, coverage and result. A crash keeps its input in
//! `fuzz/artifacts/<target>/` and fails the command; the full output of each run is in
//! `fuzz/target/logs/<target>.log`.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};

/// Seconds one input may take before libFuzzer reports it as a hang.
const INPUT_TIMEOUT_SECS: u64 = 30;

/// What one target's run gave.
struct Outcome {
    target: String,
    runs: Option<u64>,
    coverage: Option<String>,
    seconds: f64,
    result: String,
    ok: bool,
}

/// Runs `targets` (all of them when empty) for `seconds` each.
pub fn fuzz(seconds: u64, targets: Vec<String>) -> Result<()> {
    let start = Instant::now();
    let fuzz_dir = crate::root().join("fuzz");
    let all = list_targets(&fuzz_dir)?;
    let targets = if targets.is_empty() {
        all
    } else {
        for t in &targets {
            if !all.contains(t) {
                bail!("no fuzz target {t:?}; the targets are: {}", all.join(", "));
            }
        }
        targets
    };
    ensure_cargo_fuzz()?;

    let mut build = nightly_cargo(&fuzz_dir);
    build.args(["fuzz", "build", "--debug-assertions"]);
    if targets.len() == 1 {
        build.args(&targets);
    }
    crate::run("build the fuzz targets", build)?;

    let bin_dir = fuzz_dir.join("target").join(host_triple()?).join("release");
    let log_dir = fuzz_dir.join("target").join("logs");
    std::fs::create_dir_all(&log_dir).with_context(|| format!("create {}", log_dir.display()))?;
    let mut outcomes = Vec::new();
    for t in &targets {
        let corpus = fuzz_dir.join("corpus").join(t);
        let mut seeds = Command::new(bin_dir.join(t));
        seeds.env("RIPTIDE_FUZZ_SEEDS", &corpus);
        crate::run(&format!("seed corpus of {t}"), seeds)?;
        outcomes.push(run_target(
            &fuzz_dir,
            t,
            &corpus,
            seconds,
            &log_dir.join(format!("{t}.log")),
        )?);
    }

    eprintln!(
        "\n{:<20} {:>10} {:<38} {:>7}  result",
        "target", "runs", "coverage", "seconds"
    );
    for o in &outcomes {
        eprintln!(
            "{:<20} {:>10} {:<38} {:>7.1}  {}",
            o.target,
            o.runs.map_or_else(|| "?".to_string(), |r| r.to_string()),
            o.coverage.as_deref().unwrap_or("?"),
            o.seconds,
            o.result
        );
    }
    eprintln!(
        "\nfuzzing took {:.0}s in all",
        start.elapsed().as_secs_f64()
    );
    let failed: Vec<&str> = outcomes
        .iter()
        .filter(|o| !o.ok)
        .map(|o| o.target.as_str())
        .collect();
    if !failed.is_empty() {
        bail!(
            "fuzz targets failed: {} (inputs in fuzz/artifacts/, logs in fuzz/target/logs/; \
             reproduce with `cargo +nightly fuzz run -a <target> <input>`, minimize with \
             `cargo +nightly fuzz tmin -a <target> <input>`)",
            failed.join(", ")
        );
    }
    Ok(())
}

/// The fuzz targets: the files of `fuzz/fuzz_targets/`.
fn list_targets(fuzz_dir: &Path) -> Result<Vec<String>> {
    let dir = fuzz_dir.join("fuzz_targets");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).with_context(|| format!("list {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "rs")
            && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
        {
            names.push(stem.to_string());
        }
    }
    names.sort();
    Ok(names)
}

/// `cargo +nightly` in `dir`, through rustup's `cargo` proxy, without the variables the
/// outer (pinned stable) cargo set for xtask, which would otherwise pick its toolchain.
fn nightly_cargo(dir: &Path) -> Command {
    let mut c = Command::new("cargo");
    c.arg("+nightly").current_dir(dir);
    for var in [
        "CARGO",
        "RUSTC",
        "RUSTDOC",
        "RUSTUP_TOOLCHAIN",
        "RUSTFLAGS",
        "CARGO_TARGET_DIR",
    ] {
        c.env_remove(var);
    }
    c
}

/// Installs cargo-fuzz with `cargo install cargo-fuzz --locked` unless `cargo fuzz` works.
fn ensure_cargo_fuzz() -> Result<()> {
    let mut probe = nightly_cargo(&crate::root());
    probe
        .args(["fuzz", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if probe.status().is_ok_and(|s| s.success()) {
        return Ok(());
    }
    let mut install = Command::new("cargo");
    install.args(["install", "cargo-fuzz", "--locked"]);
    crate::run("install cargo-fuzz", install)
}

/// The host's target triple (cargo-fuzz builds for it, under `fuzz/target/<triple>/`).
fn host_triple() -> Result<String> {
    let out = Command::new("rustc")
        .args(["+nightly", "-vV"])
        .env_remove("RUSTUP_TOOLCHAIN")
        .output()
        .context("run rustc +nightly -vV")?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .context("rustc -vV printed no host triple")
}

/// Runs one target for `seconds` on `corpus`, its output going to `log`, and reads the result
/// from that output.
fn run_target(
    fuzz_dir: &Path,
    target: &str,
    corpus: &Path,
    seconds: u64,
    log: &Path,
) -> Result<Outcome> {
    let mut c = nightly_cargo(fuzz_dir);
    c.args(["fuzz", "run", "--debug-assertions", target])
        .arg(corpus)
        .arg("--")
        .arg(format!("-max_total_time={seconds}"))
        .arg(format!("-timeout={INPUT_TIMEOUT_SECS}"))
        .arg("-print_final_stats=1");
    let out = File::create(log).with_context(|| format!("create {}", log.display()))?;
    c.stdout(out.try_clone()?).stderr(out);
    eprintln!(
        "\n==> fuzz {target} for {seconds}s: {c:?} (output in {})",
        log.display()
    );
    let start = Instant::now();
    let status = c
        .status()
        .with_context(|| format!("could not start the fuzzer for {target}"))?;
    let seconds = start.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let runs = text
        .lines()
        .filter_map(|l| l.strip_prefix("stat::number_of_executed_units:"))
        .find_map(|n| n.trim().parse().ok());
    // The last status line: "#123 DONE cov: 441 ft: 1177 corp: 165/7079b ...".
    let coverage = text
        .lines()
        .rev()
        .find(|l| l.starts_with('#') && l.contains("cov: "))
        .map(|l| {
            let field = |name: &str| {
                l.split_whitespace()
                    .skip_while(|w| *w != name)
                    .nth(1)
                    .unwrap_or("?")
                    .to_string()
            };
            format!(
                "cov {} ft {} corp {}",
                field("cov:"),
                field("ft:"),
                field("corp:")
            )
        });
    let artifact: Option<PathBuf> = text
        .lines()
        .find_map(|l| l.split("Test unit written to ").nth(1))
        .map(|p| PathBuf::from(p.trim()));
    let (ok, result) = match (status.success(), artifact) {
        (true, _) => (true, "ok".to_string()),
        (false, Some(a)) => (false, format!("FAILED: {}", a.display())),
        (false, None) => (false, format!("FAILED ({status}), see {}", log.display())),
    };
    if !ok {
        let tail: Vec<&str> = text.lines().rev().take(40).collect();
        eprintln!("--- last lines of {}:", log.display());
        for l in tail.iter().rev() {
            eprintln!("{l}");
        }
    }
    eprintln!("<== {target}: {result} in {seconds:.1}s");
    Ok(Outcome {
        target: target.to_string(),
        runs,
        coverage,
        seconds,
        result,
        ok,
    })
}

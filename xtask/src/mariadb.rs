//! The MariaDB workflows: `setup` (server packages + the matching source tree), `plugin`
//! (builds `target/plugin/ha_riptide.so`), `run` / `stop` (a private server with Riptide
//! loaded) and `mtr` (our mtr suites). `plugin-shim/README.md` explains why each step is the
//! way it is. Nothing here touches the system MariaDB service or /var/lib/mysql: the private
//! server lives in target/mariadb and listens on a socket there only.

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result, bail};

use crate::{cargo, root, run};

/// MariaDB packages built from the `mariadb` source package: pinned to one version.
const PINNED_PACKAGES: &[&str] = &[
    "mariadb-server",
    "libmariadbd-dev",
    "mariadb-plugin-rocksdb",
    "mariadb-test",
];
/// Other packages the workflows need (any version).
const OTHER_PACKAGES: &[&str] = &["sysbench", "g++", "make"];
/// Where the pin file goes (our own file; we never edit anyone else's).
const PIN_FILE: &str = "/etc/apt/preferences.d/riptide-mariadb";
/// The deb-src entries we add (a copy of the distribution's deb entries).
const DEB_SRC_FILE: &str = "/etc/apt/sources.list.d/riptide-deb-src.sources";
/// The installed mysql-test tree of the `mariadb-test` package.
const MTR_DIR: &str = "/usr/share/mysql/mysql-test";
/// The maturity ha_riptide.so declares (`MariaDB_PLUGIN_MATURITY_EXPERIMENTAL`).
pub(crate) const PLUGIN_MATURITY: &str = "experimental";

fn target() -> PathBuf {
    root().join("target")
}
fn src_cache() -> PathBuf {
    target().join("mariadb-src")
}
pub(crate) fn plugin_dir() -> PathBuf {
    target().join("plugin")
}
fn plugin_so() -> PathBuf {
    plugin_dir().join("ha_riptide.so")
}
/// Builds the plugin and copies it into the new folder `target/<folder>`, for a test tool's
/// private servers: a rebuild of target/plugin during the run cannot change the servers
/// under test. Returns the folder.
pub(crate) fn plugin_copy(folder: &str) -> Result<PathBuf> {
    plugin()?;
    let copy = target().join(folder);
    fs::create_dir_all(&copy).with_context(|| format!("creating {}", copy.display()))?;
    let so = plugin_so();
    fs::copy(&so, copy.join("ha_riptide.so"))
        .with_context(|| format!("copying {} to {}", so.display(), copy.display()))?;
    Ok(copy)
}

pub(crate) fn server_dir() -> PathBuf {
    target().join("mariadb")
}
pub(crate) fn socket() -> PathBuf {
    server_dir().join("mysqld.sock")
}
fn pid_file() -> PathBuf {
    server_dir().join("mysqld.pid")
}
fn error_log() -> PathBuf {
    server_dir().join("mysqld.err")
}
/// Records the modification time of the .so the running server loaded.
fn loaded_stamp() -> PathBuf {
    server_dir().join("loaded-plugin.stamp")
}

/// Runs a command, returns its stdout (stderr passes through); fails on a nonzero exit.
pub(crate) fn output(mut cmd: Command) -> Result<String> {
    let out = cmd
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("could not start {cmd:?}"))?;
    if !out.status.success() {
        bail!("{cmd:?} failed ({})", out.status);
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs a command quietly; true when it exits 0.
fn succeeds(cmd: &mut Command) -> bool {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

fn cmd(program: &str, args: &[&str]) -> Command {
    let mut c = Command::new(program);
    c.args(args);
    c
}

/// The installed version of a package, if it is installed.
fn installed_version(package: &str) -> Option<String> {
    let out = Command::new("dpkg-query")
        .args(["-W", "-f=${db:Status-Abbrev}|${Version}", package])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (status, version) = text.split_once('|')?;
    (status.starts_with("ii") && !version.is_empty()).then(|| version.to_string())
}

/// `1:10.11.18-0+deb12u1` -> `10.11.18`.
fn upstream_version(v: &str) -> &str {
    let no_epoch = v.split_once(':').map_or(v, |(_, rest)| rest);
    no_epoch.rsplit_once('-').map_or(no_epoch, |(up, _)| up)
}

/// The unpacked server source tree for version `v`.
fn source_tree(v: &str) -> PathBuf {
    src_cache().join(format!("mariadb-{}", upstream_version(v)))
}

/// The version recorded by a finished setup, if the source tree it names is there.
pub fn recorded_version() -> Option<String> {
    let v = fs::read_to_string(src_cache().join("VERSION")).ok()?;
    let v = v.trim().to_string();
    source_tree(&v)
        .join("sql")
        .join("handler.h")
        .is_file()
        .then_some(v)
}

pub(crate) fn is_root() -> bool {
    output(cmd("id", &["-u"]))
        .map(|s| s.trim() == "0")
        .unwrap_or(false)
}

/// True when setup has nothing to do: the recorded version's packages are installed and its
/// source is unpacked.
fn setup_done() -> Option<String> {
    let v = recorded_version()?;
    let pinned_ok = PINNED_PACKAGES
        .iter()
        .all(|p| installed_version(p).as_deref() == Some(v.as_str()));
    let others_ok = OTHER_PACKAGES
        .iter()
        .all(|p| installed_version(p).is_some());
    (pinned_ok && others_ok && Path::new(PIN_FILE).is_file()).then_some(v)
}

/// Versions of the `mariadb` source package apt knows.
fn source_versions() -> BTreeSet<String> {
    let text = Command::new("apt-cache")
        .args(["showsrc", "mariadb"])
        .stderr(Stdio::null())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    text.lines()
        .filter_map(|l| l.strip_prefix("Version: "))
        .map(|v| v.trim().to_string())
        .collect()
}

/// Versions of the `mariadb-server` binary package apt knows (its "Version table").
fn binary_versions() -> BTreeSet<String> {
    let text = Command::new("apt-cache")
        .args(["policy", "mariadb-server"])
        .stderr(Stdio::null())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let mut in_table = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("Version table:") {
            in_table = true;
            continue;
        }
        if !in_table {
            continue;
        }
        let line = line.trim().trim_start_matches("***").trim();
        let tokens: Vec<&str> = line.split_whitespace().collect();
        // "1:10.11.18-0+deb12u1 500" (a version line) vs "500 http://..." (a source line).
        if let [version, priority] = tokens.as_slice()
            && priority.parse::<i64>().is_ok()
            && version.parse::<i64>().is_err()
        {
            out.insert((*version).to_string());
        }
    }
    out
}

/// `dpkg --compare-versions a gt b`.
fn version_gt(a: &str, b: &str) -> bool {
    succeeds(&mut cmd("dpkg", &["--compare-versions", a, "gt", b]))
}

/// Adds deb-src entries next to the distribution's deb entries. Returns true if it wrote
/// something (so apt's lists must be refreshed).
fn ensure_deb_src() -> Result<bool> {
    if Path::new(DEB_SRC_FILE).is_file() {
        return Ok(false);
    }
    let deb822 = Path::new("/etc/apt/sources.list.d/debian.sources");
    let text = if deb822.is_file() {
        let original = fs::read_to_string(deb822)?;
        if original.contains("deb-src") {
            return Ok(false);
        }
        original
            .lines()
            .map(|l| {
                if l.trim() == "Types: deb" {
                    "Types: deb-src"
                } else {
                    l
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    } else {
        let list = fs::read_to_string("/etc/apt/sources.list").unwrap_or_default();
        if list.lines().any(|l| l.trim_start().starts_with("deb-src ")) {
            return Ok(false);
        }
        let mut out = String::new();
        for l in list.lines() {
            if let Some(rest) = l.trim_start().strip_prefix("deb ") {
                out.push_str(&format!("Types: deb-src\n# from: {l}\n"));
                // One-line format: "deb [opts] URI suite components..."
                let rest = if rest.starts_with('[') {
                    rest.split_once(']').map_or(rest, |(_, r)| r)
                } else {
                    rest
                };
                let parts: Vec<&str> = rest.split_whitespace().collect();
                if let [uri, suite, components @ ..] = parts.as_slice() {
                    out.push_str(&format!(
                        "URIs: {uri}\nSuites: {suite}\nComponents: {}\n\n",
                        components.join(" ")
                    ));
                }
            }
        }
        if out.is_empty() {
            bail!("found no deb entries in /etc/apt to derive deb-src entries from");
        }
        out
    };
    eprintln!("==> setup: adding deb-src entries in {DEB_SRC_FILE}");
    fs::write(DEB_SRC_FILE, text).with_context(|| format!("writing {DEB_SRC_FILE}"))?;
    Ok(true)
}

pub(crate) fn apt_update() -> Result<()> {
    run("apt-get update", cmd("apt-get", &["update", "-qq"]))
}

/// `cargo xtask setup`: MariaDB server, test suite and headers of one version, idempotent.
pub fn setup() -> Result<String> {
    if let Some(v) = setup_done() {
        eprintln!(
            "setup: already done (MariaDB {v}, source in {})",
            source_tree(&v).display()
        );
        return Ok(v);
    }
    let start = Instant::now();
    if !is_root() {
        bail!(
            "setup installs Debian packages and needs root (run `cargo xtask setup` as root once)"
        );
    }
    let added = ensure_deb_src()?;
    let mut sources = source_versions();
    let mut binaries = binary_versions();
    if added || sources.is_empty() || binaries.is_empty() {
        apt_update()?;
        sources = source_versions();
        binaries = binary_versions();
    }
    // Newest first. A version can be listed as source and still not be downloadable (the
    // security archive has listed sources it serves as 404): the newest one whose source
    // actually downloads wins, and the packages are pinned to it.
    let mut candidates: Vec<String> = sources.intersection(&binaries).cloned().collect();
    candidates.sort_by(|a, b| {
        if version_gt(a, b) {
            std::cmp::Ordering::Less
        } else if version_gt(b, a) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    });
    eprintln!(
        "==> setup: MariaDB versions listed as source {sources:?} and as binary {binaries:?}"
    );
    let mut chosen = None;
    for v in &candidates {
        match fetch_source(v) {
            Ok(()) => {
                chosen = Some(v.clone());
                break;
            }
            Err(e) => eprintln!("setup: the source of {v} is not usable ({e:#}); trying older"),
        }
    }
    let Some(v) = chosen else {
        bail!(
            "no MariaDB version is available both as (downloadable) source and as binary; \
             listed: source {sources:?}, binary {binaries:?}"
        );
    };
    eprintln!("==> setup: MariaDB {v}");

    let pin = format!(
        "# Written by `cargo xtask setup` (Riptide): the server must match the headers the\n\
         # plugin is compiled against, so every MariaDB package stays at one version.\n\
         Package: mariadb-* libmariadb* libmariadbd*\nPin: version {v}\nPin-Priority: 1001\n"
    );
    if fs::read_to_string(PIN_FILE).ok().as_deref() != Some(pin.as_str()) {
        eprintln!("==> setup: pinning MariaDB packages to {v} in {PIN_FILE}");
        fs::write(PIN_FILE, &pin).with_context(|| format!("writing {PIN_FILE}"))?;
    }

    let missing: Vec<&str> = PINNED_PACKAGES
        .iter()
        .filter(|p| installed_version(p).as_deref() != Some(v.as_str()))
        .chain(
            OTHER_PACKAGES
                .iter()
                .filter(|p| installed_version(p).is_none()),
        )
        .copied()
        .collect();
    if !missing.is_empty() {
        install_packages(&missing)?;
    }

    fs::write(src_cache().join("VERSION"), format!("{v}\n"))?;
    eprintln!(
        "setup: done in {:.0}s (MariaDB {v})",
        start.elapsed().as_secs_f64()
    );
    Ok(v)
}

/// Installs packages without letting their maintainer scripts start the system MariaDB
/// service: a temporary `policy-rc.d` answering 101 ("action forbidden") is Debian's
/// documented way. The system service and /var/lib/mysql are never used by our workflows.
pub(crate) fn install_packages(packages: &[&str]) -> Result<()> {
    let policy = Path::new("/usr/sbin/policy-rc.d");
    let ours = !policy.exists();
    if ours {
        fs::write(
            policy,
            "#!/bin/sh\n# temporary, written by `cargo xtask setup` (Riptide)\nexit 101\n",
        )?;
        run(
            "chmod policy-rc.d",
            cmd("chmod", &["755", "/usr/sbin/policy-rc.d"]),
        )?;
    }
    let mut install = cmd(
        "apt-get",
        &[
            "install",
            "-y",
            "-q",
            "--no-install-recommends",
            "--allow-downgrades",
        ],
    );
    install
        .args(packages)
        .env("DEBIAN_FRONTEND", "noninteractive");
    let result = run(&format!("install {}", packages.join(" ")), install);
    if ours {
        let _ = fs::remove_file(policy);
    }
    result
}

/// Downloads and unpacks the `mariadb` source package of version `v` under target/ (cached).
fn fetch_source(v: &str) -> Result<()> {
    let tree = source_tree(v);
    if tree.join("sql").join("handler.h").is_file() {
        return Ok(());
    }
    let dir = src_cache();
    fs::create_dir_all(&dir)?;
    let up = upstream_version(v);
    let find_orig = || -> Option<PathBuf> {
        fs::read_dir(&dir)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&format!("mariadb_{up}.orig.tar")))
            })
    };
    if find_orig().is_none() {
        let mut get = cmd("apt-get", &["source", "--download-only", "-q"]);
        get.arg(format!("mariadb={v}")).current_dir(&dir);
        run("download the MariaDB source package (~115 MB)", get)?;
    }
    let Some(orig) = find_orig() else {
        bail!(
            "apt-get source left no mariadb_{up}.orig.tar.* in {}",
            dir.display()
        );
    };
    let mut tar = cmd("tar", &["xf"]);
    tar.arg(&orig).current_dir(&dir);
    run("unpack the MariaDB source", tar)?;
    if !tree.join("sql").join("handler.h").is_file() {
        bail!(
            "unpacking {} did not give {}",
            orig.display(),
            tree.display()
        );
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------
// plugin

/// Modification time of a file (UNIX_EPOCH when absent).
fn mtime(p: &Path) -> SystemTime {
    fs::metadata(p)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

/// Files directly in `dir` whose names end with `suffix`, sorted.
fn files_ending(dir: &Path, suffix: &str) -> Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(suffix))
        })
        .collect();
    out.sort();
    Ok(out)
}

/// One compile job: the command and the object it makes.
struct Job {
    what: String,
    cmd: Command,
}

/// Runs jobs, `parallel` at a time, printing each; fails with the first failure's name.
fn run_parallel(jobs: Vec<Job>, parallel: usize) -> Result<()> {
    let mut pending = jobs.into_iter();
    let mut running: Vec<(String, std::process::Child)> = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    loop {
        while running.len() < parallel.max(1) {
            let Some(mut job) = pending.next() else { break };
            eprintln!("    compile {}", job.what);
            let child = job
                .cmd
                .spawn()
                .with_context(|| format!("could not start {:?}", job.cmd))?;
            running.push((job.what, child));
        }
        if running.is_empty() {
            break;
        }
        let mut i = 0;
        let mut progressed = false;
        while i < running.len() {
            let done = running
                .get_mut(i)
                .map(|(_, c)| c.try_wait())
                .transpose()?
                .flatten();
            if let Some(status) = done {
                let (what, _) = running.swap_remove(i);
                if !status.success() {
                    failed.push(what);
                }
                progressed = true;
            } else {
                i += 1;
            }
        }
        if !progressed {
            thread::sleep(Duration::from_millis(20));
        }
    }
    if !failed.is_empty() {
        bail!("compilation failed: {}", failed.join(", "));
    }
    Ok(())
}

/// `cargo xtask plugin`: builds target/plugin/ha_riptide.so. Returns true if it was rebuilt.
pub fn plugin() -> Result<bool> {
    build_plugin(&PluginBuild::default())
}

/// A build of the plugin other than the normal one (`cargo xtask plugin --pgo`'s two).
#[derive(Debug, Default)]
pub(crate) struct PluginBuild {
    /// Extra `RUSTFLAGS` for the engine's code (not for build scripts: the build names the
    /// host target, so cargo applies them to the target's crates only), in their own target
    /// folder so the normal build's stays as it is. `None`: the normal build.
    pub rustflags: Option<(String, PathBuf)>,
    /// Where the .so goes (default target/plugin/ha_riptide.so).
    pub so: Option<PathBuf>,
    /// More linker arguments.
    pub link_args: Vec<String>,
}

/// The host's target triple (`rustc -vV`).
fn host_triple() -> Result<String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let text = output(cmd(&rustc, &["-vV"]))?;
    text.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_string)
        .context("`rustc -vV` printed no host triple")
}

/// Builds the plugin as `build` says. Returns true if it was rebuilt.
pub(crate) fn build_plugin(build: &PluginBuild) -> Result<bool> {
    let start = Instant::now();
    let v = setup()?;
    let src = source_tree(&v);
    let out = plugin_dir();
    // Objects per server version: a new version recompiles the service stubs too.
    let obj = out.join(format!("obj-{}", upstream_version(&v)));
    fs::create_dir_all(&obj)?;

    let mut capi = cargo();
    // jemalloc for the engine's own allocations (prefixed symbols: the server's malloc is
    // untouched). See docs/ENGINE.md "Memory allocator" for what it measured.
    capi.args([
        "build",
        "--release",
        "-p",
        "riptide-capi",
        "--features",
        "jemalloc",
    ]);
    let lib = match &build.rustflags {
        None => target().join("release").join("libriptide_capi.a"),
        Some((flags, target_dir)) => {
            let triple = host_triple()?;
            capi.args(["--target", &triple])
                .arg("--target-dir")
                .arg(target_dir)
                .env("RUSTFLAGS", flags);
            target_dir
                .join(&triple)
                .join("release")
                .join("libriptide_capi.a")
        }
    };
    run("build the C ABI (libriptide_capi.a, release)", capi)?;

    // probes_mysql_nodtrace.h is generated by the server's build: a copy of the .in file.
    let gen_inc = obj.join("include");
    fs::create_dir_all(&gen_inc)?;
    let probes = gen_inc.join("probes_mysql_nodtrace.h");
    if !probes.is_file() {
        fs::copy(
            src.join("include").join("probes_mysql_nodtrace.h.in"),
            &probes,
        )?;
    }
    let shim = root().join("plugin-shim");
    let capi_inc = root().join("crates").join("capi").join("include");
    let includes: Vec<PathBuf> = vec![
        gen_inc.clone(),
        PathBuf::from("/usr/include/mariadb/server"),
        src.join("include"),
        src.join("sql"),
        src.join("wsrep-lib").join("include"),
        src.join("wsrep-lib").join("wsrep-API").join("v26"),
        capi_inc.clone(),
        shim.clone(),
    ];
    let common_flags = [
        "-DMYSQL_DYNAMIC_PLUGIN",
        "-DMYSQL_SERVER",
        "-DHAVE_CONFIG_H",
        "-DDBUG_OFF",
        "-DNDEBUG",
        "-fPIC",
        "-O2",
        "-g",
    ];

    // Headers every shim object depends on.
    let mut header_time = mtime(&capi_inc.join("riptide.h"));
    for h in files_ending(&shim, ".h")? {
        header_time = header_time.max(mtime(&h));
    }

    let mut jobs = Vec::new();
    let mut objects = Vec::new();
    for cc in files_ending(&shim, ".cc")? {
        let stem = cc.file_stem().and_then(|s| s.to_str()).unwrap_or("x");
        let o = obj.join(format!("{stem}.o"));
        objects.push(o.clone());
        if mtime(&o) > mtime(&cc).max(header_time) {
            continue;
        }
        let mut c = Command::new(std::env::var("CXX").unwrap_or_else(|_| "g++".into()));
        c.args([
            "-std=c++17",
            "-fvisibility=hidden",
            "-Wall",
            "-Wno-unused-parameter",
        ])
        .args(common_flags);
        for i in &includes {
            c.arg("-I").arg(i);
        }
        c.arg("-c").arg(&cc).arg("-o").arg(&o);
        jobs.push(Job {
            what: format!("plugin-shim/{stem}.cc"),
            cmd: c,
        });
    }
    // The plugin-service stubs: the server fills each `*_service` pointer through dlsym when
    // it loads the plugin, so these keep default visibility (exported by the version script).
    for c_file in files_ending(&src.join("libservices"), "_service.c")? {
        let stem = c_file.file_stem().and_then(|s| s.to_str()).unwrap_or("x");
        let o = obj.join(format!("{stem}.o"));
        objects.push(o.clone());
        if o.is_file() {
            continue;
        }
        let mut c = Command::new(std::env::var("CC").unwrap_or_else(|_| "gcc".into()));
        c.args(common_flags);
        for i in &includes {
            c.arg("-I").arg(i);
        }
        c.arg("-c").arg(&c_file).arg("-o").arg(&o);
        jobs.push(Job {
            what: format!("libservices/{stem}.c"),
            cmd: c,
        });
    }
    let so = build.so.clone().unwrap_or_else(plugin_so);
    if let Some(dir) = so.parent() {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let parallel = thread::available_parallelism().map_or(2, |n| n.get());
    let compiled = !jobs.is_empty();
    if compiled {
        eprintln!(
            "\n==> compile {} files against MariaDB {v} headers ({parallel} at a time)",
            jobs.len()
        );
        let t = Instant::now();
        run_parallel(jobs, parallel)?;
        eprintln!("<== compiled in {:.1}s", t.elapsed().as_secs_f64());
    }

    let newest_input = objects
        .iter()
        .map(|o| mtime(o))
        .chain([mtime(&lib)])
        .max()
        .unwrap_or(SystemTime::UNIX_EPOCH);
    if so.is_file() && mtime(&so) > newest_input {
        eprintln!(
            "plugin: {} is up to date ({:.1}s)",
            so.display(),
            start.elapsed().as_secs_f64()
        );
        return Ok(false);
    }

    // Export only what the server looks up: the plugin declarations and the service slots.
    let map = obj.join("ha_riptide.map");
    fs::write(
        &map,
        "{\n  global:\n    _maria_plugin_interface_version_;\n    _maria_sizeof_struct_st_plugin_;\n    \
         _maria_plugin_declarations_;\n    _mysql_plugin_interface_version_;\n    \
         _mysql_sizeof_struct_st_plugin_;\n    _mysql_plugin_declarations_;\n    *_service;\n  \
         local: *;\n};\n",
    )?;
    let mut link = Command::new(std::env::var("CXX").unwrap_or_else(|_| "g++".into()));
    link.args(["-shared", "-fPIC", "-o"])
        .arg(&so)
        .args(&objects)
        .arg(&lib)
        .arg(format!("-Wl,--version-script={}", map.display()))
        .args([
            "-Wl,--exclude-libs,ALL",
            "-Wl,--gc-sections",
            // The server dlcloses plugins at shutdown while threads that allocated (and
            // hold jemalloc's and Rust's thread-local destructors) may still exit: keep the
            // code mapped.
            "-Wl,-z,nodelete",
            "-lpthread",
            "-ldl",
            "-lm",
        ])
        .args(&build.link_args);
    run(&format!("link {}", so.display()), link)?;
    check_exports(&so)?;
    eprintln!(
        "plugin: built {} in {:.1}s",
        so.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(true)
}

/// Fails if the .so exports anything but the plugin declarations and service slots.
fn check_exports(so: &Path) -> Result<()> {
    let mut nm = cmd("nm", &["-D", "--defined-only"]);
    nm.arg(so);
    let Ok(text) = output(nm) else {
        return Ok(()); // no binutils nm: nothing to check with
    };
    let extra: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|s| {
            !(s.starts_with("_maria_") || s.starts_with("_mysql_") || s.ends_with("_service"))
        })
        .collect();
    if !extra.is_empty() {
        bail!("ha_riptide.so exports unexpected symbols: {extra:?}");
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------
// run / stop

fn sbin(name: &str) -> PathBuf {
    let p = Path::new("/usr/sbin").join(name);
    if p.is_file() { p } else { PathBuf::from(name) }
}

pub(crate) fn client(args: &[&str]) -> Command {
    let mut c = Command::new("mariadb");
    c.arg("--no-defaults")
        .arg(format!("--socket={}", socket().display()))
        .arg("-uroot")
        .args(args);
    c
}

/// True when a server answers on our socket.
pub(crate) fn server_alive() -> bool {
    socket().exists()
        && succeeds(
            Command::new("mariadb-admin")
                .arg("--no-defaults")
                .arg(format!("--socket={}", socket().display()))
                .args(["-uroot", "--connect-timeout=2", "ping"]),
        )
}

fn read_pid() -> Option<u32> {
    fs::read_to_string(pid_file()).ok()?.trim().parse().ok()
}

fn process_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s.contains(") Z "))
            .unwrap_or(false)
}

fn tail_error_log(lines: usize) {
    if let Ok(text) = fs::read_to_string(error_log()) {
        let all: Vec<&str> = text.lines().collect();
        eprintln!("--- last lines of {} ---", error_log().display());
        for l in all.iter().skip(all.len().saturating_sub(lines)) {
            eprintln!("{l}");
        }
        eprintln!("---");
    }
}

pub(crate) fn print_connect() {
    let sock = socket();
    println!();
    println!(
        "MariaDB with Riptide is running (log: {})",
        error_log().display()
    );
    println!("  connect:  mariadb -S {} -uroot", sock.display());
    println!("  try:      CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(100)) ENGINE=RIPTIDE;");
    println!("  stop:     cargo xtask stop");
}

/// `cargo xtask run`: a private server with Riptide loaded. A server of ours already running
/// is reused, unless the plugin was rebuilt since it started: then it is restarted.
pub fn run_server() -> Result<()> {
    plugin()?;
    let sock = socket();
    if sock.as_os_str().len() >= 107 {
        bail!(
            "the socket path {} is too long for a UNIX socket (108 bytes); move the checkout",
            sock.display()
        );
    }
    fs::create_dir_all(server_dir())?;
    if server_alive() {
        let loaded = fs::read_to_string(loaded_stamp()).unwrap_or_default();
        if loaded.trim() == so_stamp() {
            println!(
                "A Riptide server is already running on {}: reusing it.",
                sock.display()
            );
            print_connect();
            return Ok(());
        }
        eprintln!("ha_riptide.so was rebuilt since the running server loaded it: restarting");
        stop()?;
    }
    let data = server_dir().join("data");
    if !data.join("mysql").is_dir() {
        let mut install = Command::new("mariadb-install-db");
        install
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .args(["--auth-root-authentication-method=normal", "--skip-test-db"]);
        if is_root() {
            install.arg("--user=root");
        }
        install.stdout(Stdio::null());
        run("create the data directory (mariadb-install-db)", install)?;
    }
    start_server(&data)?;
    print_connect();
    Ok(())
}

/// The plugin's identity for "was it rebuilt": its modification time.
fn so_stamp() -> String {
    format!(
        "{:?}",
        mtime(&plugin_so())
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
    )
}

pub(crate) fn start_server(data: &Path) -> Result<()> {
    let _ = fs::remove_file(socket());
    let mut d = Command::new(sbin("mariadbd"));
    d.arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .arg(format!("--socket={}", socket().display()))
        .arg(format!("--pid-file={}", pid_file().display()))
        .arg(format!("--log-error={}", error_log().display()))
        .arg("--skip-networking")
        .arg(format!("--plugin-dir={}", plugin_dir().display()))
        .arg("--plugin-load-add=ha_riptide.so")
        .arg(format!("--plugin-maturity={PLUGIN_MATURITY}"));
    if is_root() {
        d.arg("--user=root");
    }
    d.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0); // survives Ctrl-C of this command
    eprintln!("\n==> start mariadbd: {d:?}");
    let start = Instant::now();
    let mut child = d.spawn().context("could not start mariadbd")?;
    loop {
        if let Some(status) = child.try_wait()? {
            tail_error_log(30);
            bail!("mariadbd exited during startup ({status}); see the log above");
        }
        if server_alive() {
            break;
        }
        if start.elapsed() > Duration::from_secs(120) {
            tail_error_log(30);
            bail!("mariadbd did not answer within 120 s");
        }
        thread::sleep(Duration::from_millis(200));
    }
    fs::write(loaded_stamp(), so_stamp())?;
    eprintln!(
        "<== mariadbd answers after {:.1}s",
        start.elapsed().as_secs_f64()
    );
    let support = output(client(&[
        "-N",
        "-e",
        "SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE='RIPTIDE'",
    ]))?;
    if !matches!(support.trim(), "YES" | "DEFAULT") {
        tail_error_log(30);
        bail!("the server started but the RIPTIDE engine is not loaded (see the log above)");
    }
    Ok(())
}

/// `cargo xtask stop`: a clean shutdown of our server, waiting for it to exit.
pub fn stop() -> Result<()> {
    if !server_alive() {
        println!("No Riptide server is running on {}.", socket().display());
        return Ok(());
    }
    let pid = read_pid();
    let mut shut = client(&["-e", "shutdown"]);
    shut.stdout(Stdio::null());
    run("shutdown", shut)?;
    let start = Instant::now();
    while pid.is_some_and(process_alive) || server_alive() {
        if start.elapsed() > Duration::from_secs(120) {
            bail!("the server did not exit within 120 s of shutdown");
        }
        thread::sleep(Duration::from_millis(100));
    }
    println!("Stopped (in {:.1}s).", start.elapsed().as_secs_f64());
    Ok(())
}

// ------------------------------------------------------------------------------------------
// mtr

/// Tests of MariaDB's `storage_engine` suite that its own `disabled.def` turns off (MDEV-10252:
/// stale results for 10.11's warnings and error texts; MDEV-9705: `alter_table_online`) but
/// that RIPTIDE passes, with full result files in `mysql-test/storage_engine/` that are
/// identical to what InnoDB prints. `cargo xtask test` runs them with `--enable-disabled`.
pub const UPSTREAM_DISABLED_THAT_PASS: [&str; 12] = [
    "alter_table_online",
    "col_opt_not_null",
    "col_opt_null",
    "col_opt_unsigned",
    "col_opt_zerofill",
    "type_binary",
    "type_char",
    "type_fixed",
    "type_float",
    "type_int",
    "type_varbinary",
    "type_varchar",
];

/// mtr's working folder (servers' data directories and logs): `target/mtr/var`, or
/// `RIPTIDE_MTR_VARDIR`, which lets several mtr runs share the machine (each its own).
pub(crate) fn mtr_vardir() -> PathBuf {
    std::env::var_os("RIPTIDE_MTR_VARDIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| target().join("mtr").join("var"))
}

/// `cargo xtask mtr [suite...] [-- mtr args]`: runs our suites with MariaDB's mtr.
pub fn mtr(suites: Vec<String>, extra: Vec<String>) -> Result<()> {
    // RIPTIDE_MTR_NO_BUILD=1 runs against the plugin already built (while someone else is
    // changing its sources).
    if std::env::var_os("RIPTIDE_MTR_NO_BUILD").is_none() {
        plugin()?;
    }
    let ours = root().join("mysql-test");
    // Each folder of mysql-test/ is a suite, linked where the installed mtr looks for
    // plugin suites: mysql-test/plugin/riptide/<suite>.
    let link_dir = Path::new(MTR_DIR).join("plugin").join("riptide");
    fs::create_dir_all(&link_dir)
        .with_context(|| format!("creating {} (needs root)", link_dir.display()))?;
    for suite in fs::read_dir(&ours)?.flatten().map(|e| e.path()) {
        if !suite.is_dir() {
            continue;
        }
        let Some(name) = suite.file_name() else {
            continue;
        };
        let link = link_dir.join(name);
        if fs::read_link(&link).ok().as_deref() != Some(suite.as_path()) {
            let _ = fs::remove_file(&link);
            std::os::unix::fs::symlink(&suite, &link)
                .with_context(|| format!("linking {}", link.display()))?;
        }
    }
    let suites = if suites.is_empty() {
        vec!["riptide".to_string()]
    } else {
        suites
    };
    let vardir = mtr_vardir();
    let _ = fs::remove_dir_all(&vardir);
    fs::create_dir_all(&vardir)?;
    let mut m = Command::new(Path::new(MTR_DIR).join("mtr"));
    m.current_dir(MTR_DIR)
        .arg(format!("--suite={}", suites.join(",")))
        .arg(format!("--vardir={}", vardir.display()))
        .arg(format!("--mysqld=--plugin-dir={}", plugin_dir().display()))
        .arg(format!("--mysqld=--plugin-maturity={PLUGIN_MATURITY}"))
        .args(["--force", "--max-test-fail=0", "--parallel=auto"])
        .args(&extra);
    let result = run("mtr", m);
    // mtr writes .reject files beside the .result: move them out of the source tree, and
    // out of the installed suites our overlays extend (their rejects land beside the base
    // result, e.g. suite/storage_engine/trx/).
    let rejects = target().join("mtr").join("rejects");
    let mut reject_dirs: Vec<PathBuf> = fs::read_dir(&ours)?
        .flatten()
        .map(|e| e.path().join("r"))
        .collect();
    let base = Path::new(MTR_DIR).join("suite").join("storage_engine");
    reject_dirs.extend([base.clone(), base.join("parts"), base.join("trx")]);
    for dir in reject_dirs {
        let Ok(files) = files_ending(&dir, ".reject") else {
            continue;
        };
        for f in files {
            fs::create_dir_all(&rejects)?;
            if let Some(name) = f.file_name() {
                let to = rejects.join(name);
                fs::rename(&f, &to)?;
                eprintln!("reject file: {}", to.display());
            }
        }
    }
    result
}

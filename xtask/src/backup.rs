//! `cargo xtask backup` and `cargo xtask restore`: an online backup of the server that
//! `cargo xtask run` started, and putting one back (issue 20, item 1; plugin-shim/README.md,
//! "Online backup").
//!
//! A backup directory holds:
//! - `riptide/`: a checkpoint of the whole engine (`SET GLOBAL riptide_create_checkpoint`),
//!   taken while the server keeps serving writes;
//! - `frm/<schema>/`: the table definitions of every RIPTIDE table (`.frm`, `.par` of a
//!   partitioned one) and each schema's `db.opt`, read before and after the checkpoint: if
//!   any changed (DDL ran meanwhile) the backup fails, since they must match the checkpoint;
//! - `RESTORE.md`: what it holds and how to put it back by hand.
//!
//! It does not hold the server's other data (InnoDB tables, the `mysql` schema's users):
//! back those up with mariabackup or mariadb-dump. `restore` makes a fresh data directory
//! for the `run` server (the old one is kept aside), puts the table definitions and a copy
//! of the checkpoint in it, and starts the server.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::mariadb;

/// One table definition file of a RIPTIDE table, relative to the data directory.
struct DefinitionFile {
    /// `<schema>/<file>`.
    relative: PathBuf,
    /// Its bytes when first read.
    bytes: Vec<u8>,
}

/// The RIPTIDE tables' definition files and their schemas' `db.opt`, read now.
fn definition_files(datadir: &Path) -> Result<Vec<DefinitionFile>> {
    let listing = mariadb::output(mariadb::client(&[
        "-N",
        "-B",
        "-e",
        "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES \
         WHERE ENGINE = 'RIPTIDE' ORDER BY 1, 2",
    ]))?;
    let mut rel: Vec<PathBuf> = Vec::new();
    for line in listing.lines().filter(|l| !l.trim().is_empty()) {
        let Some((schema, table)) = line.split_once('\t') else {
            bail!("unexpected line from information_schema.TABLES: {line:?}");
        };
        let frm = Path::new(schema).join(format!("{table}.frm"));
        if !datadir.join(&frm).is_file() {
            bail!(
                "{} not found: the names of {schema}.{table} are stored encoded on disk, which \
                 this backup does not handle yet; back it up with mariadb-dump",
                datadir.join(&frm).display()
            );
        }
        rel.push(frm);
        let par = Path::new(schema).join(format!("{table}.par"));
        if datadir.join(&par).is_file() {
            rel.push(par);
        }
        let opt = Path::new(schema).join("db.opt");
        if datadir.join(&opt).is_file() && !rel.contains(&opt) {
            rel.push(opt);
        }
    }
    rel.into_iter()
        .map(|relative| {
            let p = datadir.join(&relative);
            let bytes = fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
            Ok(DefinitionFile { relative, bytes })
        })
        .collect()
}

/// The UTC time as `YYYYmmdd-HHMMSS`.
fn timestamp() -> Result<String> {
    let mut date = Command::new("date");
    date.args(["-u", "+%Y%m%d-%H%M%S"]);
    Ok(mariadb::output(date)?.trim().to_string())
}

/// `cargo xtask backup`: a backup of the running `cargo xtask run` server into `to`
/// (default `target/backups/riptide-<UTC time>`), which must not exist.
pub fn backup(to: Option<PathBuf>) -> Result<()> {
    if !mariadb::server_alive() {
        bail!(
            "no server answers on {}: start it with `cargo xtask run`",
            mariadb::socket().display()
        );
    }
    let dest = match to {
        Some(p) => std::path::absolute(&p)
            .with_context(|| format!("the absolute path of {}", p.display()))?,
        None => crate::root()
            .join("target")
            .join("backups")
            .join(format!("riptide-{}", timestamp()?)),
    };
    if dest.exists() {
        bail!(
            "{} exists: a backup goes into a new directory",
            dest.display()
        );
    }
    let parent = dest
        .parent()
        .context("the backup directory has no parent")?;
    fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    let datadir = PathBuf::from(
        mariadb::output(mariadb::client(&["-N", "-B", "-e", "SELECT @@datadir"]))?.trim(),
    );
    let before = definition_files(&datadir)?;
    fs::create_dir(&dest).with_context(|| format!("creating {}", dest.display()))?;
    let checkpoint = dest.join("riptide");
    let sql = format!(
        "SET GLOBAL riptide_create_checkpoint = '{}'",
        checkpoint.display().to_string().replace('\'', "''")
    );
    mariadb::output(mariadb::client(&["-e", &sql]))
        .with_context(|| format!("the checkpoint into {}", checkpoint.display()))?;
    let after = definition_files(&datadir)?;
    let same = before.len() == after.len()
        && before
            .iter()
            .zip(&after)
            .all(|(a, b)| a.relative == b.relative && a.bytes == b.bytes);
    if !same {
        let _ = fs::remove_dir_all(&dest);
        bail!(
            "a table definition changed while the checkpoint was taken (DDL ran): the backup \
             would not match; run it again when no ALTER, CREATE or DROP runs"
        );
    }
    for f in &before {
        let out = dest.join("frm").join(&f.relative);
        if let Some(dir) = out.parent() {
            fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        fs::write(&out, &f.bytes).with_context(|| format!("writing {}", out.display()))?;
    }
    let tables = before
        .iter()
        .filter(|f| f.relative.extension().is_some_and(|e| e == "frm"))
        .count();
    fs::write(dest.join("RESTORE.md"), restore_text(&dest, tables))?;
    let log = fs::read_to_string(mariadb::server_dir().join("mysqld.err")).unwrap_or_default();
    let line = log
        .lines()
        .rev()
        .find(|l| l.contains("RIPTIDE: checkpoint at sequence number"))
        .unwrap_or("");
    println!("Backup of {tables} RIPTIDE tables in {}", dest.display());
    if let Some(i) = line.find("RIPTIDE: ") {
        println!("  {}", &line[i..]);
    }
    println!("  restore: cargo xtask restore --from {}", dest.display());
    Ok(())
}

/// The backup's `RESTORE.md`.
fn restore_text(dest: &Path, tables: usize) -> String {
    format!(
        "# Riptide backup\n\n\
         - `riptide/`: a checkpoint of the Riptide engine (every RIPTIDE table, {tables} of \
         them, and the engine's data dictionary) at one moment: every transaction committed \
         before the backup began, none after it.\n\
         - `frm/`: those tables' definitions (`.frm`, `.par`) and their schemas' `db.opt`, as \
         they were at that moment.\n\n\
         Not here: InnoDB and other engines' tables, the `mysql` schema (users, grants), the \
         binary log. Back them up with mariabackup or mariadb-dump.\n\n\
         ## Restore\n\n\
         For the server of `cargo xtask run`: `cargo xtask stop`, then `cargo xtask restore \
         --from {}`.\n\n\
         By hand, for any MariaDB server with the Riptide plugin:\n\n\
         1. Stop the server.\n\
         2. Copy `frm/<schema>/` into `<datadir>/<schema>/` (create the schema's directory if \
         needed).\n\
         3. Copy `riptide/` to `<datadir>/#riptide` (or start the server with \
         `--riptide-data-dir=<a copy of riptide/>`). Copy, do not move: the engine writes \
         into its directory.\n\
         4. Start the server. Prepared XA transactions of the checkpoint are listed by \
         `XA RECOVER`.\n",
        dest.display()
    )
}

/// Copies directory `from` into the new directory `to`, recursively.
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for e in fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let e = e?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_type()?.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            fs::copy(&src, &dst)
                .with_context(|| format!("copying {} to {}", src.display(), dst.display()))?;
        }
    }
    Ok(())
}

/// `cargo xtask restore`: the `run` server on a new data directory holding the backup
/// `from`; the old data directory is kept as `target/mariadb/data.before-restore-<time>`.
pub fn restore(from: &Path) -> Result<()> {
    mariadb::plugin()?;
    let checkpoint = from.join("riptide");
    if !checkpoint.join("MANIFEST").is_file() || !from.join("frm").is_dir() {
        bail!(
            "{} is not a backup of `cargo xtask backup` (no riptide/MANIFEST or frm/)",
            from.display()
        );
    }
    if mariadb::server_alive() {
        bail!("the `cargo xtask run` server is running: stop it first (`cargo xtask stop`)");
    }
    let data = mariadb::server_dir().join("data");
    if data.exists() {
        let aside = mariadb::server_dir().join(format!("data.before-restore-{}", timestamp()?));
        fs::rename(&data, &aside)
            .with_context(|| format!("moving {} to {}", data.display(), aside.display()))?;
        println!("The old data directory is now {}", aside.display());
    }
    let mut install = Command::new("mariadb-install-db");
    install
        .arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .args(["--auth-root-authentication-method=normal", "--skip-test-db"]);
    if mariadb::is_root() {
        install.arg("--user=root");
    }
    install.stdout(std::process::Stdio::null());
    crate::run("create the data directory (mariadb-install-db)", install)?;
    copy_tree(&from.join("frm"), &data)?;
    copy_tree(&checkpoint, &data.join("#riptide"))?;
    mariadb::start_server(&data)?;
    println!("Restored {} into {}", from.display(), data.display());
    mariadb::print_connect();
    Ok(())
}

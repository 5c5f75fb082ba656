//! The embedded demo behind `cargo xtask run`: opens a database, writes and reads a number of
//! random keys (default one million: 16-byte keys, 100-byte values), and prints throughput
//! and the engine's statistics.
//!
//! Usage: `demo <db-dir> [keys]`. The directory is wiped first.

use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use rand::{Rng, SeedableRng, rngs::StdRng};
use riptide::{Db, Options, SyncMode};

fn key_of(i: u64) -> [u8; 16] {
    // A bijective scramble of i: random-looking, but every key can be found again.
    let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29) ^ 0xD6E8_FEB8_6659_FD93;
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&x.to_be_bytes());
    k[8..].copy_from_slice(&i.to_be_bytes());
    k
}

fn bar(n: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(n);
    pb.set_style(
        ProgressStyle::with_template("{msg:>8} [{bar:40}] {pos}/{len} ({per_sec}, eta {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().ok_or("usage: demo <db-dir> [keys]")?;
    let n: u64 = args
        .next()
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(1_000_000);
    let _ = std::fs::remove_dir_all(&dir);

    let db = Db::open(&dir, Options::default().sync_mode(SyncMode::None))?;
    println!("Riptide demo: {n} random 16-byte keys with 100-byte values in {dir}");
    println!("(sync mode None: acknowledged writes survive a process crash, not a power loss)");

    let mut rng = StdRng::seed_from_u64(7);
    let mut value = [0u8; 100];
    let pb = bar(n, "write");
    let start = Instant::now();
    for i in 0..n {
        rng.fill(&mut value[..]);
        db.put(&key_of(i), &value)?;
        if i % 4096 == 0 {
            pb.set_position(i);
        }
    }
    pb.finish_and_clear();
    let write_secs = start.elapsed().as_secs_f64();

    let pb = bar(n, "read");
    let start = Instant::now();
    let mut found = 0u64;
    for j in 0..n {
        let i = j.wrapping_mul(0x2545_F491_4F6C_DD1D) % n;
        if db.get(&key_of(i))?.is_some() {
            found += 1;
        }
        if j % 4096 == 0 {
            pb.set_position(j);
        }
    }
    pb.finish_and_clear();
    let read_secs = start.elapsed().as_secs_f64();
    if found != n {
        return Err(format!("read back {found} of {n} keys").into());
    }

    println!(
        "write: {n} keys in {write_secs:.2}s = {:.0} ops/s",
        n as f64 / write_secs
    );
    println!(
        "read:  {n} keys in {read_secs:.2}s = {:.0} ops/s (all found)",
        n as f64 / read_secs
    );
    println!("\nstatistics:\n{}", db.statistics());
    db.close()?;
    Ok(())
}

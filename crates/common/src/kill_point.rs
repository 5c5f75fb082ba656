//! Named kill points for crash testing: places inside flush, compaction, manifest writes and
//! WAL rotation where a crash is most likely to expose a bug. With the `kill-points` feature
//! (the crash test `riptide-stress` turns it on) and `RIPTIDE_KILL_POINTS` set, the process
//! kills itself with SIGKILL at a listed point, with a chance of 1 in N each time it passes;
//! without the feature [`kill_point`] compiles to nothing.
//!
//! `RIPTIDE_KILL_POINTS` is a comma-separated list of `name:N` (`*` matches every point),
//! e.g. `flush.before_install:5,manifest.before_rename:20`. The names are in [`POINTS`].

/// Every kill point, in the order data passes them.
pub const POINTS: &[&str] = &[
    "wal.rotate.after_sync",
    "wal.rotate.after_create",
    "flush.before_install",
    "flush.after_install",
    "ingest.before_install",
    "compaction.before_install",
    "compaction.after_install",
    "manifest.before_rename",
    "manifest.after_rename",
];

/// Kills the process here if the crash test asked for it (see the module documentation).
#[cfg(feature = "kill-points")]
pub fn kill_point(name: &str) {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};
    static ARMED: OnceLock<Vec<(String, u64)>> = OnceLock::new();
    static STATE: AtomicU64 = AtomicU64::new(0x9E37_79B9_7F4A_7C15);
    let armed = ARMED.get_or_init(|| {
        let spec = std::env::var("RIPTIDE_KILL_POINTS").unwrap_or_default();
        spec.split(',')
            .filter_map(|p| {
                let (n, one_in) = p.trim().split_once(':')?;
                Some((n.to_string(), one_in.parse().ok()?))
            })
            .collect()
    });
    let Some(one_in) = armed
        .iter()
        .find(|(n, _)| n == name || n == "*")
        .map(|(_, one_in)| (*one_in).max(1))
    else {
        return;
    };
    // A small xorshift, seeded per process by the clock: no dependency, no lock.
    let mut x = STATE.load(Ordering::Relaxed)
        ^ u64::from(std::process::id())
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos().into());
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    STATE.store(x, Ordering::Relaxed);
    if x.is_multiple_of(one_in) {
        eprintln!("riptide: kill point {name} fired");
        // SAFETY: kill(2) on our own pid with a valid signal number has no memory effects.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
    }
}

/// Kills the process here if the crash test asked for it: a no-op in this build (the
/// `kill-points` feature is off).
#[cfg(not(feature = "kill-points"))]
#[inline(always)]
pub fn kill_point(_name: &str) {}

//! Where the engine's log messages go when it runs inside a host process.

use std::io::Write;

/// Sends the engine's log messages (warnings about background work, recovery notes such as
/// dropped leftover temporary tables or orphan files) to standard error, one line each,
/// in the style of MariaDB's error log: `<time> 0 [Warning] RIPTIDE: <message>`. Messages
/// below `info` are dropped. The first call installs the logger; later calls, or a host
/// that installed its own `log` logger, change nothing. Never fails.
#[unsafe(no_mangle)]
pub extern "C" fn riptide_log_to_stderr() {
    let _ = std::panic::catch_unwind(|| {
        let _ = env_logger::Builder::new()
            .filter_level(log::LevelFilter::Info)
            .format(|buf, record| {
                let level = match record.level() {
                    log::Level::Error => "ERROR",
                    log::Level::Warn => "Warning",
                    _ => "Note",
                };
                writeln!(
                    buf,
                    "{} 0 [{level}] RIPTIDE: {}",
                    buf.timestamp_seconds(),
                    record.args()
                )
            })
            .target(env_logger::Target::Stderr)
            .try_init();
    });
}

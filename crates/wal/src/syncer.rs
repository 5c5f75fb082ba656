//! The background thread of [`crate::SyncMode::Interval`].

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use riptide_common::{Error, ErrorKind, Result};

use crate::writer::Writer;

/// The stop flag shared with the thread.
#[derive(Default)]
struct Stop {
    stopped: Mutex<bool>,
    cv: Condvar,
}

/// A thread that syncs the current segment every period if anything was written since the
/// last sync. Stopped (and joined) by [`Syncer::stop`] or on drop.
pub(crate) struct Syncer {
    stop: Arc<Stop>,
    handle: Option<JoinHandle<()>>,
}

impl Syncer {
    /// Starts the thread.
    pub(crate) fn start(writer: Arc<Writer>, period: Duration) -> Result<Syncer> {
        let stop = Arc::new(Stop::default());
        let thread_stop = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name("riptide-wal-sync".to_string())
            .spawn(move || run(&writer, period, &thread_stop))
            .map_err(|e| Error::io("spawn the WAL background sync thread", e))?;
        Ok(Syncer {
            stop,
            handle: Some(handle),
        })
    }

    /// Tells the thread to stop and waits for it.
    pub(crate) fn stop(&mut self) {
        *self.stop.stopped.lock() = true;
        self.stop.cv.notify_all();
        if let Some(h) = self.handle.take()
            && h.join().is_err()
        {
            log::error!("the WAL background sync thread panicked");
        }
    }
}

impl Drop for Syncer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn run(writer: &Writer, period: Duration, stop: &Stop) {
    loop {
        {
            let mut stopped = stop.stopped.lock();
            match Instant::now().checked_add(period) {
                Some(deadline) => {
                    while !*stopped && !stop.cv.wait_until(&mut stopped, deadline).timed_out() {}
                }
                None => {
                    while !*stopped {
                        stop.cv.wait(&mut stopped);
                    }
                }
            }
            if *stopped {
                return;
            }
        }
        if let Err(e) = writer.sync() {
            // Closed: the WAL was closed or already failed; nothing more to do here.
            if e.kind() != ErrorKind::Closed {
                log::error!(
                    "background sync of WAL {} failed: {e}",
                    writer.dir().display()
                );
            }
            return;
        }
    }
}

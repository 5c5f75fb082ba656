//! Closing a database frees its directory at once, even while a child process forked by the
//! program still holds a copy of the LOCK file's descriptor (a child between fork and exec,
//! or one that never execs): close unlocks explicitly instead of relying on the last
//! descriptor to close.
#![allow(clippy::unwrap_used)]

use riptide::{Db, Options, SyncMode};

#[test]
fn a_forked_child_does_not_keep_the_directory_locked_after_close() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default().sync_mode(SyncMode::None)).unwrap();
    db.put(b"k", b"v").unwrap();
    // SAFETY: the child only calls async-signal-safe functions (sleep, _exit) and touches
    // no Rust state, as required after fork in a multi-threaded process.
    let child = unsafe { libc::fork() };
    assert!(child >= 0, "fork failed");
    if child == 0 {
        // SAFETY: see above; the child holds its copy of every descriptor for 3 s.
        unsafe {
            libc::sleep(3);
            libc::_exit(0);
        }
    }
    db.close().unwrap();
    let reopened = Db::open(dir.path(), Options::default().sync_mode(SyncMode::None));
    let mut status = 0;
    // SAFETY: waits for the child forked above; `status` is a valid out-pointer.
    let waited = unsafe { libc::waitpid(child, &mut status, 0) };
    assert_eq!(waited, child);
    let db = reopened.expect("the directory must be free right after close");
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    db.close().unwrap();
}

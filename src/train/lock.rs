//! One trainer per run directory.
//!
//! A second trainer on a run (a requeued Slurm job whose first copy still runs, a user who
//! starts the run twice) would delete the first one's live temporary files, write shards under
//! the same names and rewrite `metrics.jsonl` under it. The trainer therefore holds an
//! exclusive `flock` on `RUN/lock` for as long as it runs. The kernel drops the lock when the
//! holder dies, however it dies, so a requeued job takes over a dead holder's run at once and
//! safely: there is no stale lock to judge by age or process id. The file also names its holder
//! (host, process id, start time) for the refusal message; that text is information only, the
//! `flock` alone decides. On NFS, Linux maps `flock` to the server's byte-range locks, so the
//! lock holds across the nodes of a cluster too.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// The lock file's name in a run directory.
pub const LOCK_FILE: &str = "lock";

/// A held run lock; dropped (or the process ended) releases it.
#[derive(Debug)]
pub struct RunLock {
    _file: File,
    pub path: PathBuf,
}

/// Why a run's lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another live process holds it; `holder` is what that process wrote into the file.
    #[error("{}: another trainer holds this run ({holder}); stop it first, or wait for it to end", path.display())]
    Held { path: PathBuf, holder: String },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
}

impl RunLock {
    /// Takes the lock of the run in `dir` (which must exist) without waiting.
    pub fn acquire(dir: &Path) -> Result<RunLock, LockError> {
        let path = dir.join(LOCK_FILE);
        let io = |source| LockError::Io { path: path.clone(), source };
        let mut file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).map_err(io)?;
        // SAFETY: flock on a file descriptor this function owns; no memory is shared.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                let holder = if holder.is_empty() { "holder unknown".to_string() } else { holder.to_string() };
                return Err(LockError::Held { path, holder });
            }
            return Err(io(err));
        }
        // The lock is ours: say who holds it (for the message a second trainer prints).
        let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let text = format!("process {} on {}, since unix time {since}\n", std::process::id(), hostname());
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        file.write_all(text.as_bytes()).map_err(io)?;
        Ok(RunLock { _file: file, path })
    }
}

/// This machine's host name ("unknown host" when it cannot be read).
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "unknown host".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tafl-lab-lock-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_second_holder_is_refused_and_the_lock_is_free_again_after_a_drop() {
        let d = scratch("twice");
        let first = RunLock::acquire(&d).unwrap();
        // flock locks belong to open file descriptions: a second open in this process is a
        // second holder, as another process would be.
        match RunLock::acquire(&d) {
            Err(LockError::Held { holder, .. }) => assert!(holder.contains(&format!("process {}", std::process::id())), "{holder}"),
            other => panic!("expected Held, got {other:?}"),
        }
        drop(first);
        RunLock::acquire(&d).expect("free once the holder is gone");
    }
}

//! Test-only fault points: with `TAFL_LAB_FAULT=<point>:<n>` in its environment, the process
//! kills itself with SIGKILL the `n`-th time it passes the named point.
//!
//! Why this exists: a run must survive being killed anywhere (tests/it/fault.rs kills a training
//! run over and over and resumes it), but a kill at a random moment almost never lands inside
//! a short phase: a checkpoint is written in microseconds. A named point lets the test kill
//! the trainer exactly there. The kill is SIGKILL sent to its own process with `kill(2)`, what
//! the OOM killer or `kill -9` would do: nothing runs afterwards, no destructor, no flush, no
//! signal handler (`abort()` raises SIGABRT instead, which can be caught and dumps core).
//!
//! The points, each counted on its own (only the named one is):
//! - `selfplay-game`: the trainer received a finished self-play game, not yet in a shard;
//! - `sgd-step`: an SGD step was taken;
//! - `eval-game`: an evaluation game ended;
//! - in every atomic file write ([`crate::fsio::atomic_write`], [`crate::fsio::atomic_create`]), `checkpoint-*` for
//!   `.safetensors` files (models and momentum buffers) and `file-*` for every other file:
//!   `-mid` when half the bytes are in the temporary file, `-rename` when the temporary file
//!   is complete and synced but not yet renamed; each also as `<point>:<file name>`
//!   (`file-mid:state.json`, `file-rename:latest`), counted apart, to kill at one file's write.
//!
//! The variable is read once. Unset (always, outside tests) a point does nothing; a value
//! that does not parse as `<point>:<n>` is ignored too (tests/it/fault.rs checks that every
//! process it arms dies by SIGKILL).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The environment variable that arms a fault point.
pub const VAR: &str = "TAFL_LAB_FAULT";

/// Passes the point `name`: SIGKILLs this process if it is the armed point's `n`-th passing.
pub fn point(name: &str) {
    static ARMED: OnceLock<Option<(String, u64)>> = OnceLock::new();
    static PASSED: AtomicU64 = AtomicU64::new(0);
    let armed = ARMED.get_or_init(|| {
        let v = std::env::var(VAR).ok()?;
        let (p, n) = v.rsplit_once(':')?;
        Some((p.to_string(), n.parse().ok()?))
    });
    if let Some((p, n)) = armed {
        if p == name && PASSED.fetch_add(1, Ordering::SeqCst) + 1 == *n {
            // SAFETY: kill(2) of our own process id; no memory is involved. SIGKILL cannot be
            // blocked, so it is delivered before kill returns.
            unsafe {
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
        }
    }
}

//! Crash-safe file writing: every file tafl-lab produces is written to a temporary name in
//! the same directory, synced, and renamed over the target, so a reader (or a process killed
//! mid-write) sees either the old file or the new one, never half of one.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;

/// Writes `bytes` to `path` atomically (temporary file, fsync, rename).
///
/// # Errors
/// Any I/O error; the target is then left as it was.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
    let tmp = dir.join(format!(".{}.tmp{}", name.to_string_lossy(), std::process::id()));
    let result = (|| {
        // Fault points (tests only, see crate::fault): a kill mid-write and before the rename.
        let (mid, before_rename) =
            if path.extension().is_some_and(|x| x == "safetensors") { ("checkpoint-mid", "checkpoint-rename") } else { ("file-mid", "file-rename") };
        let (head, tail) = bytes.split_at(bytes.len() / 2);
        let mut f = File::create(&tmp)?;
        f.write_all(head)?;
        crate::fault::point(mid);
        f.write_all(tail)?;
        f.sync_all()?;
        crate::fault::point(before_rename);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

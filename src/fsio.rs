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
    write_via_temp(path, bytes, |tmp| fs::rename(tmp, path))
}

/// As [`atomic_write`], but never replaces a file: when `path` exists already it fails with
/// [`io::ErrorKind::AlreadyExists`] and leaves that file alone. The check and the write are one
/// step (a hard link of the finished temporary file), so two writers choosing the same name
/// cannot both succeed.
pub fn atomic_create(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_via_temp(path, bytes, |tmp| {
        fs::hard_link(tmp, path)?;
        fs::remove_file(tmp)
    })
}

/// Writes `bytes` to a temporary file beside `path`, syncs it, and hands it to `publish`
/// (which moves it to `path`); then syncs the directory, so the new name survives a power cut.
/// The temporary file never outlives an error.
fn write_via_temp(path: &Path, bytes: &[u8], publish: impl FnOnce(&Path) -> io::Result<()>) -> io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
    let tmp = dir.join(format!(".{}.tmp{}", name.to_string_lossy(), std::process::id()));
    let result = (|| {
        // Fault points (tests only, see crate::fault): a kill mid-write and before the rename,
        // named after the file (`file-mid:state.json`) as well as by kind.
        let name = name.to_string_lossy();
        let (mid, before_rename) =
            if path.extension().is_some_and(|x| x == "safetensors") { ("checkpoint-mid", "checkpoint-rename") } else { ("file-mid", "file-rename") };
        let (head, tail) = bytes.split_at(bytes.len() / 2);
        let mut f = File::create(&tmp)?;
        f.write_all(head)?;
        crate::fault::point(mid);
        crate::fault::point(&format!("{mid}:{name}"));
        f.write_all(tail)?;
        f.sync_all()?;
        crate::fault::point(before_rename);
        crate::fault::point(&format!("{before_rename}:{name}"));
        publish(&tmp)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
        return result;
    }
    sync_dir(dir)
}

/// Syncs a directory's entries (after a rename into it). Systems that cannot open a directory
/// for syncing are let be.
fn sync_dir(dir: &Path) -> io::Result<()> {
    match File::open(dir) {
        Ok(d) => match d.sync_all() {
            Err(e) if e.kind() == io::ErrorKind::InvalidInput || e.kind() == io::ErrorKind::PermissionDenied => Ok(()),
            other => other,
        },
        Err(_) => Ok(()),
    }
}

/// The name of the file that `name` was a temporary file for, if it is one of
/// [`atomic_write`]'s (`.NAME.tmpPID`); such a file outlives only a process killed mid-write.
pub fn temp_target(name: &str) -> Option<&str> {
    let (target, pid) = name.strip_prefix('.')?.rsplit_once(".tmp")?;
    (!target.is_empty() && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())).then_some(target)
}

#[cfg(test)]
mod tests {
    use super::temp_target;

    #[test]
    fn temporary_names_give_their_target() {
        assert_eq!(temp_target(".state.json.tmp4242"), Some("state.json"));
        assert_eq!(temp_target(".g000001-trainer-0000.shard.tmp7"), Some("g000001-trainer-0000.shard"));
        for not in ["state.json", ".state.json", ".state.json.tmp", ".x.tmpabc", ".tmp12"] {
            assert_eq!(temp_target(not), None, "{not}");
        }
    }
}

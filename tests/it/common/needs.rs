//! What some tests need from outside the repository, and what they do without it.
//!
//! The peers folder (`../shared/peers`: OpenTafl and its host script) and the data folder
//! (`../shared/data`) lie beside the repository in this workplace and in CI, not in a user's
//! clone; Java, headless Chromium and hnefatafl-copenhagen's HTP engine are installed by
//! scripts/test.sh (scripts/peers.sh, scripts/browser.sh) where it can. A test that needs one
//! calls [`require`] first: where the thing is missing, the test is skipped (it returns at
//! once and passes) with one line saying what was skipped and why, printed on stderr and
//! appended to the file named by `TAFL_LAB_SKIP_LOG` (scripts/test.sh sets it and counts the
//! lines at the end). Under `CI=true` a missing thing fails the test instead, with the same
//! line.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Something a test needs from outside the repository.
#[derive(Clone, Copy, Debug)]
pub enum Need {
    /// OpenTafl, run through `../shared/peers/opentafl-host.sh`: the peers folder, Java 17+
    /// (`java` and `javac`), and the Debian Java libraries OpenTafl builds with (present, or
    /// OpenTafl already built, or root to let the host script install them). The path is the
    /// host script's.
    OpenTafl,
    /// The human game records in `../shared/data`. The path is the folder's.
    Data,
    /// hnefatafl-copenhagen's `hnefatafl-text-protocol`: `TAFL_LAB_HTP_ENGINE` (set by
    /// scripts/peers.sh), else its cached install.
    HtpEngine,
    /// A headless Chromium: `TAFL_LAB_CHROMIUM` (set by scripts/browser.sh), else `chromium` or
    /// `chromium-browser` on the PATH.
    Chromium,
    /// A one-node Slurm that scripts/slurm-local.sh can start: root, and Debian's slurmctld,
    /// slurmd, slurm-client and munge (installed by `scripts/slurm-local.sh install`, which
    /// scripts/test.sh runs). The path is the script's.
    Slurm,
}

impl Need {
    fn name(self) -> &'static str {
        match self {
            Need::OpenTafl => "OpenTafl",
            Need::Data => "the data folder",
            Need::HtpEngine => "hnefatafl-text-protocol",
            Need::Chromium => "Chromium",
            Need::Slurm => "a one-node Slurm",
        }
    }
}

/// The folder beside the repository that holds `peers/` and `data/` where it exists.
fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the repository has a parent folder").join("shared")
}

/// Whether `program ARG` runs and succeeds; else why not.
fn runs(program: &str, arg: &str) -> Result<(), String> {
    match Command::new(program).arg(arg).output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!("`{program} {arg}` failed ({})", o.status)),
        Err(e) => Err(format!("`{program} {arg}` cannot run ({e})")),
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid(2) has no arguments and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The folder the host script builds OpenTafl into: `OPENTAFL_WORK`, else
/// `~/.cache/tafl-lab/opentafl-6895051`.
pub fn opentafl_work() -> PathBuf {
    match std::env::var_os("OPENTAFL_WORK") {
        Some(w) => PathBuf::from(w),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/tafl-lab/opentafl-6895051"),
    }
}

/// The path of what `what` names, or why it is missing (nothing recorded: see [`require`]).
pub fn locate(what: Need) -> Result<PathBuf, String> {
    match what {
        Need::OpenTafl => {
            let host = shared().join("peers/opentafl-host.sh");
            if !host.is_file() {
                return Err(format!("{} is missing (the peers folder lies beside the repository only in the workplace and CI)", host.display()));
            }
            runs("java", "-version").map_err(|e| format!("{e}: install a JDK 17+"))?;
            runs("javac", "-version").map_err(|e| format!("{e}: install a JDK 17+ (with javac)"))?;
            // The host script builds OpenTafl once with Debian's libini4j-java, libjline2-java
            // and libjsonp-java, which it installs with apt-get (as root) when missing.
            let built = opentafl_work().join("out/com/manywords/softworks/tafl/OpenTafl.class").is_file();
            let libs = ["ini4j.jar", "jline2.jar", "javax.json.jar"].iter().all(|j| Path::new("/usr/share/java").join(j).is_file());
            if !built && !libs && !is_root() {
                return Err(
                    "Debian's libini4j-java, libjline2-java and libjsonp-java are not installed, and only root lets the host script install them".into()
                );
            }
            Ok(host)
        }
        Need::Data => {
            let d = shared().join("data");
            if d.is_dir() {
                Ok(d)
            } else {
                Err(format!("{} is missing (the data folder lies beside the repository only in the workplace and CI)", d.display()))
            }
        }
        Need::HtpEngine => {
            let p = std::env::var_os("TAFL_LAB_HTP_ENGINE").filter(|p| !p.is_empty()).map(PathBuf::from).unwrap_or_else(|| {
                PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/tafl-lab/hnefatafl-copenhagen-6.4.1/bin/hnefatafl-text-protocol")
            });
            if p.is_file() {
                Ok(p)
            } else {
                Err(format!("{} is missing (scripts/peers.sh installs it from crates.io)", p.display()))
            }
        }
        Need::Slurm => {
            if !is_root() {
                return Err("scripts/slurm-local.sh runs slurmd, which must be root".into());
            }
            let path = std::env::var_os("PATH").unwrap_or_default();
            for program in ["munged", "mungekey", "slurmctld", "slurmd", "sbatch", "scontrol"] {
                if !std::env::split_paths(&path).any(|d| d.join(program).is_file()) {
                    return Err(format!("`{program}` is not on the PATH (scripts/slurm-local.sh install puts it there with apt-get)"));
                }
            }
            Ok(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-local.sh"))
        }
        Need::Chromium => {
            if let Some(p) = std::env::var_os("TAFL_LAB_CHROMIUM").filter(|p| !p.is_empty()) {
                let p = PathBuf::from(p);
                return if p.is_file() { Ok(p) } else { Err(format!("TAFL_LAB_CHROMIUM is {}, which is missing", p.display())) };
            }
            let path = std::env::var_os("PATH").unwrap_or_default();
            ["chromium", "chromium-browser"].iter().flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name))).find(|p| p.is_file()).ok_or_else(
                || "no `chromium` or `chromium-browser` on the PATH and TAFL_LAB_CHROMIUM is unset (scripts/browser.sh installs it with apt-get)".into(),
            )
        }
    }
}

/// Whether this is a CI run (`CI=true`), where nothing may be skipped.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// The path of what the calling test needs, or `None` when it is missing: then the test is
/// skipped (the caller returns), with the line `skipped TARGET::TEST: needs WHAT: WHY` on stderr
/// and appended to the file `TAFL_LAB_SKIP_LOG` names. Under `CI=true` a missing thing panics
/// instead, with `TARGET::TEST: needs WHAT: WHY (CI=true, so this fails ...)`.
pub fn require(what: Need) -> Option<PathBuf> {
    match locate(what) {
        Ok(p) => Some(p),
        Err(why) => {
            skip(what.name(), &why);
            None
        }
    }
}

/// Skips the calling test because `what` is missing (`why`): the line `skipped TARGET::TEST:
/// needs WHAT: WHY` on stderr and in `TAFL_LAB_SKIP_LOG`; under `CI=true` a panic instead. For
/// tests whose need is not a [`Need`] (a tmpfs mount, say); the caller returns after it.
pub fn skip(what: &str, why: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("?");
    let what_why = format!("{}::{test}: needs {what}: {why}", env!("CARGO_CRATE_NAME"));
    if in_ci() {
        panic!("{what_why} (CI=true, so this fails instead of being skipped)");
    }
    let line = format!("skipped {what_why}");
    eprintln!("{line}");
    if let Some(log) = std::env::var_os("TAFL_LAB_SKIP_LOG").filter(|l| !l.is_empty()) {
        // One write per line, appended: tests of several targets share the file.
        let written = std::fs::OpenOptions::new().create(true).append(true).open(&log).and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()));
        if let Err(e) = written {
            eprintln!("cannot append to TAFL_LAB_SKIP_LOG {}: {e}", Path::new(&log).display());
        }
    }
}

//! Running the binary from integration tests: output, one-line errors, scratch directories,
//! and a match's JSON without its times.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The tafl-lab binary built for these tests.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tafl-lab"))
}

/// Runs the binary to completion.
pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("binary runs")
}

/// Runs the binary with `input` on standard input, to completion.
pub fn run_stdin(args: &[&str], input: &str) -> Output {
    run_stdin_bytes(args, input.as_bytes())
}

/// Runs the binary with `input` (any bytes, UTF-8 or not) on standard input, to completion.
pub fn run_stdin_bytes(args: &[&str], input: &[u8]) -> Output {
    let mut child = bin().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("binary runs");
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// A successful command's standard output.
pub fn ok(o: &Output) -> String {
    assert!(o.status.success(), "stderr: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A failed command: exit code 1 and exactly one line on stderr, which contains `needle`.
pub fn fails_with(o: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains(needle), "`{needle}` not in: {err}");
}

/// An empty scratch directory unique to this test process and `tag` (not created).
pub fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tafl-lab-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// A tiny untrained network of `variant` (1 block x 8 channels) written to `path`, for tests
/// that need a model file but not a good one.
pub fn new_model(path: &Path, variant: &str) {
    ok(&run(&["new-model", "--variant", variant, "--out", path.to_str().unwrap(), "--blocks", "1", "--channels", "8"]));
}

/// `match --json` output without what the clock decides: `seconds` and the agents' think
/// seconds (their move counts stay, so a merged match's must equal the whole match's).
pub fn untimed_match(v: &mut serde_json::Value) {
    v.as_object_mut().expect("a match's JSON object").remove("seconds").expect("a match's seconds");
    let think = v["think"].as_object_mut().expect("a match's think");
    for k in ["a_seconds", "b_seconds", "a_seconds_per_move", "b_seconds_per_move"] {
        think.remove(k).unwrap_or_else(|| panic!("think has {k}"));
    }
}

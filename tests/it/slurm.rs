//! A real Slurm on this machine (scripts/slurm-local.sh: munged, slurmctld and slurmd from
//! Debian's packages, one node). The job scripts users submit run under it unchanged:
//!
//! - a trainer (scripts/slurm-train.sh, `in_process = false`) and a two-task worker array
//!   (scripts/slurm-selfplay.sh), submitted together, train generations from the workers'
//!   shards;
//! - one worker cancelled (`scancel`) while it plays a shard writes nothing, nothing
//!   half-written is read (every shard in the run passes its checks and the trainer rejects
//!   none), and once the task is requeued (`scontrol requeue`) a new process of it writes
//!   shards the run trains on; the test prints what the cancel lost (docs/cluster.md quotes it);
//! - the trainer ends at its budget and the workers stop after it, all with exit code 0;
//! - a match, a tournament and a balance run divided into shards (scripts/slurm/) run as job
//!   arrays with merge jobs that wait for them (afterok), and each merged JSON is the whole
//!   run's (seconds aside).
//!
//! Needs root and the Slurm packages (`scripts/slurm-local.sh install`, which scripts/test.sh
//! runs); skipped with one line elsewhere, failed under CI=true.

use crate::common;

use common::cli::untimed_match;
use common::needs::{require, Need};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use tafl_lab::rules::Variant;
use tafl_lab::selfplay::shard;

/// The repository root: the job scripts run from there (the submit directory).
fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A one-node Slurm in `dir`, stopped when dropped (also when the test panics).
struct Cluster {
    script: PathBuf,
    dir: PathBuf,
    conf: PathBuf,
}

impl Cluster {
    fn start(script: PathBuf, dir: &Path) -> Cluster {
        // Ports of this process's own (daemons an earlier, killed run left behind keep theirs).
        let port = 20_000 + 2 * (std::process::id() % 10_000);
        let o = Command::new(&script)
            .args(["start", dir.to_str().unwrap()])
            .env("TAFL_LAB_SLURM_PORT", port.to_string())
            .output()
            .expect("scripts/slurm-local.sh runs");
        let cluster = Cluster { script, dir: dir.to_path_buf(), conf: dir.join("slurm.conf") };
        assert!(o.status.success(), "scripts/slurm-local.sh start failed: {}{}", String::from_utf8_lossy(&o.stderr), cluster.logs());
        cluster
    }

    /// A Slurm command against this cluster; panics with its error and the daemons' logs when
    /// it fails.
    fn cmd(&self, program: &str, args: &[&str]) -> String {
        let o = Command::new(program)
            .args(args)
            .current_dir(repo())
            .env("SLURM_CONF", &self.conf)
            .env("TAFL_LAB_BIN", env!("CARGO_BIN_EXE_tafl-lab"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{program} {args:?} failed: {}{}", String::from_utf8_lossy(&o.stderr), self.logs());
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }

    /// Submits with `sbatch --parsable` and returns the job id.
    fn sbatch(&self, args: &[&str]) -> String {
        let out = self.cmd("sbatch", &[&["--parsable"], args].concat());
        out.split(';').next().unwrap().to_string()
    }

    /// (JobState, ExitCode) of a job or array task (`ID` or `ID_TASK`).
    fn state(&self, job: &str) -> (String, String) {
        let text = self.cmd("scontrol", &["show", "job", "--oneliner", job]);
        let field = |name: &str| text.split_whitespace().find_map(|w| w.strip_prefix(name)).unwrap_or("?").to_string();
        (field("JobState="), field("ExitCode="))
    }

    /// The tail of the daemons' logs, for a failure message.
    fn logs(&self) -> String {
        let mut s = String::new();
        for name in ["slurmctld.log", "slurmd.log"] {
            let text = std::fs::read_to_string(self.dir.join("log").join(name)).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(15).collect();
            s += &format!("\n--- {name} (last lines) ---\n{}", tail.into_iter().rev().collect::<Vec<_>>().join("\n"));
        }
        s
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(&self.script).args(["stop", self.dir.to_str().unwrap()]).status();
    }
}

/// Polls `done` every 200 ms until it holds; panics after `limit` with `what` and `context()`.
fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool, context: impl Fn() -> String) {
    let t = Instant::now();
    while !done() {
        assert!(t.elapsed() < limit, "timed out after {} s waiting for {what}{}", limit.as_secs(), context());
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn state_json(run: &Path) -> serde_json::Value {
    std::fs::read_to_string(run.join("state.json")).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or(serde_json::Value::Null)
}

fn generation(run: &Path) -> u64 {
    state_json(run)["generation"].as_u64().unwrap_or(0)
}

/// The run's shard files as (file name, writer, model generation, modified).
fn shards(run: &Path) -> Vec<(String, String, u64, SystemTime)> {
    let Ok(dir) = std::fs::read_dir(run.join("games")) else { return Vec::new() };
    let mut v: Vec<_> = dir
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().to_string_lossy().into_owned();
            let (g, writer) = shard::parse_file_name(&name)?;
            let writer = writer.to_string();
            Some((name, writer, g, e.metadata().ok()?.modified().ok()?))
        })
        .collect();
    v.sort();
    v
}

const RUN_CONFIG: &str = r#"
name = "slurm"
variant = "brandubh"
seed = 11
device = "cpu"

[net]
blocks = 1
channels = 8

[selfplay]
in_process = false
games_per_generation = 4
games_per_shard = 2
games_in_flight = 2
threads = 1
batch = 32
fast_probability = 0.5
fast_sims = 4

[selfplay.search]
sims = 8
root = { kind = "gumbel", k = 4 }

[train]
window_positions = 5000
batch_size = 32
steps_per_generation = 3
learning_rate = 0.01

[eval]
games = 2
sims = 8
baselines = ["random"]
every = 0

[budget]
generations = 10
"#;

/// RUN_CONFIG's budget.
const GENERATIONS: u64 = 10;

#[test]
fn trainer_and_worker_array_survive_a_cancelled_worker() {
    let Some(script) = require(Need::Slurm) else { return };
    let root = common::cli::scratch("slurm");
    std::fs::create_dir_all(&root).unwrap();
    let cluster = Cluster::start(script, &root.join("cluster"));
    let run = root.join("run");
    let config = root.join("run.toml");
    std::fs::write(&config, RUN_CONFIG).unwrap();
    let (run_s, logs) = (run.to_str().unwrap(), root.to_str().unwrap());
    // CPU jobs of one core each: a trainer and two workers fit the node's four.
    let cpu = ["--gres=none", "--cpus-per-task=1"];
    let trainer = cluster.sbatch(&[&cpu[..], &["--output", &format!("{logs}/train.log"), "scripts/slurm-train.sh", config.to_str().unwrap(), run_s]].concat());
    // Submitted at once: a worker waits for its trainer to create the run.
    let workers = cluster
        .sbatch(&[&cpu[..], &["--array=0-1", "--open-mode=append", "--output", &format!("{logs}/worker-%a.log"), "scripts/slurm-selfplay.sh", run_s]].concat());
    let context = || {
        let mut s = String::new();
        for e in std::fs::read_dir(&root).unwrap().flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "log") {
                s += &format!("\n--- {} ---\n{}", p.display(), std::fs::read_to_string(&p).unwrap_or_default());
            }
        }
        s + &cluster.logs()
    };

    // Generations trained from both workers' shards.
    let trainer_alive = || {
        let (state, code) = cluster.state(&trainer);
        assert!(matches!(state.as_str(), "PENDING" | "RUNNING" | "COMPLETED"), "the trainer job is {state} ({code}){}", context());
    };
    let writers = || shards(&run).into_iter().map(|s| s.1.split('-').next().unwrap().to_string()).collect::<std::collections::BTreeSet<String>>();
    wait_until(
        Duration::from_secs(120),
        "two generations, and shards of both workers",
        || {
            trainer_alive();
            generation(&run) >= 2 && writers().len() == 2
        },
        context,
    );
    assert_eq!(writers().into_iter().collect::<Vec<_>>(), ["slurm0", "slurm1"], "the workers' shards{}", context());

    // Worker 1 is suspended for a while, so that the run can go on only through worker 0's
    // requeued successor. Then worker 0 is cancelled while it plays (it is always playing but
    // for the instant of a write).
    let (task0, task1) = (format!("{workers}_0"), format!("{workers}_1"));
    cluster.cmd("scontrol", &["suspend", &task1]);
    assert_eq!(cluster.state(&task0).0, "RUNNING");
    let before = shards(&run);
    let old_writer = before.iter().filter(|s| s.1.starts_with("slurm0-")).map(|s| s.1.clone()).next_back().expect("worker 0 wrote a shard");
    let last_shard = before.iter().filter(|s| s.1 == old_writer).map(|s| s.3).max().unwrap();
    cluster.cmd("scancel", &[&task0]);
    let cancelled_at = SystemTime::now();
    let generation_at_cancel = generation(&run);
    wait_until(Duration::from_secs(30), "the cancelled task to end", || cluster.state(&task0).0 == "CANCELLED", context);
    let lost = cancelled_at.duration_since(last_shard).unwrap_or_default();
    eprintln!(
        "slurm: worker 0 ({old_writer}) cancelled at generation {generation_at_cancel}, {:.1} s after its last shard: its games in flight (at most games_per_shard = 2) are lost, nothing else",
        lost.as_secs_f64()
    );
    // With no worker left the run stalls (at most one generation more, from shards written
    // before the cancel).
    std::thread::sleep(Duration::from_secs(2));
    let stalled = generation(&run);
    assert!(stalled <= generation_at_cancel + 1, "generation {stalled} with no worker running (cancelled at {generation_at_cancel})");

    // Requeued (a preempted or failed node's task comes back the same way), at once: Slurm
    // otherwise holds a requeued job for two minutes. The run goes on by its shards alone.
    cluster.cmd("scontrol", &["requeue", &task0]);
    cluster.cmd("scontrol", &["update", &format!("JobId={task0}"), "StartTime=now"]);
    wait_until(Duration::from_secs(90), "two generations from the requeued worker", || generation(&run) >= stalled + 2, context);
    let requeued: Vec<_> = shards(&run).into_iter().filter(|s| s.1.starts_with("slurm0-") && s.1 != old_writer).collect();
    assert!(!requeued.is_empty(), "the requeued worker wrote no shard{}", context());
    assert!(requeued.iter().all(|s| s.2 >= generation_at_cancel));
    cluster.cmd("scontrol", &["resume", &task1]);

    wait_until(Duration::from_secs(120), "the trainer to spend its budget", || matches!(cluster.state(&trainer).0.as_str(), "COMPLETED" | "FAILED"), context);
    assert_eq!(cluster.state(&trainer), ("COMPLETED".into(), "0:0".into()), "the trainer{}", context());
    let state = state_json(&run);
    assert_eq!(state["generation"], GENERATIONS, "{state}");
    assert_eq!(state["finished"], true, "{state}");
    // The dead process wrote nothing after its cancel.
    let after = shards(&run);
    assert!(after.iter().all(|s| s.1 != old_writer || s.3 <= cancelled_at), "a shard of the cancelled process appeared after its cancel");

    // Nothing half-written is read: every shard passes its checksum and replays, and the
    // trainer rejected none (it says so in its log when it does).
    let variant = Arc::new(Variant::from_spec("brandubh").unwrap());
    for (name, ..) in &after {
        shard::read_checked(&run.join("games").join(name), &variant, GENERATIONS).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let train_log = std::fs::read_to_string(root.join("train.log")).unwrap();
    assert!(!train_log.contains("reject"), "the trainer rejected a shard:\n{train_log}");

    // The workers stop once the trainer is done (each checks before a shard).
    for task in [&task0, &task1] {
        wait_until(Duration::from_secs(60), "the workers to stop after the trainer", || cluster.state(task).0 == "COMPLETED", context);
        assert_eq!(cluster.state(task).1, "0:0", "{task}{}", context());
    }
    let games: u64 = state["selfplay_games"].as_u64().unwrap();
    assert!(games >= GENERATIONS * 4, "{games} self-play games trained on");

    // The divisible jobs, each as a two-task array and a merge job that waits for both
    // (afterok), all submitted at once; each merged result is the one a whole run gives here.
    let jobs = root.join("jobs");
    let m_args = ["--variant", "brandubh", "--a", "mcts:sims=8", "--b", "random", "--games", "6", "--seed", "3", "--opening-plies", "2"];
    let t_args = ["--variant", "brandubh", "--agents", "random;mcts:sims=8", "--games", "4", "--seed", "3"];
    let b_args = ["--variants", "brandubh", "--agent", "mcts:sims=8", "--sims", "4,8", "--games", "4", "--seed", "5", "--opening-plies", "2"];
    for (script, args) in [("match.sh", &m_args[..]), ("tournament.sh", &t_args[..]), ("balance.sh", &b_args[..])] {
        let out = jobs.join(script.trim_end_matches(".sh"));
        let o = Command::new(repo().join("scripts/slurm").join(script))
            .args([&["2", out.to_str().unwrap()], args].concat())
            .env("SLURM_CONF", &cluster.conf)
            .env("SBATCH_ARGS", "--cpus-per-task=1")
            .output()
            .unwrap();
        assert!(o.status.success(), "scripts/slurm/{script}: {}", String::from_utf8_lossy(&o.stderr));
    }
    let whole = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_tafl-lab")).args(args).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let json =
        |p: &Path| -> serde_json::Value { serde_json::from_str(&std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap() };
    let whole_match: serde_json::Value = serde_json::from_str(&whole(&[&["match"], &m_args[..], &["--json", "--quiet"]].concat())).unwrap();
    let (t_whole, b_whole) = (root.join("whole-tournament"), root.join("whole-balance"));
    whole(&[&["tournament"], &t_args[..], &["--out", t_whole.to_str().unwrap(), "--quiet"]].concat());
    whole(&[&["balance"], &b_args[..], &["--out", b_whole.to_str().unwrap(), "--quiet"]].concat());
    let merged = [jobs.join("match/match.json"), jobs.join("tournament/tournament.json"), jobs.join("balance/balance.json")];
    let merge_logs = || {
        let mut s = String::new();
        for job in ["match", "tournament", "balance"] {
            for log in std::fs::read_dir(jobs.join(job).join("logs")).into_iter().flatten().flatten() {
                s += &format!("\n--- {} ---\n{}", log.path().display(), std::fs::read_to_string(log.path()).unwrap_or_default());
            }
        }
        s + &cluster.logs()
    };
    // A merged file is complete once it parses (the merge job writes the match's with `>`).
    wait_until(
        Duration::from_secs(90),
        "the three merge jobs",
        || merged.iter().all(|p| std::fs::read_to_string(p).is_ok_and(|t| serde_json::from_str::<serde_json::Value>(&t).is_ok())),
        merge_logs,
    );
    let mut merged_match = json(&merged[0]);
    let mut whole_match = whole_match;
    for m in [&mut merged_match, &mut whole_match] {
        untimed_match(m);
    }
    assert_eq!(merged_match, whole_match, "the match");
    assert_eq!(merged_match["games"], 6);
    assert_eq!(json(&merged[1]), json(&t_whole.join("tournament.json")), "the tournament");
    assert_eq!(json(&merged[2]), json(&b_whole.join("balance.json")), "the balance run");
    drop(cluster);
    let _ = std::fs::remove_dir_all(&root);
}

//! Fault campaign: a short training run is killed with SIGKILL at 20 seeded moments and
//! resumed after each, and a run whose disk fills up stops with one line and resumes once
//! there is space again. After every kill, and at the end, the run directory must hold a
//! consistent run:
//! - every file under its final name reads: `config.toml` and `metrics.jsonl` parse as what
//!   the trainer and `report` read, `run.json` and `state.json` parse, every model loads for
//!   the run's variant and says its generation, every momentum file loads into its model's
//!   optimizer, `latest` names a model, every shard passes the trainer's own checks;
//! - the only other files are the temporary files of the process just killed (a resumed
//!   trainer removes those of earlier processes);
//! - generations are contiguous: metrics lines 1..=G (G the state's generation, or G + 1 when
//!   the kill fell between the metrics line and the state), models 0..=G (or G + 1), each
//!   completed generation with its momentum file, `latest` at G or G + 1;
//! - no self-play game is lost or counted twice: each completed generation's model played
//!   exactly slots 0..games_per_generation, once each; the unfinished one a subset of them;
//!   every metrics line counts games_per_generation games and the state counts G times that;
//!   and a game on disk stays on disk, unchanged, through every later kill and resume.
//!
//! The moments: half the kills are seeded random delays after the start of the process, the
//! other half the named fault points of `tafl_lab::fault` (`TAFL_LAB_FAULT=<point>:<n>`, `n`
//! seeded), so that the run's creation, self-play, SGD, checkpoint writes (mid-write and
//! before the rename), other file writes and evaluation are each hit for certain. The plan is
//! printed first; the points replay exactly, the delays as closely as the machine's speed
//! allows.

use crate::common;

use common::cli::{bin, scratch};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tafl_lab::nn::checkpoint;
use tafl_lab::rules::Variant;
use tafl_lab::selfplay::shard;
use tafl_lab::train::optim::Sgd;
use tafl_lab::train::RunConfig;
use tch::Device;

const SMOKE: &str = "configs/runs/smoke.toml";
/// The seed of the campaign's moments.
const SEED: u64 = 2607;
const KILLS: usize = 20;
/// The fault points, with the largest `n` drawn for each: reached within two generations of
/// the smoke config (4 games, 3 SGD steps, 2 checkpoint files, 5 other files and 4
/// evaluation games a generation).
const POINTS: [(&str, u64); 7] =
    [("selfplay-game", 6), ("sgd-step", 5), ("checkpoint-mid", 4), ("checkpoint-rename", 4), ("file-mid", 8), ("file-rename", 8), ("eval-game", 6)];
/// Longest a process armed with a fault point may take to reach it.
const POINT_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Clone, Debug)]
enum Moment {
    /// SIGKILL from the test this long after the process starts.
    Delay(Duration),
    /// The process SIGKILLs itself at the `n`-th passing of the point.
    Point(&'static str, u64),
}

impl std::fmt::Display for Moment {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Moment::Delay(d) => write!(f, "after {} ms", d.as_millis()),
            Moment::Point(p, n) => write!(f, "{}={p}:{n}", tafl_lab::fault::VAR),
        }
    }
}

/// The kills: the first in the middle of writing generation 0's model, while the run is
/// being created (so a run killed before it has a state is started again); then random
/// delays and the points in turn, the points' `n` and the delays drawn from `seed`.
fn plan(seed: u64) -> Vec<Moment> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut moments = vec![Moment::Point("checkpoint-mid", 1)];
    for i in 1..KILLS {
        moments.push(if i % 2 == 1 {
            Moment::Delay(Duration::from_millis(rng.gen_range(100..2500)))
        } else {
            let (p, max) = POINTS[(i / 2 - 1) % POINTS.len()];
            Moment::Point(p, rng.gen_range(1..=max))
        });
    }
    moments
}

/// A trainer on `dir` that stops after generation `generations`: a resume when the run has a
/// state, a new run of the smoke config otherwise (a run killed before its first state has
/// nothing to resume), armed with `fault` if given. Its stderr goes to `log`.
fn trainer(dir: &Path, generations: u64, fault: Option<String>, log: &Path) -> Child {
    let d = dir.to_str().unwrap();
    let mut cmd = bin();
    if dir.join("state.json").exists() {
        cmd.args(["train", "--run-dir", d, "--resume"]);
    } else {
        cmd.args(["train", "--config", SMOKE, "--run-dir", d]);
    }
    cmd.args(["--generations", &generations.to_string(), "--quiet"]).env_remove(tafl_lab::fault::VAR).env("RUST_BACKTRACE", "1");
    if let Some(f) = fault {
        cmd.env(tafl_lab::fault::VAR, f);
    }
    cmd.stdout(Stdio::null()).stderr(std::fs::File::create(log).unwrap()).spawn().unwrap()
}

/// Waits for `child` until `limit`; `None` if it still runs.
fn wait_until(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let t = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s);
        }
        if t.elapsed() >= limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// What a consistent run directory holds, as far as the campaign compares them.
#[derive(Debug, Default)]
struct Snapshot {
    /// `state.json`'s generation (None before the run's first state).
    generation: Option<u64>,
    /// Plies of each game on disk, by (model generation, slot).
    games: BTreeMap<(u64, u64), usize>,
    /// Temporary files left by a killed process.
    leftovers: Vec<String>,
}

fn read_json(p: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The process id in the name of a temporary file of `fsio::atomic_write`, if it is one.
fn temp_file_pid(name: &str) -> Option<u32> {
    name.strip_prefix('.')?.rsplit_once(".tmp")?.1.parse().ok()
}

/// Checks the run directory (see the module documentation). `last_pid` is the process just
/// killed (its temporary files may remain), or None after a clean exit (then none may). An
/// earlier process's temporary file may remain only when the last one was killed before it
/// removed them (`before_cleanup`: its log has no start line, which it prints after; on a
/// loaded machine a kill a second after the start can fall there). With `done`, the run ended
/// cleanly: the state and the metrics must agree exactly.
fn check_run(dir: &Path, last_pid: Option<u32>, before_cleanup: bool, done: bool) -> Snapshot {
    let mut snap = Snapshot::default();
    if !dir.join("state.json").exists() {
        assert!(!done, "a finished run has a state");
        // Killed while creating the run, which is then started anew: only its temporary
        // files are of interest.
        for sub in ["", "models", "games"] {
            for e in std::fs::read_dir(dir.join(sub)).into_iter().flatten() {
                let name = e.unwrap().file_name().into_string().unwrap();
                if temp_file_pid(&name).is_some() {
                    snap.leftovers.push(Path::new(sub).join(&name).display().to_string());
                }
            }
        }
        return snap;
    }
    let cfg_text = std::fs::read_to_string(dir.join("config.toml")).unwrap();
    let cfg = RunConfig::from_toml(&cfg_text, "config.toml").unwrap_or_else(|e| panic!("{e}"));
    let variant = Arc::new(Variant::from_spec(&cfg.variant).unwrap());
    let per_generation = cfg.selfplay.games_per_generation as u64;
    read_json(&dir.join("run.json"));
    let state = read_json(&dir.join("state.json"));
    let g = state["generation"].as_u64().unwrap();
    snap.generation = Some(g);
    assert_eq!(state["selfplay_games"].as_u64(), Some(g * per_generation), "state: {state}");

    // Every entry: known files, or the last process's temporary files.
    let mut seen: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for sub in ["", "models", "games"] {
        for e in std::fs::read_dir(dir.join(sub)).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().into_string().unwrap();
            if e.file_type().unwrap().is_dir() {
                assert!(sub.is_empty() && (name == "models" || name == "games"), "unexpected directory {sub}/{name}");
                continue;
            }
            if let Some(pid) = temp_file_pid(&name) {
                if !before_cleanup {
                    assert_eq!(Some(pid), last_pid, "{sub}/{name}: a temporary file of an earlier process");
                }
                snap.leftovers.push(Path::new(sub).join(&name).display().to_string());
                continue;
            }
            seen.entry(sub).or_default().push(name);
        }
    }
    let root: BTreeSet<&str> = seen[""].iter().map(String::as_str).collect();
    let expected: BTreeSet<&str> = ["config.toml", "run.json", "state.json", "metrics.jsonl", "lock"].into();
    assert!(root.is_subset(&expected) && root.len() >= 3, "root files: {root:?}");

    // Metrics: contiguous from 1, each generation once.
    let metrics = if dir.join("metrics.jsonl").exists() {
        tafl_lab::report::learning::read_metrics(&dir.join("metrics.jsonl")).unwrap_or_else(|e| panic!("{e}"))
    } else {
        Vec::new()
    };
    let gens: Vec<u64> = metrics.iter().map(|m| m.generation).collect();
    let ahead = gens.len() as u64 == g + 1;
    assert!(gens == (1..=g).collect::<Vec<_>>() || (!done && ahead && gens == (1..=g + 1).collect::<Vec<_>>()), "metrics generations {gens:?}, state {g}");
    for m in &metrics {
        assert_eq!(m.selfplay.games, per_generation, "generation {}", m.generation);
    }

    // Models: 0..=G (or G + 1), each loads and says its generation; momentum files load.
    let mut models = BTreeSet::new();
    let mut optims = BTreeSet::new();
    for name in &seen["models"] {
        if name == "latest" {
            continue;
        }
        let gen: u64 = name.split('.').next().unwrap().parse().unwrap_or_else(|_| panic!("models/{name}"));
        if name.ends_with(".optim.safetensors") {
            optims.insert(gen);
        } else {
            assert!(name.ends_with(".safetensors"), "models/{name}");
            models.insert(gen);
        }
    }
    let top = *models.last().expect("generation 0 exists");
    assert!(models == (0..=top).collect() && (top == g || (!done && top == g + 1)), "models {models:?}, state {g}");
    assert!((0..=g).all(|x| optims.contains(&x)) && optims.iter().all(|x| models.contains(x)), "momentum files {optims:?}, state {g}");
    for &gen in &models {
        let path = dir.join(format!("models/{gen:06}.safetensors"));
        let (net, meta) = checkpoint::load(&path, Some(&variant), Device::Cpu).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(meta.generation, gen, "{}", path.display());
        if optims.contains(&gen) {
            let mut sgd = Sgd::new(&net, cfg.train.momentum, cfg.train.weight_decay);
            sgd.load(&dir.join(format!("models/{gen:06}.optim.safetensors")), Default::default()).unwrap_or_else(|e| panic!("{e}"));
        }
    }
    let latest = std::fs::read_to_string(dir.join("models/latest")).unwrap();
    let latest: u64 = latest.trim().trim_end_matches(".safetensors").parse().unwrap_or_else(|_| panic!("latest: {latest:?}"));
    assert!(models.contains(&latest) && (latest == g || (!done && latest == g + 1)), "latest {latest}, state {g}");

    // Games: each slot of each completed generation once; none ahead of the state.
    let mut slots: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for name in seen.get("games").into_iter().flatten() {
        let path = dir.join("games").join(name);
        assert!(name.ends_with(".shard"), "{}", path.display());
        let s = shard::read_checked(&path, &variant, g).unwrap_or_else(|e| panic!("{e}"));
        for game in &s.games {
            let slot = game.slot.expect("slots are stored");
            slots.entry(s.model_generation).or_default().push(slot);
            snap.games.insert((s.model_generation, slot), game.plies.len());
        }
    }
    for x in 0..=g {
        let mut got = slots.get(&x).cloned().unwrap_or_default();
        got.sort();
        let unique: BTreeSet<u64> = got.iter().copied().collect();
        assert_eq!(unique.len(), got.len(), "a game of model {x} is on disk twice: slots {got:?}");
        if x < g {
            assert_eq!(got, (0..per_generation).collect::<Vec<_>>(), "games of model {x}");
        } else {
            assert!(got.iter().all(|&k| k < per_generation), "games of model {x} (the unfinished generation): slots {got:?}");
        }
    }
    if done {
        assert!(snap.leftovers.is_empty(), "temporary files after a clean exit: {:?}", snap.leftovers);
    }
    snap
}

/// Later snapshots keep every game of earlier ones, unchanged, and never go back a generation.
fn check_progress(before: &Snapshot, after: &Snapshot) {
    assert!(after.generation >= before.generation, "generation went back: {:?} -> {:?}", before.generation, after.generation);
    for (k, plies) in &before.games {
        assert_eq!(after.games.get(k), Some(plies), "game (model {}, slot {}) lost or changed", k.0, k.1);
    }
}

#[test]
fn a_run_killed_at_20_moments_resumes_each_time_without_losing_or_repeating_anything() {
    let started = Instant::now();
    let work = scratch("fault-campaign");
    std::fs::create_dir_all(&work).unwrap();
    let dir = work.join("run");
    let moments = plan(SEED);
    println!("fault campaign: seed {SEED}, {KILLS} kills:");
    for (i, m) in moments.iter().enumerate() {
        println!("  kill {:>2}: {m}", i + 1);
    }
    let mut snap = Snapshot::default();
    let mut by_point: BTreeMap<&str, u32> = BTreeMap::new();
    let (mut leftovers, mut no_state, mut resumes, mut games_checked) = (0, 0, 0, 0);
    for (i, moment) in moments.iter().enumerate() {
        let log = work.join(format!("kill{:02}.log", i + 1));
        resumes += usize::from(dir.join("state.json").exists());
        let t = Instant::now();
        let (mut child, limit) = match moment {
            Moment::Delay(d) => (trainer(&dir, 1000, None, &log), *d),
            Moment::Point(p, n) => (trainer(&dir, 1000, Some(format!("{p}:{n}")), &log), POINT_TIMEOUT),
        };
        let pid = child.id();
        let status = match wait_until(&mut child, limit) {
            Some(s) => s,
            None => {
                child.kill().unwrap();
                child.wait().unwrap()
            }
        };
        let log_text = std::fs::read_to_string(&log).unwrap();
        assert_eq!(status.signal(), Some(libc::SIGKILL), "kill {} ({moment}) did not end in SIGKILL: {status}\n{log_text}", i + 1);
        if let Moment::Point(p, _) = moment {
            *by_point.entry(p).or_default() += 1;
            assert!(t.elapsed() < limit, "kill {} ({moment}): the point was never reached", i + 1);
        }
        // The trainer prints its start line after removing the temporary files killed
        // processes left.
        let before_cleanup = !log_text.contains("positions in the window");
        let next = check_run(&dir, Some(pid), before_cleanup, false);
        if next.generation.is_none() && dir.join("config.toml").exists() {
            // Killed while the run was being created: a resume says to start it again.
            let o = bin().args(["train", "--run-dir", dir.to_str().unwrap(), "--resume"]).output().unwrap();
            common::cli::fails_with(&o, "the run's creation was interrupted); start it again without --resume");
        }
        check_progress(&snap, &next);
        let state = |g: Option<u64>| g.map_or("none".to_string(), |g| g.to_string());
        println!(
            "  kill {:>2} ({moment}): killed after {:.2} s; state generation {} -> {}, {} games on disk{}",
            i + 1,
            t.elapsed().as_secs_f64(),
            state(snap.generation),
            state(next.generation),
            next.games.len(),
            if next.leftovers.is_empty() { String::new() } else { format!(", mid-write: {}", next.leftovers.join(" ")) }
        );
        leftovers += next.leftovers.len();
        games_checked += next.games.len();
        no_state += usize::from(next.generation.is_none());
        snap = next;
    }
    // A last resume, not killed, finishes two generations further.
    let target = snap.generation.unwrap_or(0) + 2;
    resumes += usize::from(dir.join("state.json").exists());
    let log = work.join("final.log");
    let mut child = trainer(&dir, target, None, &log);
    let status = wait_until(&mut child, Duration::from_secs(120)).expect("the final resume ends");
    assert!(status.success(), "final resume: {status}\n{}", std::fs::read_to_string(&log).unwrap());
    let end = check_run(&dir, None, false, true);
    check_progress(&snap, &end);
    assert_eq!(end.generation, Some(target));
    let smoke = RunConfig::from_toml(&std::fs::read_to_string(SMOKE).unwrap(), SMOKE).unwrap();
    assert_eq!(end.games.len() as u64, target * smoke.selfplay.games_per_generation as u64);
    let random = moments.iter().filter(|m| matches!(m, Moment::Delay(_))).count();
    println!(
        "fault campaign: {KILLS} kills ({random} at random delays, {} at fault points: {by_point:?}); {no_state} left no state (started anew), {resumes} resumes; {leftovers} kills fell mid-write (each temporary file removed by the next trainer); {target} generations, {} games on disk at the end, {} game checks in all; {:.1} s",
        KILLS - random,
        end.games.len(),
        games_checked + end.games.len(),
        started.elapsed().as_secs_f64()
    );
    std::fs::remove_dir_all(&work).unwrap();
}

/// A kill in the middle of writing each small file of the run, by name (`latest`,
/// `state.json`, `metrics.jsonl`; half-written, and complete but not yet renamed), at that
/// file's write in generation 1: the run directory stays consistent, and a resume finishes
/// two more generations exactly.
#[test]
fn a_kill_during_the_write_of_each_small_file_is_followed_by_a_good_resume() {
    let work = scratch("fault-small-files");
    std::fs::create_dir_all(&work).unwrap();
    for file in ["latest", "state.json", "metrics.jsonl"] {
        for point in ["file-mid", "file-rename"] {
            let dir = work.join(format!("{point}-{file}"));
            // The run's creation writes `latest` and `state.json` once; generation 1 writes
            // each of the three once more (metrics.jsonl for the first time).
            let n = if file == "metrics.jsonl" { 1 } else { 2 };
            let moment = format!("{point}:{file}:{n}");
            let log = work.join(format!("{point}-{file}.log"));
            let mut child = trainer(&dir, 1000, Some(moment.clone()), &log);
            let pid = child.id();
            let status = wait_until(&mut child, POINT_TIMEOUT).unwrap_or_else(|| {
                let _ = child.kill();
                panic!("{moment}: the point was never reached")
            });
            assert_eq!(status.signal(), Some(libc::SIGKILL), "{moment}: {status}\n{}", std::fs::read_to_string(&log).unwrap());
            let killed = check_run(&dir, Some(pid), false, false);
            assert!(!killed.leftovers.is_empty(), "{moment}: killed mid-write, so its temporary file is there");
            let target = killed.generation.expect("the run was created before generation 1") + 2;
            let mut child = trainer(&dir, target, None, &log);
            let status = wait_until(&mut child, Duration::from_secs(120)).expect("the resume ends");
            assert!(status.success(), "{moment}: resume: {status}\n{}", std::fs::read_to_string(&log).unwrap());
            let end = check_run(&dir, None, false, true);
            check_progress(&killed, &end);
            assert_eq!(end.generation, Some(target), "{moment}");
        }
    }
    std::fs::remove_dir_all(&work).unwrap();
}

#[test]
fn a_trainer_removes_the_temporary_files_killed_trainers_left_but_not_workers() {
    let work = scratch("fault-leftovers");
    let dir = work.join("run");
    std::fs::create_dir_all(&work).unwrap();
    let log = work.join("first.log");
    let status = wait_until(&mut trainer(&dir, 1, None, &log), Duration::from_secs(120)).expect("one generation ends");
    assert!(status.success(), "{}", std::fs::read_to_string(&log).unwrap());
    let ours = [".state.json.tmp999999", ".metrics.jsonl.tmp999999", "models/.000002.safetensors.tmp999999", "games/.g000001-trainer-0000.shard.tmp999999"];
    let theirs = ["games/.g000001-alpha-123-0000.shard.tmp123", ".notes.txt.tmp5"];
    for f in ours.iter().chain(&theirs) {
        std::fs::write(dir.join(f), b"half a file").unwrap();
    }
    let status = wait_until(&mut trainer(&dir, 1, None, &log), Duration::from_secs(120)).expect("the resume ends");
    let err = std::fs::read_to_string(&log).unwrap();
    assert!(status.success(), "{err}");
    for f in ours {
        assert!(!dir.join(f).exists(), "{f} was removed");
        assert!(err.contains(&format!("removed {}, left by a killed process", dir.join(f).display())), "{err}");
    }
    for f in theirs {
        assert!(dir.join(f).exists(), "{f} is not the trainer's");
    }
    std::fs::remove_dir_all(&work).unwrap();
}

/// A tmpfs mounted on a directory for a test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, kib: u64) -> Result<Tmpfs, String> {
        std::fs::create_dir_all(dir).unwrap();
        let o = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs", dir.to_str().unwrap()])
            .output()
            .map_err(|e| format!("mount: {e}"))?;
        if !o.status.success() {
            return Err(format!("`mount -t tmpfs` failed: {}", String::from_utf8_lossy(&o.stderr).trim()));
        }
        Ok(Tmpfs(dir.to_path_buf()))
    }

    fn resize(&self, kib: u64) {
        let o = std::process::Command::new("mount").args(["-o", &format!("remount,size={kib}k"), self.0.to_str().unwrap()]).output().unwrap();
        assert!(o.status.success(), "remount: {}", String::from_utf8_lossy(&o.stderr));
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Size of the tmpfs: generation 0 and 1 fit (about 130 KiB of model and momentum files a
/// generation, 20-40 KiB of shards), generation 2 does not.
const FULL_DISK_KIB: u64 = 400;

#[test]
fn a_full_disk_stops_the_run_with_one_line_naming_the_file_and_it_resumes_once_there_is_space() {
    let work = scratch("fault-full");
    let mnt = work.join("mnt");
    let fs = match Tmpfs::mount(&mnt, FULL_DISK_KIB) {
        Ok(fs) => fs,
        Err(why) => {
            common::needs::skip("a tmpfs mount (root)", &why);
            return;
        }
    };
    let dir = mnt.join("run");
    let log = work.join("full.log");
    let status = wait_until(&mut trainer(&dir, 20, None, &log), Duration::from_secs(120)).expect("the trainer stops");
    let err = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status.code(), Some(1), "exit status {status}: {err}");
    for bad in ["panicked", "backtrace", "RUST_BACKTRACE"] {
        assert!(!err.contains(bad), "`{bad}` in: {err}");
    }
    let errors: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "one error line: {err}");
    let line = errors[0];
    assert_eq!(err.trim_end().lines().last(), Some(line), "the error is the last line: {err}");
    assert!(line.starts_with(&format!("error: {}/", dir.display())) && line.contains("No space left on device"), "{line}");
    let file = PathBuf::from(line.trim_start_matches("error: ").split(": ").next().unwrap());
    // Every file under its final name is whole, and the failed write left no temporary file.
    let full = check_run(&dir, None, false, false);
    let g = full.generation.expect("the run was created before the disk filled");
    println!("fault: a {FULL_DISK_KIB} KiB disk filled in generation {}: {line}", g + 1);
    // Room again: the run resumes and its generations go on from where they stopped.
    fs.resize(8192);
    let target = g + 2;
    let status = wait_until(&mut trainer(&dir, target, None, &log), Duration::from_secs(120)).expect("the resume ends");
    assert!(status.success(), "{}", std::fs::read_to_string(&log).unwrap());
    let end = check_run(&dir, None, false, true);
    check_progress(&full, &end);
    assert_eq!(end.generation, Some(target));
    println!("fault: resumed after the disk grew: generations 1..={target}, {} games; the failed write was {}", end.games.len(), file.display());
    drop(fs);
    std::fs::remove_dir_all(&work).unwrap();
}

//! Where a generation's self-play games come from, and how they are written.
//!
//! Self-play runs either on threads of the trainer's own process
//! ([`Trainer::self_play_in_process`]) or in separate [`worker`] processes, on this machine
//! or others, that share only the run directory: a worker reads the newest model and writes
//! shards, and the trainer waits for enough of them ([`Trainer::collect_worker_games`]).
//! Either way games go to disk as shards every few games ([`flush_shard`]), so a kill loses
//! only the games in flight and a resumed generation plays only the games it still lacks.

use super::ingest::generation_of_shard;
use super::trainer::Trainer;
use super::{Reporter, RunDir, TrainError};
use crate::nn::checkpoint;
use crate::nn::{parse_device, NetEvaluator};
use crate::rules::Variant;
use crate::selfplay::shard::{self, Shard, StoredGame};
use crate::selfplay::{self, FinishedGame};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// The self-play phase of a generation, as methods of the [`Trainer`] whose model, window
/// and shard gate it uses.
impl Trainer {
    /// Plays the generation's self-play games in this process, writing shards as they fill and
    /// adding each game to the window.
    ///
    /// Game `k` of generation `g` (its slot) is seeded `selfplay::game_seed(seed, g, k)`. Games
    /// already written for this generation by an earlier, killed process count, and only the
    /// missing slots are played, so no game of the generation repeats another.
    ///
    /// With `selfplay.carry_games` (continuous self-play, [`selfplay::play_games_carried`]),
    /// games are numbered across the run instead (from `state.next_game`; seeded
    /// `game_seed(seed, CONTINUOUS, number)`, and stored with their number as slot): thread `w`
    /// of `T` starts the numbers `next_game + w + T j` that no stored game of this generation
    /// has, hands over its share of the generation's games, whichever of its games finish
    /// first, and keeps the rest in [`Trainer::carry`] for the next generation. Each thread's
    /// games then depend on the run seed and `T`, not on how the threads' work interleaves.
    pub(super) fn self_play_in_process(&mut self, reporter: &dyn Reporter) -> Result<(Vec<FinishedGame>, u64), TrainError> {
        let (rd, cfg, variant, device, model_generation) = (&self.rd, &self.cfg, &self.variant, self.device, self.state.generation);
        let (window, gate) = (&mut self.window, &mut self.gate);
        let generation = model_generation + 1;
        let mut games: Vec<FinishedGame> = Vec::new();
        let mut done = std::collections::HashSet::new();
        let mut seq = 0;
        for p in rd.shards()? {
            if generation_of_shard(&p) == Some(model_generation) {
                seq += 1;
                // Normally read into the window when the run resumed; one the window had no
                // room for then is added now, so each stored game is in it exactly once.
                let fresh = !gate.in_window(&p);
                if let Some(s) = gate.read(&p, model_generation, reporter) {
                    for g in &s.games {
                        done.extend(g.slot);
                        let g = g.to_finished();
                        if fresh {
                            window.add_game(&g);
                        }
                        games.push(g);
                    }
                }
            }
        }
        let threads = cfg.selfplay.workers(crate::nn::cores());
        let carrying = cfg.selfplay.carry_games;
        let mut carry = std::mem::take(&mut self.carry);
        carry.resize_with(threads, Default::default);
        if !carrying || carry.iter().flat_map(selfplay::Carry::numbers).any(|k| done.contains(&k)) {
            carry.iter_mut().for_each(selfplay::Carry::clear);
        }
        if carrying {
            // Past every number on disk: a process killed after storing games but before
            // saving its state used numbers from `next_game` on.
            self.state.next_game = self.state.next_game.max(done.iter().max().map_or(0, |k| k + 1));
        }
        let wanted = cfg.selfplay.games_per_generation.saturating_sub(games.len());
        if wanted == 0 {
            self.carry = carry;
            return Ok((games, 0));
        }
        let slots: Vec<u64> = if carrying { Vec::new() } else { (0..).filter(|k| !done.contains(k)).take(wanted).collect() };
        let first_number = self.state.next_game;
        // Thread `w`'s share of the generation's games, and the game numbers each started.
        let quota = |w: usize| (wanted / threads + usize::from(w < wanted % threads)) as u64;
        let started: Vec<AtomicUsize> = (0..threads).map(|_| AtomicUsize::new(0)).collect();
        reporter.start(&format!("gen {generation} self-play"), wanted as u64);
        let next = AtomicUsize::new(0);
        let evaluations = AtomicUsize::new(0);
        let (tx, rx) = mpsc::channel::<(u64, FinishedGame)>();
        let model_path = rd.model(model_generation);
        let past_path = past_model(rd, cfg.seed, model_generation, cfg.selfplay.play.past_share);
        if let Some(p) = &past_path {
            reporter.line(&format!("gen {generation}: a share of {} of the games against {}", cfg.selfplay.play.past_share, p.display()));
        }
        let sp = self.state.selfplay_config(cfg);
        let result: Result<Vec<selfplay::Carry>, TrainError> = std::thread::scope(|scope| {
            let mut handles = Vec::new();
            for (w, mut carry) in carry.into_iter().enumerate() {
                let tx = tx.clone();
                let (next, slots, started, done, evaluations, model_path, past_path, sp) =
                    (&next, &slots, &started, &done, &evaluations, &model_path, &past_path, &sp);
                handles.push(scope.spawn(move || -> Result<selfplay::Carry, TrainError> {
                    let (net, _) = checkpoint::load(model_path, Some(variant), device)?;
                    let mut ev = NetEvaluator::new(net, variant, cfg.precision);
                    let mut past = match past_path {
                        Some(p) => Some(NetEvaluator::new(checkpoint::load(p, Some(variant), device)?.0, variant, cfg.precision)),
                        None => None,
                    };
                    let mut next_game = |_: &selfplay::Progress| {
                        if carrying {
                            loop {
                                let j = started[w].fetch_add(1, Ordering::SeqCst) as u64;
                                let k = first_number + w as u64 + threads as u64 * j;
                                if !done.contains(&k) {
                                    return Some((k, selfplay::game_seed(cfg.seed, selfplay::CONTINUOUS, k)));
                                }
                            }
                        }
                        let k = *slots.get(next.fetch_add(1, Ordering::SeqCst))?;
                        Some((k, selfplay::game_seed(cfg.seed, generation, k)))
                    };
                    let p = selfplay::play_games_carried(
                        variant,
                        sp,
                        &mut ev,
                        past.as_mut().map(|e| e as &mut dyn crate::search::Evaluator),
                        selfplay::Flow { next_game: &mut next_game, quota: carrying.then(|| quota(w)), carry: &mut carry },
                        &mut |k, g| {
                            let _ = tx.send((k, g));
                        },
                        &mut |_| true,
                    );
                    evaluations.fetch_add(p.evaluations as usize, Ordering::SeqCst);
                    Ok(carry)
                }));
            }
            drop(tx);
            let mut pending: Vec<StoredGame> = Vec::new();
            let mut write_err = None;
            for (k, g) in rx {
                pending.push(StoredGame::new(&g, Some(k)));
                window.add_game(&g);
                reporter.advance(1, &format!("{} plies", g.plies.len()));
                games.push(g);
                crate::fault::point("selfplay-game");
                if pending.len() >= cfg.selfplay.games_per_shard {
                    if let Err(e) = flush_shard(rd, variant, model_generation, "trainer", &mut seq, &mut pending) {
                        write_err.get_or_insert(e);
                    }
                }
            }
            if let Err(e) = flush_shard(rd, variant, model_generation, "trainer", &mut seq, &mut pending) {
                write_err.get_or_insert(e);
            }
            let mut carried = Vec::new();
            for h in handles {
                carried.push(h.join().map_err(|_| TrainError::Panicked { what: "a self-play thread" })??);
            }
            write_err.map_or(Ok(carried), Err)
        });
        self.carry = result?;
        if carrying {
            // Past every number a thread started (saved with the generation's state).
            let most = started.iter().map(|s| s.load(Ordering::SeqCst) as u64).max().unwrap_or(0);
            self.state.next_game = first_number + threads as u64 * most;
        }
        reporter.finish();
        Ok((games, evaluations.load(Ordering::SeqCst) as u64))
    }

    /// Waits for workers' shards of the current model and adds them to the window. Says what it
    /// waits for (once, then every [`WAIT_NOTE_EVERY`]); returns `None` when `clock` passes
    /// `deadline` first.
    pub(super) fn collect_worker_games(
        &mut self,
        deadline: Option<f64>,
        clock: &dyn Fn() -> f64,
        reporter: &dyn Reporter,
    ) -> Result<Option<(Vec<FinishedGame>, u64)>, TrainError> {
        let (rd, cfg, model_generation) = (&self.rd, &self.cfg, self.state.generation);
        let (window, gate) = (&mut self.window, &mut self.gate);
        let wanted = cfg.selfplay.games_per_generation;
        let generation = model_generation + 1;
        reporter.start(&format!("gen {generation} waiting for workers' games"), wanted as u64);
        let mut seen = std::collections::HashSet::new();
        let mut games = Vec::new();
        let mut noted: Option<Instant> = None;
        loop {
            for p in rd.shards()? {
                if generation_of_shard(&p) != Some(model_generation) || seen.contains(&p) {
                    continue;
                }
                seen.insert(p.clone());
                // A shard read when the run resumed is in the window already: its games count
                // towards the generation but are not added twice.
                let fresh = !gate.in_window(&p);
                if let Some(s) = gate.read(&p, model_generation, reporter) {
                    for g in s.games.iter().map(StoredGame::to_finished) {
                        if fresh {
                            window.add_game(&g);
                        }
                        reporter.advance(1, "");
                        games.push(g);
                    }
                }
            }
            if games.len() >= wanted {
                break;
            }
            let now = clock();
            if let Some(d) = deadline.filter(|&d| now >= d) {
                reporter.finish();
                reporter.line(&format!(
                    "stopping: the {} minute budget ran out after {:.0} s while waiting for self-play workers ({}/{wanted} games of generation {generation}); --resume continues",
                    cfg.budget.minutes,
                    d,
                    games.len()
                ));
                return Ok(None);
            }
            if noted.map_or(true, |t| t.elapsed() >= WAIT_NOTE_EVERY) {
                reporter.line(&format!(
                    "waiting for self-play workers: {}/{wanted} games of generation {generation} (model {model_generation}) in {}; start workers with `tafl-lab selfplay --run-dir {}`",
                    games.len(),
                    rd.games().display(),
                    rd.root.display()
                ));
                noted = Some(Instant::now());
            }
            let nap = deadline.map_or(0.5, |d| (d - now).clamp(0.01, 0.5));
            std::thread::sleep(Duration::from_secs_f64(nap));
        }
        reporter.finish();
        Ok(Some((games, 0)))
    }
}

/// The past network that plays one side of a `share` of generation `model_generation + 1`'s
/// games: a checkpoint drawn uniformly from the run's earlier generations still on disk (the
/// draw seeded by the run seed and the generation, so a resumed generation meets the same
/// one), or none when the share is 0 or there is no earlier generation.
pub(super) fn past_model(rd: &RunDir, seed: u64, model_generation: u64, share: f32) -> Option<std::path::PathBuf> {
    if share <= 0.0 {
        return None;
    }
    let earlier: Vec<std::path::PathBuf> = (0..model_generation).map(|g| rd.model(g)).filter(|p| p.exists()).collect();
    if earlier.is_empty() {
        return None;
    }
    let pick = selfplay::game_seed(seed ^ 0x7061_7374, model_generation, 0) % earlier.len() as u64;
    Some(earlier[pick as usize].clone())
}

/// Writes the pending games as the writer's next shard: the first free name from `seq` on,
/// taken in one step with the write, so two writers of one name never replace each other's
/// shard.
fn flush_shard(rd: &RunDir, variant: &Variant, model_generation: u64, writer: &str, seq: &mut usize, pending: &mut Vec<StoredGame>) -> Result<(), TrainError> {
    if pending.is_empty() {
        return Ok(());
    }
    let s = Shard { rules_fingerprint: variant.rules_fingerprint(), model_generation, writer: writer.to_string(), games: std::mem::take(pending) };
    loop {
        let p = rd.games().join(shard::file_name(model_generation, writer, *seq));
        *seq += 1;
        if shard::write_new(&p, &s)? {
            return Ok(());
        }
    }
}

/// How often a trainer waiting for workers repeats what it waits for.
const WAIT_NOTE_EVERY: Duration = Duration::from_secs(60);

/// How long a worker started before its run waits for the trainer to create it.
const RUN_CREATION_WAIT: Duration = Duration::from_secs(600);

/// Waits until the run in `rd` exists (its state, written last when a run is created), so that
/// workers may be started, or queued, together with their trainer.
fn wait_for_run(rd: &RunDir, writer: &str, reporter: &dyn Reporter) -> Result<(), TrainError> {
    let started = Instant::now();
    let mut said = false;
    while !rd.state().exists() {
        if started.elapsed() > RUN_CREATION_WAIT {
            return Err(TrainError::argument(
                format!("--run-dir {}", rd.root.display()),
                format!("no run there after {} s of waiting (start `tafl-lab train` on it)", RUN_CREATION_WAIT.as_secs()),
            ));
        }
        if !said {
            reporter.line(&format!("worker {writer}: waiting for a trainer to create the run in {}", rd.root.display()));
            said = true;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    Ok(())
}

/// A self-play worker: plays games with the newest model of the run in `dir` and writes
/// shards, reloading the model when a newer one appears, until `max_games` (0 = forever) or
/// `minutes` (0 = no limit), or until the trainer has spent its budget (the run's state says
/// `finished`; checked before each shard). Its `k`-th game with model `g` is seeded from the run seed, the
/// writer name (which holds the process id), `g` and `k`.
///
/// With `selfplay.carry_games` (continuous self-play) it keeps its games in flight from one
/// shard to the next, and across new models, and writes each shard from the first games to
/// finish; its games are then numbered across its life, `k`-th seeded from the run seed, the
/// writer name and `k`.
pub fn worker(dir: &Path, name: &str, max_games: u64, minutes: f64, reporter: &dyn Reporter) -> Result<u64, TrainError> {
    if !(minutes.is_finite() && minutes >= 0.0) {
        return Err(TrainError::argument(format!("--minutes {minutes}"), "expected a number of minutes, 0 or more (0 = no limit)"));
    }
    let writer = format!("{name}-{}", std::process::id());
    shard::check_writer(&writer).map_err(|e| TrainError::argument(format!("--name {name:?}"), e))?;
    let rd = RunDir::new(dir);
    wait_for_run(&rd, &writer, reporter)?;
    let cfg = rd.load_config()?;
    let variant = Arc::new(Variant::from_spec(&cfg.variant).map_err(|e| TrainError::Config { field: "variant", message: e.to_string() })?);
    let device = parse_device(&cfg.device)?;
    let started = Instant::now();
    let mut played = 0u64;
    let mut seq = 0usize;
    let writer_seed = cfg.seed ^ crate::rules::ruleset::fnv1a(writer.as_bytes());
    let mut slot = 0u64;
    let mut slot_generation = None;
    let carrying = cfg.selfplay.carry_games;
    let mut carry = selfplay::Carry::default();
    reporter.line(&format!("worker {writer}: self-play for {} in {}", variant.name, dir.display()));
    while (max_games == 0 || played < max_games) && (minutes <= 0.0 || started.elapsed().as_secs_f64() < minutes * 60.0) {
        let state = rd.load_state()?.unwrap_or_default();
        if state.finished {
            reporter.line(&format!("worker {writer}: the trainer has spent its budget; stopping"));
            break;
        }
        let sp = state.selfplay_config(&cfg);
        let generation = rd.latest_generation()?;
        if slot_generation != Some(generation) && !carrying {
            (slot, slot_generation) = (0, Some(generation));
        }
        let (net, _) = checkpoint::load(&rd.model(generation), Some(&variant), device)?;
        let mut ev = NetEvaluator::new(net, &variant, cfg.precision);
        let n = cfg.selfplay.games_per_shard.min(if max_games == 0 { usize::MAX } else { (max_games - played) as usize });
        let mut left = n;
        let mut pending = Vec::new();
        reporter.start(&format!("worker model {generation}"), n as u64);
        let mut next_game = |_: &selfplay::Progress| {
            if carrying {
                slot += 1;
                return Some((slot - 1, selfplay::game_seed(writer_seed, selfplay::CONTINUOUS, slot - 1)));
            }
            (left > 0).then(|| {
                left -= 1;
                slot += 1;
                (slot - 1, selfplay::game_seed(writer_seed, generation, slot - 1))
            })
        };
        selfplay::play_games_carried(
            &variant,
            &sp,
            &mut ev,
            None,
            selfplay::Flow { next_game: &mut next_game, quota: carrying.then_some(n as u64), carry: &mut carry },
            &mut |k, g| {
                reporter.advance(1, "");
                pending.push(StoredGame::new(&g, Some(k)));
            },
            &mut |_| true,
        );
        reporter.finish();
        played += pending.len() as u64;
        flush_shard(&rd, &variant, generation, &writer, &mut seq, &mut pending)?;
    }
    Ok(played)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The past network is one of the run's earlier checkpoints on disk, the same one for the
    /// same seed and generation; none with a share of 0 or no earlier checkpoint.
    #[test]
    fn the_past_network_is_an_earlier_checkpoint_on_disk() {
        let dir = std::env::temp_dir().join(format!("tafl-past-model-{}", std::process::id()));
        let rd = RunDir::new(&dir);
        std::fs::create_dir_all(rd.models()).unwrap();
        assert_eq!(past_model(&rd, 1, 5, 0.25), None, "no checkpoint on disk");
        for g in [0, 2, 3, 5] {
            std::fs::write(rd.model(g), b"x").unwrap();
        }
        assert_eq!(past_model(&rd, 1, 5, 0.0), None, "share 0");
        assert_eq!(past_model(&rd, 1, 0, 0.25), None, "generation 0 has no past");
        let picks: Vec<std::path::PathBuf> = (0..40).map(|seed| past_model(&rd, seed, 5, 0.25).unwrap()).collect();
        assert!(picks.iter().all(|p| [0, 2, 3].iter().any(|&g| *p == rd.model(g))), "an earlier generation on disk");
        assert!([0, 2, 3].iter().all(|&g| picks.contains(&rd.model(g))), "each earlier one can be drawn");
        assert_eq!(past_model(&rd, 7, 5, 0.25), past_model(&rd, 7, 5, 0.25), "the same draw for the same generation");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! Self-play: many games stepped in lockstep, so that every evaluator call is one batch made
//! of leaves from all of them.
//!
//! Each game slot owns a [`Search`]. A step gathers leaves from the slots (round-robin, until
//! the batch is full), evaluates them with one call, applies the results, and lets every slot
//! whose search finished play its move and start the next search at once: there is no
//! barrier between moves of different games, so batches stay full.
//!
//! Two things keep the network busy and its calls few:
//!
//! - **Two groups in turn.** The games are split into two groups (slot `i` in group
//!   `i % 2`), and the groups take turns: while one group's batch is evaluated, the other
//!   group applies its last results, plays the moves of finished searches and gathers its
//!   next leaves. With an evaluator that works in the background ([`Evaluator::start`]: the
//!   network on a thread of its own) the tree work overlaps the network; with any other the
//!   same schedule runs one step after another, so a seed gives the same games either way.
//! - **An evaluation cache** ([`EvalCache`], one per network in a call of [`play_games`]):
//!   a position that another tree, another game or a transposition already brought to the
//!   network is answered from the table, and a batch never holds one position twice.
//!   [`Progress::cache`] counts hits.
//!
//! Games against a past network ([`play_games_with_past`], `past_share`) give one side of a
//! game to a second evaluator: that side searches with a tree of its own, and each group's
//! leaves go to the network of the side to move in their game, one batch per network.
//!
//! **Continuous self-play** ([`play_games_carried`]): a trainer's generation needs a fixed
//! number of finished games, and games differ in length (Copenhagen self-play: 91-171 plies on
//! average a generation, the longest 249-484). Started together and stopped together, the
//! games in flight thin out as they end, and a generation's last part runs a few long games
//! in batches of a few leaves. (Waiting for the generation's own games with the slots kept
//! full would not help: the longest game then moves at the pace of full batches.) So a
//! continuous call keeps every slot playing and returns once a quota of games, whichever
//! they are, has finished; the games still in flight go into a [`Carry`], and the next call,
//! with the next network, plays them on (their first moves were searched by the network
//! before). Long games reach training a generation or two later; every game started is
//! played out. On a CPU this measured no gain (small network calls are cheap there; the
//! trainer leaves it off by default, docs/training.md); it is for devices where a call costs
//! the same at any size.
//!
//! Playout cap randomization (KataGo): a fraction of moves gets a cheap search and is not
//! used as a policy target; only full searches (with root noise, and forced playouts where
//! `[selfplay.search] forced_playouts` is set) become targets.

pub mod shard;

use crate::rules::{Move, Outcome, Position, Side, Variant};
use crate::search::cache::Plan;
use crate::search::{lockstep, EvalCache, EvalRequest, Evaluator, RootPolicy, Search, SearchConfig, Ticket};
use crate::stats::calibration::{Calibration, Observation};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::sync::Arc;

/// How self-play searches and picks moves. A run config's `[selfplay]` table holds these
/// settings under the same names (`train::config::SelfPlaySection` embeds this type), and the
/// full search as `[selfplay.search]`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SelfPlayConfig {
    /// Games played at the same time (per call of [`play_games`]).
    pub games_in_flight: usize,
    /// Most positions per evaluator call, gathered from the games in flight (each tree gives
    /// its search's `leaves_per_tree`); `batch` in configs saved before the name.
    pub positions_per_call: usize,
    /// Probability that a move gets only a fast search (0 turns playout cap randomization off).
    pub fast_probability: f32,
    /// Simulations of a fast search.
    pub fast_sims: u32,
    /// Simulations of the attackers' full searches, when they differ from `search`'s (in a
    /// run config, `attacker_sims = 0` or no key: the same). Giving the weaker side of a
    /// lopsided variant more search (KataGo's "playout doubling advantage" idea) makes it win
    /// some self-play games, so the network sees what works for that side.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attacker_sims: Option<u32>,
    /// Simulations of the attackers' fast searches, when they differ from `fast_sims` (0 or
    /// no key: the same). A steered attack (`selfplay.attacker_share`) scales them with
    /// `attacker_sims`: with half the moves fast, an attacker with more full search but
    /// 8-simulation fast moves still blunders the king out every other move.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attacker_fast_sims: Option<u32>,
    /// Plies at the start of each game where PUCT searches sample their move with
    /// temperature 1 (Gumbel searches always play their sequential-halving winner; for them
    /// see `sample_plies`).
    pub temperature_plies: u32,
    /// Plies (0 = none) at the start of every game, counted from its first ply as
    /// `temperature_plies` is, whose move is drawn from the search's policy target (the
    /// improved policy of a Gumbel root) instead of taken as its best. A Gumbel root without
    /// noise (`gumbel_scale = 0`, which lets Copenhagen's attackers win their games) ignores
    /// `temperature_plies`, so a game is fixed by its random opening: past it every move is
    /// the search's first choice. This plays second choices too, weighted by the search,
    /// where `opening_plies` can only play uniformly random moves. The past
    /// network's moves are drawn alike. A proven root plays its best move.
    #[serde(skip_serializing_if = "is_zero")]
    pub sample_plies: u32,
    /// Soft resignation (0 = off): once a full search's root value for the side to move is
    /// at least this far from 0 (won or lost for it, as the search sees it), the game's
    /// remaining moves get fast searches only. A decided game then costs little, and it is
    /// still played to its end, so its positions keep real results as value targets (no
    /// resignation that could be wrong); its fast plies give no policy targets, as with
    /// playout cap randomization.
    #[serde(skip_serializing_if = "is_zero")]
    pub soft_resign_value: f32,
    /// Share of games (0 = none) in which one side, drawn at random, is played by a past
    /// network (the `past` evaluator of [`play_games_with_past`]), as TablutZero plays a
    /// quarter of its games against earlier checkpoints so that neither side forgets how to
    /// meet play it no longer sees from itself. The past network searches with its own tree
    /// and the same settings; its plies are no policy targets (`full` false, no policy) and
    /// keep the game's result as their value target. Once a game is soft-resigned, both
    /// sides play fast searches. The trainer leaves these games out of the self-play side
    /// rates and the attackers' steering ([`FinishedGame::past`]): their results measure the
    /// two networks, not the sides.
    #[serde(skip_serializing_if = "is_zero")]
    pub past_share: f32,
    /// Plies (0 = none) at the start of every game played uniformly at random among the moves
    /// that do not end it, as the matches that measure a network open (`match
    /// --opening-plies`, 2 by default): without them self-play starts only from the lines the
    /// network likes, and a match's random first moves take it where it never trained (the
    /// brandubh default, as attackers against OpenTafl's AI, lost the same opening on three
    /// seeds). These plies are no policy targets (`full` false, no policy) and keep the
    /// game's result as their value target, as a past network's do.
    #[serde(skip_serializing_if = "is_zero")]
    pub opening_plies: u32,
    /// The full search (its policy is a training target). Last: TOML writes tables after
    /// plain values.
    pub search: SearchConfig,
}

/// The self-play defaults (a run config's `[selfplay]` takes the playout cap and temperature
/// settings it leaves out from here).
impl Default for SelfPlayConfig {
    fn default() -> Self {
        SelfPlayConfig {
            games_in_flight: 64,
            positions_per_call: 256,
            fast_probability: 0.0,
            fast_sims: 8,
            attacker_sims: None,
            attacker_fast_sims: None,
            temperature_plies: 8,
            sample_plies: 0,
            soft_resign_value: 0.0,
            past_share: 0.0,
            opening_plies: 0,
            search: SearchConfig::gumbel(),
        }
    }
}

/// For `skip_serializing_if`: a setting at 0 (off) is not written (the run config's
/// `[train]` uses it too).
pub(crate) fn is_zero<T: Default + PartialEq>(x: &T) -> bool {
    *x == T::default()
}

/// One ply of a self-play game.
#[derive(Clone, Debug, PartialEq)]
pub struct PlyRecord {
    pub mv: Move,
    /// Search policy over the legal moves (empty for fast searches).
    pub policy: Vec<(Move, f32)>,
    /// Whether this ply had a full search (and so is a policy target).
    pub full: bool,
    /// The search's value for the side to move.
    pub value: f32,
}

/// A finished self-play game.
#[derive(Clone, Debug)]
pub struct FinishedGame {
    pub plies: Vec<PlyRecord>,
    pub outcome: Outcome,
    /// The side a past network played ([`SelfPlayConfig::past_share`]), if any. Not stored in
    /// shards: a game read back from one says `None`.
    pub past: Option<Side>,
}

/// Counters of a self-play run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Progress {
    pub games: u64,
    pub moves: u64,
    /// Leaf evaluations the searches received (from the network or the cache).
    pub evaluations: u64,
    /// Evaluator calls (batches that needed the network).
    pub batches: u64,
    /// The evaluation cache: `cache.misses` positions went to the evaluator.
    pub cache: crate::search::CacheStats,
}

impl Progress {
    /// Adds another run's counters (several workers' runs make one total).
    pub fn add(&mut self, other: &Progress) {
        self.games += other.games;
        self.moves += other.moves;
        self.evaluations += other.evaluations;
        self.batches += other.batches;
        self.cache.add(&other.cache);
    }
}

/// Number of game groups that take turns with the evaluator (see the module documentation).
const GROUPS: usize = 2;

struct Slot {
    search: Search,
    /// In a game against a past network: its side and its own search (its own tree, fed by
    /// that network only), advanced along every move as `search` is.
    past: Option<(Side, Search)>,
    plies: Vec<PlyRecord>,
    full: bool,
    /// A full search found the game decided (see [`SelfPlayConfig::soft_resign_value`]).
    decided: bool,
    /// The game's slot number (see [`play_games`]).
    number: u64,
    /// The game's own random choices.
    rng: SmallRng,
}

/// Games one call of [`play_games_carried`] leaves to the next: those still in flight, with
/// their searches, and those that finished after the call's quota was met. Empty at first.
#[derive(Default)]
pub struct Carry {
    slots: Vec<Slot>,
    finished: Vec<(u64, FinishedGame)>,
}

impl Carry {
    /// The slot numbers of the games carried, in flight or finished.
    pub fn numbers(&self) -> Vec<u64> {
        self.slots.iter().map(|s| s.number).chain(self.finished.iter().map(|(k, _)| *k)).collect()
    }

    /// Games carried, in flight or finished.
    pub fn len(&self) -> usize {
        self.slots.len() + self.finished.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every game carried.
    pub fn clear(&mut self) {
        self.slots.clear();
        self.finished.clear();
    }
}

/// Where the games of a call of [`play_games_carried`] come from, and when it stops.
pub struct Flow<'a> {
    /// New games (slot number and seed), asked for whenever a slot is free; `None` to start
    /// no more.
    pub next_game: &'a mut dyn FnMut(&Progress) -> Option<(u64, u64)>,
    /// Games to hand over before the call returns (`None`: every game started, to its end).
    pub quota: Option<u64>,
    /// The games carried in from the last call (the finished ones are handed over first, the
    /// others played on) and out to the next.
    pub carry: &'a mut Carry,
}

impl Slot {
    /// The network that plays the side to move: 0 the current one, 1 the past one.
    fn net(&self) -> usize {
        match &self.past {
            Some((side, _)) if *side == self.search.position().to_move() => 1,
            _ => 0,
        }
    }

    /// Records `ply` and plays its move in the game's searches (both, in a game against a
    /// past network). The move must be legal: each caller draws it from the position.
    fn play(&mut self, ply: PlyRecord) {
        let mv = ply.mv;
        self.plies.push(ply);
        self.search.advance(mv).expect("played moves are legal");
        if let Some((_, past)) = &mut self.past {
            past.advance(mv).expect("played moves are legal");
        }
    }

    /// The search of the side to move.
    fn active(&mut self) -> &mut Search {
        match &mut self.past {
            Some((side, past)) if *side == self.search.position().to_move() => past,
            _ => &mut self.search,
        }
    }
}

/// The `generation` argument of [`game_seed`] for the games of continuous self-play, which
/// are numbered across a run (no generation reaches it).
pub const CONTINUOUS: u64 = u64::MAX;

/// The seed of game `slot` (its index among the games of `generation`) of a run seeded
/// `run_seed`: a game's randomness derives from these three numbers only, so a resumed
/// generation that plays only its missing slots gives them fresh seeds, never the seeds of
/// games already played.
pub fn game_seed(run_seed: u64, generation: u64, slot: u64) -> u64 {
    // SplitMix64 finalizer over each input in turn.
    let mix = |mut z: u64| {
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut h = mix(run_seed.wrapping_add(0x9E37_79B9_7F4A_7C15));
    h = mix(h ^ generation.wrapping_add(0x2545_F491_4F6C_DD1D));
    mix(h ^ slot.wrapping_add(0xD6E8_FEB8_6659_FD93))
}

/// Runs self-play until `more_games` says no (it is asked before each new game starts) and
/// the games in flight have finished, or until `on_step` (called after every evaluator call)
/// returns false, which abandons the games in flight. Calls `on_game` for every finished game.
/// Game `i` (counting from 0) gets the seed `game_seed(seed, 0, i)`.
pub fn play(
    variant: &Arc<Variant>,
    cfg: &SelfPlayConfig,
    evaluator: &mut dyn Evaluator,
    seed: u64,
    more_games: &mut dyn FnMut(&Progress) -> bool,
    on_game: &mut dyn FnMut(FinishedGame),
    on_step: &mut dyn FnMut(&Progress) -> bool,
) -> Progress {
    let mut next = 0u64;
    let mut next_game = |p: &Progress| {
        more_games(p).then(|| {
            next += 1;
            (next - 1, game_seed(seed, 0, next - 1))
        })
    };
    play_games(variant, cfg, evaluator, &mut next_game, &mut |_, g| on_game(g), on_step)
}

/// [`play`] with a seed for every game: `next_game` (asked before each new game starts)
/// gives its slot number and seed, or `None` to start no more games; `on_game` receives each
/// finished game with its slot number. All of a game's random choices (search seeds, fast or
/// full searches) come from its own seed.
pub fn play_games(
    variant: &Arc<Variant>,
    cfg: &SelfPlayConfig,
    evaluator: &mut dyn Evaluator,
    next_game: &mut dyn FnMut(&Progress) -> Option<(u64, u64)>,
    on_game: &mut dyn FnMut(u64, FinishedGame),
    on_step: &mut dyn FnMut(&Progress) -> bool,
) -> Progress {
    play_games_with_past(variant, cfg, evaluator, None, next_game, on_game, on_step)
}

/// [`play_games`], with `past` (a past network) playing one side of `cfg.past_share` of the
/// games (none without it). Each network has its own batches and its own cache: a position
/// one network evaluated is never answered with the other's evaluation.
pub fn play_games_with_past<'e>(
    variant: &Arc<Variant>,
    cfg: &SelfPlayConfig,
    evaluator: &'e mut dyn Evaluator,
    past: Option<&'e mut dyn Evaluator>,
    next_game: &mut dyn FnMut(&Progress) -> Option<(u64, u64)>,
    on_game: &mut dyn FnMut(u64, FinishedGame),
    on_step: &mut dyn FnMut(&Progress) -> bool,
) -> Progress {
    let flow = Flow { next_game, quota: None, carry: &mut Carry::default() };
    play_games_carried(variant, cfg, evaluator, past, flow, on_game, on_step)
}

/// [`play_games_with_past`], continuous: the call hands over `flow.quota` finished games
/// (those the last call finished past its quota first) and returns, leaving the games in
/// flight, and any that finished past the quota, in `flow.carry` for the next call (see the
/// module documentation). Games carried in that a past network played one side of lose it
/// when this call has no past network: the current one plays on for both sides. Abandoned
/// games (`on_step` false) leave nothing to carry.
pub fn play_games_carried<'e>(
    variant: &Arc<Variant>,
    cfg: &SelfPlayConfig,
    evaluator: &'e mut dyn Evaluator,
    past: Option<&'e mut dyn Evaluator>,
    flow: Flow<'_>,
    on_game: &mut dyn FnMut(u64, FinishedGame),
    on_step: &mut dyn FnMut(&Progress) -> bool,
) -> Progress {
    let Flow { next_game, quota, carry } = flow;
    let quota = quota.unwrap_or(u64::MAX);
    let mut evaluators: Vec<&mut dyn Evaluator> = vec![evaluator];
    evaluators.extend(past);
    let nets = evaluators.len();
    let with_past = nets > 1;
    let mut progress = Progress::default();
    let banked = carry.finished.len().min(usize::try_from(quota).unwrap_or(usize::MAX));
    for (number, game) in carry.finished.drain(..banked) {
        progress.games += 1;
        on_game(number, game);
    }
    if progress.games >= quota {
        return progress;
    }
    let mut slots: Vec<Option<Slot>> = Vec::new();
    for mut slot in carry.slots.drain(..) {
        if !with_past && slot.past.take().is_some() {
            // The past side's decision was under way in its own tree: the current network's
            // tree, advanced along every move, takes it up.
            configure(&mut slot, cfg);
        }
        slots.push(Some(slot));
    }
    while slots.len() < cfg.games_in_flight.max(1) {
        let Some((number, seed)) = next_game(&progress) else { break };
        slots.push(Some(new_slot(variant, cfg, number, seed, with_past)));
    }
    let groups = GROUPS.min(slots.len()).max(1);
    let mut games = Games { variant, cfg, slots, groups, with_past, progress, quota, next_game, spilled: &mut carry.finished, on_game };
    let mut caches: Vec<EvalCache> = (0..nets).map(|_| EvalCache::new(EvalCache::DEFAULT_ENTRIES)).collect();
    // Per group and network: the batch being evaluated and where its evaluations go.
    let mut in_flight: Vec<Option<(Ticket, Plan)>> = (0..groups * nets).map(|_| None).collect();
    let mut abandoned = false;
    'steps: while games.progress.games < quota && games.slots.iter().any(Option::is_some) {
        for g in 0..groups {
            for (k, evaluator) in evaluators.iter_mut().enumerate() {
                if let Some((ticket, plan)) = in_flight[g * nets + k].take() {
                    let evals = caches[k].complete(plan, evaluator.finish(ticket));
                    lockstep::apply(&mut group(&mut games.slots, g, groups, k), &evals);
                    games.progress.evaluations += evals.len() as u64;
                    games.progress.cache = cache_stats(&caches);
                    if !on_step(&games.progress) {
                        abandoned = true;
                        break 'steps;
                    }
                }
            }
            games.play_moves(g);
            for (k, evaluator) in evaluators.iter_mut().enumerate() {
                let mut searches = group(&mut games.slots, g, groups, k);
                if fill_to_misses(&mut searches, &caches[k], &**evaluator, cfg.positions_per_call) == 0 {
                    continue;
                }
                let reqs: Vec<EvalRequest<'_>> = searches.iter().flat_map(|s| s.requests()).collect();
                let plan = caches[k].plan(&reqs, &**evaluator);
                let ticket = if plan.to_evaluate.is_empty() {
                    Ticket::ready(Vec::new())
                } else {
                    games.progress.batches += 1;
                    let sent: Vec<EvalRequest<'_>> = plan.to_evaluate.iter().map(|&i| reqs[i]).collect();
                    evaluator.start(&sent)
                };
                in_flight[g * nets + k] = Some((ticket, plan));
            }
        }
    }
    // Collect what is still being evaluated, so the evaluators are idle: for abandoned games
    // only that; for games to carry, their searches take the evaluations (a group's games are
    // those its batch was gathered from: a group's moves are played only after its batch is
    // back).
    for (i, flight) in in_flight.into_iter().enumerate() {
        if let Some((ticket, plan)) = flight {
            let (g, k) = (i / nets, i % nets);
            let evals = evaluators[k].finish(ticket);
            if !abandoned {
                let evals = caches[k].complete(plan, evals);
                lockstep::apply(&mut group(&mut games.slots, g, groups, k), &evals);
                games.progress.evaluations += evals.len() as u64;
            }
        }
    }
    games.progress.cache = cache_stats(&caches);
    let Games { slots, progress, .. } = games;
    if abandoned {
        carry.clear();
    } else {
        carry.slots.extend(slots.into_iter().flatten());
    }
    progress
}

/// The counters of all the networks' caches together.
fn cache_stats(caches: &[EvalCache]) -> crate::search::cache::CacheStats {
    let mut total = crate::search::cache::CacheStats::default();
    for c in caches {
        total.add(&c.stats());
    }
    total
}

/// Gathers leaves from `searches` until `batch` of them need the network (the cache answers
/// the rest) or the searches can give no more; returns the number waiting. Gathering only
/// `batch` leaves left the network's batches short by the cache's hits (7% on brandubh), and
/// a short batch is padded ([`crate::nn::evaluator`]'s fixed sizes) and pays the per-call
/// costs for fewer rows. At most four times `batch` leaves are gathered.
fn fill_to_misses(searches: &mut [&mut Search], cache: &EvalCache, evaluator: &dyn Evaluator, batch: usize) -> usize {
    let mut want = batch;
    loop {
        let waiting = lockstep::fill(searches, want);
        if waiting < want || waiting >= 4 * batch {
            return waiting;
        }
        let misses = {
            let reqs: Vec<EvalRequest<'_>> = searches.iter().flat_map(|s| s.requests()).collect();
            cache.misses(&reqs, evaluator)
        };
        if misses >= batch {
            return waiting;
        }
        want = (waiting + batch - misses).min(4 * batch);
    }
}

/// The searches of group `g`'s live games whose side to move network `net` plays (0 the
/// current one, 1 the past one). A game's network changes only when a move is played, so a
/// batch's evaluations go back to the searches that asked for them.
fn group(slots: &mut [Option<Slot>], g: usize, groups: usize, net: usize) -> Vec<&mut Search> {
    slots.iter_mut().skip(g).step_by(groups).flatten().filter(|s| s.net() == net).map(Slot::active).collect()
}

/// The games of one [`play_games`] call: their slots (`None` once a game is over and no new
/// one took its place), split into `groups`, the counters, and where games come from and go.
struct Games<'a> {
    variant: &'a Arc<Variant>,
    cfg: &'a SelfPlayConfig,
    slots: Vec<Option<Slot>>,
    groups: usize,
    /// Whether a past network plays in some games.
    with_past: bool,
    progress: Progress,
    /// Games to hand over ([`Flow::quota`]; `u64::MAX` for all).
    quota: u64,
    next_game: &'a mut dyn FnMut(&Progress) -> Option<(u64, u64)>,
    /// Games finished once the quota was met, for the next call.
    spilled: &'a mut Vec<(u64, FinishedGame)>,
    on_game: &'a mut dyn FnMut(u64, FinishedGame),
}

impl Games<'_> {
    /// Plays the moves of group `g`'s finished searches; a finished game makes room for the
    /// next.
    fn play_moves(&mut self, g: usize) {
        let (variant, cfg, with_past) = (self.variant, self.cfg, self.with_past);
        for entry in self.slots.iter_mut().skip(g).step_by(self.groups) {
            let Some(slot) = entry.as_mut() else { continue };
            let by_past = slot.net() == 1;
            let ply = slot.plies.len() as u32;
            let search = slot.active();
            if !search.is_finished() {
                continue;
            }
            let result = search.result();
            let mv = if ply < cfg.sample_plies {
                let u = slot.rng.gen::<f64>();
                result.sample_policy(u)
            } else {
                let temperature = if ply < cfg.temperature_plies { 1.0 } else { 0.0 };
                slot.active().choose(temperature)
            };
            let mv = mv.expect("unfinished games have moves");
            // A past network's moves are no training targets of this one.
            let target = slot.full && !by_past;
            self.progress.moves += 1;
            if target && cfg.soft_resign_value > 0.0 && result.value.abs() >= cfg.soft_resign_value {
                slot.decided = true;
            }
            slot.play(PlyRecord { mv, policy: if target { result.policy } else { Vec::new() }, full: target, value: result.value });
            if let Some(outcome) = slot.search.position().outcome() {
                let done = entry.take().expect("slot is live");
                let past = done.past.map(|(side, _)| side);
                let game = FinishedGame { plies: done.plies, outcome, past };
                if self.progress.games < self.quota {
                    self.progress.games += 1;
                    (self.on_game)(done.number, game);
                } else {
                    self.spilled.push((done.number, game));
                }
                if let Some((number, seed)) = (self.next_game)(&self.progress) {
                    *entry = Some(new_slot(variant, cfg, number, seed, with_past));
                }
            } else {
                configure(slot, cfg);
            }
        }
    }
}

/// A new game. With a past network at hand, `cfg.past_share` of the games give it a side
/// (drawn after the search seed; with a past network every game draws, so its fast or full
/// choices differ from those of a call without one). Then the random opening
/// ([`SelfPlayConfig::opening_plies`]), played in both searches.
fn new_slot(variant: &Arc<Variant>, cfg: &SelfPlayConfig, number: u64, seed: u64, with_past: bool) -> Slot {
    let mut rng = SmallRng::seed_from_u64(seed);
    let search = Search::new(Position::start(variant.clone()), cfg.search.clone(), rng.gen());
    let past = (with_past && cfg.past_share > 0.0 && rng.gen::<f32>() < cfg.past_share).then(|| {
        let side = if rng.gen::<bool>() { Side::Attackers } else { Side::Defenders };
        (side, Search::new(Position::start(variant.clone()), cfg.search.clone(), rng.gen()))
    });
    let mut slot = Slot { search, past, plies: Vec::new(), full: true, decided: false, number, rng };
    // The random opening, drawn last so that a config without one plays as before.
    if cfg.opening_plies > 0 {
        let rng = &mut slot.rng;
        let opening = crate::play::random_opening(slot.search.position(), cfg.opening_plies, &mut |n| rng.gen_range(0..n));
        for mv in opening {
            slot.play(PlyRecord { mv, policy: Vec::new(), full: false, value: 0.0 });
        }
    }
    configure(&mut slot, cfg);
    slot
}

/// Chooses full or fast search for the slot's next move.
fn configure(slot: &mut Slot, cfg: &SelfPlayConfig) {
    slot.full = !slot.decided && (cfg.fast_probability <= 0.0 || slot.rng.gen::<f32>() >= cfg.fast_probability);
    let mut c = cfg.search.clone();
    let attackers = slot.search.position().to_move() == Side::Attackers;
    if let (true, Some(n)) = (attackers, cfg.attacker_sims) {
        c.sims = n;
    }
    if !slot.full {
        c.sims = match (attackers, cfg.attacker_fast_sims) {
            (true, Some(n)) => n,
            _ => cfg.fast_sims.max(1),
        };
        // No exploration at the root of a fast search (its move is not a policy target).
        c.noise = None;
        c.forced_playouts = 0.0;
        if let RootPolicy::Gumbel { k, .. } = &mut c.root {
            *k = (*k).min(c.sims as usize).max(2);
        }
    }
    let search = slot.active();
    search.set_config(c);
    search.start();
}

impl FinishedGame {
    /// The search's root value at every fully searched ply, as a calibration observation: the
    /// side to move (`first` moves at ply 0, then the sides alternate), the value as an
    /// expected score (v + 1)/2, and the score that side got in this game. Fast searches
    /// (playout cap randomization) are left out: their few simulations are not the search
    /// the games are trained on.
    pub fn value_observations(&self, first: Side) -> impl Iterator<Item = Observation> + '_ {
        let length = self.plies.len();
        let winner = self.outcome.winner;
        self.plies.iter().enumerate().filter(|(_, p)| p.full).map(move |(ply, p)| {
            let side = if ply % 2 == 0 { first } else { first.opponent() };
            Observation { side, predicted: Observation::score_of_value(p.value), realized: Observation::realized_by(side, winner), ply, length }
        })
    }
}

/// The per-side calibration of the searches' values in `games` of a variant where `first`
/// moves first ([`FinishedGame::value_observations`]).
pub fn value_calibration(games: &[FinishedGame], first: Side) -> Calibration {
    let mut c = Calibration::new();
    for o in games.iter().flat_map(|g| g.value_observations(first)) {
        c.add(&o);
    }
    c
}

/// The moves of a game, replayed to positions: `(position before the ply, ply)`.
pub fn replay<'a>(variant: &Arc<Variant>, plies: &'a [PlyRecord]) -> impl Iterator<Item = (Position, &'a PlyRecord)> {
    let mut pos = Position::start(variant.clone());
    plies.iter().map(move |p| {
        let before = pos.clone();
        pos.make(p.mv);
        (before, p)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` brandubh games of `cfg` with random rollouts seeded `rollouts` as the evaluator,
    /// game `i` seeded as [`play`] seeds it from `seed`.
    fn rollout_games(cfg: &SelfPlayConfig, rollouts: u64, seed: u64, n: usize) -> Vec<FinishedGame> {
        let v = Arc::new(crate::rules::Variant::preset("brandubh").unwrap());
        let mut out = Vec::new();
        let mut started = 0;
        play(
            &v,
            cfg,
            &mut crate::search::evaluator::RolloutEvaluator::new(rollouts),
            seed,
            &mut |_| {
                started += 1;
                started <= n
            },
            &mut |g| out.push(g),
            &mut |_| true,
        );
        assert_eq!(out.len(), n);
        out
    }
    use crate::rules::{Reason, Square};

    /// Four plies, the third a fast search, the defenders win: by hand, the attackers' one
    /// position predicted (0.5 + 1)/2 = 0.75 and got 0; the defenders' two predicted 0.25 and
    /// 1 and got 1 both (Brier (0.75² + 0) / 2).
    #[test]
    fn value_observations_by_hand() {
        let mv = Move::new(Square::new(0, 0), Square::new(0, 1));
        let ply = |value: f32, full: bool| PlyRecord { mv, policy: Vec::new(), full, value };
        let game = FinishedGame {
            plies: vec![ply(0.5, true), ply(-0.5, true), ply(0.0, false), ply(1.0, true)],
            outcome: Outcome::win(Side::Defenders, Reason::CornerEscape),
            past: None,
        };
        let obs: Vec<(Side, f64, f64, usize)> = game.value_observations(Side::Attackers).map(|o| (o.side, o.predicted, o.realized, o.ply)).collect();
        assert_eq!(obs, [(Side::Attackers, 0.75, 0.0, 0), (Side::Defenders, 0.25, 1.0, 1), (Side::Defenders, 1.0, 1.0, 3)]);
        let c = value_calibration(&[game.clone(), game], Side::Attackers).report();
        let (a, d) = (c.attackers.all.summary, c.defenders.all.summary);
        assert_eq!((a.count, a.mean_predicted, a.mean_realized, a.brier), (2, 0.75, 0.0, 0.5625));
        assert_eq!((d.count, d.mean_predicted, d.mean_realized, d.brier), (4, 0.625, 1.0, 0.28125));
    }

    /// Each side's searches get their own simulations: full and fast, attackers and
    /// defenders (the attackers' fast ones `attacker_fast_sims`, or `fast_sims` when none).
    #[test]
    fn each_side_and_search_kind_gets_its_simulations() {
        let v = Arc::new(crate::rules::Variant::preset("brandubh").unwrap());
        let mut cfg = SelfPlayConfig { attacker_sims: Some(64), fast_sims: 4, attacker_fast_sims: Some(16), ..SelfPlayConfig::default() };
        cfg.search.sims = 16;
        let sims = |cfg: &SelfPlayConfig, fast: bool, attackers: bool| {
            let cfg = SelfPlayConfig { fast_probability: if fast { 0.999_999 } else { 0.0 }, ..cfg.clone() };
            let mut slot = new_slot(&v, &cfg, 0, 1, false);
            if !attackers {
                let m = slot.search.position().legal_moves()[0];
                slot.search.advance(m).unwrap();
                configure(&mut slot, &cfg);
            }
            assert_eq!(slot.full, !fast);
            slot.search.config().sims
        };
        assert_eq!([sims(&cfg, false, true), sims(&cfg, true, true), sims(&cfg, false, false), sims(&cfg, true, false)], [64, 16, 16, 4]);
        cfg.attacker_fast_sims = None;
        assert_eq!(sims(&cfg, true, true), 4, "none: the same fast search as the defenders'");
    }

    /// A fast search explores nothing at its root (no noise, no forced playouts: its move is
    /// no policy target); a full one keeps both.
    #[test]
    fn fast_searches_drop_root_exploration() {
        let v = Arc::new(crate::rules::Variant::preset("brandubh").unwrap());
        let search =
            SearchConfig { sims: 16, root: RootPolicy::Puct, noise: Some(crate::search::Noise::default()), forced_playouts: 2.0, ..SearchConfig::default() };
        for fast in [false, true] {
            let cfg = SelfPlayConfig { fast_probability: if fast { 0.999_999 } else { 0.0 }, search: search.clone(), ..SelfPlayConfig::default() };
            let slot = new_slot(&v, &cfg, 0, 1, false);
            let c = slot.search.config();
            assert_eq!((c.noise.is_some(), c.forced_playouts), if fast { (false, 0.0) } else { (true, 2.0) }, "fast: {fast}");
        }
    }

    /// A random opening: each game's first plies are uniform random moves (no policy target,
    /// not a full search), replayable from the start, and the games open differently; the
    /// searched plies after them are as without one (full searches here).
    #[test]
    fn random_opening_plies_give_no_targets_and_vary() {
        let v = Arc::new(crate::rules::Variant::preset("brandubh").unwrap());
        let mut cfg = SelfPlayConfig { games_in_flight: 4, positions_per_call: 16, opening_plies: 3, ..SelfPlayConfig::default() };
        cfg.search.sims = 8;
        let games = rollout_games(&cfg, 3, 5, 8);
        let mut openings = std::collections::HashSet::new();
        for g in &games {
            assert!(g.plies.len() > 3);
            assert!(g.plies[..3].iter().all(|p| !p.full && p.policy.is_empty()), "opening plies are no targets");
            assert!(g.plies[3..].iter().all(|p| p.full && !p.policy.is_empty()), "searched plies are");
            let positions: Vec<Position> = replay(&v, &g.plies).map(|(pos, _)| pos).collect();
            assert_eq!(positions.len(), g.plies.len(), "the game replays from the start");
            openings.insert(g.plies[..3].iter().map(|p| p.mv).collect::<Vec<_>>());
        }
        assert!(openings.len() >= 6, "{} distinct openings in 8 games", openings.len());
    }

    /// Sampled plies: a Gumbel root without noise plays the same game every time (uniform
    /// priors and values here, so its choice is fixed), and `sample_plies` draws the first
    /// moves from its policy target instead, so the games open differently; after those
    /// plies the moves are targets as before (every ply a full search).
    #[test]
    fn sampled_plies_vary_the_games_of_a_noiseless_gumbel_root() {
        let v = Arc::new(crate::rules::Variant::preset("brandubh").unwrap());
        let openings = |sample_plies: u32| {
            let mut cfg = SelfPlayConfig { games_in_flight: 4, positions_per_call: 16, sample_plies, temperature_plies: 8, ..SelfPlayConfig::default() };
            cfg.search.sims = 8;
            cfg.search.root = RootPolicy::Gumbel { k: 4, c_visit: 50.0, c_scale: 0.1, gumbel_scale: 0.0 };
            let mut out = std::collections::HashSet::new();
            let mut started = 0;
            play(
                &v,
                &cfg,
                &mut crate::search::evaluator::UniformEvaluator::new(),
                5,
                &mut |_| {
                    started += 1;
                    started <= 6
                },
                &mut |g| {
                    assert!(g.plies.iter().all(|p| p.full && !p.policy.is_empty()), "sampled plies are still targets");
                    out.insert(g.plies.iter().take(4).map(|p| p.mv).collect::<Vec<_>>());
                },
                &mut |_| true,
            );
            out.len()
        };
        assert_eq!(openings(0), 1, "without sampling every game opens alike");
        assert!(openings(4) >= 4, "sampled openings");
    }

    /// Soft resignation: every ply after the first full search whose root value reached the
    /// threshold is a fast search, every full ply before it stayed under the threshold, and
    /// the game is still played to its end (a finished game ends in its outcome). Random
    /// rollouts give decided values often, so some games must have been decided; off, every
    /// ply is a full search.
    #[test]
    fn soft_resignation_plays_decided_games_out_with_fast_searches() {
        let games = |soft: f32| {
            let mut cfg = SelfPlayConfig { games_in_flight: 4, positions_per_call: 16, fast_sims: 2, soft_resign_value: soft, ..SelfPlayConfig::default() };
            cfg.search.sims = 8;
            rollout_games(&cfg, 7, 11, 8)
        };
        assert!(games(0.0).iter().all(|g| g.plies.iter().all(|p| p.full)), "off: every ply is fully searched");
        let mut decided = 0;
        for g in games(0.6) {
            let first = g.plies.iter().position(|p| p.value.abs() >= 0.6);
            let cut = first.map_or(g.plies.len(), |i| i + 1);
            assert!(g.plies[..cut].iter().all(|p| p.full), "full searches until the game is decided");
            assert!(g.plies[cut..].iter().all(|p| !p.full && p.policy.is_empty()), "fast ones after");
            decided += usize::from(cut < g.plies.len());
        }
        assert!(decided > 0, "no game was decided: the test proves nothing");
    }

    /// A deterministic stand-in for a network: uniform priors and a value drawn from the
    /// position's hash and a salt (another salt, another network), recording the positions
    /// it was asked for.
    struct Salted {
        salt: u64,
        seen: std::collections::HashSet<u64>,
    }

    impl Salted {
        fn new(salt: u64) -> Salted {
            Salted { salt, seen: std::collections::HashSet::new() }
        }
    }

    impl Evaluator for Salted {
        fn evaluate(&mut self, batch: &[EvalRequest<'_>]) -> Vec<crate::search::Evaluation> {
            batch
                .iter()
                .map(|r| {
                    let h = r.position.hash();
                    self.seen.insert(h);
                    let win = ((h ^ self.salt).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as f32 / (1u64 << 24) as f32;
                    crate::search::Evaluation::uniform(r.moves.len(), [win, 0.0, 1.0 - win])
                })
                .collect()
        }
        fn cache_key(&self, position: &Position) -> Option<u64> {
            Some(position.hash())
        }
    }

    /// Continuous self-play: three calls of four games each from one stream of games, with
    /// four games always in flight, then a last call that plays out what is left. Each call
    /// hands over exactly its quota, games in flight are carried to the next call, and every
    /// game started is handed over once; with one network throughout, every game is the game
    /// its seed gives alone; with a new network each call, a carried game goes on with the
    /// next call's network and never back; an abandoned call carries nothing.
    #[test]
    fn carried_games_finish_in_the_next_call_with_its_network() {
        let v = Arc::new(crate::rules::Variant::preset("brandubh").unwrap());
        let mut cfg =
            SelfPlayConfig { games_in_flight: 4, positions_per_call: 16, fast_probability: 0.5, fast_sims: 4, opening_plies: 2, ..SelfPlayConfig::default() };
        cfg.search.sims = 8;
        cfg.search.root = RootPolicy::gumbel(4);
        let moves = |g: &FinishedGame| g.plies.iter().map(|p| p.mv).collect::<Vec<_>>();
        // Calls with `evaluators[i]`: quota 4, then (the last) all the games left.
        let calls = |evaluators: &mut [Salted]| {
            let mut carry = Carry::default();
            let mut started = 0u64;
            let mut out: Vec<Vec<(u64, FinishedGame)>> = Vec::new();
            let last = evaluators.len() - 1;
            for (i, ev) in evaluators.iter_mut().enumerate() {
                let mut got = Vec::new();
                let quota = (i < last).then_some(4);
                play_games_carried(
                    &v,
                    &cfg,
                    ev,
                    None,
                    Flow {
                        next_game: &mut |_| {
                            (quota.is_some()).then(|| {
                                started += 1;
                                (started - 1, game_seed(9, 0, started - 1))
                            })
                        },
                        quota,
                        carry: &mut carry,
                    },
                    &mut |k, game| got.push((k, game)),
                    &mut |_| true,
                );
                if i < last {
                    assert_eq!(got.len(), 4, "call {i} hands over its quota");
                    assert_eq!(carry.numbers().len(), carry.len());
                    assert!(carry.len() >= 4, "call {i}: the games in flight are carried ({})", carry.len());
                }
                out.push(got);
            }
            assert!(carry.is_empty(), "the last call played every game out");
            let mut numbers: Vec<u64> = out.iter().flatten().map(|(k, _)| *k).collect();
            numbers.sort();
            assert_eq!(numbers, (0..started).collect::<Vec<_>>(), "every game started was handed over once");
            out
        };
        // One network throughout: the same games as each seed gives alone.
        let games = calls(&mut [Salted::new(1), Salted::new(1), Salted::new(1), Salted::new(1)]);
        for (k, game) in games.iter().flatten() {
            let mut one = Some((*k, game_seed(9, 0, *k)));
            let mut alone = Vec::new();
            play_games(&v, &cfg, &mut Salted::new(1), &mut |_| one.take(), &mut |_, g| alone.push(g), &mut |_| true);
            assert_eq!(moves(game), moves(&alone[0]), "game {k}");
            assert_eq!(game.outcome, alone[0].outcome);
        }
        // A new network each call. Label each root (after the random opening) with the one
        // network that evaluated it, where only one did: along a game the labels never go
        // back (a carried game takes up the next network and keeps it), no game handed over
        // by call `c` was searched by a later call's network, and some game began with the
        // first network and ended with the second.
        let mut nets = [Salted::new(1), Salted::new(2), Salted::new(3), Salted::new(4)];
        let games = calls(&mut nets);
        let mut crossed = 0;
        for (c, handed) in games.iter().enumerate() {
            for (k, game) in handed {
                let labels: Vec<usize> = replay(&v, &game.plies)
                    .skip(2)
                    .filter_map(|(pos, _)| {
                        let by: Vec<usize> = (0..nets.len()).filter(|&i| nets[i].seen.contains(&pos.hash())).collect();
                        (by.len() == 1).then(|| by[0])
                    })
                    .collect();
                assert!(labels.windows(2).all(|w| w[0] <= w[1]), "game {k}: networks {labels:?}");
                assert!(labels.iter().all(|&l| l <= c), "game {k}, handed over by call {c}: networks {labels:?}");
                crossed += usize::from(labels.contains(&0) && labels.contains(&1));
            }
        }
        assert!(crossed > 0, "no game began with call 1's network and went on with call 2's");
        // Abandoned: nothing is carried.
        let mut carry = Carry::default();
        let mut ids = 0..;
        let mut steps = 0;
        play_games_carried(
            &v,
            &cfg,
            &mut Salted::new(1),
            None,
            Flow { next_game: &mut |_| ids.next().map(|k| (k, k)), quota: Some(4), carry: &mut carry },
            &mut |_, _| {},
            &mut |_| {
                steps += 1;
                steps < 3
            },
        );
        assert!(carry.is_empty());
    }

    /// Games against a past network: in about `past_share` of the games one side's plies are
    /// all the past network's (no policy target, not `full`) and the other's all targets; the
    /// root of every ply was evaluated by the network that played it (each has its own tree
    /// and cache); without a past evaluator the share plays no such game.
    #[test]
    fn a_past_network_plays_its_side_with_its_own_searches_and_gives_no_targets() {
        use std::collections::HashSet;
        struct Recording(HashSet<u64>);
        impl Evaluator for Recording {
            fn evaluate(&mut self, batch: &[EvalRequest<'_>]) -> Vec<crate::search::Evaluation> {
                batch
                    .iter()
                    .map(|r| {
                        self.0.insert(r.position.hash());
                        crate::search::Evaluation::uniform(r.moves.len(), [0.0, 1.0, 0.0])
                    })
                    .collect()
            }
            fn cache_key(&self, position: &Position) -> Option<u64> {
                Some(position.hash())
            }
        }
        let v = Arc::new(crate::rules::Variant::preset("brandubh").unwrap());
        let mut cfg = SelfPlayConfig { games_in_flight: 4, positions_per_call: 16, past_share: 0.75, ..SelfPlayConfig::default() };
        cfg.search.sims = 8;
        let play_n = |cfg: &SelfPlayConfig, now: &mut Recording, past: Option<&mut Recording>| {
            let mut out = Vec::new();
            let mut n = 0;
            play_games_with_past(
                &v,
                cfg,
                now,
                past.map(|p| p as &mut dyn Evaluator),
                &mut |_| {
                    n += 1;
                    (n <= 12).then(|| (n - 1, game_seed(5, 0, n - 1)))
                },
                &mut |_, g| out.push(g),
                &mut |_| true,
            );
            assert_eq!(out.len(), 12);
            out
        };
        let (mut now, mut past) = (Recording(HashSet::new()), Recording(HashSet::new()));
        let mut against_past = 0;
        for g in play_n(&cfg, &mut now, Some(&mut past)) {
            let plies: Vec<(Position, &PlyRecord)> = replay(&v, &g.plies).collect();
            let past_sides: HashSet<Side> = plies.iter().filter(|(_, p)| !p.full).map(|(pos, _)| pos.to_move()).collect();
            assert!(past_sides.len() <= 1, "one side at most is the past network's");
            let past_side = past_sides.into_iter().next();
            assert_eq!(g.past, past_side, "the game says which side the past network played");
            against_past += usize::from(past_side.is_some());
            if past_side.is_none() {
                // After the shared openings, no position of a game between current networks
                // went to the past one (it would if the networks' batches were crossed).
                assert!(plies.iter().skip(6).all(|(pos, _)| !past.0.contains(&pos.hash())), "a current-network game's root went to the past network");
            }
            for (pos, p) in &plies {
                let by_past = Some(pos.to_move()) == past_side;
                assert_eq!((p.full, p.policy.is_empty()), (!by_past, by_past), "targets only from the current network");
                let player = if by_past { &past } else { &now };
                assert!(player.0.contains(&pos.hash()), "the root was evaluated by the network that played it");
            }
        }
        assert!((4..12).contains(&against_past), "{against_past} of 12 games against the past network (share 0.75)");
        // No past evaluator: every ply is the current network's.
        let alone = play_n(&cfg, &mut Recording(HashSet::new()), None);
        assert!(alone.iter().all(|g| g.past.is_none() && g.plies.iter().all(|p| p.full && !p.policy.is_empty())));
        // A past evaluator with a share of 0 changes nothing: the same games as without one.
        let off = SelfPlayConfig { past_share: 0.0, ..cfg.clone() };
        let moves = |gs: &[FinishedGame]| gs.iter().map(|g| g.plies.iter().map(|p| p.mv).collect::<Vec<_>>()).collect::<Vec<_>>();
        let unused = play_n(&off, &mut Recording(HashSet::new()), Some(&mut Recording(HashSet::new())));
        assert_eq!(moves(&unused), moves(&play_n(&off, &mut Recording(HashSet::new()), None)));
    }
}

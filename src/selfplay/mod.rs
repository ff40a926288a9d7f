//! Self-play: many games stepped in lockstep, so that every evaluator call is one batch made
//! of leaves from all of them.
//!
//! Each game slot owns a [`Search`]. A step gathers leaves from the slots (round-robin, until
//! the batch is full), evaluates them with one call, applies the results, and lets every slot
//! whose search finished play its move and start the next search at once: there is no
//! barrier between moves of different games, so batches stay full.
//!
//! Playout cap randomization (KataGo): a fraction of moves gets a cheap search and is not
//! used as a policy target; only full searches (with root noise) become targets.

pub mod shard;

use crate::rules::{Move, Outcome, Position, Variant};
use crate::search::{lockstep, Evaluator, RootPolicy, Search, SearchConfig};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::Arc;

/// How self-play searches and picks moves.
#[derive(Clone, Debug)]
pub struct SelfPlayConfig {
    /// Games played at the same time (per evaluator).
    pub games_in_flight: usize,
    /// Most leaves per evaluator call.
    pub batch: usize,
    /// The full search (its policy is a training target).
    pub search: SearchConfig,
    /// Probability that a move gets only a fast search (0 turns playout cap randomization off).
    pub fast_probability: f32,
    /// Simulations of a fast search.
    pub fast_simulations: u32,
    /// Simulations of the attackers' full searches, when they differ (0 = the same as
    /// `search`). Giving the weaker side of a lopsided variant more search (KataGo's
    /// "playout doubling advantage" idea) makes it win some self-play games, so the network
    /// sees what works for that side.
    pub attacker_simulations: u32,
    /// Plies at the start of each game where PUCT searches sample their move with
    /// temperature 1 (Gumbel searches always play their sequential-halving winner).
    pub temperature_plies: u32,
}

impl Default for SelfPlayConfig {
    fn default() -> Self {
        SelfPlayConfig {
            games_in_flight: 64,
            batch: 256,
            search: SearchConfig { simulations: 32, root: RootPolicy::gumbel(RootPolicy::DEFAULT_K), noise: None, ..SearchConfig::default() },
            fast_probability: 0.0,
            fast_simulations: 8,
            attacker_simulations: 0,
            temperature_plies: 8,
        }
    }
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
}

/// Counters of a self-play run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Progress {
    pub games: u64,
    pub moves: u64,
    pub evaluations: u64,
    pub batches: u64,
}

struct Slot {
    search: Search,
    plies: Vec<PlyRecord>,
    full: bool,
    /// The game's slot number (see [`play_games`]).
    number: u64,
    /// The game's own random choices.
    rng: SmallRng,
}

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
    let mut progress = Progress::default();
    let mut slots: Vec<Option<Slot>> = Vec::new();
    for _ in 0..cfg.games_in_flight.max(1) {
        let Some((number, seed)) = next_game(&progress) else { break };
        slots.push(Some(new_slot(variant, cfg, number, seed)));
    }
    while slots.iter().any(Option::is_some) {
        {
            let mut searches: Vec<&mut Search> = slots.iter_mut().flatten().map(|s| &mut s.search).collect();
            lockstep::fill(&mut searches, cfg.batch);
            let n = lockstep::evaluate(&mut searches, evaluator);
            if n > 0 {
                progress.evaluations += n as u64;
                progress.batches += 1;
            }
        }
        // Play the moves of finished searches.
        for entry in slots.iter_mut() {
            let Some(slot) = entry.as_mut() else { continue };
            if !slot.search.is_finished() {
                continue;
            }
            let ply = slot.plies.len() as u32;
            let result = slot.search.result();
            let temperature = if ply < cfg.temperature_plies { 1.0 } else { 0.0 };
            let mv = slot.search.choose(temperature).expect("unfinished games have moves");
            slot.plies.push(PlyRecord {
                mv,
                policy: if slot.full { result.policy } else { Vec::new() },
                full: slot.full,
                value: result.value,
            });
            progress.moves += 1;
            slot.search.advance(mv).expect("searched moves are legal");
            if let Some(outcome) = slot.search.position().outcome() {
                let done = entry.take().expect("slot is live");
                progress.games += 1;
                on_game(done.number, FinishedGame { plies: done.plies, outcome });
                if let Some((number, seed)) = next_game(&progress) {
                    *entry = Some(new_slot(variant, cfg, number, seed));
                }
            } else {
                configure(slot, cfg);
            }
        }
        if !on_step(&progress) {
            break;
        }
    }
    progress
}

fn new_slot(variant: &Arc<Variant>, cfg: &SelfPlayConfig, number: u64, seed: u64) -> Slot {
    let mut rng = SmallRng::seed_from_u64(seed);
    let search = Search::new(Position::start(variant.clone()), cfg.search.clone(), rng.gen());
    let mut slot = Slot { search, plies: Vec::new(), full: true, number, rng };
    configure(&mut slot, cfg);
    slot
}

/// Chooses full or fast search for the slot's next move.
fn configure(slot: &mut Slot, cfg: &SelfPlayConfig) {
    slot.full = cfg.fast_probability <= 0.0 || slot.rng.gen::<f32>() >= cfg.fast_probability;
    let mut c = cfg.search.clone();
    if cfg.attacker_simulations > 0 && slot.search.position().to_move() == crate::rules::Side::Attackers {
        c.simulations = cfg.attacker_simulations;
    }
    if !slot.full {
        c.simulations = cfg.fast_simulations.max(1);
        c.noise = None;
        if let RootPolicy::Gumbel { k, .. } = &mut c.root {
            *k = (*k).min(c.simulations as usize).max(2);
        }
    }
    slot.search.set_config(c);
    slot.search.start();
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

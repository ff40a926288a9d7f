//! Games between agents: matches with sides alternating, in parallel across cores.
//!
//! Between two different agents, both games of a pair (A attacking, then B attacking) start
//! from the same short random opening, so deterministic agents still play varied games and
//! neither side of the pairing gets an easier set of openings. When an agent plays itself
//! (balance, a ladder's self-play, `match` with A = B), a shared opening would make the pair's
//! second game a copy of the first with the roles swapped, so there every game gets its own
//! opening ([`Openings`]). A game's seed and opening depend on the match seed and the game's
//! index alone, so a match cut into shards ([`shard`]) replays exactly the games of one whole
//! run.

pub mod agent;
pub mod external;
pub mod provenance;
pub mod shard;

pub use agent::{Agent, AgentError, AgentKind, AgentSpec, RepetitionReading};
pub use external::{Fault, ForfeitCause};
pub use provenance::AgentRecord;
pub use shard::{Shard, ShardError};

use crate::rules::notation::parse_move;
use crate::rules::{Geometry, Move, Outcome, Position, Side, Variant};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// One finished game of a match.
#[derive(Clone, Debug)]
pub struct GameResult {
    pub index: usize,
    /// The side agent A played.
    pub a_side: Side,
    /// The result by the rules (`None` when a fault ended the game).
    pub outcome: Option<Outcome>,
    /// A forfeit or rules disagreement of an external engine that ended the game.
    pub fault: Option<Fault>,
    pub moves: Vec<Move>,
    /// The time each agent spent choosing its moves (zero for a game read back from a record,
    /// which keeps no times; a match's totals come from the shards' JSON then).
    pub think: Think,
}

/// The time agents A and B spent choosing their moves, and how many moves each chose (the
/// random opening's plies are nobody's): what shows that a match "at equal time" was one.
/// It is the referee's clock, from asking for a move to having it: for an external engine
/// that includes tafl-lab's side of the protocol (starting the engine for a game's first
/// move, its quiet wait after a move), so an engine's figure is an upper bound of its own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Think {
    pub a_moves: u32,
    pub a_seconds: f64,
    pub b_moves: u32,
    pub b_seconds: f64,
}

impl Think {
    /// A's and B's mean seconds a move (`None` for an agent that chose no move).
    pub fn per_move(&self) -> (Option<f64>, Option<f64>) {
        let mean = |s: f64, n: u32| (n > 0).then(|| s / n as f64);
        (mean(self.a_seconds, self.a_moves), mean(self.b_seconds, self.b_moves))
    }

    /// The sum over `games`.
    pub fn total<'a>(games: impl IntoIterator<Item = &'a Think>) -> Think {
        games.into_iter().fold(Think::default(), |t, g| t + *g)
    }
}

impl std::ops::Add for Think {
    type Output = Think;
    fn add(self, o: Think) -> Think {
        Think {
            a_moves: self.a_moves + o.a_moves,
            a_seconds: self.a_seconds + o.a_seconds,
            b_moves: self.b_moves + o.b_moves,
            b_seconds: self.b_seconds + o.b_seconds,
        }
    }
}

impl GameResult {
    /// The game's winner: `Some(None)` for a draw, `None` for a game that is not scored (a
    /// rules disagreement or a void game). A forfeit is a win for the other side.
    pub fn winner(&self) -> Option<Option<Side>> {
        match (&self.outcome, &self.fault) {
            (Some(o), _) => Some(o.winner),
            (None, Some(f)) => f.winner().map(Some),
            (None, None) => None,
        }
    }

    /// A's points: 1 win, 0.5 draw, 0 loss; `None` for an unscored game.
    pub fn a_points(&self) -> Option<f64> {
        self.winner().map(|w| match w {
            Some(w) if w == self.a_side => 1.0,
            Some(_) => 0.0,
            None => 0.5,
        })
    }

    /// How the game ended, in words: the rules' reason, `forfeit`, `void` or `disagreement`.
    pub fn ending(&self) -> &'static str {
        match (&self.outcome, &self.fault) {
            (Some(o), _) => o.reason.name(),
            (None, Some(Fault::Forfeit { .. })) => "forfeit",
            (None, Some(Fault::Void { .. })) => "void",
            _ => "disagreement",
        }
    }
}

/// A finished game as JSON files keep it (a tournament's pairing files, a shard's output):
/// enough to sum it up again exactly ([`GameRecord::to_result`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GameRecord {
    pub index: usize,
    /// The side agent A played.
    pub a_side: Side,
    /// The result by the rules; null when an external engine's fault ended the game.
    pub outcome: Option<Outcome>,
    /// That fault (a forfeit, scored as a loss; a rules disagreement or a void game, not
    /// scored); null when none.
    #[serde(default)]
    pub fault: Option<Fault>,
    /// How the game ended, in words ([`GameResult::ending`]).
    pub ending: String,
    pub plies: usize,
    /// The moves from the start, space separated (`d1-d3 d5-b5`).
    pub moves: String,
}

impl GameRecord {
    /// The record of a game.
    pub fn of(g: &GameResult) -> GameRecord {
        GameRecord {
            index: g.index,
            a_side: g.a_side,
            outcome: g.outcome,
            fault: g.fault.clone(),
            ending: g.ending().to_string(),
            plies: g.moves.len(),
            moves: g.moves.iter().map(|m| m.to_string()).collect::<Vec<_>>().join(" "),
        }
    }

    /// The game again, its moves read on a board of `geometry`.
    ///
    /// # Errors
    /// A move that does not parse, or a move count other than `plies` (one line).
    pub fn to_result(&self, geometry: Geometry) -> Result<GameResult, String> {
        let moves = self
            .moves
            .split_whitespace()
            .map(|m| parse_move(m, geometry).map(|r| r.mv).map_err(|e| format!("game {}: {e}", self.index + 1)))
            .collect::<Result<Vec<Move>, String>>()?;
        if moves.len() != self.plies {
            return Err(format!("game {}: {} moves, but plies says {}", self.index + 1, moves.len(), self.plies));
        }
        Ok(GameResult { index: self.index, a_side: self.a_side, outcome: self.outcome, fault: self.fault.clone(), moves, think: Think::default() })
    }
}

/// Wins, draws and losses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wdl {
    pub win: u32,
    pub draw: u32,
    pub loss: u32,
}

impl Wdl {
    pub fn games(&self) -> u32 {
        self.win + self.draw + self.loss
    }
}

/// `3-1-2`: wins, draws, losses, the one form every message, table and report writes.
impl std::fmt::Display for Wdl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}-{}", self.win, self.draw, self.loss)
    }
}

/// Results summed side by side (e.g. as attackers plus as defenders).
impl std::ops::Add for Wdl {
    type Output = Wdl;
    fn add(self, o: Wdl) -> Wdl {
        Wdl { win: self.win + o.win, draw: self.draw + o.draw, loss: self.loss + o.loss }
    }
}

/// A match summed up from A's view. Rules disagreements and void games are counted apart and
/// not scored: `games` and the W-D-L counts cover scored games only; forfeits are scored as
/// losses of the side that forfeited.
#[derive(Clone, Debug, Default, Serialize)]
pub struct MatchSummary {
    pub games: u32,
    /// A's points per game (a draw is half a point).
    pub a_score: f64,
    pub a_as_attackers: Wdl,
    pub a_as_defenders: Wdl,
    pub mean_plies: f64,
    /// Games lost by forfeit (by either agent; counted in the W-D-L above).
    pub forfeits: u32,
    /// Games ended by a rules disagreement (not scored).
    pub disagreements: u32,
    /// Games voided because tafl-lab's own side failed (not scored).
    pub voids: u32,
    /// A's faults by kind ([`Fault::kind_name`]: a forfeit's cause, `void` or `disagreement`).
    pub a_faults: std::collections::BTreeMap<&'static str, u32>,
    /// B's faults by kind.
    pub b_faults: std::collections::BTreeMap<&'static str, u32>,
}

impl MatchSummary {
    pub fn from_games(games: &[GameResult]) -> MatchSummary {
        let scored: Vec<&GameResult> = games.iter().filter(|g| g.winner().is_some()).collect();
        let mut s = MatchSummary { games: scored.len() as u32, ..Default::default() };
        let mut points = 0.0;
        for g in &scored {
            points += g.a_points().unwrap_or(0.0);
            let w = if g.a_side == Side::Attackers { &mut s.a_as_attackers } else { &mut s.a_as_defenders };
            match g.winner().flatten() {
                Some(x) if x == g.a_side => w.win += 1,
                Some(_) => w.loss += 1,
                None => w.draw += 1,
            }
        }
        s.forfeits = games.iter().filter(|g| matches!(g.fault, Some(Fault::Forfeit { .. }))).count() as u32;
        s.disagreements = games.iter().filter(|g| matches!(g.fault, Some(Fault::Disagreement { .. }))).count() as u32;
        s.voids = games.iter().filter(|g| matches!(g.fault, Some(Fault::Void { .. }))).count() as u32;
        for g in games {
            if let Some(f) = &g.fault {
                let by = if f.side() == g.a_side { &mut s.a_faults } else { &mut s.b_faults };
                *by.entry(f.kind_name()).or_default() += 1;
            }
        }
        s.a_score = points / scored.len().max(1) as f64;
        s.mean_plies = scored.iter().map(|g| g.moves.len() as f64).sum::<f64>() / scored.len().max(1) as f64;
        s
    }

    /// A's total wins, draws, losses.
    pub fn a_total(&self) -> Wdl {
        self.a_as_attackers + self.a_as_defenders
    }
}

/// Match settings.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    pub games: usize,
    pub seed: u64,
    /// Random plies played before the agents take over (the same for both games of a pair of
    /// different agents, one per game when an agent plays itself: [`Openings`]).
    pub opening_plies: u32,
    /// Play only this shard's games of the `games` (all of them when `None`).
    pub shard: Option<Shard>,
    /// Play only the games in which A has this side (both when `None`): a match that measures
    /// one side only, against an opponent whose games take long.
    pub a_side: Option<Side>,
}

impl MatchConfig {
    /// The indices of the games this match plays: all `games`, or its shard's; with `a_side`,
    /// only those in which A plays that side (A attacks in even-numbered games).
    pub fn indices(&self) -> Vec<usize> {
        let all = match self.shard {
            Some(s) => s.games(self.games),
            None => (0..self.games).collect(),
        };
        all.into_iter().filter(|&i| !matches!(self.a_side, Some(side) if side != a_side_of(i))).collect()
    }
}

/// A's side in game `i` of a match: attackers in even-numbered games, defenders in odd ones.
pub fn a_side_of(i: usize) -> Side {
    if i % 2 == 0 {
        Side::Attackers
    } else {
        Side::Defenders
    }
}

/// How the random openings of a match are drawn.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Openings {
    /// Both games of a pair share one opening (two different agents: each plays both sides of
    /// the same openings).
    Paired,
    /// Every game has its own opening (an agent against itself: a shared opening would repeat
    /// a deterministic agent's game).
    PerGame,
}

impl Openings {
    /// Per game when an agent plays itself, paired otherwise.
    pub fn for_agents(a: &AgentSpec, b: &AgentSpec) -> Openings {
        if a == b {
            Openings::PerGame
        } else {
            Openings::Paired
        }
    }

    /// The seed of game `i`'s opening in a match seeded `seed`. Two matches with the same
    /// seed draw the same openings (an A/B of two agents against one opponent plays both on
    /// the same openings); matches with different seeds share none. (Until 2026-12-07 a pair's
    /// seed was `seed ^ pair`, so neighbouring seeds drew nearly the same set of openings:
    /// seeds 301-303, or 191 and 192, were not new openings to each other.)
    pub fn seed(self, seed: u64, i: usize) -> u64 {
        // Seed, salted per rule (so that no per-game seed equals another match's paired seed
        // by accident), times an odd constant, which spreads neighbouring seeds' runs far apart.
        let run = |salt: u64, k: usize| (seed ^ salt).wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(k as u64);
        match self {
            Openings::Paired => run(0xA11E_D0FE, i / 2),
            Openings::PerGame => run(0x5EED_0F0E, i),
        }
    }
}

/// The games of `games` whose move sequence no earlier game played, in order: what a balance
/// figure counts (a repeated game adds no evidence).
pub fn distinct(games: &[GameResult]) -> Vec<&GameResult> {
    let mut seen = std::collections::HashSet::new();
    games.iter().filter(|g| seen.insert(&g.moves)).collect()
}

/// A short random opening, the same for every call with the same seed. Stops early rather
/// than ending the game.
pub fn random_opening(variant: &Arc<Variant>, plies: u32, seed: u64) -> Vec<Move> {
    let mut rng = SmallRng::seed_from_u64(seed);
    crate::play::random_opening(&Position::start(variant.clone()), plies, &mut |n| rng.gen_range(0..n))
}

/// Plays one game from `opening`; `a` plays `a_side`. The agents are reset with seeds
/// derived from `seed`, so the game depends on nothing else (external engines aside). The
/// result is the outcome by the rules, or the fault of an external engine that ended it
/// (including an ending the engine scores otherwise: a disagreement), with the moves and the
/// time each agent spent on its moves.
pub fn play_game(
    variant: &Arc<Variant>,
    a: &mut Agent,
    b: &mut Agent,
    a_side: Side,
    opening: &[Move],
    seed: u64,
) -> (Result<Outcome, Fault>, Vec<Move>, Think) {
    a.reset(seed);
    b.reset(seed ^ 0xb);
    let mut pos = Position::start(variant.clone());
    let mut moves = Vec::new();
    for &m in opening {
        pos.play(m).expect("openings are legal");
        moves.push(m);
    }
    let mut think = Think::default();
    while pos.outcome().is_none() {
        let a_to_move = pos.to_move() == a_side;
        let agent = if a_to_move { &mut *a } else { &mut *b };
        let started = std::time::Instant::now();
        let m = match agent.respond(&pos, &moves) {
            Ok(m) => m,
            // A move not made is not timed: `think` counts the moves chosen.
            Err(fault) => return (Err(fault), moves, think),
        };
        let spent = started.elapsed().as_secs_f64();
        if a_to_move {
            think.a_moves += 1;
            think.a_seconds += spent;
        } else {
            think.b_moves += 1;
            think.b_seconds += spent;
        }
        pos.play(m).expect("moves are checked by the agent");
        moves.push(m);
    }
    // An ending an engine scores otherwise (a rule it was not told in words it reads) is
    // listed apart, not scored for either side.
    for (agent, side) in [(a, a_side), (b, a_side.opponent())] {
        if let Some(fault) = agent.disputed_ending(&pos, &moves, side) {
            return (Err(fault), moves, think);
        }
    }
    (Ok(pos.outcome().expect("loop ends on an outcome")), moves, think)
}

/// Plays a match in parallel (rayon), A attacking in even games (with a shard, only its
/// games). `on_game` is called as each game finishes (from worker threads). Results come back
/// in game order.
pub fn play_match(
    variant: &Arc<Variant>,
    a: &AgentSpec,
    b: &AgentSpec,
    cfg: &MatchConfig,
    on_game: &(dyn Fn(&GameResult) + Sync),
) -> Result<Vec<GameResult>, AgentError> {
    play_match_until(variant, a, b, cfg, on_game, &|_| false)
}

/// As [`play_match`], but games are played in rounds of a few per core, and after each round
/// `stop` sees every result so far and may end the match early (an SPRT, say). Rounds hold
/// whole pairs of games, so an early stop never leaves one side's half of a pair.
pub fn play_match_until(
    variant: &Arc<Variant>,
    a: &AgentSpec,
    b: &AgentSpec,
    cfg: &MatchConfig,
    on_game: &(dyn Fn(&GameResult) + Sync),
    stop: &(dyn Fn(&[GameResult]) -> bool + Sync),
) -> Result<Vec<GameResult>, AgentError> {
    // Every command's games come here (match, tournament, ladder, balance, a run's evaluation):
    // an agent facing OpenTafl searches by OpenTafl's reading of repetition.
    let (a, b) = &AgentSpec::pairing(a, b, variant);
    // Build once here so that spec and model errors surface before any game starts.
    Agent::new(a, variant, 0)?;
    Agent::new(b, variant, 0)?;
    let openings = Openings::for_agents(a, b);
    let round = (4 * rayon::current_num_threads()).max(2);
    let indices = cfg.indices();
    let mut results: Vec<GameResult> = Vec::with_capacity(indices.len());
    // Rounds of an even number of games hold whole pairs (a shard's games come in pairs too).
    for chunk in indices.chunks(round) {
        let mut batch: Vec<GameResult> = chunk
            .par_iter()
            .copied()
            .map_init(
                || None::<(Agent, Agent)>,
                |agents, i| -> Result<GameResult, AgentError> {
                    let seed = cfg.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(i as u64);
                    if agents.is_none() {
                        *agents = Some((Agent::new(a, variant, seed)?, Agent::new(b, variant, seed)?));
                    }
                    let (aa, bb) = agents.as_mut().expect("just built");
                    let a_side = a_side_of(i);
                    let opening = random_opening(variant, cfg.opening_plies, openings.seed(cfg.seed, i));
                    let (end, moves, think) = play_game(variant, aa, bb, a_side, &opening, seed);
                    let (outcome, fault) = match end {
                        Ok(o) => (Some(o), None),
                        Err(f) => (None, Some(f)),
                    };
                    let r = GameResult { index: i, a_side, outcome, fault, moves, think };
                    on_game(&r);
                    Ok(r)
                },
            )
            .collect::<Result<_, _>>()?;
        batch.sort_by_key(|r| r.index);
        results.extend(batch);
        if stop(&results) {
            break;
        }
    }
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two games of a pair share an opening, and matches seeded differently, neighbours
    /// included, share no opening seed (seed XOR pair, the old rule, gave seeds 191 and 192
    /// the same 248 of their first 248 pairs' seeds).
    #[test]
    fn paired_openings_pair_games_and_differ_between_seeds() {
        let mut seen = std::collections::HashMap::new();
        for seed in (0..64).chain(180..200).chain(300..310) {
            for i in (0..1000).step_by(2) {
                let s = Openings::Paired.seed(seed, i);
                assert_eq!(s, Openings::Paired.seed(seed, i + 1), "a pair shares its opening");
                if let Some(other) = seen.insert(s, seed) {
                    assert_eq!(other, seed, "seeds {other} and {seed} share an opening seed");
                }
            }
        }
        assert_eq!(seen.len(), 94 * 500);
        assert_ne!(Openings::PerGame.seed(7, 0), Openings::PerGame.seed(7, 1), "per game: one opening each");
    }

    #[test]
    fn wdl_reads_wins_draws_losses() {
        let w = Wdl { win: 3, draw: 1, loss: 2 };
        assert_eq!((w.to_string(), w.games()), ("3-1-2".to_string(), 6));
    }
}

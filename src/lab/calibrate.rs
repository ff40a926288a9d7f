//! `tafl-lab calibrate`: why a model wins or loses with each side, measured on recorded
//! games (human archives, a run's self-play shards, match records).
//!
//! Three measurements, each kept apart per side:
//!
//! 1. **Value calibration** ([`crate::stats::calibration`]): the network's value (W + D/2 for
//!    the side to move) on a seeded sample of the games' positions against the score that side
//!    got in the game, by game phase; and, where the games stored one (self-play shards), the
//!    search's root value ((v + 1)/2) on the same positions. A side whose predicted score
//!    runs above its realized score is over-rated by the network: its search steers into
//!    positions it then loses.
//! 2. **Search against prior** (with `search_sims` given): on a seeded sample of positions of
//!    each side to move, the model's own search (PUCT, as the `az` agent) from that position;
//!    how often the search's move is not the prior's first choice or not among its first
//!    three, the mean prior of the move the search picks, and the mean of search value −
//!    network value (as expected scores). Often-overruled priors mean the network misses lines
//!    the search finds; a search value well above the network's means the net undervalues the
//!    side's chances.
//! 3. **Where games end**: every scored game by its winner, with its length (buckets of
//!    [`LENGTH_BUCKET`] plies), what ended it (the rules' reason, or the record's words for a
//!    resignation or a loss on time) and, for the defenders' wins, whether the attackers faced
//!    a fork: in the last position where the attackers were to move (their last chance to
//!    block), how many distinct escape squares the king could reach in one move (from the
//!    legal move generator, with the defenders to move). Two or more cannot be blocked with one
//!    move; with one or more, whether some attacker move would have left the king none (a
//!    missed block).
//!
//! The network is behind [`Evaluator`], so this module runs with any evaluator (the tests use
//! search's uniform one); the command line brings the network.

use crate::rules::records::RecordResult;
use crate::rules::{Move, Position, Side, Variant};
use crate::search::{lockstep, EvalRequest, Evaluation, Evaluator, Search, SearchConfig};
use crate::stats::calibration::{Calibration, Observation, Report};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Width of the game-length buckets of [`Endings`], in plies.
pub const LENGTH_BUCKET: usize = 20;

/// One recorded game.
#[derive(Clone, Debug)]
pub struct RecordedGame {
    /// Where it comes from, for messages (`line 12`, `g000004-trainer-0001.shard #3`).
    pub label: String,
    /// From the variant's start position.
    pub moves: Vec<Move>,
    /// The result the record states; used when the rules did not end the game (a
    /// resignation, a loss on time). `Unfinished` when it states none.
    pub recorded: RecordResult,
    /// How the record says it ended, when the rules did not end it (`resigned`, `timeout`).
    pub how: Option<String>,
    /// The search's root value for the side to move before each move (-1..1), where the
    /// record has one worth measuring (self-play shards: the full searches); empty otherwise.
    pub values: Vec<Option<f32>>,
}

/// What to measure.
#[derive(Clone, Debug)]
pub struct Options {
    /// Most positions evaluated (a seeded sample of all the games' positions).
    pub max_positions: usize,
    /// Seed of the samples and the searches.
    pub seed: u64,
    /// Simulations of the search check, if one is made.
    pub search_sims: Option<u32>,
    /// Positions of each side to move the search check searches.
    pub search_positions: usize,
    /// Positions per evaluator call.
    pub positions_per_call: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options { max_positions: 20_000, seed: 1, search_sims: None, search_positions: 200, positions_per_call: 256 }
    }
}

/// Counts of the games and positions measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Counts {
    /// Games given.
    pub games: usize,
    /// Games with a result (by the rules or by the record): the ones measured.
    pub scored: usize,
    /// Games without a result (unfinished, abandoned, a forfeit the record gives no winner).
    pub unfinished: usize,
    /// Games left out because they do not replay, one line each.
    pub invalid: Vec<String>,
    /// Positions of the scored games (each position before a move).
    pub positions: usize,
    /// Positions evaluated (all of them, or a seeded sample of `max_positions`).
    pub sampled: usize,
}

/// The search check of one side to move.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct SideSearch {
    pub positions: usize,
    /// Share of positions where the search's move is not the prior's most likely move.
    pub not_top_prior: f64,
    /// Share of positions where it is not among the prior's three most likely moves.
    pub outside_top3: f64,
    /// Mean prior of the search's move.
    pub mean_prior_of_move: f64,
    /// Mean of (search value − network value), both as expected scores of the side to move.
    pub mean_value_gain: f64,
    /// Share of positions the search's solver proved won or lost.
    pub proven: f64,
}

/// The search check (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct SearchCheck {
    pub sims: u32,
    pub attackers: SideSearch,
    pub defenders: SideSearch,
}

impl SearchCheck {
    pub fn side(&self, side: Side) -> &SideSearch {
        match side {
            Side::Attackers => &self.attackers,
            Side::Defenders => &self.defenders,
        }
    }
}

/// The games one result ended, and how (see the module documentation).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Endings {
    pub games: usize,
    /// Games by length: (first ply of the bucket, games), buckets of [`LENGTH_BUCKET`] plies,
    /// the empty ones left out.
    pub length: Vec<(usize, usize)>,
    /// Games by what ended them: the rules' reason (`corner_escape`, `king_captured`, ...) or,
    /// for a game the rules had not ended, the record's: `recorded resigned`, `recorded
    /// timeout`, or `as recorded` (a result with no reason given).
    pub how: BTreeMap<String, usize>,
    /// Defenders' wins only: games by the number of escape squares the king could reach in
    /// one move in the last position with the attackers to move: `[none, one, two or more]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub king_escapes: Option<[usize; 3]>,
    /// Defenders' wins only: of the games with an escape square in reach at the attackers'
    /// last turn, those in which one of the attackers' moves there would have left the king
    /// none (or captured it): a threat they could have blocked for a move, and did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blockable: Option<usize>,
}

impl Endings {
    /// Share of the games in which the king had two or more escape squares in reach (a fork).
    pub fn fork_share(&self) -> Option<f64> {
        self.king_escapes.map(|k| k[2] as f64 / k.iter().sum::<usize>().max(1) as f64)
    }
}

/// Where games end, by result.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GameEnds {
    /// The defenders' losses.
    pub attackers_win: Endings,
    /// The attackers' losses.
    pub defenders_win: Endings,
    pub draws: Endings,
}

/// Everything `calibrate` measured.
#[derive(Clone, Debug, Serialize)]
pub struct Measurement {
    pub counts: Counts,
    /// The network's value against the results.
    pub network: Report,
    /// The stored search values against the results, when the games have them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stored_search: Option<Report>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchCheck>,
    pub endings: GameEnds,
}

/// Why nothing could be measured.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CalibrateError(pub String);

/// A scored game: its moves and who won.
struct Scored<'a> {
    game: &'a RecordedGame,
    winner: Option<Side>,
    /// The rules' reason, or the record's words.
    how: String,
    /// Whether the rules ended the game (else the record's result counts).
    by_rules: bool,
}

/// One sampled position.
struct Sampled {
    position: Position,
    moves: Vec<Move>,
    realized: f64,
    ply: usize,
    length: usize,
    stored: Option<f32>,
}

/// Replays `g` and decides its result: the rules' end, else the record's. `Ok(None)`: no
/// result. `Err`: the moves do not replay.
fn score<'a>(variant: &Arc<Variant>, g: &'a RecordedGame) -> Result<Option<Scored<'a>>, String> {
    let mut pos = Position::start(variant.clone());
    for (i, &mv) in g.moves.iter().enumerate() {
        if let Some(o) = pos.outcome() {
            return Err(format!("{}: ply {}: {mv} after the game ended ({o})", g.label, i + 1));
        }
        if !pos.is_legal(mv) {
            return Err(format!("{}: ply {}: {mv} is not a legal move", g.label, i + 1));
        }
        pos.make(mv);
    }
    let how = g.how.as_ref().map_or_else(|| "as recorded".to_string(), |h| format!("recorded {h}"));
    let recorded = |winner| Scored { game: g, winner, how, by_rules: false };
    Ok(match (pos.outcome(), g.recorded) {
        (Some(o), _) => Some(Scored { game: g, winner: o.winner, how: o.reason.name().to_string(), by_rules: true }),
        (None, RecordResult::Won(w)) => Some(recorded(Some(w))),
        (None, RecordResult::Draw) => Some(recorded(None)),
        (None, RecordResult::Unfinished) => None,
    })
}

/// The side to move before move `ply` in a variant where `first` moves first.
fn side_at(first: Side, ply: usize) -> Side {
    if ply % 2 == 0 {
        first
    } else {
        first.opponent()
    }
}

/// Measures `games` of `variant` with `evaluator` (see the module documentation).
/// `progress(stage, done, total)` is called as the evaluations and searches go.
///
/// # Errors
/// When no game has a result.
pub fn measure(
    variant: &Arc<Variant>,
    games: &[RecordedGame],
    evaluator: &mut dyn Evaluator,
    opts: &Options,
    progress: &mut dyn FnMut(&str, u64, u64),
) -> Result<Measurement, CalibrateError> {
    let mut counts = Counts { games: games.len(), ..Counts::default() };
    let mut scored = Vec::new();
    for g in games {
        match score(variant, g) {
            Ok(Some(s)) => scored.push(s),
            Ok(None) => counts.unfinished += 1,
            Err(e) => counts.invalid.push(e),
        }
    }
    counts.scored = scored.len();
    if scored.is_empty() {
        return Err(CalibrateError(format!(
            "none of the {} games has a result to measure against ({} unfinished, {} that do not replay)",
            games.len(),
            counts.unfinished,
            counts.invalid.len()
        )));
    }
    let endings = game_ends(variant, &scored);
    let sample = sample_positions(variant, &scored, opts, &mut counts);
    let evals = evaluate(&sample, evaluator, opts.positions_per_call, progress);
    let first = variant.rules.first;
    let (mut network, mut stored) = (Calibration::new(), Calibration::new());
    let mut has_stored = false;
    for (s, e) in sample.iter().zip(&evals) {
        let side = side_at(first, s.ply);
        let obs = |predicted| Observation { side, predicted, realized: s.realized, ply: s.ply, length: s.length };
        network.add(&obs(Observation::score_of_wdl(e.wdl)));
        if let Some(v) = s.stored {
            has_stored = true;
            stored.add(&obs(Observation::score_of_value(v)));
        }
    }
    let search = opts.search_sims.map(|sims| search_check(variant, &sample, &evals, evaluator, opts, sims, progress));
    Ok(Measurement { counts, network: network.report(), stored_search: has_stored.then(|| stored.report()), search, endings })
}

/// A seeded sample of at most `opts.max_positions` of the scored games' positions, in game
/// order.
fn sample_positions(variant: &Arc<Variant>, scored: &[Scored<'_>], opts: &Options, counts: &mut Counts) -> Vec<Sampled> {
    let total: usize = scored.iter().map(|s| s.game.moves.len()).sum();
    counts.positions = total;
    let mut rng = SmallRng::seed_from_u64(opts.seed);
    let mut picked: Vec<usize> =
        if total <= opts.max_positions { (0..total).collect() } else { rand::seq::index::sample(&mut rng, total, opts.max_positions).into_vec() };
    picked.sort_unstable();
    counts.sampled = picked.len();
    let first = variant.rules.first;
    let mut out = Vec::with_capacity(picked.len());
    let (mut at, mut next) = (0usize, picked.iter().peekable());
    for s in scored {
        let length = s.game.moves.len();
        if next.peek().map_or(true, |&&i| i >= at + length) {
            at += length;
            continue;
        }
        let mut pos = Position::start(variant.clone());
        for (ply, &mv) in s.game.moves.iter().enumerate() {
            if next.peek() == Some(&&(at + ply)) {
                next.next();
                let side = side_at(first, ply);
                out.push(Sampled {
                    moves: pos.legal_moves(),
                    position: pos.clone(),
                    realized: Observation::realized_by(side, s.winner),
                    ply,
                    length,
                    stored: s.game.values.get(ply).copied().flatten(),
                });
            }
            pos.make(mv);
        }
        at += length;
    }
    out
}

/// The evaluations of the sampled positions, `batch` at a time.
fn evaluate(sample: &[Sampled], evaluator: &mut dyn Evaluator, batch: usize, progress: &mut dyn FnMut(&str, u64, u64)) -> Vec<Evaluation> {
    let mut out = Vec::with_capacity(sample.len());
    for chunk in sample.chunks(batch.max(1)) {
        let reqs: Vec<EvalRequest<'_>> = chunk.iter().map(|s| EvalRequest { position: &s.position, moves: &s.moves }).collect();
        out.extend(evaluator.evaluate(&reqs));
        progress("network values", out.len() as u64, sample.len() as u64);
    }
    out
}

/// The search check on up to `opts.search_positions` sampled positions of each side to move.
fn search_check(
    variant: &Arc<Variant>,
    sample: &[Sampled],
    evals: &[Evaluation],
    evaluator: &mut dyn Evaluator,
    opts: &Options,
    sims: u32,
    progress: &mut dyn FnMut(&str, u64, u64),
) -> SearchCheck {
    let first = variant.rules.first;
    let mut rng = SmallRng::seed_from_u64(opts.seed ^ 0x5EA2_C4EC);
    let mut chosen: Vec<usize> = Vec::new();
    for side in [Side::Attackers, Side::Defenders] {
        let mut of_side: Vec<usize> = (0..sample.len()).filter(|&i| side_at(first, sample[i].ply) == side).collect();
        of_side.shuffle(&mut rng);
        of_side.truncate(opts.search_positions);
        chosen.extend(of_side);
    }
    chosen.sort_unstable();
    let cfg = SearchConfig { sims, ..SearchConfig::default() };
    let mut searches: Vec<Search> = chosen.iter().map(|&i| Search::new(sample[i].position.clone(), cfg.clone(), opts.seed ^ i as u64)).collect();
    // In slices, so that the progress bar moves.
    let total = searches.len() as u64;
    let mut done = 0u64;
    for part in searches.chunks_mut((opts.positions_per_call / cfg.leaves_per_tree.max(1)).max(1)) {
        let mut refs: Vec<&mut Search> = part.iter_mut().collect();
        lockstep::run_all(&mut refs, evaluator, opts.positions_per_call.max(1));
        done += part.len() as u64;
        progress("searches", done, total);
    }
    let mut sums = [SideSearch::default(); 2];
    for (&i, search) in chosen.iter().zip(&searches) {
        let (s, e) = (&sample[i], &evals[i]);
        let r = search.result();
        let Some(best) = r.best else { continue };
        let k = s.moves.iter().position(|&m| m == best).expect("the search plays a legal move");
        let prior = e.priors[k];
        let better = e.priors.iter().filter(|&&p| p > prior).count();
        let t = &mut sums[side_at(first, s.ply).index()];
        t.positions += 1;
        t.not_top_prior += f64::from(u8::from(better > 0));
        t.outside_top3 += f64::from(u8::from(better >= 3));
        t.mean_prior_of_move += f64::from(prior);
        t.mean_value_gain += Observation::score_of_value(r.value) - Observation::score_of_wdl(e.wdl);
        t.proven += f64::from(u8::from(r.proof != crate::search::Proof::Unknown));
    }
    for t in &mut sums {
        let n = t.positions.max(1) as f64;
        t.not_top_prior /= n;
        t.outside_top3 /= n;
        t.mean_prior_of_move /= n;
        t.mean_value_gain /= n;
        t.proven /= n;
    }
    SearchCheck { sims, attackers: sums[0], defenders: sums[1] }
}

/// Where the scored games ended (see [`Endings`]).
fn game_ends(variant: &Arc<Variant>, scored: &[Scored<'_>]) -> GameEnds {
    let mut ends = GameEnds { defenders_win: Endings { king_escapes: Some([0; 3]), blockable: Some(0), ..Endings::default() }, ..GameEnds::default() };
    let mut lengths: [BTreeMap<usize, usize>; 3] = Default::default();
    for s in scored {
        let (e, k) = match s.winner {
            Some(Side::Attackers) => (&mut ends.attackers_win, 0),
            Some(Side::Defenders) => (&mut ends.defenders_win, 1),
            None => (&mut ends.draws, 2),
        };
        e.games += 1;
        *lengths[k].entry(s.game.moves.len() / LENGTH_BUCKET * LENGTH_BUCKET).or_default() += 1;
        *e.how.entry(s.how.clone()).or_default() += 1;
        if let (Some(counts), Some(blockable)) = (&mut e.king_escapes, &mut e.blockable) {
            if let Some(t) = last_attacker_turn(variant, &s.game.moves, s.by_rules) {
                counts[t.escapes.min(2)] += 1;
                *blockable += usize::from(t.escapes > 0 && t.blockable);
            }
        }
    }
    for (e, l) in [&mut ends.attackers_win, &mut ends.defenders_win, &mut ends.draws].into_iter().zip(lengths) {
        e.length = l.into_iter().collect();
    }
    ends
}

/// What the attackers faced in the last position of a game where they were to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LastTurn {
    /// The distinct escape squares the king could reach in one move ([`king_escapes`]).
    pub escapes: usize,
    /// Whether one of the attackers' moves would have left it none ([`can_block`]).
    pub blockable: bool,
}

/// The attackers' last turn of a game (see [`LastTurn`]); `None` when they never were to
/// move. The final position counts only when the rules did not end the game there
/// (`ended_by_rules` false: the attackers resigned or lost on time in it).
pub fn last_attacker_turn(variant: &Arc<Variant>, moves: &[Move], ended_by_rules: bool) -> Option<LastTurn> {
    let first = variant.rules.first;
    let end = if ended_by_rules { moves.len().checked_sub(1)? } else { moves.len() };
    let last = (0..=end).rev().find(|&p| side_at(first, p) == Side::Attackers)?;
    let mut pos = Position::start(variant.clone());
    for &mv in &moves[..last] {
        pos.make(mv);
    }
    Some(LastTurn { escapes: king_escapes(&pos), blockable: can_block(&pos) })
}

/// Whether some move of the side to move in `pos` (the attackers) leaves the king no escape
/// square in reach, or wins at once.
pub fn can_block(pos: &Position) -> bool {
    let mover = pos.to_move();
    let mut p = pos.clone();
    pos.legal_moves().into_iter().any(|mv| {
        let undo = p.make(mv);
        let blocked = match p.outcome() {
            Some(o) => o.winner == Some(mover),
            None => king_escapes(&p) == 0,
        };
        p.unmake(mv, &undo);
        blocked
    })
}

/// The distinct escape squares the king of `pos` could reach in one move, were the defenders
/// to move.
pub fn king_escapes(pos: &Position) -> usize {
    let mut setup = pos.to_setup();
    setup.to_move = Side::Defenders;
    // A position the rules call over has no moves: none in reach.
    let Ok(p) = Position::from_setup(pos.variant().clone(), &setup) else { return 0 };
    let king = p.king();
    let mut moves = Vec::new();
    p.generate_moves(&mut moves);
    let mut to: Vec<_> = moves.iter().filter(|m| m.from == king && pos.variant().is_escape(m.to)).map(|m| m.to).collect();
    to.sort();
    to.dedup();
    to.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::UniformEvaluator;

    /// Random games of brandubh (attackers move first), ended by the rules.
    fn games(n: u64) -> Vec<RecordedGame> {
        let v = Arc::new(Variant::preset("brandubh").unwrap());
        (0..n)
            .map(|seed| {
                let mut rng = SmallRng::seed_from_u64(seed);
                let moves = crate::play::random_game(v.clone(), &mut |n| rand::Rng::gen_range(&mut rng, 0..n)).moves.iter().map(|p| p.mv).collect();
                RecordedGame { label: format!("game {seed}"), moves, recorded: RecordResult::Unfinished, how: None, values: Vec::new() }
            })
            .collect()
    }

    #[test]
    fn a_uniform_evaluator_predicts_one_half_and_counts_every_position() {
        let v = Arc::new(Variant::preset("brandubh").unwrap());
        let gs = games(6);
        let mut ev = UniformEvaluator::new();
        let m = measure(&v, &gs, &mut ev, &Options::default(), &mut |_, _, _| {}).unwrap();
        let plies: Vec<usize> = gs.iter().map(|g| g.moves.len()).collect();
        let att: usize = plies.iter().map(|&l| l.div_ceil(2)).sum();
        let def: usize = plies.iter().map(|&l| l / 2).sum();
        assert_eq!((m.counts.scored, m.counts.positions, m.counts.sampled), (6, att + def, att + def));
        let (a, d) = (m.network.attackers.all.summary, m.network.defenders.all.summary);
        assert_eq!((a.count as usize, d.count as usize), (att, def));
        // W + D/2 of [0, 1, 0] is 1/2 everywhere: every position in the 0.5 bucket.
        assert_eq!(a.mean_predicted, 0.5);
        assert_eq!(m.network.attackers.all.reliability[5].count as usize, att);
        assert!(m.stored_search.is_none() && m.search.is_none());
        let wins = m.endings.attackers_win.games + m.endings.defenders_win.games + m.endings.draws.games;
        assert_eq!(wins, 6);
    }

    #[test]
    fn unfinished_games_are_left_out_and_recorded_results_count() {
        let v = Arc::new(Variant::preset("brandubh").unwrap());
        let mut gs = games(2);
        // Cut both games short: one without a result, one with a recorded resignation.
        for g in &mut gs {
            g.moves.truncate(3);
        }
        gs[1].recorded = RecordResult::Won(Side::Defenders);
        gs[1].how = Some("resigned".into());
        let m = measure(&v, &gs, &mut UniformEvaluator::new(), &Options::default(), &mut |_, _, _| {}).unwrap();
        assert_eq!((m.counts.scored, m.counts.unfinished, m.counts.positions), (1, 1, 3));
        assert_eq!(m.endings.defenders_win.how.get("recorded resigned"), Some(&1));
        // Two attacker positions (plies 0 and 2) that lost, one defender position that won.
        assert_eq!(m.network.attackers.all.summary.mean_realized, 0.0);
        assert_eq!(m.network.defenders.all.summary.mean_realized, 1.0);
        gs[1].recorded = RecordResult::Unfinished;
        let e = measure(&v, &gs, &mut UniformEvaluator::new(), &Options::default(), &mut |_, _, _| {}).unwrap_err();
        assert!(e.to_string().contains("none of the 2 games"), "{e}");
    }

    /// A king alone on a 7x7 board but for one attacker on g4: brandubh's escape squares are
    /// the corners, and the king reaches those on its file and rank with nothing between.
    #[test]
    fn king_escapes_count_corners_in_reach() {
        let v = Arc::new(Variant::preset("brandubh").unwrap());
        let setup = |king: &str, to_move| crate::rules::setup::Setup {
            size: 7,
            pieces: vec![(king.parse().unwrap(), crate::rules::Piece::King), ("g4".parse().unwrap(), crate::rules::Piece::Attacker)],
            to_move,
        };
        let at = |king: &str| Position::from_setup(v.clone(), &setup(king, Side::Attackers)).unwrap();
        assert_eq!(v.rules.first, Side::Attackers);
        // From c1: a1 and g1, along rank 1.
        assert_eq!(king_escapes(&at("c1")), 2);
        // From c2 no corner is one straight move away.
        assert_eq!(king_escapes(&at("c2")), 0);
        // From a3: a1 and a7, along the a-file.
        assert_eq!(king_escapes(&at("a3")), 2);
        // The attacker on a5 blocks a7; a1 stays open, and neither attacker can reach a2.
        let mut s = setup("a3", Side::Attackers);
        s.pieces.push(("a5".parse().unwrap(), crate::rules::Piece::Attacker));
        let p = Position::from_setup(v.clone(), &s).unwrap();
        assert_eq!((king_escapes(&p), can_block(&p)), (1, false));
        // An attacker on b2 can: b2-a2.
        s.pieces.push(("b2".parse().unwrap(), crate::rules::Piece::Attacker));
        let p = Position::from_setup(v.clone(), &s).unwrap();
        assert_eq!((king_escapes(&p), can_block(&p)), (1, true));
        // Two threats: no single move blocks both (a fork).
        assert!(!can_block(&at("c1")));
    }

    #[test]
    fn the_search_check_counts_each_side_and_the_sample_is_seeded() {
        let v = Arc::new(Variant::preset("brandubh").unwrap());
        let gs = games(4);
        let opts = Options { max_positions: 50, search_sims: Some(8), search_positions: 5, ..Options::default() };
        let m = measure(&v, &gs, &mut UniformEvaluator::new(), &opts, &mut |_, _, _| {}).unwrap();
        assert_eq!(m.counts.sampled, 50);
        let n = m.network.attackers.all.summary.count + m.network.defenders.all.summary.count;
        assert_eq!(n, 50);
        let s = m.search.unwrap();
        assert_eq!((s.sims, s.attackers.positions, s.defenders.positions), (8, 5, 5));
        // Uniform priors: every move ties with the first, so none is "not the top prior".
        assert_eq!(s.attackers.not_top_prior, 0.0);
        let again = measure(&v, &gs, &mut UniformEvaluator::new(), &opts, &mut |_, _, _| {}).unwrap();
        assert_eq!(serde_json::to_string(&again).unwrap(), serde_json::to_string(&m).unwrap());
    }
}

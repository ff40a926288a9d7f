//! The handicap that evens a variant (`balance --handicap`): one agent plays itself with one
//! side's search multiplied by k, for a few k, and the attackers' score is fitted against
//! log2 k ([`crate::stats::handicap`]). Which side gets the extra search follows from the
//! games at equal search: the side that scores less there.

use crate::arena::{self, AgentError, AgentSpec, GameResult, MatchConfig, MatchSummary};
use crate::rules::{Side, Variant};
use crate::stats::handicap::{self, HandicapError, HandicapFit, HandicapPoint};
use serde::Serialize;
use std::sync::Arc;

/// What to measure.
pub struct HandicapJob {
    pub variant: Arc<Variant>,
    /// The agent of both sides at equal search (a searching agent).
    pub agent: AgentSpec,
    /// Search multipliers besides 1 (equal search, always played first).
    pub factors: Vec<u32>,
    /// Games at each multiplier.
    pub games: usize,
    pub seed: u64,
    pub opening_plies: u32,
}

/// The games at one multiplier.
#[derive(Clone, Debug, Serialize)]
pub struct HandicapRow {
    /// The multiplier, and the side whose search it multiplies.
    pub factor: u32,
    pub helped: Side,
    pub attacker_sims: u32,
    pub defender_sims: u32,
    /// log2 of the attackers' search over the defenders'.
    pub x: f64,
    pub games: u32,
    pub attackers_win: u32,
    pub defenders_win: u32,
    pub draws: u32,
    pub attackers_score: f64,
    /// Distinct games among them (a repeated game counts once in the fit).
    pub distinct: u32,
}

/// A whole measurement: the rows and the fit (or why there is none).
#[derive(Debug)]
pub struct Handicap {
    pub rows: Vec<HandicapRow>,
    pub fit: Result<HandicapFit, HandicapError>,
}

impl Handicap {
    /// The even point in words: which side needs how much more search, with its interval.
    pub fn verdict(&self) -> String {
        match &self.fit {
            Err(e) => format!("no even point: {e}"),
            Ok(f) => {
                let (side, k, interval) = weaker_side_needs(f.k_even(), f.k_interval());
                let ci = interval.map_or("no interval: the score barely moves with search".to_string(), |(l, h)| format!("95% interval {l:.2}x to {h:.2}x"));
                format!("even when the {side} get {k:.2}x the search of the other side ({ci})")
            }
        }
    }
}

/// The even point as the side that needs more search and how many times its opponent's (with
/// the interval in the same terms), from `k`, the attackers' search over the defenders' at
/// the even point, and its interval.
pub fn weaker_side_needs(k: f64, interval: Option<(f64, f64)>) -> (&'static str, f64, Option<(f64, f64)>) {
    if k >= 1.0 {
        ("attackers", k, interval)
    } else {
        ("defenders", 1.0 / k, interval.map(|(l, h)| (1.0 / h, 1.0 / l)))
    }
}

/// Plays the handicap games: equal search first, then each factor for the side that scored
/// less at equal search. `on_game` is called as each game finishes.
pub fn measure(job: &HandicapJob, on_game: &(dyn Fn(&GameResult) + Sync)) -> Result<Handicap, AgentError> {
    let sims = job.agent.search.sims;
    let play = |att: &AgentSpec, def: &AgentSpec, salt: u64| -> Result<Vec<GameResult>, AgentError> {
        // A attacks in the even-numbered games: 2n games with A on the attackers' side only.
        let cfg = MatchConfig { games: 2 * job.games, seed: job.seed ^ salt, opening_plies: job.opening_plies, shard: None, a_side: Some(Side::Attackers) };
        arena::play_match(&job.variant, att, def, &cfg, on_game)
    };
    let row = |factor: u32, helped: Side, att_sims: u32, def_sims: u32, games: &[GameResult]| {
        let distinct: Vec<GameResult> = arena::distinct(games).into_iter().cloned().collect();
        let s = MatchSummary::from_games(&distinct);
        let w = s.a_as_attackers;
        HandicapRow {
            factor,
            helped,
            attacker_sims: att_sims,
            defender_sims: def_sims,
            x: (f64::from(att_sims) / f64::from(def_sims)).log2(),
            games: s.games,
            attackers_win: w.win,
            defenders_win: w.loss,
            draws: w.draw,
            attackers_score: s.a_score,
            distinct: distinct.len() as u32,
        }
    };
    let equal = play(&job.agent, &job.agent, 0)?;
    let first = row(1, Side::Attackers, sims, sims, &equal);
    let helped = if first.attackers_score < 0.5 { Side::Attackers } else { Side::Defenders };
    let mut rows = vec![first];
    for &k in job.factors.iter().filter(|&&k| k > 1) {
        let (att_sims, def_sims) = if helped == Side::Attackers { (sims * k, sims) } else { (sims, sims * k) };
        let games = play(&job.agent.clone().with_sims(att_sims), &job.agent.clone().with_sims(def_sims), u64::from(k))?;
        rows.push(row(k, helped, att_sims, def_sims, &games));
    }
    let points: Vec<HandicapPoint> =
        rows.iter().map(|r| HandicapPoint { x: r.x, attacker_points: r.attackers_score * f64::from(r.games), games: u64::from(r.games) }).collect();
    Ok(Handicap { fit: handicap::fit(&points), rows })
}

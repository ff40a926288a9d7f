//! One line of a run's `metrics.jsonl`, as a type.
//!
//! The trainer writes a [`MetricsLine`] per generation and `tafl-lab report` reads them back;
//! the type is the contract between the two, so a key renamed on one side cannot silently read
//! as a missing value on the other. It lives here, below the trainer, so that reports need
//! nothing of the training loop.
//!
//! The JSON is the one every run has written: the same keys, sorted (see
//! [`MetricsLine::to_json`]), and a float that is not finite written as `null` and read back
//! as NaN. Unknown keys are ignored, so a newer file still reads. Keys added later are
//! optional (`calibration`): a line written before them reads with `None` and writes back
//! without them.

use crate::arena::Wdl;
use crate::rules::Side;
use crate::stats::calibration::{Calibration, Summary};
use serde::{Deserialize, Deserializer, Serialize};

/// One generation of a run: `metrics.jsonl` holds one per line, in generation order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricsLine {
    /// The generation this line completes (the model saved as `models/NNNNNN`).
    pub generation: u64,
    /// Wall time of the whole run when the generation ended, across resumes.
    #[serde(deserialize_with = "real")]
    pub wall_seconds: f64,
    /// The learning rate of this generation's training steps.
    #[serde(deserialize_with = "real")]
    pub lr: f64,
    /// SGD steps taken (0 while the window holds fewer than `train.min_positions`).
    pub train_steps: u64,
    #[serde(deserialize_with = "real")]
    pub train_seconds: f64,
    /// Mean losses over the steps (0 when there were none).
    pub loss: Losses,
    /// Positions in the replay window after self-play.
    pub window_positions: u64,
    /// Shards the run has refused so far (damaged, or not of this run).
    pub skipped_shards: u64,
    pub selfplay: SelfPlayMetrics,
    /// One entry per opponent; empty in generations without an evaluation.
    pub eval: Vec<EvalMetrics>,
    /// How well the self-play searches' values foretold their games' results, per side to
    /// move; `None` in lines written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<CalibrationMetrics>,
}

/// The calibration of a generation's self-play values ([`crate::stats::calibration`]): at
/// every fully searched ply of the generation's games, the search's root value for the side
/// to move, as an expected score (v + 1)/2, against the score that side got in the game
/// (1, 1/2 or 0). No extra network call: the values are the ones the games stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CalibrationMetrics {
    /// Positions with the attackers to move.
    pub attackers: SideCalibration,
    /// Positions with the defenders to move.
    pub defenders: SideCalibration,
}

/// The calibration of one side's positions (the means are NaN, written `null`, without any).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SideCalibration {
    pub count: u64,
    /// Mean predicted score of the side to move.
    #[serde(deserialize_with = "real")]
    pub mean_predicted: f64,
    /// Mean score the side to move got.
    #[serde(deserialize_with = "real")]
    pub mean_realized: f64,
    /// Mean squared difference of the two (0 is perfect).
    #[serde(deserialize_with = "real")]
    pub brier: f64,
}

impl SideCalibration {
    /// Predicted minus realized: above 0 the side was rated too high.
    pub fn bias(&self) -> f64 {
        self.mean_predicted - self.mean_realized
    }
}

impl From<Summary> for SideCalibration {
    fn from(s: Summary) -> SideCalibration {
        SideCalibration { count: s.count, mean_predicted: s.mean_predicted, mean_realized: s.mean_realized, brier: s.brier }
    }
}

impl From<&Calibration> for CalibrationMetrics {
    fn from(c: &Calibration) -> CalibrationMetrics {
        let side = |s: Side| SideCalibration::from(c.side(s).whole.all.summary());
        CalibrationMetrics { attackers: side(Side::Attackers), defenders: side(Side::Defenders) }
    }
}

impl CalibrationMetrics {
    /// One side's figures.
    pub fn side(&self, side: Side) -> &SideCalibration {
        match side {
            Side::Attackers => &self.attackers,
            Side::Defenders => &self.defenders,
        }
    }
}

/// Mean training losses of a generation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Losses {
    #[serde(deserialize_with = "real")]
    pub total: f64,
    #[serde(deserialize_with = "real")]
    pub policy: f64,
    #[serde(deserialize_with = "real")]
    pub value: f64,
    /// The ownership loss (unweighted), in runs that train the ownership head.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ownership: Option<f64>,
}

/// The self-play games of a generation (played by the previous generation's model).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SelfPlayMetrics {
    pub games: u64,
    #[serde(deserialize_with = "real")]
    pub seconds: f64,
    #[serde(deserialize_with = "real")]
    pub games_per_s: f64,
    /// Network evaluations per second (0 when workers played the games).
    #[serde(deserialize_with = "real")]
    pub evals_per_s: f64,
    /// Shares of the games won by each side, and drawn.
    #[serde(deserialize_with = "real")]
    pub attackers_win: f64,
    #[serde(deserialize_with = "real")]
    pub defenders_win: f64,
    #[serde(deserialize_with = "real")]
    pub draws: f64,
    #[serde(deserialize_with = "real")]
    pub mean_plies: f64,
    /// The attackers' full-search simulations of the games the trainer played, when they
    /// differed from the full search's (absent from older lines; a 0 there reads as none).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "zero_is_none")]
    pub attacker_sims: Option<u32>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The new model's match against one opponent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EvalMetrics {
    /// `previous` (the model before) or a baseline's agent spec.
    pub opponent: String,
    pub games: u32,
    /// The new model's points per game (a draw is half a point).
    #[serde(deserialize_with = "real")]
    pub score: f64,
    /// The Elo difference the score implies ([`crate::stats::elo_from_score`]).
    #[serde(deserialize_with = "real")]
    pub elo: f64,
    /// The new model's results with each side.
    pub as_attackers: Wdl,
    pub as_defenders: Wdl,
    /// Shares of the match's games won by each side (whoever played it), and drawn.
    #[serde(deserialize_with = "real")]
    pub attackers_win: f64,
    #[serde(deserialize_with = "real")]
    pub defenders_win: f64,
    #[serde(deserialize_with = "real")]
    pub draws: f64,
    /// Games not scored (rules disagreements and void games of an outside baseline), which
    /// `games` leaves out; absent (0) from lines written before they were recorded.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unscored: u32,
}

impl MetricsLine {
    /// The line as written to `metrics.jsonl` (no newline). Keys come out sorted, as
    /// `serde_json`'s own map sorts them: the lines written before this type existed were
    /// built that way, and old and new lines stay alike byte for byte.
    pub fn to_json(&self) -> String {
        serde_json::to_value(self).expect("a metrics line serializes").to_string()
    }

    /// Parses one line of `metrics.jsonl`.
    ///
    /// # Errors
    /// When the line is not JSON or lacks a field of the type.
    pub fn from_json(line: &str) -> Result<MetricsLine, serde_json::Error> {
        serde_json::from_str(line)
    }
}

/// A float that may have been written as `null` (serde_json writes NaN and infinities so).
fn real<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// Reads a count where 0 meant "none" in older lines.
fn zero_is_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    let n: Option<u32> = serde::Deserialize::deserialize(d)?;
    Ok(n.filter(|&n| n > 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The previously shipped brandubh model's metrics, written by the trainer before
    /// [`MetricsLine`] existed (kept with the first settings study).
    const SHIPPED: &str = include_str!("../../docs/results/brandubh-settings-study-1/previous-shipped/metrics.jsonl");

    /// Every shipped line reads as a [`MetricsLine`] holding exactly its keys and values, and
    /// writes back as the untyped writer wrote the same values. (Not always the file's own
    /// bytes: serde_json's default float parser may land one unit in the last place off, for
    /// the untyped reader before as for this one.)
    #[test]
    fn shipped_lines_parse_and_write_back_as_before() {
        let lines: Vec<&str> = SHIPPED.lines().collect();
        assert_eq!(lines.len(), 92);
        let mut same_bytes = 0;
        for (i, l) in lines.iter().enumerate() {
            let m = MetricsLine::from_json(l).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
            assert_eq!(m.generation, i as u64 + 1);
            let untyped: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(serde_json::to_value(&m).unwrap(), untyped, "line {}", i + 1);
            assert_eq!(m.to_json(), untyped.to_string(), "line {}", i + 1);
            same_bytes += usize::from(m.to_json() == *l);
        }
        // Most lines survive the float parser exactly, so the bytes match the file itself.
        assert!(same_bytes > lines.len() / 2, "{same_bytes} of {} lines", lines.len());
        let last = MetricsLine::from_json(lines[91]).unwrap();
        assert_eq!((last.train_steps, last.window_positions, last.selfplay.games), (80, 60000, 64));
        assert_eq!(last.lr, 0.006);
        let opponents: Vec<&str> = last.eval.iter().map(|e| e.opponent.as_str()).collect();
        assert_eq!(opponents, ["previous", "random", "mcts:sims=400"]);
        let mcts = &last.eval[2];
        assert_eq!((mcts.games, mcts.score), (16, 0.6875));
        assert_eq!((mcts.as_attackers, mcts.as_defenders), (Wdl { win: 3, draw: 0, loss: 5 }, Wdl { win: 8, draw: 0, loss: 0 }));
    }

    fn sample() -> MetricsLine {
        MetricsLine {
            generation: 7,
            wall_seconds: 123.25,
            lr: 0.02,
            train_steps: 40,
            train_seconds: 3.5,
            loss: Losses { total: 2.5, policy: 1.75, value: 0.75, ownership: None },
            window_positions: 4096,
            skipped_shards: 2,
            selfplay: SelfPlayMetrics {
                games: 32,
                seconds: 10.0,
                games_per_s: 3.2,
                evals_per_s: 900.5,
                attackers_win: 0.25,
                defenders_win: 0.625,
                draws: 0.125,
                mean_plies: 41.5,
                attacker_sims: Some(96),
            },
            eval: vec![EvalMetrics {
                opponent: "random".into(),
                games: 8,
                score: 0.75,
                elo: 190.8,
                as_attackers: Wdl { win: 2, draw: 0, loss: 2 },
                as_defenders: Wdl { win: 4, draw: 0, loss: 0 },
                attackers_win: 0.25,
                defenders_win: 0.75,
                draws: 0.0,
                unscored: 0,
            }],
            calibration: Some(CalibrationMetrics {
                attackers: SideCalibration { count: 300, mean_predicted: 0.375, mean_realized: 0.25, brier: 0.1875 },
                defenders: SideCalibration { count: 290, mean_predicted: 0.5, mean_realized: 0.75, brier: 0.125 },
            }),
        }
    }

    #[test]
    fn a_written_line_round_trips() {
        let m = sample();
        let text = m.to_json();
        assert!(!text.contains('\n'));
        assert!(text.starts_with(r#"{"calibration":{"attackers":{"brier":"#), "{text}");
        assert!(text.contains(r#"},"eval":[{"as_attackers":{"draw":0,"loss":2,"win":2},"#), "{text}");
        assert_eq!(MetricsLine::from_json(&text).unwrap(), m);
    }

    /// The calibration object round-trips, its key sits in sorted place, and a line without
    /// it (all lines written before it existed) reads as `None` and writes back without it.
    #[test]
    fn the_calibration_is_optional_and_round_trips() {
        let m = sample();
        let text = m.to_json();
        assert!(text.contains(r#""calibration":{"attackers":{"brier":0.1875,"count":300,"mean_predicted":0.375,"mean_realized":0.25},"defenders":"#), "{text}");
        let back = MetricsLine::from_json(&text).unwrap();
        assert_eq!(back.calibration, m.calibration);
        assert_eq!(back.calibration.unwrap().side(Side::Defenders).bias(), -0.25);
        let old = MetricsLine { calibration: None, ..m };
        let old_text = old.to_json();
        assert!(!old_text.contains("calibration"), "{old_text}");
        assert_eq!(MetricsLine::from_json(&old_text).unwrap(), old);
        // A side without positions: the means are NaN, written null, read back NaN.
        let mut empty = sample();
        empty.calibration = Some(CalibrationMetrics::from(&Calibration::new()));
        let t = empty.to_json();
        assert!(t.contains(r#""attackers":{"brier":null,"count":0,"mean_predicted":null,"mean_realized":null}"#), "{t}");
        let c = MetricsLine::from_json(&t).unwrap().calibration.unwrap();
        assert!(c.attackers.count == 0 && c.attackers.mean_predicted.is_nan() && c.defenders.brier.is_nan());
    }

    #[test]
    fn a_float_that_is_not_finite_writes_null_and_reads_nan() {
        let mut m = sample();
        m.loss.value = f64::NAN;
        m.eval[0].elo = f64::INFINITY;
        let text = m.to_json();
        assert!(text.contains(r#""value":null"#) && text.contains(r#""elo":null"#), "{text}");
        let back = MetricsLine::from_json(&text).unwrap();
        assert!(back.loss.value.is_nan() && back.eval[0].elo.is_nan());
        assert_eq!(back.loss.policy, 1.75);
    }

    #[test]
    fn a_line_without_a_field_is_refused_and_unknown_keys_are_ignored() {
        let mut v = serde_json::to_value(sample()).unwrap();
        v["extra"] = serde_json::json!(1);
        assert_eq!(MetricsLine::from_json(&v.to_string()).unwrap(), sample());
        v.as_object_mut().unwrap().remove("selfplay");
        assert!(MetricsLine::from_json(&v.to_string()).unwrap_err().to_string().contains("selfplay"));
    }
}

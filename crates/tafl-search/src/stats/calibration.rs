//! Calibration of value predictions, per side: does a network (or a search) that says "the
//! side to move scores 0.7 here" see that side score 0.7 in the games that followed?
//!
//! Why per side: tafl is asymmetric, and a value head can be right on average while being
//! over-confident for one side and under-confident for the other. Pooled figures hide that;
//! here every figure is kept apart for positions with the attackers to move and positions with
//! the defenders to move.
//!
//! An [`Observation`] is one position: who is to move, the predicted expected score for that
//! side in [0, 1] (W + D/2 of a win/draw/loss head, or (v + 1)/2 of a value in -1..1), the
//! score that side realized in the game (1 win, 1/2 draw, 0 loss), and where the position lies
//! in its game. [`Calibration`] accumulates observations (sums only, so two accumulations
//! merge exactly) and reports, per side and per game phase:
//!
//! - count, mean predicted, mean realized, bias (mean predicted − mean realized: above 0 the
//!   side is over-rated), and the Brier score (mean squared difference between prediction and
//!   realized score; 0 is perfect, 0.25 is what a constant 1/2 earns on decisive games);
//! - a reliability table: the predictions in ten buckets of width 0.1 ([0, 0.1), ..., [0.9,
//!   1]), each with its count, mean prediction and mean realized score. A calibrated predictor
//!   has realized ≈ predicted in every bucket.
//!
//! Game phase ([`Phase::of`]): the thirds of each game's own length. The position before
//! move `i` (counting from 0) of a game of `L` moves is in the opening when `3i < L`, in the
//! end when `3i >= 2L`, in the middle otherwise; so a short game and a long game are both
//! split into three equal parts.
//!
//! Mathematics only, like the rest of [`crate::stats`]: the one word it takes from elsewhere
//! is the rules crate's [`Side`].

use crate::rules::Side;
use serde::Serialize;

/// Buckets of the reliability table (width 1 / `BUCKETS`).
pub const BUCKETS: usize = 10;

/// A third of a game (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Opening,
    Middle,
    End,
}

impl Phase {
    pub const ALL: [Phase; 3] = [Phase::Opening, Phase::Middle, Phase::End];

    /// The phase of the position before move `ply` (from 0) of a game of `length` moves: the
    /// opening when `3 ply < length`, the end when `3 ply >= 2 length`, else the middle. A
    /// `ply` at or past `length` counts as the end.
    pub fn of(ply: usize, length: usize) -> Phase {
        match 3 * ply / length.max(1) {
            0 => Phase::Opening,
            1 => Phase::Middle,
            _ => Phase::End,
        }
    }

    /// `opening`, `middle` or `end`.
    pub const fn name(self) -> &'static str {
        match self {
            Phase::Opening => "opening",
            Phase::Middle => "middle",
            Phase::End => "end",
        }
    }

    const fn index(self) -> usize {
        self as usize
    }
}

/// One position's prediction and what followed (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Observation {
    /// The side to move.
    pub side: Side,
    /// Predicted expected score of the side to move, in [0, 1].
    pub predicted: f64,
    /// The score the side to move realized: 1, 1/2 or 0.
    pub realized: f64,
    /// Moves played before the position (0 = the start).
    pub ply: usize,
    /// Moves of the whole game.
    pub length: usize,
}

impl Observation {
    /// The expected score of a win/draw/loss prediction: W + D/2.
    pub fn score_of_wdl(wdl: [f32; 3]) -> f64 {
        f64::from(wdl[0]) + f64::from(wdl[1]) / 2.0
    }

    /// The expected score of a value in -1..1: (v + 1)/2.
    pub fn score_of_value(v: f32) -> f64 {
        (f64::from(v) + 1.0) / 2.0
    }

    /// The score `side` realized in a game `winner` won (`None`: a draw).
    pub fn realized_by(side: Side, winner: Option<Side>) -> f64 {
        match winner {
            Some(w) if w == side => 1.0,
            Some(_) => 0.0,
            None => 0.5,
        }
    }
}

/// Running sums of predictions and results; two tallies merge exactly.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tally {
    pub count: u64,
    pub predicted: f64,
    pub realized: f64,
    pub squared_error: f64,
}

impl Tally {
    fn add(&mut self, predicted: f64, realized: f64) {
        self.count += 1;
        self.predicted += predicted;
        self.realized += realized;
        self.squared_error += (predicted - realized).powi(2);
    }

    fn merge(&mut self, other: &Tally) {
        self.count += other.count;
        self.predicted += other.predicted;
        self.realized += other.realized;
        self.squared_error += other.squared_error;
    }

    /// The means; NaN when the tally is empty.
    pub fn summary(&self) -> Summary {
        let n = self.count as f64;
        let (p, r) = (self.predicted / n, self.realized / n);
        Summary { count: self.count, mean_predicted: p, mean_realized: r, bias: p - r, brier: self.squared_error / n }
    }
}

/// Count, mean predicted, mean realized, bias and Brier score of some observations (the
/// means are NaN when there are none).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub count: u64,
    pub mean_predicted: f64,
    pub mean_realized: f64,
    /// `mean_predicted - mean_realized`.
    pub bias: f64,
    /// Mean squared difference between predicted and realized score.
    pub brier: f64,
}

/// One bucket of a reliability table: predictions in [`low`, `high`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Bucket {
    pub low: f64,
    pub high: f64,
    pub count: u64,
    /// NaN when the bucket is empty.
    pub mean_predicted: f64,
    /// Mean realized score of the bucket's positions (NaN when empty).
    pub realized: f64,
}

/// The observations of one side in one slice of the games (all phases, or one).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Table {
    pub all: Tally,
    pub buckets: [Tally; BUCKETS],
}

impl Table {
    fn add(&mut self, predicted: f64, realized: f64) {
        self.all.add(predicted, realized);
        self.buckets[bucket_of(predicted)].add(predicted, realized);
    }

    fn merge(&mut self, other: &Table) {
        self.all.merge(&other.all);
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            a.merge(b);
        }
    }

    /// The reliability table: all [`BUCKETS`] buckets, empty ones included.
    pub fn reliability(&self) -> Vec<Bucket> {
        let w = 1.0 / BUCKETS as f64;
        self.buckets
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let s = t.summary();
                Bucket { low: i as f64 * w, high: (i + 1) as f64 * w, count: t.count, mean_predicted: s.mean_predicted, realized: s.mean_realized }
            })
            .collect()
    }
}

/// The bucket of a prediction (1.0 belongs to the last one; outside [0, 1] to the nearest).
fn bucket_of(p: f64) -> usize {
    ((p * BUCKETS as f64).floor().max(0.0) as usize).min(BUCKETS - 1)
}

/// One side's tables: the whole game and each phase.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SideTables {
    pub whole: Table,
    pub phases: [Table; 3],
}

impl SideTables {
    /// The table of one phase.
    pub fn phase(&self, phase: Phase) -> &Table {
        &self.phases[phase.index()]
    }
}

/// Observations accumulated per side (see the module documentation).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Calibration {
    sides: [SideTables; 2],
    /// Observations left out because their prediction was not a finite number.
    pub ignored: u64,
}

impl Calibration {
    pub fn new() -> Calibration {
        Calibration::default()
    }

    /// Adds one observation; a prediction that is not finite is counted in `ignored` and
    /// left out. Predictions outside [0, 1] count in the nearest bucket.
    pub fn add(&mut self, o: &Observation) {
        if !o.predicted.is_finite() {
            self.ignored += 1;
            return;
        }
        let s = &mut self.sides[o.side.index()];
        s.whole.add(o.predicted, o.realized);
        s.phases[Phase::of(o.ply, o.length).index()].add(o.predicted, o.realized);
    }

    /// Adds another accumulation (the result is the same as adding its observations here).
    pub fn merge(&mut self, other: &Calibration) {
        for (a, b) in self.sides.iter_mut().zip(&other.sides) {
            a.whole.merge(&b.whole);
            for (x, y) in a.phases.iter_mut().zip(&b.phases) {
                x.merge(y);
            }
        }
        self.ignored += other.ignored;
    }

    /// One side's tables.
    pub fn side(&self, side: Side) -> &SideTables {
        &self.sides[side.index()]
    }

    /// Every figure, for printing or JSON.
    pub fn report(&self) -> Report {
        let side = |s: Side| {
            let t = self.side(s);
            let table = |t: &Table| TableReport { summary: t.all.summary(), reliability: t.reliability() };
            SideReport { all: table(&t.whole), opening: table(t.phase(Phase::Opening)), middle: table(t.phase(Phase::Middle)), end: table(t.phase(Phase::End)) }
        };
        Report { attackers: side(Side::Attackers), defenders: side(Side::Defenders), ignored: self.ignored }
    }
}

/// The figures of one slice of one side.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TableReport {
    pub summary: Summary,
    pub reliability: Vec<Bucket>,
}

/// The figures of one side: the whole game and each third.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SideReport {
    pub all: TableReport,
    pub opening: TableReport,
    pub middle: TableReport,
    pub end: TableReport,
}

impl SideReport {
    /// The slices in order, with their names: `all`, `opening`, `middle`, `end`.
    pub fn slices(&self) -> [(&'static str, &TableReport); 4] {
        [("all", &self.all), (Phase::Opening.name(), &self.opening), (Phase::Middle.name(), &self.middle), (Phase::End.name(), &self.end)]
    }
}

/// [`Calibration::report`]: per side, then how many observations were left out.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub attackers: SideReport,
    pub defenders: SideReport,
    pub ignored: u64,
}

impl Report {
    /// One side's figures.
    pub fn side(&self, side: Side) -> &SideReport {
        match side {
            Side::Attackers => &self.attackers,
            Side::Defenders => &self.defenders,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(side: Side, predicted: f64, realized: f64, ply: usize, length: usize) -> Observation {
        Observation { side, predicted, realized, ply, length }
    }

    /// Three positions a side, computed by hand (see each figure's comment).
    fn sample() -> Vec<Observation> {
        vec![
            // attackers: opening (0 < 6/3), bucket 8; middle (3*3 = 9, 6 <= 9 < 12), bucket 2;
            // end (15 >= 12), bucket 6.
            obs(Side::Attackers, 0.8, 1.0, 0, 6),
            obs(Side::Attackers, 0.25, 0.0, 3, 6),
            obs(Side::Attackers, 0.6, 0.5, 5, 6),
            // defenders: opening (3 < 6), middle (3 = 3 of a 3-move game), end (6 = 2 * 3);
            // all in the last bucket (1.0 included).
            obs(Side::Defenders, 0.9, 1.0, 1, 6),
            obs(Side::Defenders, 0.95, 0.0, 1, 3),
            obs(Side::Defenders, 1.0, 1.0, 2, 3),
        ]
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn phases_are_thirds_of_each_game() {
        let of10: Vec<Phase> = (0..10).map(|i| Phase::of(i, 10)).collect();
        use Phase::*;
        assert_eq!(of10, [Opening, Opening, Opening, Opening, Middle, Middle, Middle, End, End, End]);
        assert_eq!((Phase::of(0, 3), Phase::of(1, 3), Phase::of(2, 3)), (Opening, Middle, End));
        assert_eq!((Phase::of(0, 1), Phase::of(5, 1), Phase::of(0, 0)), (Opening, End, Opening));
    }

    #[test]
    fn summaries_by_hand() {
        let mut c = Calibration::new();
        sample().iter().for_each(|o| c.add(o));
        let r = c.report();
        let a = r.attackers.all.summary;
        // mean predicted (0.8 + 0.25 + 0.6) / 3 = 0.55; realized (1 + 0 + 0.5) / 3 = 0.5;
        // Brier (0.2² + 0.25² + 0.1²) / 3 = (0.04 + 0.0625 + 0.01) / 3 = 0.0375.
        assert_eq!(a.count, 3);
        assert!(close(a.mean_predicted, 0.55) && close(a.mean_realized, 0.5), "{a:?}");
        assert!(close(a.bias, 0.05) && close(a.brier, 0.0375), "{a:?}");
        let d = r.defenders.all.summary;
        // predicted (0.9 + 0.95 + 1) / 3 = 0.95; realized 2/3; Brier (0.01 + 0.9025 + 0) / 3.
        assert_eq!(d.count, 3);
        assert!(close(d.mean_predicted, 0.95) && close(d.mean_realized, 2.0 / 3.0), "{d:?}");
        assert!(close(d.bias, 0.95 - 2.0 / 3.0) && close(d.brier, 0.9125 / 3.0), "{d:?}");
        // Each phase of each side holds one position here.
        for side in [&r.attackers, &r.defenders] {
            for (name, t) in side.slices().into_iter().skip(1) {
                assert_eq!(t.summary.count, 1, "{name}");
            }
        }
        assert!(close(r.attackers.middle.summary.mean_predicted, 0.25) && close(r.attackers.middle.summary.brier, 0.0625));
        assert!(close(r.defenders.middle.summary.mean_realized, 0.0) && close(r.defenders.middle.summary.brier, 0.9025));
        assert!(close(r.defenders.end.summary.brier, 0.0));
    }

    #[test]
    fn reliability_buckets_by_hand() {
        let mut c = Calibration::new();
        sample().iter().for_each(|o| c.add(o));
        let r = c.report();
        let att = &r.attackers.all.reliability;
        assert_eq!(att.len(), BUCKETS);
        let counts: Vec<u64> = att.iter().map(|b| b.count).collect();
        assert_eq!(counts, [0, 0, 1, 0, 0, 0, 1, 0, 1, 0]);
        assert!(close(att[2].mean_predicted, 0.25) && close(att[2].realized, 0.0));
        assert!(close(att[6].low, 0.6) && close(att[6].high, 0.7) && close(att[6].realized, 0.5));
        assert!(att[0].mean_predicted.is_nan() && att[0].realized.is_nan());
        let last = r.defenders.all.reliability[BUCKETS - 1];
        assert_eq!(last.count, 3);
        assert!(close(last.mean_predicted, 0.95) && close(last.realized, 2.0 / 3.0), "{last:?}");
        // The middle third of the defenders holds only the 0.95 that lost.
        let mid = r.defenders.middle.reliability[BUCKETS - 1];
        assert_eq!(mid.count, 1);
        assert!(close(mid.realized, 0.0));
    }

    #[test]
    fn merging_equals_adding_and_bad_predictions_are_ignored() {
        let all = sample();
        let (mut whole, mut a, mut b) = (Calibration::new(), Calibration::new(), Calibration::new());
        all.iter().for_each(|o| whole.add(o));
        all[..2].iter().for_each(|o| a.add(o));
        all[2..].iter().for_each(|o| b.add(o));
        b.add(&obs(Side::Attackers, f64::NAN, 1.0, 0, 4));
        a.merge(&b);
        assert_eq!(a.ignored, 1);
        a.ignored = 0;
        // Sums in another order may differ in the last bit; the counts not at all.
        let (x, y) = (a.report(), whole.report());
        for s in [Side::Attackers, Side::Defenders] {
            for ((_, p), (_, q)) in x.side(s).slices().into_iter().zip(y.side(s).slices()) {
                assert_eq!(p.summary.count, q.summary.count);
                assert!(close(p.summary.brier, q.summary.brier) || (p.summary.brier.is_nan() && q.summary.brier.is_nan()));
            }
        }
    }

    #[test]
    fn scores_of_wdl_values_and_results() {
        assert!(close(Observation::score_of_wdl([0.5, 0.25, 0.25]), 0.625));
        assert!(close(Observation::score_of_value(-0.5), 0.25));
        assert_eq!(Observation::realized_by(Side::Attackers, Some(Side::Attackers)), 1.0);
        assert_eq!(Observation::realized_by(Side::Attackers, Some(Side::Defenders)), 0.0);
        assert_eq!(Observation::realized_by(Side::Defenders, None), 0.5);
        assert_eq!((bucket_of(-0.1), bucket_of(0.0), bucket_of(0.1), bucket_of(0.99), bucket_of(1.0), bucket_of(1.5)), (0, 0, 1, 9, 9, 9));
    }
}

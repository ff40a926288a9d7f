//! Statistics of game results: confidence intervals for rates (Wilson), Elo differences with
//! intervals, joint Elo ratings of a field (Bradley-Terry, [`elo`]), the sequential
//! probability ratio test for matches, a two-proportion test for comparing balance runs, the
//! human reference figures balance reports show, the per-side calibration of value
//! predictions ([`calibration`]), and the logistic fit of the search handicap that evens a
//! variant ([`handicap`]).
//!
//! Mathematics only: numbers in, numbers out, no other module of the crate (the rules crate's
//! `Side` aside; the experiments that play games are in `tafl_lab::lab`, charts in
//! `tafl_lab::report`). Every formula is short and tested against published values.

pub mod calibration;
pub mod elo;
pub mod handicap;

/// The 97.5% quantile of the standard normal distribution (two-sided 95%).
pub const Z95: f64 = 1.959_963_984_540_054;

/// Wilson score interval for `successes` out of `n` at normal quantile `z` (Wilson 1927;
/// Newcombe 1998, method 3). Returns (low, high); (0, 1) when `n` is 0.
pub fn wilson(successes: u64, n: u64, z: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    wilson_f(successes as f64 / n as f64, n as f64, z)
}

/// Expected score of a player `elo` points stronger (logistic model).
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Elo difference implied by a score in (0, 1) over `games` games; scores of 0 or 1 are
/// pulled in by half a game so the figure stays finite.
pub fn elo_from_score(score: f64, games: u32) -> f64 {
    let n = games.max(1) as f64;
    elo_of_bound(score.clamp(0.5 / n, 1.0 - 0.5 / n))
}

/// Games, mean score and per-game variance of the score of `w` wins, `d` draws, `l` losses.
fn trinomial(w: u64, d: u64, l: u64) -> (f64, f64, f64) {
    let n = (w + d + l) as f64;
    let s = (w as f64 + 0.5 * d as f64) / n;
    let var = (w as f64 * (1.0 - s).powi(2) + d as f64 * (0.5 - s).powi(2) + l as f64 * s.powi(2)) / n;
    (n, s, var)
}

/// [`trinomial`] for the SPRT: a match of identical results has no variance; one draw is then
/// added so that likelihood ratios stay finite and still grow with the number of games.
fn score_stats(w: u64, d: u64, l: u64) -> (f64, f64, f64) {
    let alike = [w, d, l].iter().filter(|&&x| x > 0).count() <= 1;
    trinomial(w, if alike { d + 1 } else { d }, l)
}

/// Elo difference with a 95% interval. `low` and `high` may be infinite: a match one side swept
/// cannot bound how much stronger the sweeper is (JSON writes an infinite bound as `null`).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct EloEstimate {
    pub elo: f64,
    pub low: f64,
    pub high: f64,
}

/// `+52 (-114 to +inf)`: the estimate and its interval, an unbounded end as `inf`.
impl std::fmt::Display for EloEstimate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:+.0} ({} to {})", self.elo, Self::bound_text(self.low), Self::bound_text(self.high))
    }
}

impl EloEstimate {
    /// "+52 (95% interval -114 to +inf)"-style text of one bound: a sign, no decimals, and
    /// `inf` for an unbounded end.
    pub fn bound_text(x: f64) -> String {
        if x.is_infinite() {
            if x > 0.0 {
                "+inf".into()
            } else {
                "-inf".into()
            }
        } else {
            format!("{x:+.0}")
        }
    }
}

/// Elo difference implied by a score in [0, 1], infinite at 0 and 1 (for interval bounds).
fn elo_of_bound(s: f64) -> f64 {
    if s <= 0.0 {
        f64::NEG_INFINITY
    } else if s >= 1.0 {
        f64::INFINITY
    } else {
        // `+ 0.0` turns the -0 of an even score into 0.
        -400.0 * (1.0 / s - 1.0).log10() + 0.0
    }
}

/// Elo difference of a match of `w` wins, `d` draws and `l` losses, with a 95% interval.
///
/// The interval is the Wilson score interval of the score mapped through the logistic Elo
/// curve, so it stays honest at the ends: a 2-0 sweep gives about -114 to +inf, which includes
/// 0, where a normal approximation would give an interval that ends at the estimate. Draws
/// shrink the score's variance; the Wilson interval is taken over the effective number of
/// games `n s (1 - s) / var` (the number of win/loss games with the same variance), which is
/// `n` when there are no draws and when the score is 0 or 1. The point estimate is the
/// score's Elo with a sweep pulled in by half a game ([`elo_from_score`]).
pub fn elo_interval(w: u64, d: u64, l: u64) -> EloEstimate {
    let games = w + d + l;
    if games == 0 {
        return EloEstimate { elo: 0.0, low: f64::NEG_INFINITY, high: f64::INFINITY };
    }
    let (n, s, var) = trinomial(w, d, l);
    let n_eff = if s > 0.0 && s < 1.0 && var > 0.0 { n * s * (1.0 - s) / var } else { n };
    let (lo, hi) = wilson_f(s, n_eff, Z95);
    EloEstimate { elo: elo_from_score(s, games as u32), low: elo_of_bound(lo), high: elo_of_bound(hi) }
}

/// [`wilson`] for a proportion `p` over a (possibly fractional) number of trials `n > 0`.
fn wilson_f(p: f64, n: f64, z: f64) -> (f64, f64) {
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denom;
    let half = z / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    // At p = 0 or 1 one bound is exactly 0 or 1; rounding must not move it inside.
    let low = if p <= 0.0 { 0.0 } else { (center - half).max(0.0) };
    let high = if p >= 1.0 { 1.0 } else { (center + half).min(1.0) };
    (low, high)
}

/// Sequential probability ratio test between Elo `elo0` (H0) and `elo1` (H1), with error
/// rates alpha and beta, in the generalized form of Van den Bergh (the one fishtest uses for
/// trinomial results): LLR ≈ n (s1 - s0)(2s - s0 - s1) / (2 var).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
}

/// Where an SPRT stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SprtDecision {
    AcceptH0,
    AcceptH1,
    Continue,
}

impl Sprt {
    pub fn new(elo0: f64, elo1: f64) -> Sprt {
        Sprt { elo0, elo1, alpha: 0.05, beta: 0.05 }
    }

    /// (lower, upper) bounds of the log-likelihood ratio: ln(beta / (1 - alpha)) and
    /// ln((1 - beta) / alpha).
    pub fn bounds(&self) -> (f64, f64) {
        ((self.beta / (1.0 - self.alpha)).ln(), ((1.0 - self.beta) / self.alpha).ln())
    }

    /// The log-likelihood ratio after `w` wins, `d` draws and `l` losses.
    pub fn llr(&self, w: u64, d: u64, l: u64) -> f64 {
        if w + d + l == 0 {
            return 0.0;
        }
        let (n, s, var) = score_stats(w, d, l);
        self.llr_with(n, s, var)
    }

    fn llr_with(&self, n: f64, s: f64, var: f64) -> f64 {
        let (s0, s1) = (score_from_elo(self.elo0), score_from_elo(self.elo1));
        n * (s1 - s0) * (2.0 * s - s0 - s1) / (2.0 * var)
    }

    pub fn decide(&self, w: u64, d: u64, l: u64) -> SprtDecision {
        let (lo, hi) = self.bounds();
        let llr = self.llr(w, d, l);
        if llr >= hi {
            SprtDecision::AcceptH1
        } else if llr <= lo {
            SprtDecision::AcceptH0
        } else {
            SprtDecision::Continue
        }
    }
}

/// Parses `ELO0,ELO1` (`0,30`), with `ELO0 < ELO1`, as `--sprt` takes it.
impl std::str::FromStr for Sprt {
    type Err = String;

    fn from_str(text: &str) -> Result<Sprt, String> {
        text.split_once(',')
            .and_then(|(x, y)| Some((x.trim().parse::<f64>().ok()?, y.trim().parse::<f64>().ok()?)))
            .filter(|(x, y)| x.is_finite() && y.is_finite() && x < y)
            .map(|(x, y)| Sprt::new(x, y))
            .ok_or_else(|| format!("{text:?}: expected ELO0,ELO1 with ELO0 < ELO1, e.g. 0,30"))
    }
}

/// Standard normal CDF (via erfc, Numerical Recipes' Chebyshev fit, |error| < 1.2e-7).
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06 + t * (0.278_868_07 + t * (-1.135_203_98 + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// Two-proportion z-test (pooled): returns (z, two-sided p-value) for x1/n1 against x2/n2.
pub fn two_proportion_test(x1: u64, n1: u64, x2: u64, n2: u64) -> (f64, f64) {
    let (p1, p2) = (x1 as f64 / n1.max(1) as f64, x2 as f64 / n2.max(1) as f64);
    let p = (x1 + x2) as f64 / (n1 + n2).max(1) as f64;
    let se = (p * (1.0 - p) * (1.0 / n1.max(1) as f64 + 1.0 / n2.max(1) as f64)).sqrt();
    if se == 0.0 {
        return (0.0, 1.0);
    }
    let z = (p1 - p2) / se;
    (z, 2.0 * (1.0 - normal_cdf(z.abs())))
}

/// Balance figures from human play, where they exist; `source` names the public statistics
/// each comes from (aagenielsen.dk game records, World Tafl Federation statistics).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct HumanFigures {
    pub defenders_win: f64,
    pub attackers_win: Option<f64>,
    pub draws: Option<f64>,
    pub games: Option<u32>,
    pub source: &'static str,
}

/// Human figures for a preset name.
pub fn human_figures(variant: &str) -> Option<HumanFigures> {
    let f = |d, a, dr, g, source| Some(HumanFigures { defenders_win: d, attackers_win: a, draws: dr, games: g, source });
    match variant {
        "copenhagen" => f(0.558, Some(0.438), Some(0.004), Some(1721), "aagenielsen.dk, 1,721 finished games"),
        "brandubh" => f(0.595, Some(0.402), Some(0.004), Some(518), "aagenielsen.dk, 518 finished games"),
        "tablut" => f(0.46, None, None, None, "World Tafl Federation statistics"),
        "tawlbwrdd" => f(0.47, None, None, None, "World Tafl Federation statistics"),
        "fetlar" => f(0.44, Some(0.39), Some(0.17), None, "2011 aagenielsen.dk tournament analysis"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_newcombe_1998() {
        // Newcombe (1998), Statistics in Medicine 17:857-872, Table II, method 3 (Wilson).
        let cases = [(81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611), (1, 29, 0.0061, 0.1718)];
        for (x, n, lo, hi) in cases {
            let (l, h) = wilson(x, n, Z95);
            assert!((l - lo).abs() < 5e-5 && (h - hi).abs() < 5e-5, "{x}/{n}: ({l:.4}, {h:.4}) vs ({lo}, {hi})");
        }
        assert_eq!(wilson(0, 0, Z95), (0.0, 1.0));
    }

    #[test]
    fn elo_of_known_scores() {
        assert!(elo_from_score(0.5, 100).abs() < 1e-9);
        assert!(elo_from_score(0.5, 100).is_sign_positive(), "an even score prints as +0, not -0");
        // 75% is 400 log10(3) = +190.85 Elo; 90% is 400 log10(9) = +381.7.
        assert!((elo_from_score(0.75, 100) - 190.848).abs() < 1e-3);
        assert!((elo_from_score(0.9, 100) - 381.697).abs() < 1e-3);
        assert!((elo_from_score(0.25, 100) + 190.848).abs() < 1e-3);
        assert!(elo_from_score(1.0, 10).is_finite() && elo_from_score(1.0, 10) > 500.0);
        assert!((score_from_elo(190.848) - 0.75).abs() < 1e-6);
    }

    #[test]
    fn elo_intervals_by_hand() {
        // Each bound by hand: Wilson (z = 1.95996) on the score over n games, then
        // Elo = 400 log10(p / (1 - p)).
        let close = |a: f64, b: f64| (a - b).abs() < 0.2;
        // 2-0: Wilson (2 / 5.8415, 1) = (0.34238, 1): -113.4 to +inf; the estimate pulls the
        // sweep in by half a game (score 0.75, +190.8). The interval includes 0.
        let e = elo_interval(2, 0, 0);
        assert!(close(e.low, -113.4) && e.high == f64::INFINITY && close(e.elo, 190.8), "{e:?}");
        assert!(e.low < 0.0 && e.low < e.elo && e.elo < e.high);
        // 10-0: (10 / 13.8415, 1) = (0.72247, 1): +166.2 to +inf.
        let e = elo_interval(10, 0, 0);
        assert!(close(e.low, 166.2) && e.high == f64::INFINITY, "{e:?}");
        // 0-10 is its mirror.
        let e = elo_interval(0, 0, 10);
        assert!(close(e.high, -166.2) && e.low == f64::NEG_INFINITY, "{e:?}");
        // 7-3: centre (0.7 + 0.19207) / 1.38415 = 0.64449, half 1.41600 * sqrt(0.021 +
        // 0.0096037) = 0.24771: (0.39678, 0.89221), -72.8 to +367.2; estimate +147.2.
        let e = elo_interval(7, 0, 3);
        assert!(close(e.low, -72.8) && close(e.high, 367.2) && close(e.elo, 147.2), "{e:?}");
        // 50-50: (0.40383, 0.59617): -67.7 to +67.7 around 0.
        let e = elo_interval(50, 0, 50);
        assert!(close(e.low, -67.7) && close(e.high, 67.7) && e.elo == 0.0, "{e:?}");
        // Draws narrow it: 60-20-20 (score 0.7, var 0.16) is as wide as 131.25 win/loss games.
        let with_draws = elo_interval(60, 20, 20);
        let (lo, hi) = wilson_f(0.7, 100.0 * 0.21 / 0.16, Z95);
        assert!((with_draws.low - elo_of_bound(lo)).abs() < 1e-9 && (with_draws.high - elo_of_bound(hi)).abs() < 1e-9);
        let no_draws = elo_interval(70, 0, 30);
        assert!(with_draws.high - with_draws.low < no_draws.high - no_draws.low);
        // No games: nothing is known.
        let e = elo_interval(0, 0, 0);
        assert!(e.low == f64::NEG_INFINITY && e.high == f64::INFINITY);
        assert_eq!(EloEstimate::bound_text(f64::INFINITY), "+inf");
        assert_eq!(EloEstimate::bound_text(-113.6), "-114");
        // An infinite bound is written as null in JSON.
        assert_eq!(serde_json::to_value(elo_interval(2, 0, 0)).unwrap()["high"], serde_json::Value::Null);
    }

    #[test]
    fn an_sprt_reads_its_two_elo_bounds_in_order() {
        assert_eq!("0,30".parse::<Sprt>(), Ok(Sprt::new(0.0, 30.0)));
        assert_eq!(" -10 , 5.5 ".parse::<Sprt>(), Ok(Sprt::new(-10.0, 5.5)));
        for bad in ["30,0", "5,5", "0", "a,b", "0,30,60", "nan,1"] {
            assert!(bad.parse::<Sprt>().unwrap_err().contains("ELO0 < ELO1"), "{bad}");
        }
    }

    #[test]
    fn sprt_bounds_and_decisions() {
        let s = Sprt::new(0.0, 10.0);
        let (lo, hi) = s.bounds();
        // alpha = beta = 0.05: ln(0.05/0.95) = -2.944, ln(0.95/0.05) = +2.944 (Wald 1945).
        assert!((lo + 2.944_438_979).abs() < 1e-6 && (hi - 2.944_438_979).abs() < 1e-6);
        // The LLR by hand for 60-20-20 (s = 0.7, var = 0.16, n = 100).
        let (s0, s1) = (0.5, score_from_elo(10.0));
        let want = 100.0 * (s1 - s0) * (1.4 - s0 - s1) / 0.32;
        assert!((s.llr(60, 20, 20) - want).abs() < 1e-9);
        // That is 1.73: not yet enough against a 10 Elo alternative, enough against 30 (4.81).
        assert!((s.llr(60, 20, 20) - 1.733).abs() < 1e-3, "{}", s.llr(60, 20, 20));
        assert_eq!(s.decide(60, 20, 20), SprtDecision::Continue);
        let s = Sprt::new(0.0, 30.0);
        assert_eq!(s.decide(60, 20, 20), SprtDecision::AcceptH1);
        assert_eq!(s.decide(20, 20, 60), SprtDecision::AcceptH0);
        assert_eq!(s.decide(3, 2, 2), SprtDecision::Continue);
        // Identical results stay finite and accumulate evidence with more games.
        assert!(s.llr(4, 0, 0).is_finite() && s.llr(40, 0, 0) > s.llr(4, 0, 0) && s.llr(4, 0, 0) > 0.0);
        assert!(s.llr(0, 0, 40) < 0.0);
    }

    #[test]
    fn two_proportion_test_by_hand() {
        // 60/100 against 45/100: pooled 0.525, se = sqrt(0.525*0.475*0.02) = 0.070622, z = 2.1240.
        let (z, p) = two_proportion_test(60, 100, 45, 100);
        assert!((z - 2.1240).abs() < 1e-3, "{z}");
        assert!((p - 0.03367).abs() < 2e-4, "{p}");
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 1e-6);
        assert_eq!(two_proportion_test(0, 10, 0, 10), (0.0, 1.0));
    }
}

//! The handicap that evens a variant: how many times more search one side needs to score as
//! much as the other.
//!
//! Raw win rates do not compare across variants or strengths (a 70% defenders' rate means
//! little without knowing how strong the players were); "the attackers need 4x the search to
//! break even" does. One agent plays itself with one side's search multiplied by `k`; the
//! attackers' score (a draw half a point) is fitted as a logistic function of the signed
//! handicap `x` = log2 k, positive when the attackers get the extra search and negative when
//! the defenders do:
//!
//! ```text
//! P(attackers score) = 1 / (1 + exp(-(a + b x)))
//! ```
//!
//! by maximum likelihood (Newton's method on the binomial log-likelihood, draws as half
//! points). The sides are even at `x* = -a / b`; its 95% interval comes from the delta method
//! on the inverse of the observed information. `k* = 2^x*`: above 1 the attackers need that
//! much more search, below 1 the defenders need `1 / k*`.

use super::Z95;

/// The results at one handicap: `x` = log2 of the attackers' search over the defenders', the
/// attackers' points and the games (scored games only).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct HandicapPoint {
    pub x: f64,
    pub attacker_points: f64,
    pub games: u64,
}

/// A fitted handicap.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct HandicapFit {
    /// Intercept and slope of the logistic fit (per doubling of search).
    pub a: f64,
    pub b: f64,
    /// The even point in doublings, with its 95% interval (`None` when the fit cannot place
    /// it: no slope, or a slope not clearly above zero).
    pub x_even: f64,
    pub x_interval: Option<(f64, f64)>,
}

impl HandicapFit {
    /// The even handicap as a search ratio, attackers' over defenders'.
    pub fn k_even(&self) -> f64 {
        self.x_even.exp2()
    }

    /// Its 95% interval as search ratios.
    pub fn k_interval(&self) -> Option<(f64, f64)> {
        self.x_interval.map(|(l, h)| (l.exp2(), h.exp2()))
    }
}

/// Why a handicap could not be fitted.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum HandicapError {
    #[error("a fit needs results at two or more handicaps")]
    TooFewHandicaps,
    #[error("more search did not raise the attackers' score (slope {slope:.3} per doubling): the even point cannot be placed")]
    NoSlope { slope: f64 },
}

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

/// Fits the attackers' score against the signed handicap (see the module documentation).
pub fn fit(points: &[HandicapPoint]) -> Result<HandicapFit, HandicapError> {
    let pts: Vec<&HandicapPoint> = points.iter().filter(|p| p.games > 0).collect();
    let distinct: std::collections::BTreeSet<u64> = pts.iter().map(|p| p.x.to_bits()).collect();
    if distinct.len() < 2 {
        return Err(HandicapError::TooFewHandicaps);
    }
    // Newton's method; a fit at the boundary (every game won at some handicap) still
    // converges in a, b because the other handicaps pin them, and is capped otherwise.
    let (mut a, mut b) = (0.0f64, 0.0f64);
    let mut info = [[0.0; 2]; 2];
    for _ in 0..100 {
        let (mut ga, mut gb) = (0.0, 0.0);
        info = [[0.0; 2]; 2];
        for p in &pts {
            let n = p.games as f64;
            let q = sigmoid(a + b * p.x);
            let r = p.attacker_points - n * q;
            ga += r;
            gb += r * p.x;
            let w = n * q * (1.0 - q);
            info[0][0] += w;
            info[0][1] += w * p.x;
            info[1][1] += w * p.x * p.x;
        }
        info[1][0] = info[0][1];
        let det = info[0][0] * info[1][1] - info[0][1] * info[1][0];
        if det.abs() < 1e-12 {
            break;
        }
        let da = (info[1][1] * ga - info[0][1] * gb) / det;
        let db = (-info[1][0] * ga + info[0][0] * gb) / det;
        // Damped steps keep a separable data set from running away.
        let scale = 1.0f64.min(5.0 / (da.abs() + db.abs()).max(1e-12));
        a += scale * da;
        b += scale * db;
        if (da.abs() + db.abs()) < 1e-10 {
            break;
        }
    }
    if b <= 0.0 || !b.is_finite() {
        return Err(HandicapError::NoSlope { slope: b });
    }
    let x_even = -a / b;
    let det = info[0][0] * info[1][1] - info[0][1] * info[1][0];
    let x_interval = (det > 1e-12).then(|| {
        // Covariance of (a, b): the inverse of the information matrix.
        let (va, vb, cab) = (info[1][1] / det, info[0][0] / det, -info[0][1] / det);
        // d x*/da = -1/b, d x*/db = a/b^2 = -x*/b.
        let var = (va + x_even * x_even * vb + 2.0 * x_even * cab) / (b * b);
        let se = var.max(0.0).sqrt();
        (x_even - Z95 * se, x_even + Z95 * se)
    });
    // A slope whose own interval reaches zero places nothing.
    let slope_se = if det > 1e-12 { (info[0][0] / det).sqrt() } else { f64::INFINITY };
    if b - Z95 * slope_se <= 0.0 {
        return Ok(HandicapFit { a, b, x_even, x_interval: None });
    }
    Ok(HandicapFit { a, b, x_even, x_interval })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Results drawn exactly from a known curve (a = -1, b = 0.5: even at x = 2, the attackers
    /// needing 4x the search): the fit finds it, and the interval holds it.
    #[test]
    fn the_fit_recovers_a_known_even_point() {
        let (a, b) = (-1.0, 0.5);
        let points: Vec<HandicapPoint> =
            [-1.0, 0.0, 1.0, 2.0, 3.0, 4.0].iter().map(|&x| HandicapPoint { x, attacker_points: 400.0 * sigmoid(a + b * x), games: 400 }).collect();
        let f = fit(&points).unwrap();
        assert!((f.a - a).abs() < 1e-6 && (f.b - b).abs() < 1e-6, "{f:?}");
        assert!((f.k_even() - 4.0).abs() < 1e-6, "{}", f.k_even());
        let (lo, hi) = f.k_interval().unwrap();
        assert!(lo < 4.0 && 4.0 < hi && lo > 2.0 && hi < 8.0, "({lo}, {hi})");
    }

    /// Defenders favoured at equal search, evened when the defenders get less (negative x):
    /// the even point is below 1 (the defenders need 1/k* of the attackers' search).
    #[test]
    fn an_even_point_on_the_defenders_side_is_a_ratio_below_one() {
        let pts = [
            HandicapPoint { x: 0.0, attacker_points: 70.0, games: 100 },
            HandicapPoint { x: -1.0, attacker_points: 50.0, games: 100 },
            HandicapPoint { x: -2.0, attacker_points: 30.0, games: 100 },
        ];
        let f = fit(&pts).unwrap();
        assert!((f.x_even + 1.0).abs() < 1e-6, "{f:?}");
        assert!((f.k_even() - 0.5).abs() < 1e-6);
        let (lo, hi) = f.x_interval.unwrap();
        assert!(lo < -1.0 && -1.0 < hi);
        // Wider with a quarter of the games: the interval is about twice as wide.
        let quarter: Vec<HandicapPoint> = pts.iter().map(|p| HandicapPoint { attacker_points: p.attacker_points / 4.0, games: p.games / 4, ..*p }).collect();
        let (lq, hq) = fit(&quarter).unwrap().x_interval.unwrap();
        assert!(((hq - lq) / (hi - lo) - 2.0).abs() < 0.05, "{} vs {}", hq - lq, hi - lo);
    }

    #[test]
    fn too_few_handicaps_or_no_slope_is_an_error() {
        let one = [HandicapPoint { x: 1.0, attacker_points: 5.0, games: 10 }];
        assert_eq!(fit(&one), Err(HandicapError::TooFewHandicaps));
        let flat_down = [HandicapPoint { x: 0.0, attacker_points: 6.0, games: 10 }, HandicapPoint { x: 1.0, attacker_points: 4.0, games: 10 }];
        assert!(matches!(fit(&flat_down), Err(HandicapError::NoSlope { .. })));
        // A slope not clearly above zero: an estimate, but no interval.
        let noisy = [HandicapPoint { x: 0.0, attacker_points: 5.0, games: 10 }, HandicapPoint { x: 1.0, attacker_points: 6.0, games: 10 }];
        assert_eq!(fit(&noisy).unwrap().x_interval, None);
    }
}

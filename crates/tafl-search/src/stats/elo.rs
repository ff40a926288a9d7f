//! Joint Elo ratings of several players from all their games at once: a Bradley-Terry model
//! fitted by maximum likelihood, with 95% intervals from the observed Fisher information.
//!
//! Why joint: averaging pairwise Elo differences ignores how much each pairing says and
//! cannot use indirect evidence (A beat B, B beat C, so A is likely stronger than C). The
//! likelihood of every game under one set of ratings weighs each pairing by its games and
//! uses every path between two players.
//!
//! The model. Player `i` scores against player `j` with probability
//! `p_ij = 1 / (1 + 10^(-(R_i - R_j) / 400))` (Bradley-Terry on the Elo scale). A draw counts
//! as half a win and half a loss (the Elo convention: the likelihood is the binomial one over
//! points), not as an outcome of its own as in Davidson's or BayesElo's draw models; so the
//! ratings are those that make every player's expected points equal their actual points.
//!
//! Anchor: ratings sum to zero (the field's mean is 0). An interval is the uncertainty of a
//! player's rating against that mean; [`EloFit::difference`] gives the interval of the gap
//! between two players, from the full covariance.
//!
//! Prior: every player also gets `prior_draws` virtual draws (default 1,
//! [`DEFAULT_PRIOR_DRAWS`]) against a virtual opponent rated at the field's mean. Without it a
//! player who won (or lost) every game has no finite maximum; with it the rating is large but
//! finite. It pulls every rating a little towards the mean, most for extreme scores over few
//! games (an agent scoring 6% over 40 games: -297 instead of -314 Elo; 400 games at 75%: the
//! gap moves by under 1 Elo). Pass 0 for the plain maximum-likelihood estimate.
//!
//! Fit: Newton's method in the `n - 1` free coordinates of the sum-zero plane, with step
//! halving so the log-likelihood never falls (beyond its own rounding), until no rating moves
//! by more than 1e-6 Elo.
//! The covariance is the inverse of the negative Hessian in those coordinates, mapped back.

use super::Z95;

/// Virtual draws per player against a mean-rated opponent (see the module docs).
pub const DEFAULT_PRIOR_DRAWS: f64 = 1.0;

/// Elo points per natural-log unit of odds: 400 / ln 10.
const ELO_PER_NAT: f64 = 400.0 / std::f64::consts::LN_10;

const MAX_ITERATIONS: u32 = 200;
const TOLERANCE_ELO: f64 = 1e-6;

/// The games between players `i` and `j` (indices into the field): `i`'s wins, the draws and
/// `j`'s wins. Several entries for the same two players add up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairResult {
    pub i: usize,
    pub j: usize,
    pub wins_i: u32,
    pub draws: u32,
    pub wins_j: u32,
}

impl PairResult {
    pub fn new(i: usize, j: usize, wins_i: u32, draws: u32, wins_j: u32) -> PairResult {
        PairResult { i, j, wins_i, draws, wins_j }
    }
}

/// Why a fit failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    #[error("result {index}: players {i} and {j} are not two different players of {players}")]
    BadPair { index: usize, i: usize, j: usize, players: usize },
    #[error("prior_draws must be a finite number >= 0, not {0}")]
    BadPrior(f64),
    #[error("the ratings have no finite maximum-likelihood estimate (a player who won or lost every game, or players no games connect); use a prior")]
    Singular,
    #[error("Newton's method did not converge in {0} iterations")]
    NotConverged(u32),
}

/// One player's rating with its 95% interval (normal approximation), all in Elo.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Rating {
    pub elo: f64,
    /// Standard error against the anchor (the field's mean).
    pub se: f64,
    pub low: f64,
    pub high: f64,
}

/// The fitted ratings (summing to zero), their covariance and how the fit went.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct EloFit {
    pub ratings: Vec<Rating>,
    /// Covariance of the ratings, in Elo squared.
    pub covariance: Vec<Vec<f64>>,
    pub prior_draws: f64,
    pub iterations: u32,
    /// The log-likelihood at the optimum (prior terms included).
    pub log_likelihood: f64,
}

impl EloFit {
    /// The gap `R_i - R_j` with its 95% interval (from the joint covariance).
    ///
    /// # Panics
    /// If `i` or `j` is not a player of the fit.
    pub fn difference(&self, i: usize, j: usize) -> super::EloEstimate {
        let c = &self.covariance;
        let elo = self.ratings[i].elo - self.ratings[j].elo;
        let se = (c[i][i] + c[j][j] - 2.0 * c[i][j]).max(0.0).sqrt();
        super::EloEstimate { elo, low: elo - Z95 * se, high: elo + Z95 * se }
    }
}

fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// ln(sigmoid(x)), stable for large |x|.
fn ln_sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        -(-x).exp().ln_1p()
    } else {
        x - x.exp().ln_1p()
    }
}

/// The log-likelihood (with prior) of ratings `r` in natural units, its gradient and Hessian.
struct Model<'a> {
    n: usize,
    results: &'a [PairResult],
    prior: f64,
}

impl Model<'_> {
    fn log_likelihood(&self, r: &[f64]) -> f64 {
        let mut ll = 0.0;
        for p in self.results {
            let d = r[p.i] - r[p.j];
            let (si, sj) = (p.wins_i as f64 + 0.5 * p.draws as f64, p.wins_j as f64 + 0.5 * p.draws as f64);
            ll += si * ln_sigmoid(d) + sj * ln_sigmoid(-d);
        }
        ll + r.iter().map(|&x| 0.5 * self.prior * (ln_sigmoid(x) + ln_sigmoid(-x))).sum::<f64>()
    }

    fn gradient_hessian(&self, r: &[f64]) -> (Vec<f64>, Vec<Vec<f64>>) {
        let n = self.n;
        let mut g = vec![0.0; n];
        let mut h = vec![vec![0.0; n]; n];
        for p in self.results {
            let games = (p.wins_i + p.draws + p.wins_j) as f64;
            let s = sigmoid(r[p.i] - r[p.j]);
            let si = p.wins_i as f64 + 0.5 * p.draws as f64;
            g[p.i] += si - games * s;
            g[p.j] -= si - games * s;
            let w = games * s * (1.0 - s);
            h[p.i][p.i] -= w;
            h[p.j][p.j] -= w;
            h[p.i][p.j] += w;
            h[p.j][p.i] += w;
        }
        for i in 0..n {
            let s = sigmoid(r[i]);
            g[i] += self.prior * (0.5 - s);
            h[i][i] -= self.prior * s * (1.0 - s);
        }
        (g, h)
    }
}

/// The ratings `r = Z theta` of free coordinates `theta` (the last rating is minus the sum of
/// the others, so ratings sum to zero).
fn expand(theta: &[f64]) -> Vec<f64> {
    let mut r = theta.to_vec();
    r.push(-theta.iter().sum::<f64>());
    r
}

/// `Zᵀ g` and `Zᵀ H Z` for `Z = [I; -1ᵀ]`.
fn reduce(g: &[f64], h: &[Vec<f64>]) -> (Vec<f64>, Vec<Vec<f64>>) {
    let m = g.len() - 1;
    let last = m;
    let gr = (0..m).map(|a| g[a] - g[last]).collect();
    let hr = (0..m).map(|a| (0..m).map(|b| h[a][b] - h[a][last] - h[last][b] + h[last][last]).collect()).collect();
    (gr, hr)
}

/// Cholesky factor `L` (lower) of a symmetric positive definite matrix; `None` if it is not.
fn cholesky(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let scale = (0..n).map(|i| a[i][i].abs()).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    let mut l = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let s = a[i][j] - (0..j).map(|k| l[i][k] * l[j][k]).sum::<f64>();
            if i == j {
                if s.is_nan() || s <= 1e-13 * scale {
                    return None;
                }
                l[i][i] = s.sqrt();
            } else {
                l[i][j] = s / l[j][j];
            }
        }
    }
    Some(l)
}

fn cholesky_solve(l: &[Vec<f64>], b: &[f64]) -> Vec<f64> {
    let n = b.len();
    let mut y = vec![0.0; n];
    for i in 0..n {
        y[i] = (b[i] - (0..i).map(|k| l[i][k] * y[k]).sum::<f64>()) / l[i][i];
    }
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        x[i] = (y[i] - (i + 1..n).map(|k| l[k][i] * x[k]).sum::<f64>()) / l[i][i];
    }
    x
}

/// Fits Elo ratings for `players` players to `results` by maximum likelihood (see the module
/// docs for the model, the anchor and the prior). Players with no games get the mean (0) when
/// `prior_draws > 0`.
///
/// # Errors
/// [`FitError::BadPair`] for a result naming a player out of range or a player against
/// itself; [`FitError::BadPrior`] for a negative or non-finite prior; [`FitError::Singular`]
/// when the estimate is not finite (possible only with `prior_draws == 0`);
/// [`FitError::NotConverged`] if Newton's method has not settled after 200 steps.
pub fn fit_ratings(players: usize, results: &[PairResult], prior_draws: f64) -> Result<EloFit, FitError> {
    if !(prior_draws.is_finite() && prior_draws >= 0.0) {
        return Err(FitError::BadPrior(prior_draws));
    }
    for (index, p) in results.iter().enumerate() {
        if p.i >= players || p.j >= players || p.i == p.j {
            return Err(FitError::BadPair { index, i: p.i, j: p.j, players });
        }
    }
    if players <= 1 {
        let ratings = vec![Rating { elo: 0.0, se: 0.0, low: 0.0, high: 0.0 }; players];
        return Ok(EloFit { ratings, covariance: vec![vec![0.0; players]; players], prior_draws, iterations: 0, log_likelihood: 0.0 });
    }
    let model = Model { n: players, results, prior: prior_draws };
    let mut theta = vec![0.0; players - 1];
    let mut ll = model.log_likelihood(&expand(&theta));
    let mut iterations = 0;
    let factor = loop {
        let (g, h) = model.gradient_hessian(&expand(&theta));
        let (g, h) = reduce(&g, &h);
        let neg: Vec<Vec<f64>> = h.iter().map(|row| row.iter().map(|x| -x).collect()).collect();
        let l = cholesky(&neg).ok_or(FitError::Singular)?;
        // Newton step: theta += (-H)^-1 g, halved until the log-likelihood does not fall.
        let step = cholesky_solve(&l, &g);
        let largest = step.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let sum = step.iter().sum::<f64>().abs();
        if largest.max(sum) * ELO_PER_NAT < TOLERANCE_ELO {
            break l;
        }
        if iterations == MAX_ITERATIONS {
            return Err(FitError::NotConverged(MAX_ITERATIONS));
        }
        iterations += 1;
        let mut t = 1.0;
        loop {
            let trial: Vec<f64> = theta.iter().zip(&step).map(|(a, s)| a + t * s).collect();
            let trial_ll = model.log_likelihood(&expand(&trial));
            // Near the optimum a step's gain is below the rounding of the log-likelihood
            // itself: a step that loses no more than that is taken, or the search stalls.
            if trial_ll >= ll - 1e-12 * ll.abs().max(1.0) || t < 1e-12 {
                theta = trial;
                ll = trial_ll.max(ll);
                break;
            }
            t *= 0.5;
        }
    };
    // Covariance of the free coordinates: (-H)^-1, column by column; then Z C Zᵀ.
    let m = players - 1;
    let mut c = vec![vec![0.0; m]; m];
    for col in 0..m {
        let mut e = vec![0.0; m];
        e[col] = 1.0;
        let x = cholesky_solve(&factor, &e);
        for row in 0..m {
            c[row][col] = x[row];
        }
    }
    // With Z = [I; -1ᵀ]: the last rating's covariances are minus the row sums of C, and its
    // variance is the sum of all of C.
    let row_sums: Vec<f64> = c.iter().map(|row| row.iter().sum()).collect();
    let total: f64 = row_sums.iter().sum();
    let e2 = ELO_PER_NAT * ELO_PER_NAT;
    let covariance: Vec<Vec<f64>> = (0..players)
        .map(|i| {
            (0..players)
                .map(|j| {
                    e2 * match (i == m, j == m) {
                        (false, false) => c[i][j],
                        (false, true) => -row_sums[i],
                        (true, false) => -row_sums[j],
                        (true, true) => total,
                    }
                })
                .collect()
        })
        .collect();
    let r = expand(&theta);
    let ratings = (0..players)
        .map(|i| {
            // `+ 0.0` turns a -0 into 0.
            let elo = r[i] * ELO_PER_NAT + 0.0;
            let se = covariance[i][i].max(0.0).sqrt();
            Rating { elo, se, low: elo - Z95 * se, high: elo + Z95 * se }
        })
        .collect();
    Ok(EloFit { ratings, covariance, prior_draws, iterations, log_likelihood: ll })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 400 log10(3): the Elo gap of a 75% score.
    const GAP_75: f64 = 190.848_501_887_865;

    fn pr(i: usize, j: usize, w: u32, d: u32, l: u32) -> PairResult {
        PairResult::new(i, j, w, d, l)
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() < tol
    }

    /// A field a brandubh tournament stopped on (six of its ten pairings played, 20 games each,
    /// draws among them): Newton's method reached the optimum, but its last steps were below
    /// what the log-likelihood's rounding can tell apart, so the step-halving search stalled
    /// and the fit reported that it had not converged.
    #[test]
    fn a_partial_round_robin_with_draws_converges() {
        let results = [
            PairResult::new(0, 1, 11, 0, 9),
            PairResult::new(0, 2, 14, 2, 4),
            PairResult::new(0, 3, 9, 0, 11),
            PairResult::new(0, 4, 10, 0, 10),
            PairResult::new(1, 2, 10, 4, 6),
            PairResult::new(1, 3, 7, 0, 13),
        ];
        let fit = fit_ratings(5, &results, DEFAULT_PRIOR_DRAWS).expect("a fit");
        // At the optimum the gradient is zero within the sum-zero plane: the same for every
        // player (only a shift of all ratings, which the anchor forbids, would gain).
        let model = Model { n: 5, results: &results, prior: DEFAULT_PRIOR_DRAWS };
        let r: Vec<f64> = fit.ratings.iter().map(|x| x.elo / ELO_PER_NAT).collect();
        let (g, _) = model.gradient_hessian(&r);
        assert!(g.iter().all(|x| (x - g[0]).abs() < 1e-9), "gradient {g:?}");
        assert!(fit.ratings[3].elo > fit.ratings[2].elo, "{:?}", fit.ratings);
    }

    #[test]
    fn a_75_percent_score_is_191_elo() {
        let f = fit_ratings(2, &[pr(0, 1, 75, 0, 25)], 0.0).unwrap();
        let gap = f.ratings[0].elo - f.ratings[1].elo;
        assert!(close(gap, GAP_75, 1e-6), "{gap}");
        assert!(close(f.ratings[0].elo, GAP_75 / 2.0, 1e-6), "anchored at the mean: {:?}", f.ratings);
        // Draws are half a point: 50 wins and 50 draws also score 75%.
        let g = fit_ratings(2, &[pr(0, 1, 50, 50, 0)], 0.0).unwrap();
        assert!(close(g.ratings[0].elo - g.ratings[1].elo, GAP_75, 1e-6));
        // From B's side, and split over two entries, the same.
        let h = fit_ratings(2, &[pr(1, 0, 10, 0, 30), pr(0, 1, 45, 0, 15)], 0.0).unwrap();
        assert!(close(h.ratings[0].elo - h.ratings[1].elo, GAP_75, 1e-6));
        // The default prior (one virtual draw each) moves 400 games by under 1 Elo.
        let p = fit_ratings(2, &[pr(0, 1, 300, 0, 100)], DEFAULT_PRIOR_DRAWS).unwrap();
        let gap = p.ratings[0].elo - p.ratings[1].elo;
        assert!(gap < GAP_75 && close(gap, GAP_75, 1.0), "{gap}");
    }

    #[test]
    fn intervals_come_from_the_fisher_information() {
        // 400 games at p = 3/4: the gap's variance is 1 / (400 p (1 - p)) nats squared, and
        // each rating, half the gap from the mean, has a quarter of it.
        let f = fit_ratings(2, &[pr(0, 1, 300, 0, 100)], 0.0).unwrap();
        let gap_se = ELO_PER_NAT / (400.0f64 * 0.75 * 0.25).sqrt();
        assert!(close(f.ratings[0].se, gap_se / 2.0, 1e-6), "{:?}", f.ratings[0]);
        assert!(close(f.ratings[0].high - f.ratings[0].elo, Z95 * gap_se / 2.0, 1e-6));
        let d = f.difference(0, 1);
        assert!(close(d.elo, GAP_75, 1e-6) && close(d.high - d.elo, Z95 * gap_se, 1e-6), "{d:?}");
        assert!(close(f.covariance[0][1], -f.covariance[0][0], 1e-6), "ratings summing to 0 move oppositely");
        // More games, narrower intervals.
        let g = fit_ratings(2, &[pr(0, 1, 3000, 0, 1000)], 0.0).unwrap();
        assert!(close(g.ratings[0].se * 10f64.sqrt(), f.ratings[0].se, 1e-6));
    }

    #[test]
    fn three_transitive_players_recover_their_ratings() {
        // Ratings 0, 400 log10 3 and 800 log10 3 give 75%, 75% and 90% (= 9 / (9 + 1))
        // scores; results that hit those exactly have the ratings as their exact maximum.
        let results = [pr(1, 0, 30, 0, 10), pr(2, 1, 30, 0, 10), pr(2, 0, 36, 0, 4)];
        let f = fit_ratings(3, &results, 0.0).unwrap();
        let want = [-GAP_75, 0.0, GAP_75];
        for (r, w) in f.ratings.iter().zip(want) {
            assert!(close(r.elo, w, 1e-6), "{:?}", f.ratings);
            assert!(r.low < r.elo && r.elo < r.high);
        }
        assert!(close(f.ratings.iter().map(|r| r.elo).sum::<f64>(), 0.0, 1e-9));
        assert!(f.iterations > 0 && f.iterations < 20, "{}", f.iterations);
    }

    #[test]
    fn the_fit_is_joint_not_pairwise() {
        // A never met C, yet A beat B and B beat C by 75%: the joint fit puts A two gaps
        // above C, with a wider interval on that gap than on a direct one.
        let f = fit_ratings(3, &[pr(0, 1, 30, 0, 10), pr(1, 2, 30, 0, 10)], 0.0).unwrap();
        let ac = f.difference(0, 2);
        let ab = f.difference(0, 1);
        assert!(close(ac.elo, 2.0 * GAP_75, 1e-6), "{ac:?}");
        assert!(ac.high - ac.low > ab.high - ab.low);
        // Adding a direct A-C result that agrees (90%) leaves the ratings, narrows the gap.
        let g = fit_ratings(3, &[pr(0, 1, 30, 0, 10), pr(1, 2, 30, 0, 10), pr(0, 2, 36, 0, 4)], 0.0).unwrap();
        let ac2 = g.difference(0, 2);
        assert!(close(ac2.elo, 2.0 * GAP_75, 1e-6) && ac2.high - ac2.low < ac.high - ac.low);
    }

    #[test]
    fn symmetric_results_give_equal_ratings() {
        for prior in [0.0, DEFAULT_PRIOR_DRAWS] {
            // A rock-paper-scissors cycle, and all-even pairings.
            let cycle = [pr(0, 1, 3, 0, 1), pr(1, 2, 3, 0, 1), pr(2, 0, 3, 0, 1)];
            let even = [pr(0, 1, 2, 2, 2), pr(0, 2, 1, 0, 1), pr(1, 2, 0, 4, 0)];
            for results in [&cycle[..], &even[..]] {
                let f = fit_ratings(3, results, prior).unwrap();
                for r in &f.ratings {
                    assert!(close(r.elo, 0.0, 1e-9), "{:?}", f.ratings);
                }
            }
        }
    }

    #[test]
    fn a_player_who_won_everything_stays_finite_with_the_prior() {
        let results = [pr(0, 1, 10, 0, 0), pr(0, 2, 10, 0, 0), pr(1, 2, 6, 0, 4)];
        assert_eq!(fit_ratings(3, &results, 0.0).unwrap_err(), FitError::Singular);
        let f = fit_ratings(3, &results, DEFAULT_PRIOR_DRAWS).unwrap();
        let r: Vec<f64> = f.ratings.iter().map(|r| r.elo).collect();
        assert!(r.iter().all(|x| x.is_finite()) && r[0] > r[1] && r[1] > r[2], "{r:?}");
        assert!(r[0] > 300.0 && r[0] < 2000.0, "{r:?}");
        assert!(f.ratings.iter().all(|x| x.se.is_finite() && x.se > 0.0));
        // Also a player who lost everything, and a field of two with one shut-out.
        let g = fit_ratings(2, &[pr(0, 1, 0, 0, 20)], DEFAULT_PRIOR_DRAWS).unwrap();
        assert!(g.ratings[0].elo < -200.0 && g.ratings[0].elo.is_finite());
    }

    #[test]
    fn bad_input_is_refused_and_tiny_fields_are_trivial() {
        assert!(matches!(fit_ratings(2, &[pr(0, 2, 1, 0, 0)], 1.0), Err(FitError::BadPair { index: 0, .. })));
        assert!(matches!(fit_ratings(2, &[pr(1, 1, 1, 0, 0)], 1.0), Err(FitError::BadPair { .. })));
        assert!(matches!(fit_ratings(2, &[], -1.0), Err(FitError::BadPrior(_))));
        assert_eq!(fit_ratings(1, &[], 1.0).unwrap().ratings[0].elo, 0.0);
        assert!(fit_ratings(0, &[], 1.0).unwrap().ratings.is_empty());
        // No games at all: the prior alone holds everyone at the mean.
        let f = fit_ratings(3, &[], 1.0).unwrap();
        assert!(f.ratings.iter().all(|r| r.elo == 0.0 && r.se > 0.0));
    }
}

//! Statistics of game results: Elo differences from scores.

/// Elo difference implied by a score in (0, 1) over `games` games; scores of 0 or 1 are
/// pulled in by half a game so the figure stays finite.
pub fn elo_from_score(score: f64, games: u32) -> f64 {
    let n = games.max(1) as f64;
    let s = score.clamp(0.5 / n, 1.0 - 0.5 / n);
    -400.0 * (1.0 / s - 1.0).log10()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elo_of_known_scores() {
        assert!(elo_from_score(0.5, 100).abs() < 1e-9);
        // 75% is about +190.8 Elo (400 log10 3).
        assert!((elo_from_score(0.75, 100) - 190.848).abs() < 1e-3);
        assert!((elo_from_score(0.25, 100) + 190.848).abs() < 1e-3);
        assert!(elo_from_score(1.0, 10).is_finite() && elo_from_score(1.0, 10) > 500.0);
    }
}

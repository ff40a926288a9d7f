//! Stored self-play games made up for tests: random legal games, as a worker would store them.

use tafl_lab::selfplay::shard::StoredGame;

/// A finished game of random legal moves (seeded) in the preset `variant`, stored in `slot`.
pub fn random_stored_game(variant: &str, seed: u64, slot: Option<u64>) -> StoredGame {
    use rand::{Rng, SeedableRng};
    let v = std::sync::Arc::new(tafl_lab::rules::Variant::preset(variant).expect("preset"));
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let mut pos = tafl_lab::rules::Position::start(v);
    let mut plies = Vec::new();
    while pos.outcome().is_none() {
        let moves = pos.legal_moves();
        let mv = moves[rng.gen_range(0..moves.len())];
        let policy = moves.iter().map(|&m| (m, 1.0 / moves.len() as f32)).collect();
        plies.push(tafl_lab::selfplay::PlyRecord { mv, policy, full: true, value: 0.0 });
        pos.play(mv).unwrap();
    }
    let g = tafl_lab::selfplay::FinishedGame { plies, outcome: pos.outcome().unwrap(), past: None };
    StoredGame::new(&g, slot)
}

//! Runs every line of `tests/fixtures/perft.txt`: anyone can add counts without writing code.

use std::sync::Arc;
use tafl_rules::perft::perft;
use tafl_rules::{Position, Variant};

#[test]
fn perft_fixtures_match() {
    let text = include_str!("fixtures/perft.txt");
    let mut checked = 0;
    let mut failures = Vec::new();
    for (no, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 4, "perft.txt line {}: expected variant depth leaves captures", no + 1);
        let (name, depth, leaves, captures): (&str, u32, u64, u64) = (f[0], f[1].parse().unwrap(), f[2].parse().unwrap(), f[3].parse().unwrap());
        let mut pos = Position::start(Arc::new(Variant::from_spec(name).unwrap()));
        let got = perft(&mut pos, depth);
        if (got.leaves, got.captures) != (leaves, captures) {
            failures.push(format!("{name} depth {depth}: expected {leaves} leaves / {captures} captures, got {} / {}", got.leaves, got.captures));
        }
        checked += 1;
    }
    assert!(checked >= 9, "fixture file lost its lines");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn divide_sums_to_perft() {
    let mut pos = Position::start(Arc::new(Variant::preset("brandubh").expect("preset")));
    let total: u64 = tafl_rules::perft::divide(&mut pos, 3).iter().map(|(_, s)| s.leaves).sum();
    assert_eq!(total, perft(&mut pos, 3).leaves);
}

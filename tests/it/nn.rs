//! The network layer: policy map, input planes and symmetries, forward shapes, the evaluator,
//! checkpoints.

use crate::common;

use common::{variant, variant_with};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tafl_lab::nn::checkpoint::{self, ModelMeta};
use tafl_lab::nn::encoding::{index_move, policy_index, policy_size, Encoder, Encoding};
use tafl_lab::nn::{NetConfig, NetEvaluator, NnError, Precision, Symmetry, TaflNet};
use tafl_lab::rules::ruleset::KingStrength;
use tafl_lab::rules::{Position, Variant};
use tafl_lab::search::{EvalRequest, Evaluator};
use tch::{Device, Tensor};

const TINY: NetConfig = NetConfig::new(1, 8);

/// Positions along a few random games (every 7th ply), start included.
fn sample_positions(v: &std::sync::Arc<Variant>, seed: u64) -> Vec<Position> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut out = Vec::new();
    for _ in 0..3 {
        let mut p = Position::start(v.clone());
        let mut ply = 0;
        while p.outcome().is_none() && ply < 150 {
            if ply % 7 == 0 {
                out.push(p.clone());
            }
            let moves = p.legal_moves();
            p.make(moves[rng.gen_range(0..moves.len())]);
            ply += 1;
        }
    }
    out
}

#[test]
fn policy_index_is_a_bijection_on_moves() {
    for name in ["brandubh", "copenhagen", "tablut"] {
        let v = variant(name);
        let g = v.geometry;
        let mut seen = vec![false; policy_size(g)];
        for p in sample_positions(&v, 1) {
            for m in p.legal_moves() {
                let i = policy_index(g, m);
                assert_eq!(index_move(g, i), Some(m), "{name} {m}");
                seen[i] = true;
            }
        }
        // Every on-board index decodes to a move that encodes back to it.
        for i in 0..policy_size(g) {
            if let Some(m) = index_move(g, i) {
                assert_eq!(policy_index(g, m), i);
            }
        }
        assert!(seen.iter().any(|&s| s));
    }
}

#[test]
fn planes_and_policy_commute_with_the_eight_symmetries() {
    for name in ["brandubh", "copenhagen", "tablut", "fetlar"] {
        let v = variant(name);
        let g = v.geometry;
        let encoders = Encoding::ALL.map(|e| Encoder::new(&v, e));
        assert!(Symmetry::ALL.iter().all(|s| s.preserves(&v)), "{name} is fully symmetric");
        for p in sample_positions(&v, 2) {
            let p0 = Position::from_setup(v.clone(), &p.to_setup()).unwrap();
            let planes = encoders.each_ref().map(|enc| enc.planes(&p0));
            let moves = p0.legal_moves();
            for s in Symmetry::ALL {
                let p1 = s.position(&p0);
                for (enc, planes) in encoders.iter().zip(&planes) {
                    assert_eq!(enc.planes(&p1), s.planes(g, planes), "{name} {s:?} planes of encoding {}", enc.encoding());
                }
                let mut mapped: Vec<_> = moves.iter().map(|&m| s.mv(g, m)).collect();
                mapped.sort();
                assert_eq!(p1.legal_moves(), mapped, "{name} {s:?} legal moves");
                // The policy's support follows the rules, not the map: a policy spread over
                // p0's legal moves, transformed, lies exactly on the legal moves that move
                // generation finds in the transformed position, with all its mass.
                let mut spread = vec![0.0; policy_size(g)];
                for (i, &m) in moves.iter().enumerate() {
                    spread[policy_index(g, m)] = (i + 1) as f32;
                }
                let t = s.policy(g, &spread);
                let support: Vec<usize> = (0..t.len()).filter(|&i| t[i] != 0.0).collect();
                let mut legal: Vec<usize> = p1.legal_moves().iter().map(|&m| policy_index(g, m)).collect();
                legal.sort();
                assert_eq!(support, legal, "{name} {s:?} policy support");
                assert_eq!(t.iter().sum::<f32>(), spread.iter().sum::<f32>());
            }
        }
    }
}

/// Symmetries checked against moves worked out by hand in notation, on brandubh (files a-g,
/// ranks 1-7): mirroring the files, mirroring the ranks, and transposing, for the policy
/// vector as well as for single moves.
#[test]
fn symmetry_maps_moves_and_policies_as_worked_out_by_hand() {
    let v = variant("brandubh");
    let g = v.geometry;
    let mv = |s: &str| tafl_lab::rules::notation::parse_move(s, g).unwrap().mv;
    // (symmetry, move, its image): bit 0 mirrors files (a<->g), bit 1 ranks (1<->7), bit 2
    // transposes first (file <-> rank).
    let cases = [
        (0, "b2-b5", "b2-b5"),
        (1, "b2-b5", "f2-f5"),
        (2, "b2-b5", "b6-b3"),
        (3, "b2-b5", "f6-f3"),
        (4, "b2-b5", "b2-e2"),
        (5, "b2-b5", "f2-c2"),
        (4, "a1-g1", "a1-a7"),
        (7, "c1-c3", "g5-e5"),
    ];
    for (s, from, to) in cases {
        let s = Symmetry(s);
        assert_eq!(s.mv(g, mv(from)), mv(to), "{s:?} {from}");
        let mut onehot = vec![0.0; policy_size(g)];
        onehot[policy_index(g, mv(from))] = 0.75;
        let t = s.policy(g, &onehot);
        let nonzero: Vec<usize> = (0..t.len()).filter(|&i| t[i] != 0.0).collect();
        assert_eq!(nonzero, vec![policy_index(g, mv(to))], "{s:?} {from} -> {to}");
        assert_eq!(t[policy_index(g, mv(to))], 0.75);
    }
    // Each symmetry is undone by its inverse (the transposing reflections and the identities
    // are their own inverses; the two rotations, 5 and 6, undo each other).
    let mut p = vec![0.0; policy_size(g)];
    for (i, x) in p.iter_mut().enumerate() {
        if tafl_lab::nn::encoding::index_move(g, i).is_some() {
            *x = i as f32;
        }
    }
    for (s, inv) in [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 6), (6, 5), (7, 7)] {
        assert_eq!(Symmetry(inv).policy(g, &Symmetry(s).policy(g, &p)), p, "{s} then {inv}");
    }
}

#[test]
fn symmetries_form_a_group_of_eight_distinct_maps() {
    let v = variant("copenhagen");
    let g = v.geometry;
    let images: Vec<Vec<_>> = Symmetry::ALL.iter().map(|s| g.squares().map(|q| s.square(g, q)).collect()).collect();
    for (i, a) in images.iter().enumerate() {
        for b in &images[i + 1..] {
            assert_ne!(a, b);
        }
    }
    let lopsided = Variant::from_toml_str(
        "name = \"lopsided\"\nbase = \"brandubh\"\nlayout = \"\"\"\n...a...\n...a...\n...d...\naadkdaa\n...d...\n.......\n...a.a.\n\"\"\"\n",
        "lopsided.toml",
    )
    .expect("lopsided layout is valid");
    assert!(!Symmetry(2).preserves(&lopsided), "a lopsided layout is not symmetric under a rank mirror");
    assert!(Symmetry(0).preserves(&lopsided));
}

#[test]
fn forward_shapes_and_masked_priors() {
    for (name, precision) in [("brandubh", Precision::Fp32), ("copenhagen", Precision::Fp32), ("brandubh", Precision::Bf16)] {
        let v = variant(name);
        let n = v.geometry.size() as i64;
        let net = TaflNet::new(v.geometry.size(), TINY, Device::Cpu);
        let x = Tensor::zeros([5, TINY.encoding.planes() as i64, n, n], (tch::Kind::Float, Device::Cpu));
        let (p, w) = net.forward_t(&x, false);
        assert_eq!(p.size(), vec![5, 4 * (n - 1), n, n]);
        assert_eq!(w.size(), vec![5, 3]);
        let mut ev = NetEvaluator::new(net, &v, precision);
        let positions = sample_positions(&v, 3);
        let moves: Vec<_> = positions.iter().map(|p| p.legal_moves()).collect();
        let reqs: Vec<_> = positions.iter().zip(&moves).map(|(p, m)| EvalRequest { position: p, moves: m }).collect();
        let evals = ev.evaluate(&reqs);
        assert_eq!(evals.len(), reqs.len());
        for (e, m) in evals.iter().zip(&moves) {
            assert_eq!(e.priors.len(), m.len());
            assert!((e.priors.iter().sum::<f32>() - 1.0).abs() < 1e-4);
            assert!(e.priors.iter().all(|&p| p > 0.0));
            assert!((e.wdl.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        }
    }
}

fn tmp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tafl-lab-nn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn checkpoint_round_trip_is_bit_exact() {
    let v = variant("brandubh");
    let net = TaflNet::new(7, NetConfig::new(2, 8), Device::Cpu);
    // Make the batch-norm statistics non-trivial: one training-mode pass updates them.
    let x = Tensor::randn([4, net.config.encoding.planes() as i64, 7, 7], (tch::Kind::Float, Device::Cpu));
    let _ = net.forward_t(&x, true);
    let meta = ModelMeta::new(&v, net.config, 3);
    let path = tmp("roundtrip.safetensors");
    checkpoint::save(&net, &meta, &path).unwrap();
    let (back, meta2) = checkpoint::load(&path, Some(&v), Device::Cpu).unwrap();
    assert_eq!(meta2, meta);
    let (a, b) = (net.vs.variables(), back.vs.variables());
    assert_eq!(a.len(), b.len());
    for (name, t) in &a {
        let u = &b[name];
        assert!(t.equal(u), "{name} differs");
    }
    let (p1, v1) = net.forward_t(&x, false);
    let (p2, v2) = back.forward_t(&x, false);
    assert!(p1.equal(&p2) && v1.equal(&v2), "outputs are bit-identical");
    // The file is safetensors with the metadata readable on its own.
    assert_eq!(checkpoint::read_meta(&path).unwrap().generation, 3);
}

#[test]
fn a_model_of_another_variant_is_refused() {
    let v = variant("brandubh");
    let net = TaflNet::new(7, TINY, Device::Cpu);
    let path = tmp("brandubh.safetensors");
    checkpoint::save(&net, &ModelMeta::new(&v, TINY, 0), &path).unwrap();
    let other_board = variant("copenhagen");
    let err = checkpoint::load(&path, Some(&other_board), Device::Cpu).unwrap_err();
    assert!(matches!(err, NnError::WrongVariant { .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("brandubh (7x7") && msg.contains("not copenhagen (11x11"), "{msg}");
    // Same board, different rules.
    let strong = variant_with("brandubh", |r| r.king_strength = KingStrength::Strong);
    let err = checkpoint::load(&path, Some(&strong), Device::Cpu).unwrap_err();
    assert!(matches!(err, NnError::WrongVariant { .. }), "{err}");
    assert!(!err.to_string().contains('\n'));
}

#[test]
fn broken_model_files_give_errors_not_panics() {
    let v = variant("brandubh");
    let missing = checkpoint::load(&tmp("nope.safetensors"), Some(&v), Device::Cpu).unwrap_err();
    assert!(missing.to_string().contains("nope.safetensors"), "{missing}");
    let garbage = tmp("garbage.safetensors");
    std::fs::write(&garbage, b"this is not a model").unwrap();
    let err = checkpoint::load(&garbage, Some(&v), Device::Cpu).unwrap_err();
    assert!(matches!(err, NnError::Format { .. }), "{err}");
    // A truncated file.
    let net = TaflNet::new(7, TINY, Device::Cpu);
    let good = tmp("good.safetensors");
    checkpoint::save(&net, &ModelMeta::new(&v, TINY, 0), &good).unwrap();
    let bytes = std::fs::read(&good).unwrap();
    let cut = tmp("cut.safetensors");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    assert!(matches!(checkpoint::load(&cut, Some(&v), Device::Cpu).unwrap_err(), NnError::Format { .. }));
}

//! Export for other engines: a traced TorchScript module, the weights as safetensors, a
//! `model.json` that states the whole I/O contract, and fixture inputs with the outputs
//! tafl-lab computes for them (so a port can check itself to 1e-4).
//!
//! The traced forward takes `[B, C, N, N]` (C the input planes of the model's encoding) and
//! returns one `[B, P + 3]` tensor: the flattened policy logits (P = 4 (N-1) N N), then the
//! win/draw/loss logits. (tch traces
//! closures with exactly one output list and frozen weights, so the two heads are joined;
//! `scripts/export-onnx.py` splits them again into named ONNX outputs.)

use crate::fsio::atomic_write;
use crate::nn::checkpoint::{self, write_tensors, ModelMeta};
use crate::nn::encoding::{policy_index, policy_size, Encoder, Encoding};
use crate::nn::NnError;
use crate::rules::notation::{position_string, rules_string};
use crate::rules::{Position, Variant};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tch::{CModule, Device, Kind, Tensor};

/// Number of fixture positions exported.
pub const FIXTURES: usize = 8;

/// Export failures, one line each.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Model(#[from] NnError),
    #[error("{path}: {message}")]
    Write { path: String, message: String },
}

fn werr(path: &Path, e: impl std::fmt::Display) -> ExportError {
    ExportError::Write { path: path.display().to_string(), message: e.to_string() }
}

/// What an export produced.
pub struct Exported {
    pub files: Vec<PathBuf>,
    pub meta: ModelMeta,
    pub weights_sha256: String,
}

/// The variant a model was trained for, rebuilt from its metadata.
pub fn model_variant(meta: &ModelMeta, path: &Path) -> Result<Variant, NnError> {
    let mut v = Variant::from_toml_str(&meta.variant_toml, &path.display().to_string())
        .map_err(|e| NnError::Format { path: path.to_path_buf(), message: format!("embedded variant: {e}") })?;
    v.name = meta.variant.clone();
    Ok(v)
}

/// Fixture positions: the start and positions along one seeded random game.
pub fn fixture_positions(variant: &Arc<Variant>) -> Vec<Position> {
    let mut rng = SmallRng::seed_from_u64(2024);
    let mut pos = Position::start(variant.clone());
    let mut out = vec![pos.clone()];
    while out.len() < FIXTURES {
        if pos.is_over() {
            pos = Position::start(variant.clone());
        }
        for _ in 0..3 {
            let moves = pos.legal_moves();
            if pos.is_over() || moves.is_empty() {
                break;
            }
            pos.make(moves[rng.gen_range(0..moves.len())]);
        }
        if !pos.is_over() {
            out.push(pos.clone());
        }
    }
    out
}

/// What `model.json` says about the planes that are not plain 0/1 maps of pieces or squares.
fn plane_notes(encoding: Encoding) -> serde_json::Value {
    let mut notes = json!({
        "attackers_to_move": "all ones when the attackers are to move, all zeros otherwise",
        "repeated": "all ones when the current position occurred before since the last capture",
        "ply_progress": "ply / ply_cap everywhere (ply_cap from the rules; 0 means 4 * N * N)",
        "board": "all ones"
    });
    if encoding == Encoding::V2 {
        let more = json!({
            "tactics": "the planes after board are computed for both sides whoever is to move, from the board and the rules alone (no history): each side's legal moves, and the captures and game ends the rules give when a move is made",
            "king_moves": "squares the king can move to",
            "king_moves_2": "squares the king reaches with a second move (after a first that does not end the game; an armed king's first move captures), not in king_moves and not its own square",
            "escape_now": "escape squares in king_moves",
            "escape_two": "escape squares in king_moves_2",
            "attackers_capturable": "attackers that some defender's move (the king's included) would capture",
            "defenders_capturable": "defenders that some attacker's move would capture, and the king where an attacker's move captures it",
            "attacker_reach": "squares some attacker can move to",
            "defender_reach": "squares some defender or the king can move to",
            "king_neighbours_hostile": "squares beside the king holding an attacker, or empty and hostile to the king by the rules (throne, corners and camps hostile to defenders)"
        });
        let (serde_json::Value::Object(n), serde_json::Value::Object(m)) = (&mut notes, more) else { unreachable!("objects") };
        n.extend(m);
    }
    notes
}

/// Exports the model at `model` into `out`.
pub fn export(model: &Path, out: &Path) -> Result<Exported, ExportError> {
    let model = checkpoint::resolve(model)?;
    // Without the ownership head a run may have trained: the exported network is the one
    // agents evaluate, and its files describe that.
    let inference = checkpoint::read_meta(&model)?.net.with_ownership(false);
    let (mut net, meta) = checkpoint::load_as(&model, None, inference, Device::Cpu)?;
    let variant = Arc::new(model_variant(&meta, &model)?);
    std::fs::create_dir_all(out).map_err(|e| werr(out, e))?;
    net.vs.freeze();
    let g = variant.geometry;
    let n = g.size() as i64;
    let encoding = meta.net.encoding;
    let enc = Encoder::new(&variant, encoding);
    let positions = fixture_positions(&variant);
    let mut input = vec![0f32; positions.len() * enc.len()];
    for (p, chunk) in positions.iter().zip(input.chunks_exact_mut(enc.len())) {
        enc.encode(p, chunk);
    }
    let x = Tensor::from_slice(&input).view([positions.len() as i64, encoding.planes() as i64, n, n]);
    let mut files = Vec::new();

    // TorchScript, traced.
    let traced = tch::no_grad(|| CModule::create_by_tracing("TaflNet", "forward", &[x.shallow_clone()], &mut |inp| vec![net.forward_flat(&inp[0])]))
        .map_err(|e| werr(&out.join("model.pt"), e))?;
    let pt = out.join("model.pt");
    let tmp = out.join(format!(".model.pt.tmp{}", std::process::id()));
    traced.save(&tmp).map_err(|e| werr(&pt, e))?;
    std::fs::rename(&tmp, &pt).map_err(|e| werr(&pt, e))?;
    files.push(pt);

    // Weights and their digest.
    let weights = out.join("weights.safetensors");
    let json_meta = serde_json::to_string(&meta).expect("metadata serializes");
    write_tensors(&weights, net.vs.variables().into_iter().collect(), Some(json_meta))?;
    let bytes = std::fs::read(&weights).map_err(|e| werr(&weights, e))?;
    let sha = format!("{:x}", Sha256::digest(&bytes));
    files.push(weights);

    // Fixtures: inputs and the outputs computed here.
    let y = tch::no_grad(|| net.forward_flat(&x)).to_kind(Kind::Float);
    let fixtures = out.join("fixtures.safetensors");
    write_tensors(&fixtures, vec![("input".into(), x.shallow_clone()), ("output".into(), y)], None)?;
    files.push(fixtures);

    let p = policy_size(g);
    let example_move = positions[0].legal_moves()[0];
    let rules = rules_string(&variant);
    let doc = json!({
        "format": "tafl-lab-export/1",
        "variant": meta.variant,
        "generation": meta.generation,
        "board_size": g.size(),
        "rules_fingerprint": meta.rules_fingerprint,
        "rules_toml": variant.to_toml(),
        "rules_opentafl": rules.as_ref().ok(),
        "rules_opentafl_error": rules.as_ref().err().map(ToString::to_string),
        "encoding_version": encoding.version(),
        "input": {
            "name": "planes",
            "shape": ["B", encoding.planes(), g.size(), g.size()],
            "dtype": "float32",
            "layout": "planes[c][rank][file]; rank 0 is rank 1 (the first row of an OpenTafl position string), file 0 is file a",
            "planes": encoding.plane_names(),
            "notes": plane_notes(encoding),
        },
        "output": {
            "name": "output",
            "shape": ["B", p + 3],
            "policy": {
                "offset": 0,
                "length": p,
                "layout": format!("[4 * (N - 1), N, N] = [{}, {}, {}], flattened", 4 * (g.size() as usize - 1), g.size(), g.size()),
                "index": "(direction * (N - 1) + distance - 1) * N * N + from_rank * N + from_file; direction 0 north (rank +1), 1 east (file +1), 2 south, 3 west",
                "semantics": "logits; mask illegal moves, then softmax over the legal ones",
                "example": {
                    "position": position_string(&positions[0]),
                    "move": example_move.to_string(),
                    "index": policy_index(g, example_move),
                },
            },
            "wdl": {
                "offset": p,
                "length": 3,
                "semantics": "logits of win, draw, loss for the side to move; softmax; value = P(win) - P(loss)"
            }
        },
        "architecture": {
            "kind": "resnet",
            "blocks": meta.net.blocks,
            "channels": meta.net.channels,
            "parameters": net.parameter_count(),
            "policy_head": "1x1 conv (C) + BN + ReLU, 1x1 conv (4(N-1)) with bias",
            "value_head": if meta.net.value_per_side {
                "1x1 conv (4) + BN + ReLU, linear (64) + ReLU, linear (6): rows 0-2 are the logits when input plane 6 (attackers_to_move) is 1, rows 3-5 when it is 0"
            } else {
                "1x1 conv (4) + BN + ReLU, linear (64) + ReLU, linear (3)"
            },
            "value_per_side": meta.net.value_per_side,
            "batch_norm_eps": 1e-5
        },
        "weights_sha256": sha,
        "files": {
            "model.pt": "TorchScript (traced), input planes -> output",
            "weights.safetensors": "the same weights by name, with the tafl_lab metadata",
            "fixtures.safetensors": "input [K, C, N, N] and the output tafl-lab computes for it",
        },
        "fixtures": {
            "count": positions.len(),
            "positions": positions.iter().map(|p| json!({"position": position_string(p), "to_move": p.to_move().name(), "ply": p.ply()})).collect::<Vec<_>>(),
            "tolerance": 1e-4,
        },
    });
    let mj = out.join("model.json");
    atomic_write(&mj, (serde_json::to_string_pretty(&doc).expect("serializes") + "\n").as_bytes()).map_err(|e| werr(&mj, e))?;
    files.push(mj);
    Ok(Exported { files, meta, weights_sha256: sha })
}

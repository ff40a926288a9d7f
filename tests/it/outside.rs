//! The model outside tafl-lab: export (TorchScript, safetensors, model.json, fixtures), the
//! ONNX script, the OpenTafl Engine Protocol through a scripted host, and `play` in a
//! terminal driven by a script.

use crate::common;

use common::cli::{bin, scratch};
use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use tafl_lab::rules::notation::{parse_move, position_string, rules_string};
use tafl_lab::rules::{Position, Side, Variant};

fn dir(tag: &str) -> PathBuf {
    let d = scratch(&format!("outside-{tag}"));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn tiny_model(d: &Path, variant: &str) -> PathBuf {
    let m = d.join(format!("{variant}.safetensors"));
    common::cli::new_model(&m, variant);
    m
}

#[test]
fn export_writes_the_contract_and_fixtures_that_torchscript_reproduces() {
    let d = dir("export");
    let model = tiny_model(&d, "brandubh");
    let out = d.join("export");
    let o = bin().args(["export", "--model", model.to_str().unwrap(), "--out", out.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("model.json")).unwrap()).unwrap();
    let p = 4 * 6 * 49;
    assert_eq!(meta["output"]["policy"]["length"], p);
    assert_eq!(meta["output"]["wdl"]["offset"], p);
    // A new model encodes with the newest input planes.
    let planes = tafl_lab::nn::encoding::Encoding::NEWEST.planes();
    assert_eq!(meta["input"]["planes"].as_array().unwrap().len(), planes);
    assert_eq!(meta["input"]["shape"][1], planes);
    assert_eq!(meta["variant"], "brandubh");
    assert!(meta["rules_opentafl"].as_str().unwrap().starts_with("dim:7"));
    let sha = format!("{:x}", Sha256::digest(std::fs::read(out.join("weights.safetensors")).unwrap()));
    assert_eq!(meta["weights_sha256"], sha);
    // The worked example's index follows the documented formula.
    let ex = &meta["output"]["policy"]["example"];
    let v = Arc::new(Variant::preset("brandubh").expect("preset"));
    let g = v.geometry;
    let mv = parse_move(ex["move"].as_str().unwrap(), g).unwrap().mv;
    let (n, d_idx) = (7usize, mv.direction().unwrap().index());
    let want = (d_idx * (n - 1) + mv.distance() as usize - 1) * n * n + mv.from.rank() as usize * n + mv.from.file() as usize;
    assert_eq!(ex["index"], want);
    // model.pt run through LibTorch gives the saved fixture outputs.
    let fixtures = tch::Tensor::read_safetensors(out.join("fixtures.safetensors")).unwrap();
    let get = |name: &str| fixtures.iter().find(|(k, _)| k == name).unwrap().1.shallow_clone();
    let (x, y) = (get("input"), get("output"));
    assert_eq!(x.size(), vec![8, planes as i64, 7, 7]);
    assert_eq!(y.size(), vec![8, p as i64 + 3]);
    let module = tch::CModule::load(out.join("model.pt")).unwrap();
    let got = tch::no_grad(|| module.forward_ts(&[x])).unwrap();
    let diff = (got - y).abs().max().double_value(&[]);
    assert!(diff <= 1e-5, "TorchScript differs by {diff}");
    // A bad model path is a one-line error.
    let o = bin().args(["export", "--model", "/nonexistent/m.safetensors", "--out", out.to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/m.safetensors"));
}

/// A network with per-side values exports as one: model.json describes its six-row value
/// layer, and the traced TorchScript reproduces the fixtures for positions of both sides to
/// move (the two sides' rows made to differ, so a trace that froze one side's choice fails).
#[test]
fn a_per_side_value_network_exports_and_traces_both_sides() {
    use tafl_lab::nn::checkpoint;
    let d = dir("export-per-side");
    let plain = tiny_model(&d, "brandubh");
    let arch = checkpoint::read_meta(&plain).unwrap().net.with_value_per_side(true);
    let (mut net, meta) = checkpoint::load_as(&plain, None, arch, tch::Device::Cpu).unwrap();
    tch::no_grad(|| {
        let mut vars = net.vs.variables();
        let _ = vars.get_mut("value_out.bias").unwrap().narrow(0, 3, 3).g_add_scalar_(0.75);
    });
    net.vs.freeze();
    let model = d.join("per-side.safetensors");
    checkpoint::save(&net, &meta, &model).unwrap();
    let out = d.join("export");
    let o = bin().args(["export", "--model", model.to_str().unwrap(), "--out", out.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("with per-side values"));
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("model.json")).unwrap()).unwrap();
    assert_eq!(doc["architecture"]["value_per_side"], true);
    assert!(doc["architecture"]["value_head"].as_str().unwrap().contains("linear (6)"));
    let fixtures = tch::Tensor::read_safetensors(out.join("fixtures.safetensors")).unwrap();
    let get = |name: &str| fixtures.iter().find(|(k, _)| k == name).unwrap().1.shallow_clone();
    let (x, y) = (get("input"), get("output"));
    let sides: Vec<f64> = (0..x.size()[0]).map(|i| x.double_value(&[i, 6, 0, 0])).collect();
    assert!(sides.contains(&1.0) && sides.contains(&0.0), "fixtures of both sides to move: {sides:?}");
    let module = tch::CModule::load(out.join("model.pt")).unwrap();
    let got = tch::no_grad(|| module.forward_ts(&[x])).unwrap();
    let diff = (got - y).abs().max().double_value(&[]);
    assert!(diff <= 1e-5, "TorchScript differs by {diff}");
}

#[test]
fn the_onnx_script_passes_its_checks() {
    let d = dir("onnx");
    let model = tiny_model(&d, "brandubh");
    let out = d.join("export");
    assert!(bin().args(["export", "--model", model.to_str().unwrap(), "--out", out.to_str().unwrap()]).status().unwrap().success());
    // scripts/test.sh puts the project's Python (the torch virtualenv) first on PATH.
    let o = Command::new("python").args(["scripts/export-onnx.py", out.to_str().unwrap()]).output().expect("the project's python runs");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "stdout: {text}\nstderr: {}", String::from_utf8_lossy(&o.stderr));
    assert!(text.contains("all checks passed"), "{text}");
    assert!(out.join("model.onnx").is_file());
}

/// An engine process with line-oriented I/O.
struct Eng {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Eng {
    fn start(args: &[&str]) -> Eng {
        let mut child = bin().arg("engine").args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut e = Eng { child, stdin, stdout };
        assert_eq!(e.read(), "hello");
        assert_eq!(e.read(), "simple-moves on");
        e
    }
    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }
    fn read(&mut self) -> String {
        let mut s = String::new();
        assert!(self.stdout.read_line(&mut s).unwrap() > 0, "the engine closed its output");
        s.trim_end().to_string()
    }
    fn ask(&mut self, line: &str) -> String {
        self.send(line);
        self.read()
    }
    fn finish(mut self) {
        self.send("goodbye");
        let status = self.child.wait().unwrap();
        assert!(status.success(), "engine exit {status}");
    }
}

#[test]
fn a_whole_game_through_the_protocol() {
    let d = dir("engine-game");
    let model = tiny_model(&d, "brandubh");
    let v = Arc::new(Variant::preset("brandubh").expect("preset"));
    let rules = rules_string(&v).unwrap();
    let mut att = Eng::start(&["--model", model.to_str().unwrap(), "--sims", "16", "--device", "cpu"]);
    let mut def = Eng::start(&["--sims", "30"]);
    for (e, side) in [(&mut att, "attackers"), (&mut def, "defenders")] {
        e.send("hello");
        e.send(&format!("rules {rules}"));
        e.send(&format!("side {side}"));
        e.send("start");
    }
    let mut pos = Position::start(v.clone());
    let mut plies = 0;
    while pos.outcome().is_none() {
        let (mover, other, name) = if pos.to_move() == Side::Attackers { (&mut att, &mut def, "attackers") } else { (&mut def, &mut att, "defenders") };
        mover.send("clock 2000 2000 0 0 0");
        let reply = mover.ask(&format!("play {name}"));
        let mv = reply.strip_prefix("move ").unwrap_or_else(|| panic!("expected a move, got {reply:?}"));
        let m = parse_move(mv, v.geometry).unwrap().mv;
        pos.play(m).unwrap_or_else(|e| panic!("engine played an illegal move {mv}: {e}"));
        other.send(&format!("opponent-move {mv} {}", position_string(&pos)));
        plies += 1;
    }
    let code = match pos.outcome().unwrap().winner {
        Some(Side::Attackers) => 2,
        Some(Side::Defenders) => 3,
        None => 1,
    };
    assert!(plies > 0);
    for e in [&mut att, &mut def] {
        e.send(&format!("finish {code}"));
    }
    // After `finish` an engine is ready for a new game: it answers from the start position.
    let reply = att.ask("play attackers");
    assert!(reply.starts_with("move "), "{reply}");
    att.finish();
    def.finish();
}

#[test]
fn illegal_moves_bad_rules_and_malformed_lines_get_error_replies() {
    let d = dir("engine-errors");
    let model = tiny_model(&d, "brandubh");
    let mut e = Eng::start(&["--model", model.to_str().unwrap(), "--sims", "8", "--device", "cpu"]);
    // OTEP gives an engine two error codes: 0 (non-critical) and -1 (critical).
    assert!(e.ask("opponent-move a1-a2").starts_with("error 0 "), "an illegal move is refused");
    assert!(e.ask("opponent-move d4-d9").starts_with("error 0 "), "an off-board move");
    for bad in ["frobnicate", "play sideways", "clock ten twenty", "analyze", "analyze 3 x", "side up", "position ///"] {
        let r = e.ask(bad);
        assert!(r.starts_with("error 0 "), "{bad:?} -> {r}");
    }
    let cph = rules_string(&Variant::preset("copenhagen").expect("preset")).unwrap();
    let r = e.ask(&format!("rules {cph}"));
    assert!(r.starts_with("error 0 ") && r.contains("brandubh"), "rules of another variant: {r}");
    // No move on the board of the last game: a critical error, which ends the game in OpenTafl.
    let r = e.ask("play attackers");
    assert!(r.starts_with("error -1 ") && r.contains("rules not supported"), "{r}");
    assert!(e.ask("rules dim:8 nonsense").starts_with("error 0 "));
    // The model's own rules again: play resumes from their start.
    let own = rules_string(&Variant::preset("brandubh").expect("preset")).unwrap();
    e.send(&format!("rules {own}"));
    let r = e.ask("analyze 3 0.2");
    assert!(r.starts_with("analysis "), "{r}");
    let n: usize = r.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!((1..=3).contains(&n));
    // Still playing after all that.
    assert!(e.ask("play attackers").starts_with("move "));
    e.finish();
    // Without a model any rules OpenTafl can state are accepted.
    let mut m = Eng::start(&["--sims", "8"]);
    m.send(&format!("rules {cph}"));
    assert!(m.ask("play attackers").starts_with("move "));
    m.finish();
}

#[test]
fn play_in_a_terminal_driven_by_a_script() {
    let script = "moves\nd2-b2\nundo\nhint\na1-a2\nnonsense\nd2-b2\nquit\n";
    let mut child = bin()
        .args(["play", "--variant", "brandubh", "--side", "attackers", "--sims", "30", "--seed", "3"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(script.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("    a b c d e f g"), "coordinates: {out}");
    assert!(out.contains("legal moves: ") && out.contains("d2-b2"), "{out}");
    assert_eq!(out.matches("AI plays ").count(), 2, "the AI answered each of the two moves: {out}");
    assert!(out.contains("took back your last move"), "{out}");
    assert!(out.contains("hint: "), "{out}");
    assert!(out.contains("illegal move: "), "{out}");
    assert!(out.contains("not a move: "), "{out}");
    assert!(out.contains(" D ") || out.contains(" K ") || out.contains(" D\n") || out.contains(" K\n"), "the AI's moved piece is marked: {out}");
    assert!(out.contains(" * ") || out.contains(" *\n") || out.contains("* "), "the square it left is marked: {out}");
    assert!(out.contains("bye"));
    // A game to the end: the human side plays random legal moves read from `moves`.
    let mut child =
        bin().args(["play", "--variant", "brandubh", "--side", "defenders", "--sims", "20"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    // Reads up to the next prompt; None at the end of the output.
    let mut until_prompt = |transcript: &mut String| -> Option<String> {
        let mut buf = Vec::new();
        loop {
            let mut byte = [0u8; 1];
            if std::io::Read::read(&mut reader, &mut byte).unwrap() == 0 {
                transcript.push_str(&String::from_utf8_lossy(&buf));
                return None;
            }
            buf.push(byte[0]);
            if buf.ends_with(b"(defenders): ") {
                let text = String::from_utf8_lossy(&buf).into_owned();
                transcript.push_str(&text);
                return Some(text);
            }
        }
    };
    let mut transcript = String::new();
    while until_prompt(&mut transcript).is_some() {
        writeln!(stdin, "moves").unwrap();
        let listing = until_prompt(&mut transcript).expect("a prompt after the listing");
        let legal = listing.lines().find_map(|l| l.split("legal moves: ").nth(1)).expect("a move listing");
        writeln!(stdin, "{}", legal.split_whitespace().next().unwrap()).unwrap();
    }
    assert!(child.wait().unwrap().success());
    assert!(transcript.contains("game over: "), "{transcript}");
}

/// scripts/compare-weights.py names what moved: a copy of a model with one tensor doubled
/// shows that tensor first at a relative change of 1 and every other at 0; a missing file is a
/// one-line error.
#[test]
fn the_weight_comparison_script_names_the_tensor_that_moved() {
    let d = dir("compare-weights");
    let model = tiny_model(&d, "brandubh");
    let tensors = tch::Tensor::read_safetensors(&model).unwrap();
    assert!(tensors.iter().any(|(k, _)| k == "value_out.bias"), "the model has a value output bias");
    let moved: Vec<(String, tch::Tensor)> = tensors.iter().map(|(k, t)| (k.clone(), if k == "value_out.bias" { t * 2.0 } else { t.shallow_clone() })).collect();
    let other = d.join("moved.safetensors");
    tch::Tensor::write_safetensors(&moved, &other).unwrap();
    let o = Command::new("python")
        .args(["scripts/compare-weights.py", model.to_str().unwrap(), other.to_str().unwrap(), "--all"])
        .output()
        .expect("the project's python runs");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "stdout: {text}\nstderr: {}", String::from_utf8_lossy(&o.stderr));
    let rows: Vec<(&str, f64)> = text
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| {
            let mut f = l.split_whitespace();
            (f.next().unwrap(), f.next().unwrap().parse().unwrap())
        })
        .collect();
    assert_eq!(rows[0], ("value_out.bias", 1.0), "{text}");
    assert!(rows.len() > 10 && rows[1..].iter().all(|&(_, r)| r == 0.0), "{text}");
    assert!(text.contains("stem_bn") && text.contains("batch-norm running statistics"), "{text}");
    let o =
        Command::new("python").args(["scripts/compare-weights.py", model.to_str().unwrap(), d.join("none.safetensors").to_str().unwrap()]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.trim().lines().count() == 1 && err.contains("none.safetensors"), "{err}");
}

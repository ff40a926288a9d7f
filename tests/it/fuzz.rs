//! Fuzz-style tests over every parser that reads outside text or bytes: position strings, move
//! records and game records, OpenTafl rules strings, variant and run-config TOML, engine
//! protocol lines, agent specs, checkpoint files and shard files.
//!
//! Inputs come from a seeded generator: real, valid examples (preset TOML, the exporter's
//! rules strings, saved shards and checkpoints, moves of played games) mutated structurally
//! (bytes flipped, inserted and deleted, tokens spliced and swapped, numbers replaced by
//! extremes such as `nan`, `-1`, `1e300` and `18446744073709551616`, huge lengths), so that
//! most mutations get past the first check. Every input must give an error or a value, never a
//! panic; each panic is caught and reported with its input.
//!
//! Each test prints a line per parser to standard error (`cargo test --release --test it fuzz:: --
//! --nocapture` shows them): `fuzz: <parser>: N inputs, E errors, V values (T s)`. The
//! counts are small enough for the file to run in a few seconds in release builds; set
//! `TAFL_FUZZ_SCALE` (a multiplier, default 1) and `TAFL_FUZZ_SEED` to fuzz longer or afresh.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tafl_lab::arena::AgentSpec;
use tafl_lab::engine::{Engine, EngineConfig, TimeControl};
use tafl_lab::nn::checkpoint::{self, ModelMeta};
use tafl_lab::nn::encoding::Encoding;
use tafl_lab::nn::{NetConfig, TaflNet};
use tafl_lab::rules::notation::{parse_move, parse_position, parse_position_string, parse_rules_string, position_string, rules_string, split_moves};
use tafl_lab::rules::ruleset::fnv1a;
use tafl_lab::rules::variant::PRESETS;
use tafl_lab::rules::{Geometry, MoveError, Position, Side, Variant};
use tafl_lab::selfplay::shard::{self, pack, Shard, StoredGame, StoredPly};
use tafl_lab::train::config::{RunConfig, DEFAULT_CONFIG};

// ----- harness ------------------------------------------------------------------------------

fn scale() -> usize {
    std::env::var("TAFL_FUZZ_SCALE").ok().and_then(|s| s.parse().ok()).filter(|&n| n > 0).unwrap_or(1)
}

fn rng(salt: u64) -> SmallRng {
    let seed = std::env::var("TAFL_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x7af1_1ab5_u64);
    SmallRng::seed_from_u64(seed ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// Counts of one parser's run, and the inputs that panicked.
struct Tally {
    name: &'static str,
    inputs: usize,
    errors: usize,
    values: usize,
    panics: Vec<(String, String)>,
    started: std::time::Instant,
}

impl Tally {
    fn new(name: &'static str) -> Tally {
        Tally { name, inputs: 0, errors: 0, values: 0, panics: Vec::new(), started: std::time::Instant::now() }
    }

    /// Runs `f` on one input (`shown` describes it); `f` says whether it gave a value.
    fn run(&mut self, shown: impl FnOnce() -> String, f: impl FnOnce() -> bool) -> Option<bool> {
        self.inputs += 1;
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(true) => {
                self.values += 1;
                Some(true)
            }
            Ok(false) => {
                self.errors += 1;
                Some(false)
            }
            Err(p) => {
                let msg =
                    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_else(|| "(no message)".into());
                self.panics.push((shown(), msg.chars().take(300).collect()));
                None
            }
        }
    }

    /// Prints the counts and fails on any panic, naming the inputs.
    fn finish(self) {
        eprintln!(
            "fuzz: {}: {} inputs, {} errors, {} values ({:.2} s)",
            self.name,
            self.inputs,
            self.errors,
            self.values,
            self.started.elapsed().as_secs_f64()
        );
        if !self.panics.is_empty() {
            let shown: Vec<String> = self.panics.iter().take(5).map(|(input, msg)| format!("  input {input}\n  panic: {msg}")).collect();
            panic!("{}: {} of {} inputs panicked:\n{}", self.name, self.panics.len(), self.inputs, shown.join("\n"));
        }
        assert!(self.values > 0 && self.errors > 0, "{}: the inputs should reach both outcomes", self.name);
    }
}

/// Numbers and text that break careless parsers.
const EXTREMES: &[&str] = &[
    "nan",
    "NaN",
    "-nan",
    "inf",
    "-inf",
    "infinity",
    "-1",
    "-0",
    "0",
    "00",
    "1e300",
    "-1e300",
    "1e-300",
    "1e309",
    "18446744073709551616",
    "18446744073709551615",
    "9223372036854775808",
    "-9223372036854775809",
    "4294967296",
    "4294967295",
    "2147483648",
    "65536",
    "256",
    "255",
    "20",
    "19",
    "99999999999999999999999999999",
    "0x10",
    "1_0",
    "+5",
    "5.",
    ".5",
    "",
    " ",
    "\t",
    "\n",
    "\u{0}",
    "\u{feff}",
    "é",
    "\u{1d538}",
    "\"",
    "'",
    "\\",
    "[",
    "]",
    "{",
    "}",
    "=",
    ":",
    ",",
    "/",
    "-",
    "x",
    "#",
    "true",
    "null",
];

/// Structured mutation of valid examples.
struct Mutator {
    rng: SmallRng,
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'+' || b >= 0x80
}

impl Mutator {
    fn new(salt: u64) -> Mutator {
        Mutator { rng: rng(salt) }
    }

    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.rng.gen_range(0..v.len())]
    }

    fn extreme(&mut self) -> String {
        if self.rng.gen_bool(0.15) {
            // A long run: a huge count, a long letter run, or a long token.
            let unit = *self.pick(&["9", "a", "1", "t", "K", "/", "0", "z", "-"]);
            unit.repeat(self.rng.gen_range(20..300))
        } else {
            self.pick(EXTREMES).to_string()
        }
    }

    /// A token span (a maximal run of letters, digits and `._+`) at a random place.
    fn token_span(&mut self, b: &[u8]) -> Option<(usize, usize)> {
        if b.is_empty() {
            return None;
        }
        let mut i = self.rng.gen_range(0..b.len());
        for _ in 0..b.len() {
            if is_token_byte(b[i]) {
                break;
            }
            i = (i + 1) % b.len();
        }
        if !is_token_byte(b[i]) {
            return None;
        }
        let (mut s, mut e) = (i, i);
        while s > 0 && is_token_byte(b[s - 1]) {
            s -= 1;
        }
        while e < b.len() && is_token_byte(b[e]) {
            e += 1;
        }
        Some((s, e))
    }

    /// A digit run at a random place.
    fn digit_span(&mut self, b: &[u8]) -> Option<(usize, usize)> {
        let starts: Vec<usize> = (0..b.len()).filter(|&i| b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_digit())).collect();
        if starts.is_empty() {
            return None;
        }
        let s = *self.pick(&starts);
        let mut e = s;
        while e < b.len() && b[e].is_ascii_digit() {
            e += 1;
        }
        Some((s, e))
    }

    /// One to three mutations of `seed`; `dict` adds tokens of the input's own language.
    fn mutate_bytes(&mut self, seed: &[u8], dict: &[&str]) -> Vec<u8> {
        let mut b = seed.to_vec();
        for _ in 0..self.rng.gen_range(1..=3) {
            let len = b.len();
            let at = if len == 0 { 0 } else { self.rng.gen_range(0..len) };
            let token = if !dict.is_empty() && self.rng.gen_bool(0.5) { self.pick(dict).to_string() } else { self.extreme() };
            match self.rng.gen_range(0..11) {
                0 if len > 0 => b[at] ^= 1 << self.rng.gen_range(0..8),
                1 => {
                    let c = *self.pick(b" \n\t:/,=-x.0123456789atdkKT\"[]{}#\\\x00\xff");
                    b.insert(at, c);
                }
                2 if len > 0 => {
                    let end = (at + self.rng.gen_range(1..8)).min(len);
                    b.drain(at..end);
                }
                3 if len > 0 => {
                    let end = (at + self.rng.gen_range(1..16)).min(len);
                    let piece = b[at..end].to_vec();
                    let to = self.rng.gen_range(0..=len);
                    b.splice(to..to, piece);
                }
                4 | 5 => {
                    if let Some((s, e)) = self.digit_span(&b) {
                        b.splice(s..e, self.extreme().into_bytes());
                    } else {
                        b.splice(at..at, token.into_bytes());
                    }
                }
                6 => {
                    b.splice(at..at, token.into_bytes());
                }
                7 | 8 => {
                    if let Some((s, e)) = self.token_span(&b) {
                        b.splice(s..e, token.into_bytes());
                    }
                }
                9 => {
                    // Swap two tokens.
                    if let (Some((s1, e1)), Some((s2, e2))) = (self.token_span(&b), self.token_span(&b)) {
                        if e1 <= s2 {
                            let (t1, t2) = (b[s1..e1].to_vec(), b[s2..e2].to_vec());
                            b.splice(s2..e2, t1);
                            b.splice(s1..e1, t2);
                        }
                    }
                }
                _ => b.truncate(at),
            }
        }
        b
    }

    fn mutate(&mut self, seed: &str, dict: &[&str]) -> String {
        String::from_utf8_lossy(&self.mutate_bytes(seed.as_bytes(), dict)).into_owned()
    }

    /// Random bytes of printable ASCII and a few specials.
    fn noise(&mut self, max: usize) -> String {
        let n = self.rng.gen_range(0..max);
        (0..n).map(|_| *self.pick(&[' ', '/', '-', ':', 'a', 'd', '1', '9', 'K', 't', 'T', 'x', '=', ',', '.', '\n', 'é'])).collect()
    }
}

fn presets() -> Vec<Arc<Variant>> {
    PRESETS.iter().map(|(n, _)| Arc::new(Variant::preset(n).expect("preset"))).collect()
}

/// Positions along a random game of `v` (every `every`th ply), start included, and the moves.
fn random_game(v: &Arc<Variant>, rng: &mut SmallRng, max_plies: usize) -> (Vec<Position>, Vec<String>) {
    let mut p = Position::start(v.clone());
    let mut positions = vec![p.clone()];
    let mut records = Vec::new();
    while !p.is_over() && records.len() < max_plies {
        let moves = p.legal_moves();
        let m = moves[rng.gen_range(0..moves.len())];
        let piece = p.piece_at(m.from).map(|x| x.opentafl_char()).unwrap_or('t');
        let caps = p.play(m).unwrap();
        let mut r = if piece == 'K' || rng.gen_bool(0.2) { format!("{piece}{m}") } else { m.to_string() };
        if !caps.is_empty() {
            r.push('x');
            r.push_str(&caps.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("/"));
        }
        if rng.gen_bool(0.1) {
            r.push_str(["+", "++", "-", "--"].get(rng.gen_range(0..4)).unwrap());
        }
        records.push(r);
        positions.push(p.clone());
    }
    (positions, records)
}

fn tmp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tafl-lab-fuzz-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn shown(s: &str) -> String {
    let mut t = format!("{s:?}");
    if t.len() > 600 {
        let mut cut = 600;
        while !t.is_char_boundary(cut) {
            cut -= 1;
        }
        t.truncate(cut);
        t.push_str("...");
    }
    t
}

fn shown_bytes(b: &[u8]) -> String {
    shown(&String::from_utf8_lossy(b))
}

// ----- text parsers -------------------------------------------------------------------------

const POSITION_DICT: &[&str] = &["t", "T", "K", "/", "//", "7", "11", "19", "0", "1"];

#[test]
fn fuzz_position_strings() {
    let variants = presets();
    let mut r = rng(1);
    let mut seeds = Vec::new();
    for v in &variants {
        let (positions, _) = random_game(v, &mut r, 60);
        seeds.extend(positions.iter().step_by(6).map(position_string));
    }
    // Counts that would wrap a file index back onto the board.
    seeds.push("/7/7/1t18446744073709551614t6/3K3/7/7/7/".into());
    seeds.push("/7/7/t18446744073709551615t/3K3/7/7/7/".into());
    let mut m = Mutator::new(1);
    let mut t = Tally::new("position strings");
    for i in 0..20_000 * scale() {
        let s = match i % 10 {
            0 => m.noise(60),
            1 => m.pick(&seeds).clone(),
            _ => {
                let seed = m.pick(&seeds).clone();
                m.mutate(&seed, POSITION_DICT)
            }
        };
        let v = m.pick(&variants).clone();
        let side = if m.rng.gen_bool(0.5) { Side::Attackers } else { Side::Defenders };
        t.run(
            || shown(&s),
            || {
                let _ = parse_position_string(&s);
                match parse_position(v, &s, side) {
                    Ok(p) => {
                        // A position that parses writes back to a string that parses to it.
                        let back = position_string(&p);
                        assert_eq!(parse_position_string(&back).unwrap().1.len(), p.pieces().len());
                        let _ = (p.legal_moves(), p.is_over());
                        true
                    }
                    Err(_) => false,
                }
            },
        );
    }
    t.finish();
}

#[test]
fn wrapping_counts_in_position_strings_are_errors() {
    // `1t` then 2^64 - 2 empty squares used to wrap the file index back to a, so the row
    // read as 7 squares with two pieces (or panicked on overflow in debug builds).
    for s in [
        "/7/7/1t18446744073709551614t6/3K3/7/7/7/",
        "/7/7/t18446744073709551615t5/3K3/7/7/7/",
        "/7/7/18446744073709551615/3K3/7/7/7/",
        "/7/7/3t18446744073709551616/3K3/7/7/7/",
        "/7/7/8/3K3/7/7/7/",
    ] {
        assert!(parse_position_string(s).is_err(), "{s}");
    }
}

const MOVE_DICT: &[&str] = &["a1", "s19", "t20", "a0", "z99", "-", "x", "/", "K", "T", "t", "++", "--", "---", "^", "="];

#[test]
fn fuzz_move_records() {
    let variants = presets();
    let mut r = rng(2);
    let mut seeds: Vec<String> = vec!["d1-d3".into(), "Kd4-d7++".into(), "g3-e3xe2/f3".into(), "---".into(), "a1-a19".into()];
    for v in variants.iter().step_by(2) {
        seeds.extend(random_game(v, &mut r, 80).1);
    }
    let geometries: Vec<Geometry> = [7u8, 9, 11, 13, 19].iter().map(|&n| Geometry::new(n).unwrap()).collect();
    let mut m = Mutator::new(2);
    let mut t = Tally::new("move records");
    for i in 0..30_000 * scale() {
        let s = match i % 10 {
            0 => m.noise(24),
            1 => m.pick(&seeds).clone(),
            _ => {
                let seed = m.pick(&seeds).clone();
                m.mutate(&seed, MOVE_DICT)
            }
        };
        let g = *m.pick(&geometries);
        t.run(
            || shown(&s),
            || match parse_move(&s, g) {
                Ok(rec) => {
                    assert!(g.on_board(rec.mv.from) && g.on_board(rec.mv.to), "{s}: {:?}", rec.mv);
                    let _ = rec.mv.to_string();
                    true
                }
                Err(_) => false,
            },
        );
    }
    t.finish();
}

/// Replays a game record the way `tafl-lab replay` does: split, parse, play, check captures.
fn replay(v: &Arc<Variant>, text: &str) -> Result<Position, String> {
    let mut pos = Position::start(v.clone());
    for tok in split_moves(text) {
        let rec = parse_move(tok, pos.geometry())?;
        let caps = pos.play(rec.mv).map_err(|e| e.to_string())?;
        if let Some(claimed) = &rec.captures {
            if *claimed != caps {
                return Err(MoveError::CaptureMismatch { mv: rec.mv, claimed: claimed.clone(), actual: caps }.to_string());
            }
        }
        let _ = pos.outcome();
    }
    Ok(pos)
}

#[test]
fn fuzz_game_records() {
    let variants: Vec<Arc<Variant>> =
        ["brandubh", "tablut", "copenhagen", "alea-evangelii"].iter().map(|n| Arc::new(Variant::preset(n).expect("preset"))).collect();
    let mut r = rng(3);
    let mut seeds = Vec::new();
    for (i, v) in variants.iter().enumerate() {
        for _ in 0..3 {
            let (_, moves) = random_game(v, &mut r, 40);
            let text = moves.chunks(2).enumerate().map(|(n, pair)| format!("{}. {}", n + 1, pair.join(" "))).collect::<Vec<_>>().join(if i % 2 == 0 {
                "\n"
            } else {
                " "
            });
            seeds.push((i, text));
        }
    }
    let mut m = Mutator::new(3);
    let mut t = Tally::new("game records");
    for k in 0..3000 * scale() {
        let (vi, seed) = m.pick(&seeds).clone();
        let text = if k % 10 == 0 { seed } else { m.mutate(&seed, MOVE_DICT) };
        let v = variants[vi].clone();
        t.run(|| shown(&text), || replay(&v, &text).is_ok());
    }
    t.finish();
}

const RULES_DICT: &[&str] = &[
    "dim:",
    "dim:7",
    "dim:19",
    "dim:0",
    "start:",
    "start:/",
    "esc:c",
    "esc:e",
    "cen:",
    "cor:",
    "cor:a1",
    "afor:a1,a2",
    "aforre:",
    "cenre:tcnkTCNK",
    "tfr:dl",
    "nm:d",
    "kspd:",
    "spd:1",
    "cap:",
    "cap:0",
    "ka:y",
    "ks:n",
    "ke:y",
    "sw:s",
    "swf:n",
    "ber:y",
    "kj:y",
    "cenp:",
    "cens:tTK",
    "corh:",
    "aforh:tcnk",
    "name:",
    ":",
    "::",
    " ",
];

#[test]
fn fuzz_opentafl_rules_strings() {
    let mut seeds: Vec<String> = presets().iter().filter_map(|v| rules_string(v).ok()).collect();
    assert!(seeds.len() >= 8, "the exporter writes rules strings for most presets");
    let mut m = Mutator::new(4);
    let mut t = Tally::new("OpenTafl rules strings");
    for i in 0..10_000 * scale() {
        let s = match i % 20 {
            0 => m.noise(80),
            1 => m.pick(&seeds).clone(),
            _ => {
                let seed = m.pick(&seeds).clone();
                m.mutate(&seed, RULES_DICT)
            }
        };
        let ok = t.run(
            || shown(&s),
            || match parse_rules_string(&s) {
                Ok(v) => {
                    let v = Arc::new(v);
                    let p = Position::start(v.clone());
                    let _ = (p.legal_moves(), p.is_over());
                    if let Ok(back) = rules_string(&v) {
                        assert_eq!(parse_rules_string(&back).map(|w| w == *v), Ok(true), "{back}");
                    }
                    true
                }
                Err(_) => false,
            },
        );
        // Valid mutants seed further mutation.
        if ok == Some(true) && seeds.len() < 200 {
            seeds.push(s);
        }
    }
    t.finish();
}

const TOML_DICT: &[&str] = &[
    "[rules]",
    "[rules.throne]",
    "base = \"brandubh\"",
    "layout = \"\"\"\n.......\n\"\"\"",
    "escape = \"edge\"",
    "kind = \"block\"",
    "squares = [\"a1\", \"t20\"]",
    "king = 255",
    "others = -1",
    "ply_cap = 4294967296",
    "= 1",
    "\"\"\"",
    "'''",
    "[[rules]]",
    "k",
    "a",
    "d",
    ".",
    "\n",
    "true",
    "1.5",
    "[]",
    "{}",
];

#[test]
fn fuzz_variant_toml() {
    let mut seeds: Vec<String> = PRESETS.iter().map(|(_, t)| t.to_string()).collect();
    seeds.extend(presets().iter().map(|v| v.to_toml()));
    seeds.push("base = \"copenhagen\"\n[rules]\nshieldwall = false\n".into());
    let overrides = ["king_strength=weak", "throne.stop=all", "speed.king=1", "camps.squares=[\"a1\"]", "ply_cap=10", "corners.kind=block"];
    let mut m = Mutator::new(5);
    let mut t = Tally::new("variant TOML");
    for i in 0..6000 * scale() {
        let text = match i % 20 {
            0 => m.noise(100),
            1 => m.pick(&seeds).clone(),
            _ => {
                let seed = m.pick(&seeds).clone();
                m.mutate(&seed, TOML_DICT)
            }
        };
        let sets: Vec<String> = if i % 3 == 0 {
            let o = m.pick(&overrides).to_string();
            vec![if m.rng.gen_bool(0.7) { m.mutate(&o, TOML_DICT) } else { o }]
        } else {
            Vec::new()
        };
        t.run(
            || format!("{} with --set {:?}", shown(&text), sets),
            || match Variant::from_toml_with_overrides(&text, "fuzz.toml", &sets) {
                Ok(v) => {
                    let v = Arc::new(v);
                    let _ = Position::start(v.clone()).legal_moves();
                    let back = Variant::from_toml_str(&v.to_toml(), "back.toml").expect("a loaded variant writes TOML that loads");
                    assert!(back == *v);
                    true
                }
                Err(_) => false,
            },
        );
    }
    t.finish();
}

const CONFIG_DICT: &[&str] = &[
    "[net]",
    "[selfplay]",
    "[train]",
    "[eval]",
    "[budget]",
    "blocks = 0",
    "channels = 0",
    "root = \"puct\"",
    "gumbel_k = 1",
    "[selfplay.search]",
    "root = { kind = \"puct\" }",
    "k = 1",
    "noise = { fraction = 2.0 }",
    "c_puct = -1",
    "leaves_per_tree = 0",
    "cpuct = -1",
    "sims = 0",
    "batch = 0",
    "baselines = [\"random\", \"az:model=x\"]",
    "device = \"cuda:99\"",
    "minutes = -1.0",
    "learning_rate = nan",
    "momentum = 1.0",
    "fast_probability = inf",
    "lr_decay_generations = [18446744073709551615]",
    "= nan",
    "\n",
];

#[test]
fn fuzz_run_config_toml() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/runs");
    let mut seeds = vec![DEFAULT_CONFIG.to_string()];
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            seeds.push(std::fs::read_to_string(&p).unwrap());
        }
    }
    let mut m = Mutator::new(6);
    let mut t = Tally::new("run-config TOML");
    for i in 0..6000 * scale() {
        let text = match i % 20 {
            0 => m.noise(100),
            1 => m.pick(&seeds).clone(),
            _ => {
                let seed = m.pick(&seeds).clone();
                m.mutate(&seed, CONFIG_DICT)
            }
        };
        t.run(
            || shown(&text),
            || match RunConfig::from_toml(&text, "fuzz.toml") {
                Ok(cfg) => {
                    let _ = (cfg.selfplay_config(), cfg.learning_rate(3), cfg.eval_spec(Path::new("m.safetensors")));
                    // What a run directory saves reads back as the same config.
                    let written = toml::to_string(&cfg).expect("a valid config serializes");
                    let back = RunConfig::from_toml(&written, "saved.toml").unwrap_or_else(|e| panic!("saved config does not read back: {e}\n{written}"));
                    assert!(back == cfg, "saved config reads back differently:\n{written}");
                    true
                }
                Err(_) => false,
            },
        );
    }
    t.finish();
}

const SPEC_DICT: &[&str] = &[
    "random",
    "mcts",
    "az",
    "gumbel",
    ":",
    ",",
    "=",
    "sims=",
    "model=",
    "k=",
    "cpuct=",
    "batch=",
    "device=",
    "\"",
    "\\\"",
    "model=\"a,b\"",
    "device=cuda:7",
    "sims=0",
    "cpuct=nan",
    "cpuct=-1",
    "k=18446744073709551616",
    "precision=",
    "precision=bf16",
    "precision=fp32",
];

#[test]
fn fuzz_agent_specs() {
    let seeds = [
        "random",
        "mcts:sims=8",
        "mcts:sims=400,cpuct=1.5,batch=4",
        "az:model=runs/a/latest,sims=200",
        "gumbel:model=m.safetensors,sims=32,k=16,device=cpu",
        "gumbel:model=\"runs/a,b/latest\",k=8",
        "az:model=\"a\\\"b\\\\c\",batch=8,device=auto",
        "az:model=m,precision=bf16",
    ];
    let mut m = Mutator::new(7);
    let mut t = Tally::new("agent specs");
    for i in 0..20_000 * scale() {
        let s = match i % 10 {
            0 => m.noise(40),
            1 => m.pick(&seeds).to_string(),
            _ => {
                let seed = m.pick(&seeds).to_string();
                m.mutate(&seed, SPEC_DICT)
            }
        };
        t.run(
            || shown(&s),
            || match s.parse::<AgentSpec>() {
                Ok(spec) => {
                    let _ = (spec.search_config(), spec.uses_model());
                    // The canonical text parses back to the same spec.
                    let back: AgentSpec = spec.to_string().parse().unwrap_or_else(|e| panic!("{spec} does not parse back: {e}"));
                    assert!(back == spec, "{spec} parses back as {back:?}");
                    true
                }
                Err(e) => {
                    let _ = e.to_string();
                    false
                }
            },
        );
    }
    t.finish();
}

// ----- the engine protocol ------------------------------------------------------------------

/// Commands of a plausible session, to be mutated and spliced.
fn engine_lines(rules: &[String]) -> Vec<String> {
    let mut v: Vec<String> = [
        "hello",
        "start",
        "side attackers",
        "side defenders",
        "clock 10 10 5 3 3",
        "clock 0 0",
        "clock 600 1 0 0 0",
        "clock nan 5",
        "clock 10 10 nan 1 1",
        "clock -1 -1",
        "clock 1e300 1e300 1e300 1e300 1e300",
        "play attackers",
        "play defenders",
        "play attackers",
        "play defenders",
        "analyze 3 0.01",
        "analyze 1 0.001",
        "analyze 3 nan",
        "analyze 18446744073709551616 0.001",
        "opponent-move d1-d3",
        "opponent-move a4-b4 /3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/",
        "opponent-move Kd4-d7++",
        "opponent-move e4-e5xe6/f5",
        "position /3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/",
        "position /7/7/3t3/2tKt2/3t3/7/7/",
        "position /7/7/t6/Kt5/t6/7/7/",
        "position /1t18446744073709551614t6/7/3t3/2tKt2/3t3/7/7/",
        "finish 0",
        "simple-moves on",
        "goodbye",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(rules.iter().map(|r| format!("rules {r}")));
    v
}

const ENGINE_DICT: &[&str] = &[
    "play",
    "analyze",
    "clock",
    "position",
    "opponent-move",
    "rules",
    "side",
    "finish",
    "attackers",
    "defenders",
    "nan",
    "-1",
    "1e300",
    "d4",
    "a1-a7",
    "/",
    "dim:7",
    " ",
];

/// Keeps a mutated line from making a searching engine think for long: `analyze` asks for
/// at most a few milliseconds (the random engine gets the extreme numbers as they are).
fn tame(line: &str) -> String {
    let mut parts: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    if parts.first().map(String::as_str) == Some("analyze") && parts.len() == 3 {
        if let Ok(x) = parts[2].parse::<f64>() {
            if x.is_finite() && x > 0.002 {
                parts[2] = "0.002".into();
            }
        }
        return parts.join(" ");
    }
    line.to_string()
}

fn check_replies(line: &str, replies: &[String]) {
    for r in replies {
        assert!(!r.contains('\n'), "{line:?}: a reply spans lines: {r:?}");
        let head = r.split_whitespace().next().unwrap_or("");
        assert!(["move", "analysis", "error"].contains(&head), "{line:?}: unexpected reply {r:?}");
        if head == "error" {
            // OTEP's engine codes: 0 (non-critical) and -1 (critical: play after refused rules).
            let code: Option<i32> = r.split_whitespace().nth(1).and_then(|c| c.parse().ok());
            assert!(matches!(code, Some(0 | -1)), "{line:?}: error without an OTEP code: {r:?}");
        }
    }
}

#[test]
fn fuzz_engine_protocol_lines() {
    let brandubh = Arc::new(Variant::preset("brandubh").expect("preset"));
    let mut rules: Vec<String> = ["brandubh", "tablut", "hnefatafl-9"].iter().filter_map(|n| rules_string(&Variant::preset(n).expect("preset")).ok()).collect();
    rules.push(rules_string(&brandubh).unwrap().replace("surf:y", "surf:n"));
    let lines = engine_lines(&rules);
    // A searching engine with a (tiny, untrained) network too.
    let dir = tmp_dir("engine");
    let (model, _) = tiny_checkpoint(&dir);
    assert!(!model.to_string_lossy().contains(','));
    let az = format!("az:model={},sims=4,batch=2,device=cpu", model.display());
    let fast = TimeControl::MoveTime(Duration::from_millis(2));
    let configs: [(&str, TimeControl, usize, &str); 3] = [
        ("random", TimeControl::Simulations, 30_000, "engine lines (random)"),
        ("mcts:sims=8", fast.clone(), 5000, "engine lines (mcts:sims=8)"),
        (&az, fast, 600, "engine lines (az, tiny net)"),
    ];
    for (salt, (agent, time, count, name)) in configs.into_iter().enumerate() {
        let make = || Engine::new(EngineConfig { agent: agent.parse().unwrap(), variant: brandubh.clone(), time: time.clone(), seed: 3 }).unwrap();
        let mut engine = make();
        let mut m = Mutator::new(8 + salt as u64);
        let mut t = Tally::new(name);
        let mut session: Vec<String> = Vec::new();
        let mut kinds = [0usize; 3];
        for i in 0..count * scale() {
            let line = match m.rng.gen_range(0..10) {
                0 => m.noise(30),
                1..=4 => m.pick(&lines).clone(),
                _ => {
                    let seed = m.pick(&lines).clone();
                    m.mutate(&seed, ENGINE_DICT)
                }
            };
            // Hosts send one line at a time, trimmed, as `Engine::run` does.
            let line = line.lines().next().unwrap_or("").trim().to_string();
            let line = if agent == "random" { line } else { tame(&line) };
            session.push(line.clone());
            let got = t.run(
                || format!("{} after {:?}", shown(&line), &session[session.len().saturating_sub(12)..session.len() - 1]),
                || {
                    let replies = engine.handle(&line);
                    check_replies(&line, &replies);
                    for r in &replies {
                        kinds[["move", "analysis", "error"].iter().position(|k| r.starts_with(k)).unwrap_or(2)] += 1;
                    }
                    !replies.iter().any(|r| r.starts_with("error"))
                },
            );
            // A fresh engine after a panic or now and then, so sessions start over.
            if got.is_none() || i % 97 == 96 {
                engine = make();
                session.clear();
            }
        }
        eprintln!("fuzz: {name}: replies: {} move, {} analysis, {} error", kinds[0], kinds[1], kinds[2]);
        assert!(kinds[0] > 0 && kinds[1] > 0, "{name}: the sessions should reach moves and analyses");
        t.finish();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// ----- files --------------------------------------------------------------------------------

/// Splits a safetensors file into its JSON header and data.
fn split_safetensors(bytes: &[u8]) -> (serde_json::Value, Vec<u8>) {
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    (serde_json::from_slice(&bytes[8..8 + n]).unwrap(), bytes[8 + n..].to_vec())
}

fn join_safetensors(header: &serde_json::Value, data: &[u8]) -> Vec<u8> {
    let h = serde_json::to_vec(header).unwrap();
    let mut out = (h.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&h);
    out.extend_from_slice(data);
    out
}

/// JSON values that break careless readers of numbers, strings and lists.
fn json_extreme(rng: &mut SmallRng) -> serde_json::Value {
    use serde_json::json;
    let all = [
        json!(0),
        json!(-1),
        json!(1),
        json!(2),
        json!(6),
        json!(8),
        json!(20),
        json!(255),
        json!(256),
        json!(4294967296u64),
        json!(u64::MAX),
        json!(1e300),
        json!(-1e300),
        json!(0.5),
        json!(""),
        json!("x"),
        json!(null),
        json!(true),
        json!([]),
        json!({}),
        json!([0, u64::MAX]),
        json!([u64::MAX - 7, u64::MAX]),
        json!([u64::MAX]),
        json!("F16"),
        json!("U8"),
        json!("I64"),
    ];
    all[rng.gen_range(0..all.len())].clone()
}

/// Replaces one leaf (or removes one key) somewhere in `v`.
fn mutate_json(v: &mut serde_json::Value, rng: &mut SmallRng) {
    use serde_json::Value;
    match v {
        Value::Object(map) if !map.is_empty() => {
            let keys: Vec<String> = map.keys().cloned().collect();
            let k = keys[rng.gen_range(0..keys.len())].clone();
            match rng.gen_range(0..6) {
                0 => {
                    map.remove(&k);
                }
                1 => {
                    map.insert(k, json_extreme(rng));
                }
                _ => mutate_json(map.get_mut(&k).unwrap(), rng),
            }
        }
        Value::Array(a) if !a.is_empty() => {
            let i = rng.gen_range(0..a.len());
            if rng.gen_bool(0.2) {
                a.remove(i);
            } else if rng.gen_bool(0.2) {
                a.push(json_extreme(rng));
            } else {
                mutate_json(&mut a[i], rng);
            }
        }
        Value::String(s) => {
            // Strings may hold JSON themselves (the tafl_lab metadata): mutate inside them.
            if let Ok(mut inner) = serde_json::from_str::<Value>(s) {
                if inner.is_object() {
                    mutate_json(&mut inner, rng);
                    *s = inner.to_string();
                    return;
                }
            }
            *v = if rng.gen_bool(0.5) { json_extreme(rng) } else { Value::String(Mutator { rng: SmallRng::seed_from_u64(rng.gen()) }.mutate(s, TOML_DICT)) };
        }
        _ => *v = json_extreme(rng),
    }
}

fn tiny_checkpoint(dir: &Path) -> (PathBuf, Arc<Variant>) {
    let v = Arc::new(Variant::preset("brandubh").expect("preset"));
    let net = TaflNet::new(7, NetConfig::new(1, 4), tch::Device::Cpu);
    let path = dir.join("tiny.safetensors");
    checkpoint::save(&net, &ModelMeta::new(&v, net.config, 2), &path).unwrap();
    (path, v)
}

#[test]
fn fuzz_checkpoint_headers() {
    let dir = tmp_dir("ckpt");
    let (path, v) = tiny_checkpoint(&dir);
    let valid = std::fs::read(&path).unwrap();
    let (header, data) = split_safetensors(&valid);
    let header_len = valid.len() - data.len();
    let mut m = Mutator::new(10);
    let mut t = Tally::new("checkpoint headers");
    let file = dir.join("mutant.safetensors");
    for i in 0..1000 * scale() {
        let bytes = match i % 8 {
            0 => valid.clone(),
            // Byte mutations, mostly in the header.
            1 | 2 => {
                let cut = if m.rng.gen_bool(0.8) { header_len } else { valid.len() };
                let mut b = m.mutate_bytes(&valid[..cut], &["\"shape\"", "\"data_offsets\"", "18446744073709551615", "0", "-1"]);
                b.extend_from_slice(&valid[cut..]);
                b
            }
            // Truncated.
            3 => valid[..m.rng.gen_range(0..valid.len())].to_vec(),
            // The header length field itself.
            4 => {
                let mut b = valid.clone();
                let n: u64 = *m.pick(&[0, 1, 7, (header_len - 9) as u64, (header_len - 7) as u64, u32::MAX as u64, u64::MAX, 1 << 40]);
                b[..8].copy_from_slice(&n.to_le_bytes());
                b
            }
            // Structured: a field of the header or of the tafl_lab metadata, re-encoded.
            _ => {
                let mut h = header.clone();
                for _ in 0..m.rng.gen_range(1..=2) {
                    if h["__metadata__"].is_object() && m.rng.gen_bool(0.6) {
                        // Mostly the tafl_lab metadata, whose fields build the network.
                        let text = h["__metadata__"]["tafl_lab"].as_str().unwrap_or("{}").to_string();
                        let mut meta: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
                        mutate_json(&mut meta, &mut m.rng);
                        h["__metadata__"]["tafl_lab"] = serde_json::Value::String(meta.to_string());
                    } else {
                        mutate_json(&mut h, &mut m.rng);
                    }
                }
                let mut d = data.clone();
                if m.rng.gen_bool(0.1) {
                    d.truncate(m.rng.gen_range(0..d.len()));
                }
                join_safetensors(&h, &d)
            }
        };
        std::fs::write(&file, &bytes).unwrap();
        t.run(
            || shown_bytes(&bytes[..bytes.len().min(8 + 2000)]),
            || {
                let meta = checkpoint::read_meta(&file);
                let some = checkpoint::load(&file, Some(&v), tch::Device::Cpu);
                let none = checkpoint::load(&file, None, tch::Device::Cpu);
                if let Ok((net, meta)) = &none {
                    assert_eq!(net.board_size, meta.board_size as usize);
                    let _ = tafl_lab::export::model_variant(meta, &file);
                }
                meta.is_ok() && some.is_ok() && none.is_ok()
            },
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    t.finish();
}

/// Metadata the writer never produces: each must be refused by `load` (and by `export`), not
/// crash the network builder.
#[test]
fn checkpoints_with_impossible_metadata_are_refused() {
    let dir = tmp_dir("meta");
    let v = Arc::new(Variant::preset("brandubh").expect("preset"));
    let net = TaflNet::new(7, NetConfig::new(1, 4), tch::Device::Cpu);
    let good = ModelMeta::new(&v, net.config, 0);
    let copenhagen = Variant::preset("copenhagen").expect("preset");
    let cases: Vec<(&str, ModelMeta)> = vec![
        ("board_size 0", ModelMeta { board_size: 0, ..good.clone() }),
        ("board_size 1", ModelMeta { board_size: 1, ..good.clone() }),
        ("board_size 8", ModelMeta { board_size: 8, ..good.clone() }),
        ("board_size 255", ModelMeta { board_size: 255, ..good.clone() }),
        ("board_size 11 on a 7x7 variant", ModelMeta { board_size: 11, ..good.clone() }),
        ("no channels", ModelMeta { net: NetConfig { channels: 0, ..good.net }, ..good.clone() }),
        ("absurd channels", ModelMeta { net: NetConfig { channels: 1 << 40, ..good.net }, ..good.clone() }),
        ("absurd blocks", ModelMeta { net: NetConfig { blocks: usize::MAX, ..good.net }, ..good.clone() }),
        ("a bigger net than the weights", ModelMeta { net: NetConfig::new(40, 256), ..good.clone() }),
        ("another variant's board", ModelMeta { variant_toml: copenhagen.to_toml(), ..good.clone() }),
        ("an unknown encoding", ModelMeta { encoding_version: 3, ..good.clone() }),
        ("no input planes", ModelMeta { input_planes: 0, ..good.clone() }),
        ("another encoding's plane count", ModelMeta { input_planes: Encoding::V1.planes(), ..good.clone() }),
        ("a net of another encoding", ModelMeta { net: good.net.with_encoding(Encoding::V1), ..good.clone() }),
        ("no variant", ModelMeta { variant_toml: String::new(), ..good.clone() }),
    ];
    for (what, meta) in cases {
        let path = dir.join("bad.safetensors");
        let json = serde_json::to_string(&meta).unwrap();
        checkpoint::write_tensors(&path, net.vs.variables().into_iter().collect(), Some(json)).unwrap();
        let r = catch_unwind(AssertUnwindSafe(|| checkpoint::load(&path, None, tch::Device::Cpu).map(|_| ())));
        let e = r.unwrap_or_else(|_| panic!("{what}: load panicked")).expect_err(what);
        assert!(e.to_string().contains("bad metadata"), "{what}: {e}");
        // Only the weights show that a net is bigger than its file: the metadata alone is fine.
        assert_eq!(checkpoint::read_meta(&path).is_ok(), what == "a bigger net than the weights", "{what}");
        let out = dir.join("export");
        let r = catch_unwind(AssertUnwindSafe(|| tafl_lab::export::export(&path, &out).map(|_| ())));
        assert!(r.unwrap_or_else(|_| panic!("{what}: export panicked")).is_err(), "{what}");
    }
    // The good metadata still loads.
    let path = dir.join("good.safetensors");
    checkpoint::save(&net, &good, &path).unwrap();
    checkpoint::load(&path, None, tch::Device::Cpu).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Three finished random games of brandubh, stored as self-play stores them.
/// The newest generation a shard reader accepts: mostly the sample's own.
fn m_gen(i: usize) -> u64 {
    if i % 13 == 0 {
        3
    } else {
        4
    }
}

fn sample_shard(v: &Arc<Variant>) -> Shard {
    let mut r = rng(11);
    let mut games = Vec::new();
    for g in 0..3u64 {
        let mut pos = Position::start(v.clone());
        let mut plies = Vec::new();
        while !pos.is_over() {
            let moves = pos.legal_moves();
            let mv = moves[r.gen_range(0..moves.len())];
            let w = 1.0 / moves.len().min(4) as f32;
            let policy = moves.iter().take(4).map(|&m| (pack(m), w)).collect();
            plies.push(StoredPly { mv: pack(mv), full: g % 2 == 0, value: 0.1, policy });
            pos.make(mv);
        }
        games.push(StoredGame { plies, outcome: pos.outcome().unwrap(), slot: Some(g) });
    }
    Shard { rules_fingerprint: v.rules_fingerprint(), model_generation: 4, writer: "worker-1".into(), games }
}

#[test]
fn fuzz_shard_headers() {
    let dir = tmp_dir("shard");
    let v = Arc::new(Variant::preset("brandubh").expect("preset"));
    let path = dir.join("valid.shard");
    let shard0 = sample_shard(&v);
    shard::write(&path, &shard0).unwrap();
    let valid = std::fs::read(&path).unwrap();
    assert_eq!(shard::read(&path).unwrap(), shard0);
    const HEADER: usize = 28;
    let fix = |b: &mut Vec<u8>| {
        let payload = b[HEADER..].to_vec();
        b[12..20].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        b[20..28].copy_from_slice(&fnv1a(&payload).to_le_bytes());
    };
    let mut m = Mutator::new(12);
    let mut t = Tally::new("shard headers");
    // Named as the writer names its files, so `read_checked` compares name and contents.
    let file = dir.join(shard::file_name(4, "worker-1", 1));
    shard::write(&file, &shard0).unwrap();
    shard::read_checked(&file, &v, 4).expect("the valid shard passes every check");
    for i in 0..2000 * scale() {
        let mut bytes = valid.clone();
        match i % 8 {
            0 => {}
            // Raw bytes anywhere (the checksum refuses most).
            1 => bytes = m.mutate_bytes(&valid, &[]),
            2 => bytes.truncate(m.rng.gen_range(0..valid.len())),
            // Header fields set to extremes.
            3 => {
                let (at, len) = *m.pick(&[(8usize, 4usize), (12, 8), (20, 8)]);
                let x: u64 = *m.pick(&[0, 1, 2, u32::MAX as u64, u64::MAX, (valid.len() - HEADER) as u64 + 1, 1 << 40]);
                bytes[at..at + len].copy_from_slice(&x.to_le_bytes()[..len]);
            }
            // Payload mutated and the header fixed up, so the decoder sees it.
            _ => {
                let mut payload = bytes[HEADER..].to_vec();
                for _ in 0..m.rng.gen_range(1..=3) {
                    let at = m.rng.gen_range(0..payload.len());
                    match m.rng.gen_range(0..4) {
                        0 => payload[at] ^= 1 << m.rng.gen_range(0..8),
                        1 => {
                            // An 8-byte length or count set to an extreme.
                            let x: u64 = *m.pick(&[u64::MAX, 1 << 40, 1 << 31, 255, 19, 20, 0]);
                            let end = (at + 8).min(payload.len());
                            payload[at..end].copy_from_slice(&x.to_le_bytes()[..end - at]);
                        }
                        2 => {
                            payload.truncate(at);
                        }
                        _ => {
                            let extra: Vec<u8> = (0..m.rng.gen_range(1..16)).map(|_| m.rng.gen()).collect();
                            payload.splice(at..at, extra);
                        }
                    }
                    if payload.is_empty() {
                        break;
                    }
                }
                bytes.truncate(HEADER);
                bytes.extend_from_slice(&payload);
                fix(&mut bytes);
            }
        }
        std::fs::write(&file, &bytes).unwrap();
        t.run(
            || format!("{} bytes: {:02x?}", bytes.len(), &bytes[..bytes.len().min(400)]),
            || {
                let read = shard::read(&file);
                let checked = shard::read_checked(&file, &v, m_gen(i));
                if let Ok(s) = &checked {
                    // What passed the checks converts without trouble.
                    let _: Vec<_> = s.games.iter().map(StoredGame::to_finished).collect();
                }
                read.is_ok() && checked.is_ok()
            },
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    t.finish();
}

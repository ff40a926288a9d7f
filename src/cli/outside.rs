//! `tafl-lab export`, `engine` and `play`: the model outside tafl-lab.

use anyhow::{anyhow, bail, Result};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tafl_lab::arena::{Agent, AgentKind, AgentSpec};
use tafl_lab::engine::{Engine, EngineConfig, TimeControl};
use tafl_lab::export;
use tafl_lab::nn::checkpoint;
use tafl_lab::rules::notation::parse_move;
use tafl_lab::rules::{Move, Position, Side, Variant};

pub fn run_export(model: &Path, out_dir: &Path, out: &mut impl Write) -> Result<()> {
    let e = export::export(model, out_dir)?;
    writeln!(
        out,
        "exported {} (generation {}, {} network) to {}: {}",
        e.meta.variant,
        e.meta.generation,
        e.meta.net,
        out_dir.display(),
        e.files.iter().map(|f| f.file_name().unwrap_or_default().to_string_lossy().into_owned()).collect::<Vec<_>>().join(", ")
    )?;
    writeln!(out, "weights sha256 {}", e.weights_sha256)?;
    Ok(())
}

/// The agent for a model path (or random-rollout MCTS without one), and its variant.
fn agent_for(model: Option<&Path>, variant: Option<&str>, sims: u32, device: &str) -> Result<(AgentSpec, Arc<Variant>)> {
    match model {
        Some(m) => {
            let path = checkpoint::resolve(m)?;
            let meta = checkpoint::read_meta(&path)?;
            let mv = export::model_variant(&meta, &path)?;
            if let Some(v) = variant {
                let asked = Variant::from_spec(v)?;
                meta.check_variant(&asked, &path)?;
            }
            let spec = AgentSpec::new(AgentKind::Az, Some(path), sims).default_device(device);
            Ok((spec, Arc::new(mv)))
        }
        None => {
            let v = Variant::from_spec(variant.unwrap_or("brandubh"))?;
            Ok((AgentSpec::new(AgentKind::Mcts, None, sims), Arc::new(v)))
        }
    }
}

pub fn run_engine(protocol: &str, model: Option<&Path>, variant: Option<&str>, sims: u32, movetime: Option<u64>, device: &str) -> Result<()> {
    if protocol != "opentafl" {
        bail!("--protocol {protocol:?}: only opentafl is spoken");
    }
    tafl_lab::nn::set_torch_threads(super::cores());
    let (agent, variant) = agent_for(model, variant, sims, device)?;
    let time = match movetime {
        Some(ms) => TimeControl::MoveTime(Duration::from_millis(ms.max(1))),
        None => TimeControl::Simulations,
    };
    let mut engine = Engine::new(EngineConfig { agent, variant, time, seed: 1 })?;
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    engine.run(stdin.lock(), &mut stdout.lock())?;
    Ok(())
}

pub struct PlayArgs {
    pub variant: Option<String>,
    pub model: Option<PathBuf>,
    pub side: Side,
    pub sims: u32,
    pub device: String,
    pub seed: u64,
}

pub fn run_play(a: &PlayArgs, input: impl BufRead, out: &mut impl Write) -> Result<()> {
    tafl_lab::nn::set_torch_threads(super::cores());
    let (spec, variant) = agent_for(a.model.as_deref(), a.variant.as_deref(), a.sims, &a.device)?;
    let mut ai = Agent::new(&spec, &variant, a.seed)?;
    let mut helper = Agent::new(&spec, &variant, a.seed ^ 1)?;
    let mut pos = Position::start(variant.clone());
    // Positions before each human move, for undo.
    let mut history: Vec<(Position, Option<Move>)> = Vec::new();
    let mut last: Option<Move> = None;
    writeln!(out, "{}: you play the {}, the AI ({spec}) the {}.", variant.name, a.side.name(), a.side.opponent().name())?;
    writeln!(out, "Type a move like d1-d3, or: moves, hint, undo, board, quit. Last move: * where it started, UPPER CASE where it went.")?;
    let mut lines = input.lines();
    loop {
        if let Some(o) = pos.outcome() {
            writeln!(out, "{}", pos.board(last))?;
            let verdict = match o.winner {
                Some(w) if w == a.side => "you win",
                Some(_) => "the AI wins",
                None => "a draw",
            };
            writeln!(out, "game over: {o}: {verdict}")?;
            return Ok(());
        }
        if pos.to_move() != a.side {
            let mv = ai.choose(&pos).ok_or_else(|| anyhow!("the AI has no legal move"))?;
            pos.play(mv).map_err(|e| anyhow!("AI move: {e}"))?;
            last = Some(mv);
            writeln!(out, "AI plays {mv}")?;
            continue;
        }
        writeln!(out, "{}", pos.board(last))?;
        write!(out, "your move ({}): ", a.side.name())?;
        out.flush()?;
        let Some(line) = lines.next() else {
            writeln!(out)?;
            return Ok(());
        };
        let line = line?;
        let cmd = line.trim();
        match cmd {
            "" | "board" => {}
            "quit" | "exit" => {
                writeln!(out, "bye")?;
                return Ok(());
            }
            "moves" => {
                let moves: Vec<String> = pos.legal_moves().iter().map(|m| m.to_string()).collect();
                writeln!(out, "legal moves: {}", moves.join(" "))?;
            }
            "hint" => match helper.think(&pos) {
                Some(r) => writeln!(out, "hint: {} (value {:+.2} for you)", r.best.map_or("-".into(), |m| m.to_string()), r.value)?,
                None => writeln!(out, "hint: no suggestion")?,
            },
            "undo" => match history.pop() {
                Some((p, l)) => {
                    pos = p;
                    last = l;
                    ai.reset(a.seed);
                    writeln!(out, "took back your last move and the AI's reply")?;
                }
                None => writeln!(out, "nothing to undo")?,
            },
            text => match parse_move(text, pos.geometry()) {
                Err(e) => writeln!(out, "not a move: {e} (type `moves` for the legal ones)")?,
                Ok(rec) => {
                    let before = pos.clone();
                    match pos.play(rec.mv) {
                        Ok(caps) => {
                            history.push((before, last));
                            last = Some(rec.mv);
                            if !caps.is_empty() {
                                writeln!(out, "you capture {}", caps.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(" "))?;
                            }
                        }
                        Err(e) => writeln!(out, "illegal move: {e} (type `moves` for the legal ones)")?,
                    }
                }
            },
        }
    }
}

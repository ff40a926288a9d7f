//! `tafl-lab play`: a game against a model (or random-rollout MCTS) in the terminal, with
//! hints, undo and the legal moves on request.

use anyhow::{anyhow, Result};
use std::io::{BufRead, Write};
use tafl_lab::arena::Agent;
use tafl_lab::rules::notation::parse_move;
use tafl_lab::rules::{Move, Position, Side, Variant};

/// Play a game against the AI in the terminal.
#[derive(clap::Args)]
pub struct PlayArgs {
    /// Variant (default: the agent's model's, else brandubh).
    #[arg(long)]
    pub variant: Option<String>,
    /// The AI: --agent SPEC, or --model and --sims.
    #[command(flatten)]
    pub agent: super::AgentArgs,
    /// Your side.
    #[arg(long, default_value = "defenders")]
    pub side: Side,
    #[command(flatten)]
    pub device: super::DeviceArgs,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Plays one game, reading the human's moves and commands from `input`.
pub fn run(a: &PlayArgs, input: impl BufRead, out: &mut impl Write) -> Result<()> {
    tafl_lab::nn::set_torch_threads(super::cores());
    let (spec, variant) = a.agent.resolve(a.variant.as_deref(), &a.device)?;
    let variant = match variant {
        Some(v) => v,
        None => std::sync::Arc::new(Variant::preset("brandubh")?),
    };
    let mut ai = Agent::new(&spec, &variant, a.seed)?;
    let mut helper = Agent::new(&spec, &variant, a.seed ^ 1)?;
    let mut pos = Position::start(variant.clone());
    // Positions before each human move, for undo.
    let mut history: Vec<(Position, Option<Move>)> = Vec::new();
    let mut last: Option<Move> = None;
    writeln!(out, "{}: you play the {}, the AI ({spec}) the {}.", variant.name, a.side.name(), a.side.opponent().name())?;
    writeln!(out, "The AI: {}.", ai.about())?;
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

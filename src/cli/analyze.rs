//! `tafl-lab analyze`: one position searched by one agent, shown as the best move, its value,
//! the most visited moves and the principal variation (or as one JSON object).

use anyhow::{anyhow, bail, Result};
use serde_json::json;
use std::io::Write;
use std::time::Instant;
use tafl_lab::arena::Agent;
use tafl_lab::search::solver::{self, Forced};
use tafl_lab::search::Proof;
use tafl_rules_cli::PositionArgs;

/// Search a position with an agent and print the best move, its value, the top moves and
/// the principal variation.
#[derive(clap::Args)]
pub struct AnalyzeArgs {
    #[command(flatten)]
    pub pos: PositionArgs,
    /// Agent spec: mcts:sims=N, az:model=PATH,sims=N or gumbel:model=PATH,sims=N,k=16.
    #[arg(long, default_value = "mcts:sims=800")]
    pub agent: String,
    /// Print one JSON object (best_move, value, proof, pv, moves, ...).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub device: super::DeviceArgs,
    /// How many root moves to list.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// Instead of an agent's search, look at every line up to PLIES plies and say whether
    /// the side to move wins or loses by force within them (shortest first), with one line:
    /// for checking a game's end that was not played out, such as an engine's resignation.
    /// Exhaustive, so for a few plies only (4 is quick).
    #[arg(long, value_name = "PLIES", conflicts_with_all = ["agent", "top"])]
    pub exhaustive: Option<u32>,
    /// Instead of an agent's search, look for a forced win of any length with a proof-number
    /// search of at most EXPANSIONS positions (the side not to move first: for a resignation),
    /// and check the proof it finds move by move. For wins too deep for --exhaustive. It
    /// proves only where the repetition rule can only help the winner (Copenhagen: the
    /// attackers). About 50,000 expansions a second on one core; 20 million take about 7
    /// minutes and 1 GB. A --position starts at ply 0, so its ply cap is counted from there.
    #[arg(long, value_name = "EXPANSIONS", conflicts_with_all = ["agent", "top", "exhaustive"])]
    pub prove: Option<u64>,
}

/// `--prove EXPANSIONS`: the proof-number search's verdict for the side to move.
fn prove(pos: &tafl_lab::rules::Position, expansions: u64, json: bool, out: &mut impl Write) -> Result<()> {
    use tafl_lab::search::prover::{self, ProveLimit, Proved};
    let t = Instant::now();
    let me = pos.to_move();
    let mut notes = Vec::new();
    let mut found = None;
    for winner in [me.opponent(), me] {
        let limit = ProveLimit { expansions, deadline: None };
        let start = Instant::now();
        let took = || format!("{:.1} s", start.elapsed().as_secs_f64());
        match prover::prove_win(pos, winner, limit) {
            Ok(Proved::Win(shape)) => {
                found = Some((winner, shape));
                break;
            }
            Ok(Proved::Exhausted { expansions }) => {
                notes.push(format!("the {}: the search ended without a proof ({expansions} expansions, {})", winner.name(), took()))
            }
            Ok(Proved::OutOfLimit { expansions }) => notes.push(format!("the {}: no proof within {expansions} expansions ({})", winner.name(), took())),
            Ok(Proved::Unchecked { expansions }) => {
                notes.push(format!("the {}: the search's proof did not pass its check, so it is not counted ({expansions} expansions)", winner.name()))
            }
            Err(e @ prover::ProveError::ProofReachesPlyCap { .. }) => notes.push(format!("the {}: {e}", winner.name())),
            Err(e) => notes.push(format!("the {}: not searched: {e}", winner.name())),
        }
    }
    let secs = t.elapsed().as_secs_f64();
    let (verdict, shape) = match &found {
        Some((w, shape)) => (if *w == me { "win" } else { "loss" }, Some(shape)),
        None => ("unknown", None),
    };
    let line: Vec<String> = shape.map(|s| s.line.iter().map(|m| m.to_string()).collect()).unwrap_or_default();
    if json {
        let v = json!({
            "to_move": me.name(), "prove": expansions, "forced": verdict, "plies": shape.map(|s| s.plies),
            "positions": shape.map(|s| s.positions), "expansions": shape.map(|s| s.expansions), "line": line,
            "notes": notes, "seconds": secs,
        });
        writeln!(out, "{v}")?;
    } else if let Some(s) = shape {
        writeln!(
            out,
            "the {} to move {} by force within {} plies (a proof-number search's proof, checked move by move: {} positions, {} expansions, {secs:.1} s): {}",
            me.name(),
            if verdict == "win" { "win" } else { "lose" },
            s.plies,
            s.positions,
            s.expansions,
            line.join(" ")
        )?;
    } else {
        writeln!(out, "no proof for either side: {}", notes.join("; "))?;
    }
    Ok(())
}

/// `--exhaustive PLIES`: the solver's verdict for the side to move.
fn exhaustive(pos: &tafl_lab::rules::Position, plies: u32, json: bool, out: &mut impl Write) -> Result<()> {
    let t = Instant::now();
    let found = solver::forced_result(pos, plies);
    let me = pos.to_move().name();
    let (verdict, within, line) = match &found {
        Forced::Win { plies, line } => ("win", Some(*plies), line.clone()),
        Forced::Loss { plies, line } => ("loss", Some(*plies), line.clone()),
        Forced::Unknown => ("unknown", None, Vec::new()),
    };
    let line: Vec<String> = line.iter().map(|m| m.to_string()).collect();
    if json {
        let v = json!({"to_move": me, "horizon": plies, "forced": verdict, "plies": within, "line": line, "seconds": t.elapsed().as_secs_f64()});
        writeln!(out, "{v}")?;
    } else {
        match within {
            Some(n) => writeln!(out, "the {me} to move {} by force within {n} plies: {}", if verdict == "win" { "win" } else { "lose" }, line.join(" "))?,
            None => writeln!(out, "no forced win for either side within {plies} plies (every line searched)")?,
        }
    }
    Ok(())
}

fn proof_name(p: Proof) -> &'static str {
    match p {
        Proof::Unknown => "unknown",
        Proof::Win => "win",
        Proof::Loss => "loss",
        Proof::Draw => "draw",
    }
}

pub fn run(args: &AnalyzeArgs, out: &mut impl Write) -> Result<()> {
    let pos = args.pos.position()?;
    if let Some(o) = pos.outcome() {
        bail!("the game is over ({o}); nothing to analyze");
    }
    if let Some(plies) = args.exhaustive {
        return exhaustive(&pos, plies, args.json, out);
    }
    if let Some(expansions) = args.prove {
        return prove(&pos, expansions, args.json, out);
    }
    let spec = super::parse_agent("--agent", &args.agent, &args.device)?;
    if spec.external.is_some() {
        return external_move(&spec, args, &pos, out);
    }
    if spec.search_config().is_none() {
        bail!("--agent {spec}: a random player does not analyze; use mcts, az or gumbel");
    }
    tafl_lab::nn::set_torch_threads(super::cores());
    let mut a = Agent::new(&spec, pos.variant(), 1)?;
    let t = Instant::now();
    let r = a.think(&pos).expect("a searching agent on an unfinished position");
    let secs = t.elapsed().as_secs_f64();
    let best = r.best.expect("unfinished positions have moves");
    let fmt_q = |q: Option<f32>| q.map_or("-".to_string(), |q| format!("{q:+.3}"));
    if args.json {
        let moves: Vec<_> = r
            .moves
            .iter()
            .take(args.top)
            .map(|m| json!({"move": m.mv.to_string(), "visits": m.visits, "prior": m.prior, "q": m.q, "proof": proof_name(m.proof)}))
            .collect();
        let obj = json!({
            "best_move": best.to_string(),
            "value": r.value,
            "proof": proof_name(r.proof),
            "pv": r.pv.iter().map(|m| m.to_string()).collect::<Vec<_>>(),
            "to_move": pos.to_move().name(),
            "simulations": r.simulations,
            "seconds": secs,
            "moves": moves,
        });
        writeln!(out, "{obj}")?;
        return Ok(());
    }
    writeln!(out, "{pos}")?;
    writeln!(out, "agent {spec}: {} simulations in {secs:.2} s", r.simulations)?;
    let proof = match r.proof {
        Proof::Unknown => String::new(),
        p => format!("  (proven {})", proof_name(p)),
    };
    writeln!(out, "best move: {best}  value {:+.3} for the {}{proof}", r.value, pos.to_move().name())?;
    writeln!(out, "{:<10} {:>7} {:>7} {:>7}", "move", "visits", "prior", "q")?;
    for m in r.moves.iter().take(args.top) {
        let tag = match m.proof {
            Proof::Unknown => "",
            Proof::Win => "  wins",
            Proof::Loss => "  loses",
            Proof::Draw => "  draws",
        };
        writeln!(out, "{:<10} {:>7} {:>7.3} {:>7}{tag}", m.mv.to_string(), m.visits, m.prior, fmt_q(m.q))?;
    }
    writeln!(out, "pv: {}", r.pv.iter().map(|m| m.to_string()).collect::<Vec<_>>().join(" "))?;
    Ok(())
}

/// An external engine's analysis is the move it would play (its protocol reports no search
/// tafl-lab can read). An HTP engine is given the moves from the start (`--moves`); an OTEP
/// engine is also given a set-up position.
fn external_move(spec: &tafl_lab::arena::AgentSpec, args: &AnalyzeArgs, pos: &tafl_lab::rules::Position, out: &mut impl Write) -> Result<()> {
    let history = args.pos.history()?.unwrap_or_default();
    let mut a = Agent::new(spec, pos.variant(), 1)?;
    let t = Instant::now();
    let mv = a.respond(pos, &history).map_err(|f| anyhow!("--agent {spec}: {}", f.describe()))?;
    let secs = t.elapsed().as_secs_f64();
    if args.json {
        writeln!(out, "{}", json!({"best_move": mv.to_string(), "to_move": pos.to_move().name(), "seconds": secs, "engine": spec.to_string()}))?;
    } else {
        writeln!(out, "{spec} plays {mv} for the {} ({secs:.1} s)", pos.to_move().name())?;
    }
    Ok(())
}

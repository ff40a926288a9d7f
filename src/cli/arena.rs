//! `tafl-lab analyze`, `match` and `new-model`: agents at work from the command line.

use super::rules_cmds::PositionArgs;
use anyhow::{anyhow, bail, Result};

use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use tafl_lab::arena::{self, Agent, AgentSpec, MatchConfig, MatchSummary, Wdl};
use tafl_lab::nn::{checkpoint, ModelMeta, NetConfig, TaflNet};
use tafl_lab::rules::Variant;
use tafl_lab::search::Proof;
use tafl_lab::stats::{elo_interval, Sprt, SprtDecision};

/// Parses an agent spec; `device` applies where the spec names none.
fn parse_spec(flag: &str, s: &str, device: &str) -> Result<AgentSpec> {
    let spec = s.parse::<AgentSpec>().map_err(|e| anyhow!("{flag}: {e}"))?;
    Ok(spec.default_device(device))
}

fn proof_name(p: Proof) -> &'static str {
    match p {
        Proof::Unknown => "unknown",
        Proof::Win => "win",
        Proof::Loss => "loss",
        Proof::Draw => "draw",
    }
}

pub fn analyze(args: &PositionArgs, agent: &str, device: &str, json: bool, top: usize, out: &mut impl Write) -> Result<()> {
    let spec = parse_spec("--agent", agent, device)?;
    let pos = args.position()?;
    if let Some(o) = pos.outcome() {
        bail!("the game is over ({o}); nothing to analyze");
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
    if json {
        let moves: Vec<_> = r
            .moves
            .iter()
            .take(top)
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
    for m in r.moves.iter().take(top) {
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

pub struct MatchArgs {
    pub variant: String,
    pub a: String,
    pub b: String,
    pub games: usize,
    pub seed: u64,
    pub opening_plies: u32,
    pub device: String,
    pub record: Option<PathBuf>,
    pub sprt: Option<String>,
    pub json: bool,
    pub quiet: bool,
}

fn wdl_text(w: Wdl) -> String {
    format!("{}W {}D {}L", w.win, w.draw, w.loss)
}

pub fn run_match(m: &MatchArgs, out: &mut impl Write) -> Result<()> {
    let variant = Arc::new(Variant::from_spec(&m.variant)?);
    let a = parse_spec("--a", &m.a, &m.device)?;
    let b = parse_spec("--b", &m.b, &m.device)?;
    if m.games == 0 {
        bail!("--games: must be at least 1");
    }
    // Games run in parallel across cores; each network evaluator then uses one torch thread.
    tafl_lab::nn::set_torch_threads(1);
    let bar = super::progress_bar(m.games as u64, format!("{a} vs {b}"), m.quiet);
    let points = std::sync::Mutex::new((0.0f64, 0usize));
    let cfg = MatchConfig { games: m.games, seed: m.seed, opening_plies: m.opening_plies };
    let t = Instant::now();
    let sprt = match &m.sprt {
        None => None,
        Some(text) => {
            let (e0, e1) = text
                .split_once(',')
                .and_then(|(x, y)| Some((x.trim().parse::<f64>().ok()?, y.trim().parse::<f64>().ok()?)))
                .filter(|(x, y)| x < y)
                .ok_or_else(|| anyhow!("--sprt {text:?}: expected ELO0,ELO1 with ELO0 < ELO1, e.g. 0,30"))?;
            Some(Sprt::new(e0, e1))
        }
    };
    let decided = |games: &[arena::GameResult]| {
        sprt.is_some_and(|s| {
            let w = MatchSummary::from_games(games).a_total();
            s.decide(w.win as u64, w.draw as u64, w.loss as u64) != SprtDecision::Continue
        })
    };
    let games = arena::play_match_until(
        &variant,
        &a,
        &b,
        &cfg,
        &|g| {
            let mut p = points.lock().expect("not poisoned");
            p.0 += g.a_points();
            p.1 += 1;
            bar.set_message(format!("A scores {:.1}%", 100.0 * p.0 / p.1 as f64));
            bar.inc(1);
        },
        &decided,
    )?;
    bar.finish_and_clear();
    if let Some(path) = &m.record {
        let mut text = String::new();
        for g in &games {
            let moves: Vec<String> = g.moves.iter().map(|mv| mv.to_string()).collect();
            text.push_str(&format!(
                "# game {}: A ({a}) plays {}; {}\n{}\n",
                g.index + 1,
                g.a_side.name(),
                g.outcome,
                moves.join(" ")
            ));
        }
        tafl_lab::fsio::atomic_write(path, text.as_bytes()).map_err(|e| anyhow!("--record {}: {e}", path.display()))?;
    }
    let s = MatchSummary::from_games(&games);
    let secs = t.elapsed().as_secs_f64();
    let total = s.a_total();
    let elo = elo_interval(total.win as u64, total.draw as u64, total.loss as u64);
    let sprt_result = sprt.map(|sp| {
        let llr = sp.llr(total.win as u64, total.draw as u64, total.loss as u64);
        let (lo, hi) = sp.bounds();
        (sp, llr, lo, hi, sp.decide(total.win as u64, total.draw as u64, total.loss as u64))
    });
    if m.json {
        let obj = json!({
            "variant": variant.name,
            "a": a.to_string(),
            "b": b.to_string(),
            "games": s.games,
            "a_score": s.a_score,
            "a_as_attackers": s.a_as_attackers,
            "a_as_defenders": s.a_as_defenders,
            "a_total": s.a_total(),
            "mean_plies": s.mean_plies,
            "elo": elo,
            "sprt": sprt_result.map(|(sp, llr, lo, hi, d)| json!({"elo0": sp.elo0, "elo1": sp.elo1, "llr": llr, "lower": lo, "upper": hi, "decision": d})),
            "seed": m.seed,
            "seconds": secs,
        });
        writeln!(out, "{obj}")?;
    } else {
        writeln!(
            out,
            "{}: A = {a}, B = {b}: {} games, A scores {:.1}% ({}); A as attackers {}, as defenders {}; mean {:.0} plies, {secs:.1} s",
            variant.name,
            s.games,
            100.0 * s.a_score,
            wdl_text(s.a_total()),
            wdl_text(s.a_as_attackers),
            wdl_text(s.a_as_defenders),
            s.mean_plies,
        )?;
        writeln!(out, "Elo difference (A - B): {:+.0} (95% interval {:+.0} to {:+.0})", elo.elo, elo.low, elo.high)?;
        if let Some((sp, llr, lo, hi, d)) = sprt_result {
            let verdict = match d {
                SprtDecision::AcceptH1 => format!("H1 accepted: A is at least {} Elo stronger", sp.elo1),
                SprtDecision::AcceptH0 => format!("H0 accepted: A is not {} Elo stronger (at most {})", sp.elo1, sp.elo0),
                SprtDecision::Continue => "no decision yet (play more games)".into(),
            };
            writeln!(out, "SPRT [{}, {}]: LLR {llr:.2} (bounds {lo:.2}, {hi:.2}) after {} games: {verdict}", sp.elo0, sp.elo1, s.games)?;
        }
    }
    Ok(())
}

pub fn new_model(variant: &str, out_path: &PathBuf, blocks: Option<usize>, channels: Option<usize>, seed: u64, out: &mut impl Write) -> Result<()> {
    let variant = Variant::from_spec(variant)?;
    let d = NetConfig::default_for(variant.geometry.size());
    let cfg = NetConfig { blocks: blocks.unwrap_or(d.blocks), channels: channels.unwrap_or(d.channels) };
    if cfg.channels == 0 {
        bail!("--channels: must be at least 1");
    }
    tch::manual_seed(seed as i64);
    let net = TaflNet::new(variant.geometry.size(), cfg, tch::Device::Cpu);
    checkpoint::save(&net, &ModelMeta::new(&variant, cfg, 0), out_path)?;
    writeln!(out, "wrote {} ({} network, {} parameters, untrained) for {}", out_path.display(), cfg, net.parameter_count(), variant.name)?;
    Ok(())
}

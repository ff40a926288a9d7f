//! `tafl-lab calibrate`: a model measured on recorded games, per side (see
//! `tafl_lab::lab::calibrate`): how well its value foretells results, how often its search
//! overrules its prior, and where the games end.

use anyhow::{anyhow, bail, Result};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tafl_lab::export::model_variant;
use tafl_lab::lab::calibrate::{self, Endings, Measurement, Options, RecordedGame, LENGTH_BUCKET};
use tafl_lab::nn::{checkpoint, parse_device, NetEvaluator};
use tafl_lab::rules::records::{self, RecordResult, Stop};
use tafl_lab::rules::{Side, Variant};
use tafl_lab::selfplay::shard;
use tafl_lab::stats::calibration::{Report, SideReport};
use tafl_lab::train::RunDir;
use tafl_lab::view::input::SourceKind;

/// Measure why a model wins or loses with each side, on recorded games.
///
/// Give the model and one source of games: human records (--games), a training run's
/// self-play shards (--run-dir) or a `match --record` file (--record). On a seeded sample of
/// the games' positions (--max-positions) the network's value for the side to move, as an
/// expected score W + D/2, is set against the score that side got in the game; printed per
/// side to move (attackers, defenders) and per third of the game (opening, middle, end: the
/// thirds of each game's own length), with a reliability table (predictions in buckets of
/// 0.1). Shards also hold the self-play search's root value, measured the same way.
///
/// With --search-sims N the model's search (PUCT, as `az:model=...,sims=N`) runs from
/// --search-positions sampled positions of each side: how often it plays a move that is not
/// the prior's first (or not in its first three), the mean prior of its move, and how far
/// its value moves from the network's.
///
/// Last, where games end: the games each side won, by length and by what ended them (the
/// rules' reason, or a recorded resignation or loss on time), and for the defenders' wins how
/// often the king had two or more escape squares in reach at the attackers' last turn (a
/// fork no single move blocks), and how often a move there would have blocked every threat.
/// Games without a result are left out and counted.
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["games", "run_dir", "record"])))]
pub struct CalibrateArgs {
    /// The model: a .safetensors file, a model directory or a run directory (its latest).
    #[arg(long)]
    pub model: PathBuf,
    /// Game records: an archive CSV (moves,attacker_captures,defender_captures,result),
    /// numbered lines with results or an OpenTafl record; each game checked with the rules.
    #[arg(long, value_name = "FILE")]
    pub games: Option<PathBuf>,
    /// The variant of --games (default: the model's); it must be the model's.
    #[arg(long, requires = "games")]
    pub variant: Option<String>,
    /// A training run directory: its self-play shards, with the search's stored values.
    #[arg(long, value_name = "DIR")]
    pub run_dir: Option<PathBuf>,
    /// With --run-dir: only the games of model generation G and later.
    #[arg(long, value_name = "G", default_value_t = 0, requires = "run_dir")]
    pub since_generation: u64,
    /// A `match --record` file (games the rules did not end, such as forfeits, are left out).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Most positions to evaluate: a seeded sample of all the games' positions.
    #[arg(long, default_value_t = Options::default().max_positions)]
    pub max_positions: usize,
    /// Seed of the position samples and the searches.
    #[arg(long, default_value_t = Options::default().seed)]
    pub seed: u64,
    /// Simulations of the search check (default: no search check).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub search_sims: Option<u32>,
    /// Positions of each side to move that the search check searches.
    #[arg(long, default_value_t = Options::default().search_positions)]
    pub search_positions: usize,
    /// Print one JSON object instead of the tables.
    #[arg(long)]
    pub json: bool,
    /// Also write the JSON object to this file (atomically).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub device: super::DeviceArgs,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// The games of the source, what it is in words, and the records left out while reading.
struct Source {
    kind: &'static str,
    path: PathBuf,
    games: Vec<RecordedGame>,
    skipped: Vec<String>,
}

pub fn run(args: &CalibrateArgs, out: &mut impl Write) -> Result<()> {
    if args.max_positions == 0 {
        bail!("--max-positions: must be at least 1");
    }
    let path = checkpoint::resolve(&args.model)?;
    let meta = checkpoint::read_meta(&path)?;
    let variant = Arc::new(model_variant(&meta, &path)?);
    if let Some(v) = &args.variant {
        let asked = Variant::from_spec(v).map_err(|e| anyhow!("--variant: {e}"))?;
        meta.check_variant(&asked, &path)?;
    }
    let source = if let Some(f) = &args.games {
        record_games(f, &variant)?
    } else if let Some(d) = &args.run_dir {
        shard_games(d, &variant, args.since_generation)?
    } else if let Some(f) = &args.record {
        match_games(f, &variant)?
    } else {
        unreachable!("clap requires a source")
    };
    if source.games.is_empty() {
        let first = source.skipped.first().map_or(String::new(), |s| format!(" (first: {s})"));
        bail!("{}: no games to measure ({} skipped{first})", source.path.display(), source.skipped.len());
    }
    tafl_lab::nn::set_torch_threads(super::cores());
    let device = parse_device(&args.device.device)?;
    let (net, _) = checkpoint::load(&path, Some(&variant), device)?;
    let mut evaluator = NetEvaluator::new(net, &variant, args.device.precision);
    let opts = Options {
        max_positions: args.max_positions,
        seed: args.seed,
        search_sims: args.search_sims,
        search_positions: args.search_positions,
        ..Options::default()
    };
    let mut bar: Option<(String, indicatif::ProgressBar)> = None;
    let mut progress = |stage: &str, done: u64, total: u64| {
        if bar.as_ref().map_or(true, |(s, _)| s != stage) {
            if let Some((_, b)) = bar.take() {
                b.finish_and_clear();
            }
            bar = Some((stage.to_string(), super::progress_bar(total, stage, args.quiet)));
        }
        if let Some((_, b)) = &bar {
            b.set_position(done);
        }
    };
    let m = calibrate::measure(&variant, &source.games, &mut evaluator, &opts, &mut progress).map_err(|e| anyhow!("{}: {e}", source.path.display()))?;
    if let Some((_, b)) = bar.take() {
        b.finish_and_clear();
    }
    let obj = json!({
        "model": path.display().to_string(),
        "variant": variant.name,
        "source": {"kind": source.kind, "path": source.path.display().to_string()},
        "skipped_records": source.skipped,
        "seed": args.seed,
        "max_positions": args.max_positions,
        "search_sims": args.search_sims,
        "search_positions": args.search_positions,
        "measurement": m,
    });
    if let Some(file) = &args.out {
        tafl_lab::fsio::atomic_write(file, format!("{obj}\n").as_bytes()).map_err(|e| anyhow!("--out {}: {e}", file.display()))?;
    }
    if args.json {
        writeln!(out, "{obj}")?;
    } else {
        print_text(out, &path, &variant, &source, args, &m)?;
    }
    Ok(())
}

/// Records of human (or other) games, each checked with the rules; the bad ones are skipped.
fn record_games(file: &Path, variant: &Arc<Variant>) -> Result<Source> {
    let text = std::fs::read_to_string(file).map_err(|e| anyhow!("{}: {e}", file.display()))?;
    let (form, games) = records::games(&text, records::Expect::Only(variant), false);
    let mut src = Source { kind: form.name(), path: file.to_path_buf(), games: Vec::new(), skipped: Vec::new() };
    for g in games {
        match g {
            Ok(g) => src.games.push(RecordedGame {
                label: format!("line {}", g.line),
                moves: g.record.moves,
                recorded: g.record.result,
                how: g.record.stop.map(|s| match s {
                    Stop::Timeout => "timeout".to_string(),
                    Stop::Resigned => "resigned".to_string(),
                }),
                values: Vec::new(),
            }),
            Err(skip) => src.skipped.push(format!("{}: {skip}", file.display())),
        }
    }
    Ok(src)
}

/// The self-play games of a run, with the stored value of every fully searched ply.
fn shard_games(dir: &Path, variant: &Arc<Variant>, since: u64) -> Result<Source> {
    let paths = RunDir::new(dir).shards()?;
    let mut src = Source { kind: "self-play shards", path: dir.to_path_buf(), games: Vec::new(), skipped: Vec::new() };
    for p in paths {
        let name = p.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        if shard::parse_file_name(&name).is_some_and(|(g, _)| g < since) {
            continue;
        }
        let s = match shard::read(&p) {
            Ok(s) => s,
            Err(e) => {
                src.skipped.push(e.to_string());
                continue;
            }
        };
        if s.model_generation < since {
            continue;
        }
        if let Err(e) = s.check(variant, u64::MAX) {
            src.skipped.push(format!("{}: {e}", p.display()));
            continue;
        }
        for (k, g) in s.games.iter().enumerate() {
            let f = g.to_finished();
            src.games.push(RecordedGame {
                label: format!("{name} #{}", k + 1),
                moves: f.plies.iter().map(|p| p.mv).collect(),
                recorded: RecordResult::Unfinished,
                how: None,
                values: f.plies.iter().map(|p| p.full.then_some(p.value)).collect(),
            });
        }
    }
    if src.games.is_empty() && src.skipped.is_empty() {
        bail!(
            "{}: no self-play shards{}",
            RunDir::new(dir).games().display(),
            if since > 0 { format!(" of generation {since} or later") } else { String::new() }
        );
    }
    Ok(src)
}

/// The games of a `match --record` file, which must be of the model's variant.
fn match_games(file: &Path, variant: &Arc<Variant>) -> Result<Source> {
    let read = tafl_lab::view::input::read(file, None)?;
    if read.kind != SourceKind::MatchRecord {
        bail!("{}: not a match record (read as {}); give human records with --games", file.display(), read.kind);
    }
    let mut src = Source { kind: read.kind.name(), path: file.to_path_buf(), games: Vec::new(), skipped: read.skipped };
    for (k, g) in read.games.into_iter().enumerate() {
        if g.variant.rules_fingerprint() != variant.rules_fingerprint() || g.variant.geometry != variant.geometry {
            bail!("{}: the record's variant ({}) is not the model's ({})", file.display(), g.variant.name, variant.name);
        }
        // A game the rules did not end has no result here (its note is a forfeit or a void
        // game's words): it is counted as unfinished.
        src.games.push(RecordedGame {
            label: format!("game {} ({})", k + 1, g.label),
            moves: g.moves,
            recorded: RecordResult::Unfinished,
            how: None,
            values: Vec::new(),
        });
    }
    Ok(src)
}

/// A number, or `-` for NaN.
fn num(x: f64, decimals: usize) -> String {
    if x.is_nan() {
        "-".into()
    } else {
        format!("{x:.decimals$}")
    }
}

fn signed(x: f64, decimals: usize) -> String {
    if x.is_nan() {
        "-".into()
    } else {
        format!("{x:+.decimals$}")
    }
}

fn percent(x: f64) -> String {
    format!("{:.0}%", 100.0 * x)
}

/// The summary table and the reliability table of one measured predictor.
fn print_report(out: &mut impl Write, title: &str, r: &Report) -> Result<()> {
    writeln!(out, "\n{title}")?;
    writeln!(out, "{:<13} {:<8} {:>9} {:>9} {:>8} {:>7} {:>6}", "side to move", "phase", "positions", "predicted", "realized", "bias", "Brier")?;
    for side in [Side::Attackers, Side::Defenders] {
        for (i, (phase, t)) in r.side(side).slices().into_iter().enumerate() {
            let s = &t.summary;
            let who = if i == 0 { side.name() } else { "" };
            writeln!(
                out,
                "{who:<13} {phase:<8} {:>9} {:>9} {:>8} {:>7} {:>6}",
                s.count,
                num(s.mean_predicted, 3),
                num(s.mean_realized, 3),
                signed(s.bias, 3),
                num(s.brier, 3)
            )?;
        }
    }
    writeln!(out, "reliability: predicted score in buckets of 0.1; realized score overall and per third (positions in brackets)")?;
    writeln!(
        out,
        "{:<13} {:<9} {:>9} {:>9} {:>8} {:>13} {:>13} {:>13}",
        "side to move", "predicted", "positions", "mean", "realized", "opening", "middle", "end"
    )?;
    for side in [Side::Attackers, Side::Defenders] {
        let sr: &SideReport = r.side(side);
        let mut first = true;
        for (i, b) in sr.all.reliability.iter().enumerate().filter(|(_, b)| b.count > 0) {
            let who = if first { side.name() } else { "" };
            first = false;
            let phase = |t: &tafl_lab::stats::calibration::TableReport| {
                let pb = &t.reliability[i];
                if pb.count == 0 {
                    "-".to_string()
                } else {
                    format!("{} ({})", num(pb.realized, 2), pb.count)
                }
            };
            writeln!(
                out,
                "{who:<13} {:<9} {:>9} {:>9} {:>8} {:>13} {:>13} {:>13}",
                format!("{:.1}-{:.1}", b.low, b.high),
                b.count,
                num(b.mean_predicted, 3),
                num(b.realized, 3),
                phase(&sr.opening),
                phase(&sr.middle),
                phase(&sr.end)
            )?;
        }
    }
    Ok(())
}

fn print_endings(out: &mut impl Write, title: &str, e: &Endings) -> Result<()> {
    writeln!(out, "{title}: {} games", e.games)?;
    if e.games == 0 {
        return Ok(());
    }
    let lengths: Vec<String> = e.length.iter().map(|(from, n)| format!("{from}-{}: {n}", from + LENGTH_BUCKET - 1)).collect();
    writeln!(out, "  length in plies: {}", lengths.join(", "))?;
    let mut how: Vec<(&String, &usize)> = e.how.iter().collect();
    how.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    writeln!(out, "  ended by: {}", how.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", "))?;
    if let (Some(k), Some(share)) = (e.king_escapes, e.fork_share()) {
        writeln!(
            out,
            "  escape squares in the king's reach at the attackers' last turn: none {}, one {}, two or more (a fork) {} ({})",
            k[0],
            k[1],
            k[2],
            percent(share)
        )?;
        if let Some(b) = e.blockable {
            writeln!(out, "  of the {} with one or more, a move that left the king none existed in {b} (missed blocks)", k[1] + k[2])?;
        }
    }
    Ok(())
}

fn print_text(out: &mut impl Write, model: &Path, variant: &Variant, src: &Source, args: &CalibrateArgs, m: &Measurement) -> Result<()> {
    let c = &m.counts;
    writeln!(out, "model {} ({}); games: {} ({})", model.display(), variant.name, src.path.display(), src.kind)?;
    if !src.skipped.is_empty() {
        writeln!(out, "{} records skipped while reading; first: {}", src.skipped.len(), src.skipped[0])?;
    }
    writeln!(
        out,
        "{} games: {} with a result, {} without (left out), {} that do not replay; {} positions, {} evaluated (seed {})",
        c.games,
        c.scored,
        c.unfinished,
        c.invalid.len(),
        c.positions,
        c.sampled,
        args.seed
    )?;
    if let Some(e) = c.invalid.first() {
        writeln!(out, "first game that does not replay: {e}")?;
    }
    print_report(out, "Network value: predicted score of the side to move (W + D/2) against the score it got", &m.network)?;
    if let Some(r) = &m.stored_search {
        print_report(out, "Stored search value of the self-play games ((v + 1)/2, full searches) against the score the side to move got", r)?;
    }
    if let Some(s) = &m.search {
        writeln!(out, "\nSearch check: the model's search ({} simulations, PUCT as the az agent) against the network's prior", s.sims)?;
        writeln!(
            out,
            "{:<13} {:>9} {:>13} {:>13} {:>13} {:>12} {:>7}",
            "side to move", "positions", "not top prior", "outside top 3", "prior of move", "search - net", "proven"
        )?;
        for side in [Side::Attackers, Side::Defenders] {
            let t = s.side(side);
            writeln!(
                out,
                "{:<13} {:>9} {:>13} {:>13} {:>13} {:>12} {:>7}",
                side.name(),
                t.positions,
                percent(t.not_top_prior),
                percent(t.outside_top3),
                num(t.mean_prior_of_move, 3),
                signed(t.mean_value_gain, 3),
                percent(t.proven)
            )?;
        }
        writeln!(out, "(search - net: the search's value minus the network's, as expected scores of the side to move)")?;
    }
    writeln!(out, "\nWhere games end")?;
    print_endings(out, "attackers win (the defenders lose)", &m.endings.attackers_win)?;
    print_endings(out, "defenders win (the attackers lose)", &m.endings.defenders_win)?;
    print_endings(out, "draws", &m.endings.draws)?;
    Ok(())
}

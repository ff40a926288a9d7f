//! `tafl-lab balance`: how often each side wins a variant under self-play, with intervals,
//! across search budgets and rule tweaks; or, with `--compare`, whether two such runs differ.
//! `--shard I/N` plays one shard of the games into its own folder; `--merge` puts the shards'
//! folders together into the files of one whole run.

use anyhow::{anyhow, bail, Result};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tafl_lab::arena::shard::{self, Job, ShardFile, SHARD_FILE};
use tafl_lab::arena::{AgentSpec, Shard};
use tafl_lab::lab::balance::{self, BalanceJob, BalanceRow, BalanceSettings};
use tafl_lab::lab::ladder::{self, LadderSettings};
use tafl_lab::rules::Variant;

/// Measure variant balance: an agent plays itself on each variant; attacker, defender
/// and draw rates with 95% Wilson intervals, game lengths and end reasons, beside human
/// figures where they exist. Writes report.md, balance.csv, balance.json and plots.
#[derive(clap::Args)]
pub struct BalanceArgs {
    /// Comma-separated variants (preset names, TOML paths or OpenTafl rules strings).
    #[arg(long, default_value = "brandubh", required_unless_present_any = ["compare", "ladder", "merge", "atlas"])]
    pub variants: String,
    /// The agent for both sides.
    #[arg(long, default_value = balance::DEFAULT_AGENT)]
    pub agent: String,
    /// Games per variant and budget.
    #[arg(long, default_value_t = 200)]
    pub games: usize,
    /// Output directory.
    #[arg(long, default_value = "report", required_unless_present_any = ["compare", "ladder", "merge"])]
    pub out: PathBuf,
    /// Random seed: the same seed repeats the run exactly.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Sweep the search budget, e.g. 16,64,256 (balance often shifts with strength).
    #[arg(long)]
    pub sims: Option<String>,
    /// Change a rule for this run, e.g. --set king_strength=strong (repeatable). A network
    /// agent trained on the variant as given plays it under the changed rules (same board).
    #[arg(long = "set")]
    pub sets: Vec<String>,
    /// Random opening plies before the agent plays (variety for deterministic agents).
    #[arg(long, default_value_t = 0)]
    pub opening_plies: u32,
    #[command(flatten)]
    pub device: super::DeviceArgs,
    /// Balance against strength: play each (or every --every'th) checkpoint of this training
    /// run against itself (--games each, `az` with --sims, default 64), and neighbouring
    /// checkpoints against each other (--ladder-games) for Elo; writes ladder.md, ladder.json
    /// and a plot of the defenders' rate against Elo with the human rate into --out. Games
    /// start with at least 2 random opening plies.
    #[arg(long, value_name = "RUN_DIR", conflicts_with_all = ["compare", "sets"])]
    pub ladder: Option<PathBuf>,
    /// The handicap that evens the variant: the agent plays itself at equal search, then with
    /// the search of the side that scored less multiplied by each factor (e.g. 2,4,8);
    /// --games games at each. Fits the attackers' score against log2 of the search ratio and
    /// prints the ratio at which the sides are even, with a 95% interval; writes
    /// handicap.json into --out. One variant; no --sims or --set sweep.
    #[arg(long, value_name = "FACTORS", conflicts_with_all = ["compare", "ladder", "merge", "shard", "sims"])]
    pub handicap: Option<String>,
    /// The balance atlas: for every trained model in this folder (a folder per preset holding
    /// model.safetensors, as scripts/atlas.sh keeps them in models/atlas), the model playing
    /// itself at each of --sims (default 64,256; --games each, at least 2 random opening
    /// plies), the handicap that evens it at the first of them (--factors, --games at each),
    /// and its matches kept in <preset>/matches/*.json. Writes atlas.md, atlas.csv,
    /// atlas.json, atlas.html and the handicap plot into --out. Each preset's games are kept in
    /// --out/presets/<preset>.json as soon as they are played; a later run with the same
    /// model and settings takes them from there instead of playing them again.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["compare", "ladder", "merge", "shard", "handicap", "variants", "agent", "sets"])]
    pub atlas: Option<PathBuf>,
    /// With --atlas: the search multipliers of each preset's handicap.
    #[arg(long, value_name = "FACTORS", default_value = "2,4,8", requires = "atlas")]
    pub factors: String,
    /// With --ladder: take every Nth checkpoint (the first and the last always).
    #[arg(long, default_value_t = 1, requires = "ladder")]
    pub every: u64,
    /// With --ladder: games of each match between neighbouring checkpoints (0: no Elo).
    #[arg(long, default_value_t = 40, requires = "ladder")]
    pub ladder_games: usize,
    /// Compare two balance.json files instead: is the defenders' rate different?
    #[arg(long, num_args = 2, value_names = ["A", "B"])]
    pub compare: Option<Vec<PathBuf>>,
    /// With --compare: print JSON.
    #[arg(long)]
    pub json: bool,
    /// Play only shard I of N (counted from 0, as job-array task ids) of the games of every
    /// row (with --ladder: of every self-play and match): the pairs of games p with
    /// p mod N = I. Writes only shard.json into --out, a folder per shard; `--merge` puts
    /// the shards together.
    #[arg(long, value_name = "I/N", conflicts_with = "compare")]
    pub shard: Option<Shard>,
    /// Merge the --out folders of every shard of one run (balance or --ladder) into --out:
    /// the files one whole run writes (no games are played; the settings come from the shards).
    #[arg(long, value_name = "DIR", num_args = 1.., conflicts_with_all = ["compare", "ladder", "shard", "variants", "agent", "games", "seed", "sims", "sets", "opening_plies", "every", "ladder_games"])]
    pub merge: Option<Vec<PathBuf>>,
    #[arg(long)]
    pub quiet: bool,
}

/// Measures balance, or compares two earlier measurements with `--compare`.
pub fn run(a: &BalanceArgs, out: &mut impl Write) -> Result<()> {
    if let Some(dirs) = &a.merge {
        let command = std::env::args().collect::<Vec<_>>().join(" ");
        return merge(a, dirs, &command, out);
    }
    if let Some(run_dir) = &a.ladder {
        let command = std::env::args().collect::<Vec<_>>().join(" ");
        return ladder(a, run_dir, &command, out);
    }
    if let Some(factors) = &a.handicap {
        return handicap(a, factors, out);
    }
    if let Some(dir) = &a.atlas {
        let command = std::env::args().collect::<Vec<_>>().join(" ");
        return atlas(a, dir, &command, out);
    }
    match &a.compare {
        Some(files) => compare(&files[0], &files[1], a.json, out),
        None => {
            // report.md quotes the command line, so a report says how it was made.
            let command = std::env::args().collect::<Vec<_>>().join(" ");
            measure(a, &command, out)
        }
    }
}

/// The variant `spec` with the rule changes `sets` applied, and, when there are changes, the
/// variant unchanged: a network agent's model is checked against that one, so that a network
/// trained on the preset plays it under the changed rules (the rows name the changes).
fn variant_with_sets(spec: &str, sets: &[String]) -> Result<(Arc<Variant>, Option<Arc<Variant>>)> {
    let v = Variant::from_spec(spec)?;
    if sets.is_empty() {
        return Ok((Arc::new(v), None));
    }
    let mut tweaked = Variant::from_toml_with_overrides(&v.to_toml(), &format!("{spec}.toml"), sets)?;
    tweaked.name = v.name.clone();
    Ok((Arc::new(tweaked), Some(Arc::new(v))))
}

fn measure(a: &BalanceArgs, command: &str, out: &mut impl Write) -> Result<()> {
    if a.games == 0 {
        bail!("--games: must be at least 1");
    }
    let base: AgentSpec = a.agent.parse().map_err(|e| anyhow!("--agent: {e}"))?;
    let base = a.device.apply(base);
    let budgets: Vec<u32> = match &a.sims {
        None => vec![base.search.sims],
        Some(list) => parse_sims(list)?,
    };
    if base.search_config().is_none() && a.sims.is_some() {
        bail!("--sims: agent {base} does not search");
    }
    let mut jobs = Vec::new();
    for name in a.variants.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (variant, trained_for) = variant_with_sets(name, &a.sets).map_err(|e| anyhow!("--variants {name}: {e:#}"))?;
        for &sims in &budgets {
            let agent = AgentSpec { model_variant: trained_for.clone(), ..base.clone().with_sims(sims) };
            jobs.push(BalanceJob { variant: variant.clone(), changes: a.sets.clone(), agent });
        }
    }
    if jobs.is_empty() {
        bail!("--variants: no variant given");
    }
    super::check_shard(a.shard, a.games, "--games")?;
    tafl_lab::nn::set_torch_threads(1);
    let per_row = a.shard.map_or(a.games, |s| s.games(a.games).len());
    let bar = super::progress_bar((jobs.len() * per_row) as u64, "balance (games)", a.quiet);
    let (rows, results) = balance::measure_with_games(&jobs, a.games, a.seed, a.opening_plies, a.shard, &|_| bar.inc(1))?;
    bar.finish_and_clear();
    if let Some(shard) = a.shard {
        let settings = BalanceSettings::new(a.games, a.seed, a.opening_plies, &jobs, &rows);
        let path = write_shard(&a.out, SHARD_FILE, &ShardFile::new(shard, settings, results.iter().map(Vec::as_slice)))?;
        for r in &rows {
            writeln!(out, "shard {shard}: {}", r.summary_line())?;
        }
        writeln!(out, "wrote {} (merge every shard's folder with --merge)", path.display())?;
        return Ok(());
    }
    write_balance(&a.out, &jobs, &rows, &results, command, out)
}

/// `--handicap FACTORS`: plays and fits the handicap, prints a line per factor and the even
/// point, and writes handicap.json.
fn handicap(a: &BalanceArgs, factors: &str, out: &mut impl Write) -> Result<()> {
    use tafl_lab::lab::handicap::{self, HandicapJob};
    if a.games == 0 {
        bail!("--games: must be at least 1");
    }
    let factors = parse_factors("--handicap", factors)?;
    let names: Vec<&str> = a.variants.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    let [name] = names[..] else { bail!("--handicap: one variant at a time (--variants gave {})", names.len()) };
    let (variant, trained_for) = variant_with_sets(name, &a.sets).map_err(|e| anyhow!("--variants {name}: {e:#}"))?;
    let agent: AgentSpec = a.agent.parse().map_err(|e| anyhow!("--agent: {e}"))?;
    let agent = AgentSpec { model_variant: trained_for, ..a.device.apply(agent) };
    if agent.search_config().is_none() {
        bail!("--agent {agent}: --handicap multiplies search, and this agent does not search");
    }
    tafl_lab::nn::set_torch_threads(1);
    let total = (factors.iter().filter(|&&k| k > 1).count() + 1) * a.games;
    let bar = super::progress_bar(total as u64, "handicap (games)", a.quiet);
    let job = HandicapJob { variant, agent, factors, games: a.games, seed: a.seed, opening_plies: a.opening_plies.max(2) };
    let result = handicap::measure(&job, &|_| bar.inc(1))?;
    bar.finish_and_clear();
    for r in &result.rows {
        writeln!(
            out,
            "{} x{} for the {}: attackers {} sims, defenders {}: {} distinct games, attackers {}-{}-{} (score {:.1}%)",
            job.variant.name,
            r.factor,
            r.helped,
            r.attacker_sims,
            r.defender_sims,
            r.games,
            r.attackers_win,
            r.draws,
            r.defenders_win,
            100.0 * r.attackers_score
        )?;
    }
    let verdict = result.verdict();
    writeln!(out, "{}: {verdict}", job.variant.name)?;
    let fit =
        result.fit.as_ref().ok().map(
            |f| serde_json::json!({"a": f.a, "b": f.b, "x_even": f.x_even, "x_interval": f.x_interval, "k_even": f.k_even(), "k_interval": f.k_interval()}),
        );
    let json = serde_json::json!({
        "variant": job.variant.name, "changes": a.sets, "agent": job.agent.to_string(), "games_per_factor": a.games,
        "seed": a.seed, "opening_plies": job.opening_plies, "rows": result.rows, "fit": fit, "verdict": verdict,
    });
    let path = write_shard(&a.out, "handicap.json", &json)?;
    writeln!(out, "wrote {}", path.display())?;
    Ok(())
}

/// Parses `--sims`, a list of simulation counts (`16,64,256`).
fn parse_sims(list: &str) -> Result<Vec<u32>> {
    list.split(',').map(|x| x.trim().parse::<u32>().ok().filter(|&n| n > 0).ok_or_else(|| anyhow!("--sims: {x:?} is not a positive integer"))).collect()
}

/// Parses a list of search multipliers (`2,4,8`) for `flag`.
fn parse_factors(flag: &str, list: &str) -> Result<Vec<u32>> {
    let factors: Vec<u32> = list
        .split(',')
        .map(|x| x.trim().parse::<u32>().ok().filter(|&n| n >= 1).ok_or_else(|| anyhow!("{flag}: {x:?} is not a whole factor of 1 or more")))
        .collect::<Result<_>>()?;
    if !factors.iter().any(|&k| k > 1) {
        bail!("{flag}: give at least one factor above 1 (e.g. 2,4,8)");
    }
    Ok(factors)
}

/// `--atlas DIR`: measures every trained preset of DIR and writes the atlas's files.
fn atlas(a: &BalanceArgs, dir: &Path, command: &str, out: &mut impl Write) -> Result<()> {
    use tafl_lab::lab::atlas::{self, AtlasRow, HandicapSummary};
    use tafl_lab::lab::handicap::{self, HandicapJob};
    if a.games == 0 {
        bail!("--games: must be at least 1");
    }
    let sims = parse_sims(a.sims.as_deref().unwrap_or("64,256"))?;
    let factors = parse_factors("--factors", &a.factors)?;
    let (presets, training) = atlas::presets(dir)?;
    for name in &training {
        writeln!(out, "{name}: left out, its run is still training (its run/state.json is not finished)")?;
    }
    tafl_lab::nn::set_torch_threads(1);
    let opening_plies = a.opening_plies.max(2);
    let per_preset = sims.len() * a.games + (factors.iter().filter(|&&k| k > 1).count() + 1) * a.games;
    let bar = super::progress_bar((presets.len() * per_preset) as u64, "atlas (games)", a.quiet);
    let mut rows = Vec::new();
    for p in &presets {
        let spec = |n: u32| -> Result<AgentSpec> {
            let s: AgentSpec = format!("az:model={},sims={n}", p.model.display()).parse().map_err(|e| anyhow!("{}: {e}", p.model.display()))?;
            Ok(a.device.apply(s))
        };
        let strength = atlas::strength(dir, p)?;
        let model = tafl_lab::nn::checkpoint::model_file(&p.model)?;
        let key = atlas::MeasureKey { model_sha256: model.sha256, sims: sims.clone(), factors: factors.clone(), games: a.games, seed: a.seed, opening_plies };
        if let Some(m) = atlas::kept(&a.out, &p.name, &key) {
            bar.inc(per_preset as u64);
            bar.suspend(|| {
                writeln!(out, "{}: measured before with this model and these settings (kept in {}), not played again", p.name, a.out.join("presets").display())
            })?;
            rows.push(AtlasRow::new(p, strength, m.balance, m.handicap));
            continue;
        }
        let jobs: Vec<BalanceJob> =
            sims.iter().map(|&n| Ok(BalanceJob { variant: p.variant.clone(), changes: Vec::new(), agent: spec(n)? })).collect::<Result<_>>()?;
        let (balance_rows, _) = balance::measure_with_games(&jobs, a.games, a.seed, opening_plies, None, &|_| bar.inc(1))?;
        let agent = spec(sims[0])?;
        let job = HandicapJob { variant: p.variant.clone(), agent: agent.clone(), factors: factors.clone(), games: a.games, seed: a.seed, opening_plies };
        let h = handicap::measure(&job, &|_| bar.inc(1))?;
        let summary = HandicapSummary::new(&agent.to_string(), &factors, a.games, &h);
        for r in &balance_rows {
            bar.suspend(|| writeln!(out, "{}", r.summary_line()))?;
        }
        bar.suspend(|| writeln!(out, "{}: handicap: {}", p.name, summary.verdict))?;
        atlas::keep(&a.out, &p.name, &atlas::Measured { key, balance: balance_rows.clone(), handicap: Some(summary.clone()) })?;
        rows.push(AtlasRow::new(p, strength, balance_rows, Some(summary)));
    }
    bar.finish_and_clear();
    let files = atlas::write(&a.out, &rows, command)?;
    writeln!(out, "wrote {} files to {}", files.len(), a.out.display())?;
    Ok(())
}

/// Writes a whole balance run's files (report.md, balance.csv, balance.json, the plots and
/// the game pages) and prints its rows.
fn write_balance(
    dir: &Path,
    jobs: &[BalanceJob],
    rows: &[BalanceRow],
    results: &[Vec<tafl_lab::arena::GameResult>],
    command: &str,
    out: &mut impl Write,
) -> Result<()> {
    let mut files = balance::write_outputs(dir, rows, command)?;
    files.extend(super::view::balance_pages(dir, jobs, rows, results, command)?);
    for r in rows {
        writeln!(out, "{}", r.summary_line())?;
    }
    writeln!(out, "wrote {} files to {}", files.len(), dir.display())?;
    Ok(())
}

/// Writes a shard's file `name` into `dir` (made if needed); returns its path.
fn write_shard(dir: &Path, name: &str, value: &impl serde::Serialize) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).map_err(|e| anyhow!("--out {}: {e}", dir.display()))?;
    let path = dir.join(name);
    let text = serde_json::to_string_pretty(value)? + "\n";
    tafl_lab::fsio::atomic_write(&path, text.as_bytes()).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    Ok(path)
}

/// Reads the shard file of each folder in `dirs` (a folder's shard.json, or the file itself)
/// and writes the whole run's files into --out.
fn merge(a: &BalanceArgs, dirs: &[PathBuf], command: &str, out: &mut impl Write) -> Result<()> {
    let mut balances = Vec::new();
    let mut ladders = Vec::new();
    for d in dirs {
        let path = if d.is_dir() { d.join(SHARD_FILE) } else { d.clone() };
        if !path.is_file() {
            bail!("--merge {}: holds no {SHARD_FILE} (not the --out of a balance --shard run)", d.display());
        }
        let source = path.display().to_string();
        let text = std::fs::read_to_string(&path).map_err(|e| anyhow!("--merge {source}: {e}"))?;
        let value = shard::parse(&source, &text)?;
        if shard::kind_of(&value) == Some(LadderSettings::KIND) {
            ladders.push((source.clone(), ShardFile::<LadderSettings>::from_json(&source, value)?));
        } else {
            balances.push((source.clone(), ShardFile::<BalanceSettings>::from_json(&source, value)?));
        }
    }
    match (balances.is_empty(), ladders.is_empty()) {
        (false, false) => bail!("--merge: shards of a balance run and of a ladder do not merge ({} and {})", balances[0].0, ladders[0].0),
        (true, false) => {
            let n = ladders.len();
            let l = ladder::merge(ladders)?;
            let files = ladder::write_outputs(&a.out, &l, command)?;
            for r in &l.rows {
                writeln!(out, "{}", r.summary_line())?;
            }
            writeln!(out, "merged {n} shards; wrote {} files to {}", files.len(), a.out.display())?;
            Ok(())
        }
        _ => {
            let n = balances.len();
            let (jobs, rows, results) = balance::merge(balances)?;
            writeln!(out, "merged {n} shards")?;
            write_balance(&a.out, &jobs, &rows, &results, command, out)
        }
    }
}

fn read_rows(path: &Path) -> Result<Vec<BalanceRow>> {
    let text = std::fs::read_to_string(path).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| anyhow!("{}: not a balance.json file ({e})", path.display()))
}

fn compare(a: &Path, b: &Path, json: bool, out: &mut impl Write) -> Result<()> {
    let (ra, rb) = (read_rows(a)?, read_rows(b)?);
    let cmp = balance::compare(&ra, &rb);
    if cmp.is_empty() {
        bail!("{} and {}: nothing to compare", a.display(), b.display());
    }
    if json {
        writeln!(out, "{}", serde_json::to_string(&cmp)?)?;
        return Ok(());
    }
    for c in &cmp {
        writeln!(
            out,
            "{} vs {} (paired by {}): defenders {:.1}% vs {:.1}% (difference {:+.1} points), z = {:.2}, p = {:.4}: {}",
            c.a,
            c.b,
            c.paired_by,
            100.0 * c.a_defenders_rate,
            100.0 * c.b_defenders_rate,
            100.0 * c.difference,
            c.z,
            c.p_value,
            if c.significant { "different at the 5% level" } else { "no significant difference at the 5% level" }
        )?;
    }
    Ok(())
}

/// The checkpoints `models/NNNNNN.safetensors` of a run directory, by generation.
fn checkpoints(run_dir: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let models = run_dir.join("models");
    let entries = std::fs::read_dir(&models).map_err(|e| anyhow!("--ladder {}: {e} (expected a training run directory with models/)", models.display()))?;
    let mut found: Vec<(u64, PathBuf)> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?;
            let stem = name.strip_suffix(".safetensors")?;
            (stem.len() == 6 && stem.bytes().all(|b| b.is_ascii_digit())).then(|| (stem.parse().ok(), p.clone()))?.0.map(|g| (g, p))
        })
        .collect();
    found.sort();
    if found.is_empty() {
        bail!("--ladder {}: no checkpoints (models/NNNNNN.safetensors)", run_dir.display());
    }
    Ok(found)
}

fn ladder(a: &BalanceArgs, run_dir: &Path, command: &str, out: &mut impl Write) -> Result<()> {
    use tafl_lab::arena::AgentKind;
    use tafl_lab::lab::ladder::LadderJob;
    if a.games == 0 {
        bail!("--games: must be at least 1");
    }
    let all = checkpoints(run_dir)?;
    let generations: Vec<u64> = all.iter().map(|c| c.0).collect();
    let picked = ladder::pick_generations(&generations, a.every);
    let chosen: Vec<(u64, PathBuf)> = all.into_iter().filter(|c| picked.contains(&c.0)).collect();
    let meta = tafl_lab::nn::checkpoint::read_meta(&chosen[0].1)?;
    let variant = Arc::new(tafl_lab::export::model_variant(&meta, &chosen[0].1)?);
    let sims = match &a.sims {
        None => 64,
        Some(s) => {
            s.trim().parse::<u32>().ok().filter(|&n| n > 0).ok_or_else(|| anyhow!("--sims: with --ladder, one positive number of simulations (not {s:?})"))?
        }
    };
    let agent = a.device.apply(AgentSpec::new(AgentKind::Az, None, sims));
    let job = LadderJob {
        variant,
        run_dir,
        checkpoints: chosen,
        agent,
        games: a.games,
        match_games: a.ladder_games,
        seed: a.seed,
        // A network agent without noise plays one game from one opening: at least two random
        // opening plies make the games of a checkpoint differ.
        opening_plies: a.opening_plies.max(2),
    };
    super::check_shard(a.shard, a.games, "--games")?;
    if a.ladder_games > 0 {
        super::check_shard(a.shard, a.ladder_games, "--ladder-games")?;
    }
    tafl_lab::nn::set_torch_threads(1);
    let n = job.checkpoints.len();
    let share = |games: usize| a.shard.map_or(games, |s| s.games(games).len());
    let total = (n * share(a.games) + n.saturating_sub(1) * share(a.ladder_games)) as u64;
    let bar = super::progress_bar(total, "ladder (games)", a.quiet);
    if let Some(shard) = a.shard {
        let games = ladder::play(&job, Some(shard), &|_| bar.inc(1))?;
        bar.finish_and_clear();
        let path = write_shard(&a.out, SHARD_FILE, &games.shard_file(shard, &job))?;
        writeln!(out, "shard {shard}: {} checkpoints, {} matches; wrote {} (merge every shard's folder with --merge)", n, games.matches.len(), path.display())?;
        return Ok(());
    }
    let result = ladder::measure(&job, &|_| bar.inc(1))?;
    bar.finish_and_clear();
    let files = ladder::write_outputs(&a.out, &result, command)?;
    for r in &result.rows {
        writeln!(out, "{}", r.summary_line())?;
    }
    writeln!(out, "wrote {} files to {}", files.len(), a.out.display())?;
    Ok(())
}

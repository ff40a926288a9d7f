//! `tafl-lab balance` and `tafl-lab report`.

use anyhow::{anyhow, bail, Result};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tafl_lab::arena::AgentSpec;
use tafl_lab::rules::Variant;
use tafl_lab::stats::balance::{self, BalanceJob, BalanceRow};
use tafl_lab::stats::report;

pub struct BalanceArgs {
    pub variants: String,
    pub agent: String,
    pub games: usize,
    pub out: PathBuf,
    pub seed: u64,
    pub sims: Option<String>,
    pub sets: Vec<String>,
    pub opening_plies: u32,
    pub device: String,
    pub quiet: bool,
}

fn variant_with_sets(spec: &str, sets: &[String]) -> Result<Variant> {
    let v = Variant::from_spec(spec)?;
    if sets.is_empty() {
        return Ok(v);
    }
    let mut tweaked = Variant::from_toml_with_overrides(&v.to_toml(), &format!("{spec}.toml"), sets)?;
    tweaked.name = v.name.clone();
    Ok(tweaked)
}

pub fn run(a: &BalanceArgs, command: &str, out: &mut impl Write) -> Result<()> {
    if a.games == 0 {
        bail!("--games: must be at least 1");
    }
    let base: AgentSpec = a.agent.parse().map_err(|e| anyhow!("--agent: {e}"))?;
    let base = base.default_device(&a.device);
    let budgets: Vec<u32> = match &a.sims {
        None => vec![base.sims],
        Some(list) => list
            .split(',')
            .map(|x| x.trim().parse::<u32>().ok().filter(|&n| n > 0).ok_or_else(|| anyhow!("--sims: {x:?} is not a positive integer")))
            .collect::<Result<_>>()?,
    };
    if base.search_config().is_none() && a.sims.is_some() {
        bail!("--sims: agent {base} does not search");
    }
    let mut jobs = Vec::new();
    for name in a.variants.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let variant = Arc::new(variant_with_sets(name, &a.sets).map_err(|e| anyhow!("--variants {name}: {e:#}"))?);
        for &sims in &budgets {
            let mut agent = base.clone();
            agent.sims = sims;
            let agent = if a.sims.is_some() { agent.with_text(&base.text_with_sims(sims)) } else { agent };
            jobs.push(BalanceJob { variant: variant.clone(), changes: a.sets.clone(), agent });
        }
    }
    if jobs.is_empty() {
        bail!("--variants: no variant given");
    }
    tafl_lab::nn::set_torch_threads(1);
    let total = (jobs.len() * a.games) as u64;
    let bar = super::progress_bar(total, "balance (games)", a.quiet);
    let rows: Vec<BalanceRow> = balance::measure(&jobs, a.games, a.seed, a.opening_plies, &|_| bar.inc(1))?;
    bar.finish_and_clear();
    let files = balance::write_outputs(&a.out, &rows, command)?;
    for r in &rows {
        writeln!(
            out,
            "{}: {} games, attackers {:.1}%, defenders {:.1}% (95% CI {:.1}-{:.1}), draws {:.1}%, mean {:.1} plies",
            r.label(),
            r.games,
            100.0 * r.attackers_rate,
            100.0 * r.defenders_rate,
            100.0 * r.defenders_ci[0],
            100.0 * r.defenders_ci[1],
            100.0 * r.draws_rate,
            r.mean_length
        )?;
    }
    writeln!(out, "wrote {} files to {}", files.len(), a.out.display())?;
    Ok(())
}

fn read_rows(path: &Path) -> Result<Vec<BalanceRow>> {
    let text = std::fs::read_to_string(path).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| anyhow!("{}: not a balance.json file ({e})", path.display()))
}

pub fn compare(a: &Path, b: &Path, json: bool, out: &mut impl Write) -> Result<()> {
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

pub fn run_report(run_dir: &Path, out_dir: Option<PathBuf>, out: &mut impl Write) -> Result<()> {
    let rows = report::read_metrics(&run_dir.join("metrics.jsonl"))?;
    let dir = out_dir.unwrap_or_else(|| run_dir.join("report"));
    let files = report::write(&rows, &run_dir.display().to_string(), &dir)?;
    writeln!(out, "{} generations; wrote {} files to {}", rows.len(), files.len(), dir.display())?;
    Ok(())
}

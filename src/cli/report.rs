//! `tafl-lab report`: a run's learning curves from its `metrics.jsonl`.

use anyhow::Result;
use std::io::Write;
use std::path::PathBuf;
use tafl_lab::report::learning as report;

/// Learning curves of a run (Elo and baseline scores against generation and time,
/// self-play per-side rates, losses) as Markdown and SVG/PNG plots.
#[derive(clap::Args)]
pub struct ReportArgs {
    #[arg(long)]
    pub run_dir: PathBuf,
    /// Output directory (default: RUN_DIR/report).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(args: &ReportArgs, out: &mut impl Write) -> Result<()> {
    let rows = report::read_metrics(&args.run_dir.join("metrics.jsonl"))?;
    let dir = args.out.clone().unwrap_or_else(|| args.run_dir.join("report"));
    let files = report::write(&rows, &args.run_dir.display().to_string(), &dir)?;
    writeln!(out, "{} generations; wrote {} files to {}", rows.len(), files.len(), dir.display())?;
    Ok(())
}

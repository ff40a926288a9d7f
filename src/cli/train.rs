//! `tafl-lab train` and `tafl-lab selfplay`: the main job and its workers, with progress bars
//! (or plain lines with --quiet).

use anyhow::{anyhow, Result};
use indicatif::ProgressBar;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tafl_lab::train::{self, Overrides, Reporter, RunConfig, DEFAULT_CONFIG};

/// Progress bars on the terminal; `quiet` keeps only the lines.
pub struct BarReporter {
    bar: Mutex<Option<ProgressBar>>,
    quiet: bool,
}

impl BarReporter {
    pub fn new(quiet: bool) -> BarReporter {
        BarReporter { bar: Mutex::new(None), quiet }
    }
}

impl Reporter for BarReporter {
    fn start(&self, phase: &str, total: u64) {
        if self.quiet {
            return;
        }
        let bar = super::progress_bar(total, phase, false);
        *self.bar.lock().expect("not poisoned") = Some(bar);
    }
    fn advance(&self, n: u64, message: &str) {
        if let Some(b) = self.bar.lock().expect("not poisoned").as_ref() {
            b.inc(n);
            if !message.is_empty() {
                b.set_message(message.to_string());
            }
        }
    }
    fn finish(&self) {
        if let Some(b) = self.bar.lock().expect("not poisoned").take() {
            b.finish_and_clear();
        }
    }
    fn line(&self, text: &str) {
        match self.bar.lock().expect("not poisoned").as_ref() {
            Some(b) => b.println(text),
            None => eprintln!("{text}"),
        }
    }
}

fn threads() -> usize {
    super::cores()
}

pub fn train(config: Option<&Path>, run_dir: Option<PathBuf>, resume: bool, overrides: Overrides, quiet: bool) -> Result<()> {
    overrides.validate()?;
    let given = match config {
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| anyhow!("{}: {e}", p.display()))?;
            RunConfig::from_toml(&text, &p.display().to_string())?
        }
        None => RunConfig::from_toml(DEFAULT_CONFIG, "embedded default config (configs/runs/brandubh.toml)")?,
    };
    let dir = run_dir.unwrap_or_else(|| PathBuf::from("runs").join(&given.name));
    // A resumed run trains with its saved config, so everything is sized from that one.
    let cfg = train::effective_config(Some(given.clone()), &dir, resume)?;
    let reporter = BarReporter::new(quiet);
    if let (Some(p), true) = (config, cfg != given) {
        reporter.line(&format!("note: --resume continues with the run's saved config; {} is not used", p.display()));
    }
    // One self-play thread per core share; torch's thread count is set once.
    tafl_lab::nn::set_torch_threads(train::torch_threads(&cfg, threads()));
    train::train(Some(cfg), &dir, resume, &overrides, &reporter)?;
    reporter.line(&format!("run directory: {} (metrics.jsonl, models/latest)", dir.display()));
    Ok(())
}

pub fn selfplay(run_dir: &Path, games: u64, minutes: f64, name: &str, quiet: bool) -> Result<()> {
    tafl_lab::nn::set_torch_threads(threads());
    let reporter = BarReporter::new(quiet);
    let n = train::worker(run_dir, name, games, minutes, &reporter)?;
    reporter.line(&format!("worker wrote {n} games to {}", run_dir.join("games").display()));
    Ok(())
}

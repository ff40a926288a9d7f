//! `tafl-lab train`: the main job, with progress bars (or plain lines with --quiet). Its
//! `BarReporter` also shows the progress of `selfplay` workers.

use anyhow::{anyhow, Result};
use indicatif::ProgressBar;
use std::path::PathBuf;
use std::sync::Mutex;
use tafl_lab::train::{self, Overrides, Reporter, RunConfig, DEFAULT_CONFIG};

/// Train a network by self-play in generations (the main job). With no --config, the
/// embedded default trains brandubh on a CPU within the budget it prints at start.
#[derive(clap::Args)]
pub struct TrainArgs {
    /// Run config (configs/runs/*.toml); default: the embedded brandubh config.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Train an AI for this variant (a preset name, a variant TOML file or an OpenTafl rules
    /// string) with the default recipe sized to its board: network, simulations, games per
    /// generation, replay window and budget (7x7: 60 minutes; 9x9: 120; 11x11: 240; larger:
    /// 480; --minutes changes it). The config is printed at the start and saved in the run
    /// directory (default runs/<variant name>).
    #[arg(long, conflicts_with = "config")]
    pub variant: Option<String>,
    /// Run directory (default: runs/<name>).
    #[arg(long)]
    pub run_dir: Option<PathBuf>,
    /// Continue the run in --run-dir (its saved config is used).
    #[arg(long)]
    pub resume: bool,
    /// Stop after this generation (overrides the config's budget).
    #[arg(long)]
    pub generations: Option<u64>,
    /// Stop before this many minutes of run time in total (overrides the config's budget).
    #[arg(long, allow_negative_numbers = true)]
    pub minutes: Option<f64>,
    /// Start a new run from this model (e.g. one `pretrain` wrote) instead of a fresh
    /// network: a model of this variant, or of another on the same board size (the nearest
    /// trained network); the config's [net] must be its size; the run keeps the model's input
    /// encoding.
    #[arg(long, conflicts_with = "resume")]
    pub init: Option<PathBuf>,
    /// No progress bars; one line per generation.
    #[arg(long)]
    pub quiet: bool,
}

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

pub fn run(args: &TrainArgs) -> Result<()> {
    let overrides = Overrides { generations: args.generations, minutes: args.minutes, init: args.init.clone() };
    overrides.validate()?;
    let config = args.config.as_deref();
    // The board size of --variant's variant, for the start line.
    let mut variant_size = None;
    let given = match (config, &args.variant) {
        (Some(p), _) => {
            let text = std::fs::read_to_string(p).map_err(|e| anyhow!("{}: {e}", p.display()))?;
            RunConfig::from_toml(&text, &p.display().to_string())?
        }
        (None, Some(spec)) => {
            let variant = tafl_lab::rules::Variant::from_spec(spec).map_err(|e| anyhow!("--variant {spec}: {e}"))?;
            variant_size = Some(variant.geometry.size());
            RunConfig::for_variant(spec, &variant)
        }
        (None, None) => RunConfig::from_toml(DEFAULT_CONFIG, "embedded default config (configs/runs/brandubh.toml)")?,
    };
    let dir = args.run_dir.clone().unwrap_or_else(|| PathBuf::from("runs").join(&given.name));
    if let (Some(_), true) = (&args.init, dir.join("state.json").exists()) {
        return Err(anyhow!("--init starts a new run, but {} already holds one; resume it without --init, or choose another --run-dir", dir.display()));
    }
    // A resumed run trains with its saved config, so everything is sized from that one.
    let cfg = train::effective_config(Some(given.clone()), &dir, args.resume)?;
    let reporter = BarReporter::new(args.quiet);
    if let (Some(p), true) = (config, cfg != given) {
        reporter.line(&format!("note: --resume continues with the run's saved config; {} is not used", p.display()));
    }
    if let (Some(spec), Some(size), false) = (&args.variant, variant_size, args.resume) {
        // As it will be saved: with the command line's budget.
        let mut shown = cfg.clone();
        if let Some(g) = args.generations {
            shown.budget.generations = g;
        }
        if let Some(m) = args.minutes {
            shown.budget.minutes = m;
        }
        reporter.line(&format!(
            "--variant {spec}: the default recipe sized to its {size}x{size} board (saved as {}):\n{}",
            dir.join("config.toml").display(),
            toml::to_string(&shown)?.trim_end()
        ));
    } else if args.variant.is_some() {
        reporter.line("note: --resume continues with the run's saved config; --variant is not used");
    }
    // One self-play thread per core share; torch's thread count is set once.
    tafl_lab::nn::set_torch_threads(train::torch_threads(&cfg, super::cores()));
    train::train(Some(cfg), &dir, args.resume, &overrides, &reporter)?;
    reporter.line(&format!("run directory: {} (metrics.jsonl, models/latest)", dir.display()));
    Ok(())
}

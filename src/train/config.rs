//! Run configuration: `configs/runs/*.toml`. Every table denies unknown keys, and
//! [`RunConfig::validate`] refuses impossible values, so a typo is a one-line error before
//! any work starts. The resolved config is saved into the run directory.

use crate::nn::NetConfig;
use crate::search::{Noise, RootPolicy, SearchConfig};
use crate::selfplay::SelfPlayConfig;
use serde::{Deserialize, Serialize};

/// The embedded default run: brandubh on a CPU (`configs/runs/brandubh.toml`).
pub const DEFAULT_CONFIG: &str = include_str!("../../configs/runs/brandubh.toml");

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Run name (the default run directory is `runs/<name>`).
    pub name: String,
    /// Preset name, variant TOML path, or OpenTafl rules string.
    pub variant: String,
    #[serde(default = "one")]
    pub seed: u64,
    /// auto, cpu, cuda or cuda:N.
    #[serde(default = "auto")]
    pub device: String,
    pub net: NetConfig,
    pub selfplay: SelfPlaySection,
    pub train: TrainSection,
    pub eval: EvalSection,
    #[serde(default)]
    pub budget: BudgetSection,
}

fn one() -> u64 {
    1
}
fn auto() -> String {
    "auto".into()
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelfPlaySection {
    /// New games per generation.
    pub games_per_generation: usize,
    /// Games stepped together (per worker thread).
    pub games_in_flight: usize,
    /// Most positions per network call.
    pub batch: usize,
    /// Leaves gathered from one tree per network call.
    #[serde(default = "default_leaves_per_tree")]
    pub leaves_per_tree: usize,
    /// Simulations of a full search.
    pub simulations: u32,
    /// "gumbel" or "puct".
    pub root: String,
    #[serde(default = "default_k")]
    pub gumbel_k: usize,
    /// Playout cap randomization: probability of a fast search (0 = off).
    #[serde(default)]
    pub fast_probability: f32,
    #[serde(default = "eight_u32")]
    pub fast_simulations: u32,
    /// Simulations of the attackers' full searches (0 = `simulations`): more search for the
    /// side that loses most self-play games.
    #[serde(default)]
    pub attacker_simulations: u32,
    /// Plies sampled with temperature 1 at the start of a game (PUCT root).
    #[serde(default = "eight_u32")]
    pub temperature_plies: u32,
    /// Dirichlet noise weight at PUCT roots of full searches (0 = off).
    #[serde(default = "default_noise_fraction")]
    pub noise_fraction: f32,
    /// Self-play worker threads in the trainer (each owns a copy of the model).
    #[serde(default = "one_usize")]
    pub threads: usize,
    /// Games per shard file (a kill loses at most the unwritten games).
    #[serde(default = "sixteen")]
    pub games_per_shard: usize,
    /// Play games in the trainer (true) or only consume shards from `selfplay` workers.
    #[serde(default = "yes")]
    pub in_process: bool,
}

// Defaults shared with the search layer come from it: one home for each number.
fn default_leaves_per_tree() -> usize {
    SearchConfig::default().batch
}
fn eight_u32() -> u32 {
    8
}
fn sixteen() -> usize {
    16
}
fn default_k() -> usize {
    RootPolicy::DEFAULT_K
}
fn default_noise_fraction() -> f32 {
    Noise::default().fraction
}
fn one_usize() -> usize {
    1
}
fn yes() -> bool {
    true
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainSection {
    /// Positions kept in the replay window (newest first).
    pub window_positions: usize,
    /// Positions needed before the first training step.
    #[serde(default)]
    pub min_positions: usize,
    pub batch_size: usize,
    pub steps_per_generation: usize,
    pub learning_rate: f64,
    /// Multiply the learning rate by `lr_decay` at each of these generations.
    #[serde(default)]
    pub lr_decay_generations: Vec<u64>,
    #[serde(default = "tenth")]
    pub lr_decay: f64,
    #[serde(default = "momentum")]
    pub momentum: f64,
    #[serde(default = "wd")]
    pub weight_decay: f64,
    /// Weight of the value loss against the policy loss.
    #[serde(default = "one_f64")]
    pub value_weight: f64,
    /// Per-ply discount of the value target towards a draw (1 = the plain game result; see
    /// `replay::value_target`).
    #[serde(default = "one_f32")]
    pub value_discount: f32,
}

fn one_f32() -> f32 {
    1.0
}

fn tenth() -> f64 {
    0.1
}
fn momentum() -> f64 {
    0.9
}
fn wd() -> f64 {
    1e-4
}
fn one_f64() -> f64 {
    1.0
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvalSection {
    /// Games per opponent per evaluation (split evenly between the sides).
    pub games: usize,
    /// Simulations of the model's agent in evaluation games.
    pub simulations: u32,
    /// "az" (PUCT) or "gumbel".
    #[serde(default = "az")]
    pub agent: String,
    /// Fixed opponents, as agent specs.
    pub baselines: Vec<String>,
    /// Also play the previous generation's model.
    #[serde(default = "yes")]
    pub previous: bool,
    /// Evaluate every this many generations (0 = never).
    #[serde(default = "one_u64")]
    pub every: u64,
}

fn az() -> String {
    "az".into()
}
fn one_u64() -> u64 {
    1
}

/// When a run stops (whichever comes first; 0 = no limit).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetSection {
    #[serde(default)]
    pub generations: u64,
    #[serde(default)]
    pub minutes: f64,
}

/// A config error, naming the source and the field.
#[derive(Debug, thiserror::Error)]
#[error("{origin}: {message}")]
pub struct ConfigError {
    pub origin: String,
    pub message: String,
}

impl RunConfig {
    /// Parses and validates a config.
    pub fn from_toml(text: &str, origin: &str) -> Result<RunConfig, ConfigError> {
        let err = |message: String| ConfigError { origin: origin.to_string(), message };
        let cfg: RunConfig = toml::from_str(text).map_err(|e| {
            // Line of the span's start: 1 + the newlines before it (a span at column 0 starts
            // right after a newline, which `lines()` would not count as a line of its own).
            let line = e.span().map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            let msg = e.message().trim().replace('\n', " ");
            err(match line {
                Some(l) => format!("line {l}: {msg}"),
                None => msg,
            })
        })?;
        cfg.validate().map_err(err)?;
        Ok(cfg)
    }

    /// Checks values that parse but cannot work.
    pub fn validate(&self) -> Result<(), String> {
        let positive = |name: &str, v: usize| if v == 0 { Err(format!("{name} must be at least 1")) } else { Ok(()) };
        if self.name.is_empty() || self.name.contains(['/', '\\']) {
            return Err(format!("name {:?} must be a non-empty file name", self.name));
        }
        positive("net.channels", self.net.channels)?;
        let s = &self.selfplay;
        positive("selfplay.games_per_generation", s.games_per_generation)?;
        positive("selfplay.games_in_flight", s.games_in_flight)?;
        positive("selfplay.batch", s.batch)?;
        positive("selfplay.leaves_per_tree", s.leaves_per_tree)?;
        positive("selfplay.simulations", s.simulations as usize)?;
        positive("selfplay.threads", s.threads)?;
        positive("selfplay.games_per_shard", s.games_per_shard)?;
        if !["gumbel", "puct"].contains(&s.root.as_str()) {
            return Err(format!("selfplay.root = {:?}: expected \"gumbel\" or \"puct\"", s.root));
        }
        if s.root == "gumbel" && s.gumbel_k < 2 {
            return Err("selfplay.gumbel_k must be at least 2".into());
        }
        if !(0.0..1.0).contains(&s.fast_probability) {
            return Err(format!("selfplay.fast_probability = {}: must be in [0, 1)", s.fast_probability));
        }
        if !(0.0..=1.0).contains(&s.noise_fraction) {
            return Err(format!("selfplay.noise_fraction = {}: must be in [0, 1]", s.noise_fraction));
        }
        let t = &self.train;
        positive("train.window_positions", t.window_positions)?;
        positive("train.batch_size", t.batch_size)?;
        positive("train.steps_per_generation", t.steps_per_generation)?;
        if !(t.learning_rate > 0.0 && t.learning_rate.is_finite()) {
            return Err(format!("train.learning_rate = {}: must be positive", t.learning_rate));
        }
        if !(0.0..1.0).contains(&t.momentum) {
            return Err(format!("train.momentum = {}: must be in [0, 1)", t.momentum));
        }
        if t.weight_decay < 0.0 || t.value_weight < 0.0 || !(t.lr_decay > 0.0) {
            return Err("train.weight_decay and train.value_weight must be >= 0, train.lr_decay > 0".into());
        }
        if !(t.value_discount > 0.0 && t.value_discount <= 1.0) {
            return Err(format!("train.value_discount = {}: must be in (0, 1]", t.value_discount));
        }
        if t.min_positions > t.window_positions {
            return Err("train.min_positions exceeds train.window_positions".into());
        }
        let e = &self.eval;
        if !["az", "gumbel"].contains(&e.agent.as_str()) {
            return Err(format!("eval.agent = {:?}: expected \"az\" or \"gumbel\"", e.agent));
        }
        positive("eval.simulations", e.simulations as usize)?;
        for b in &e.baselines {
            let spec: crate::arena::AgentSpec = b.parse().map_err(|e| format!("eval.baselines: {e}"))?;
            if spec.uses_model() {
                return Err(format!("eval.baselines: {b:?} needs a model; baselines are fixed agents (random, mcts:...)"));
            }
        }
        if !(self.budget.minutes >= 0.0 && self.budget.minutes.is_finite()) {
            return Err(format!("budget.minutes = {}: must be a finite number >= 0 (0 = no limit)", self.budget.minutes));
        }
        crate::nn::parse_device(&self.device).map(|_| ()).map_err(|e| format!("device: {e}"))
    }

    /// The self-play settings this config describes.
    pub fn selfplay_config(&self) -> SelfPlayConfig {
        let s = &self.selfplay;
        let root = if s.root == "gumbel" { RootPolicy::gumbel(s.gumbel_k) } else { RootPolicy::Puct };
        let noise = (s.root == "puct" && s.noise_fraction > 0.0).then_some(Noise { fraction: s.noise_fraction, ..Noise::default() });
        SelfPlayConfig {
            games_in_flight: s.games_in_flight,
            batch: s.batch,
            search: SearchConfig { simulations: s.simulations, batch: s.leaves_per_tree, root, noise, ..SearchConfig::default() },
            fast_probability: s.fast_probability,
            fast_simulations: s.fast_simulations,
            attacker_simulations: s.attacker_simulations,
            temperature_plies: s.temperature_plies,
        }
    }

    /// Learning rate at `generation` (step schedule).
    pub fn learning_rate(&self, generation: u64) -> f64 {
        let t = &self.train;
        let decays = t.lr_decay_generations.iter().filter(|&&g| generation >= g).count();
        t.learning_rate * t.lr_decay.powi(decays as i32)
    }

    /// The model's agent spec for evaluation games.
    /// Built as a value, so a model path with a comma in it stays one path.
    pub fn eval_spec(&self, model: &std::path::Path) -> crate::arena::AgentSpec {
        use crate::arena::{AgentKind, AgentSpec};
        let kind = if self.eval.agent == "gumbel" { AgentKind::Gumbel } else { AgentKind::Az };
        AgentSpec::new(kind, Some(model.to_path_buf()), self.eval.simulations).with_k_device(self.selfplay.gumbel_k, &self.device)
    }
}

//! Run configuration: `configs/runs/*.toml`. Every table denies unknown keys, and
//! [`RunConfig::validate`] refuses impossible values, so a typo is a one-line error before
//! any work starts. The resolved config is saved into the run directory.
//!
//! A config is read one of two ways, which differ only in what a `[net]` without `encoding`
//! means: a config for a new run ([`RunConfig::from_toml`]) gets the newest input planes, as
//! any new network does; a run's saved config ([`RunConfig::from_saved_toml`]) was written
//! before the key existed, by a run whose networks are all version 1, so it reads as version
//! 1 (see [`NetConfig::encoding`]).

use crate::nn::encoding::Encoding;
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
    /// Number format of self-play and evaluation inference (auto, fp32, bf16; training is
    /// always fp32): see [`crate::nn::Precision`].
    #[serde(default)]
    pub precision: crate::nn::Precision,
    /// The network: size and input planes (`encoding`; see the module documentation for
    /// what its absence means).
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

/// `[selfplay]`: how many games a generation has and where they are played, and (embedded,
/// in the same table) how they are played: a [`SelfPlayConfig`], whose full search is the
/// [`SearchConfig`] table `[selfplay.search]`. Configs written before that table existed
/// (with `simulations`, `root`, `gumbel_k`, `leaves_per_tree` and `noise_fraction` in
/// `[selfplay]` itself) still read, so an old run directory resumes with the settings it was
/// started with. So do the names of configs saved before the vocabulary was unified:
/// `fast_simulations`, `attacker_simulations` (now `fast_sims`, `attacker_sims`), `[eval]
/// simulations` (now `sims`) and, in `[selfplay.search]`, `simulations`, `c_puct` and
/// `leaves_per_tree`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "SelfPlayToml")]
pub struct SelfPlaySection {
    /// New games per generation.
    pub games_per_generation: usize,
    /// Self-play worker threads in the trainer (each owns a copy of the model); 0 = one per
    /// core. See [`SelfPlaySection::workers`].
    pub threads: usize,
    /// Games per shard file (a kill loses at most the unwritten games).
    pub games_per_shard: usize,
    /// Play games in the trainer (true) or only consume shards from `selfplay` workers.
    pub in_process: bool,
    /// Continuous self-play (default false): every slot keeps playing, a generation takes the
    /// first `games_per_generation` games to finish, and the games still in flight go on
    /// with the next generation's network ([`crate::selfplay::play_games_carried`]), instead
    /// of waiting, with ever fewer games in flight, for the generation's longest game. The
    /// games carried when a run stops are lost, as a kill loses the games in flight. Off by
    /// default: on a CPU a small network call costs little, and Copenhagen self-play measured
    /// no gain (docs/training.md).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub carry_games: bool,
    /// The attackers' share of self-play wins to steer towards (0 = off): after each
    /// generation the trainer scales the attackers' full-search simulations by
    /// `exp(target - share)` of that generation (between the full search's and
    /// [`ATTACKER_SIMS_MAX_FACTOR`] times it; the value lives in `state.json`, and workers
    /// read it there), and their fast searches in proportion. A lopsided variant's self-play
    /// then keeps both results in its value targets, where a fixed `attacker_sims` left the
    /// attackers 0-19% in Copenhagen.
    pub attacker_share: f32,
    /// How the games are played (`games_in_flight` per worker thread, `positions_per_call`
    /// per network call, playout cap randomization, `attacker_sims` and `attacker_fast_sims`,
    /// `temperature_plies`, `sample_plies`, and the full search, `[selfplay.search]`), written into `[selfplay]` itself. Last: its search
    /// is a table, and TOML writes tables after plain values.
    #[serde(flatten)]
    pub play: SelfPlayConfig,
}

/// The most the attackers' simulations grow to under `attacker_share`, in full searches.
pub const ATTACKER_SIMS_MAX_FACTOR: u32 = 16;

impl SelfPlaySection {
    /// The attackers' full-search simulations for the next generation under `attacker_share`:
    /// `current` scaled by `exp(target - share)`, where `share` is the attackers' share of
    /// the generation just played, kept between the full search's `sims` and
    /// [`ATTACKER_SIMS_MAX_FACTOR`] times it. With 32 games a generation the share's noise
    /// (about 0.08) moves it by under 10%; a steady 0% against a 40% target by 49% a generation.
    pub fn next_attacker_sims(&self, current: u32, share: f64) -> u32 {
        let sims = self.play.search.sims.max(1);
        let scaled = f64::from(current.max(sims)) * (f64::from(self.attacker_share) - share).exp();
        (scaled.round() as u32).clamp(sims, sims * ATTACKER_SIMS_MAX_FACTOR)
    }

    /// Self-play worker threads on a machine with `cores` cores: `threads`, or one per core
    /// when it is 0.
    ///
    /// One worker per core, each running its network on its own core with one torch thread,
    /// is what serves a CPU best: two independent single-threaded forward passes did 1.2x the
    /// evaluations of one two-threaded pass on the 2-core build machine, because a small
    /// network's layers split poorly across threads (docs/performance.md, "Self-play throughput").
    pub fn workers(&self, cores: usize) -> usize {
        if self.threads == 0 {
            cores.max(1)
        } else {
            self.threads
        }
    }
}

/// `[selfplay]` as written: today's fields plus the spellings of older configs.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SelfPlayToml {
    games_per_generation: usize,
    games_in_flight: usize,
    #[serde(alias = "batch")]
    positions_per_call: usize,
    #[serde(default)]
    fast_probability: f32,
    #[serde(default = "default_fast_sims", alias = "fast_simulations")]
    fast_sims: u32,
    #[serde(default, alias = "attacker_simulations")]
    attacker_sims: u32,
    #[serde(default)]
    attacker_fast_sims: u32,
    #[serde(default = "default_temperature_plies")]
    temperature_plies: u32,
    #[serde(default)]
    sample_plies: u32,
    #[serde(default)]
    soft_resign_value: f32,
    #[serde(default)]
    past_share: f32,
    #[serde(default)]
    opening_plies: u32,
    #[serde(default = "one_usize")]
    threads: usize,
    #[serde(default = "sixteen")]
    games_per_shard: usize,
    #[serde(default = "yes")]
    in_process: bool,
    #[serde(default)]
    carry_games: bool,
    #[serde(default)]
    attacker_share: f32,
    search: Option<SearchConfig>,
    // Older spellings of the search settings.
    simulations: Option<u32>,
    root: Option<String>,
    gumbel_k: Option<usize>,
    leaves_per_tree: Option<usize>,
    noise_fraction: Option<f32>,
}

impl SelfPlayToml {
    /// The search an older config describes, read as it always was: `root` and
    /// `simulations` required, Dirichlet noise (default fraction 0.25) on PUCT roots only.
    fn legacy_search(&self) -> Result<SearchConfig, String> {
        let simulations = self.simulations.ok_or("missing selfplay.search (or the older selfplay.simulations and selfplay.root)")?;
        let root = match self.root.as_deref() {
            Some("gumbel") => {
                let k = self.gumbel_k.unwrap_or(RootPolicy::DEFAULT_K);
                if k < 2 {
                    return Err("selfplay.gumbel_k must be at least 2".into());
                }
                RootPolicy::gumbel(k)
            }
            Some("puct") => RootPolicy::Puct,
            other => return Err(format!("selfplay.root = {:?}: expected \"gumbel\" or \"puct\"", other.unwrap_or(""))),
        };
        let fraction = self.noise_fraction.unwrap_or(Noise::default().fraction);
        if !(0.0..=1.0).contains(&fraction) {
            return Err(format!("selfplay.noise_fraction = {fraction}: must be in [0, 1]"));
        }
        let noise = (root == RootPolicy::Puct && fraction > 0.0).then_some(Noise { fraction, ..Noise::default() });
        let leaves_per_tree = self.leaves_per_tree.unwrap_or(SearchConfig::default().leaves_per_tree);
        Ok(SearchConfig { sims: simulations, leaves_per_tree, root, noise, ..SearchConfig::default() })
    }
}

impl TryFrom<SelfPlayToml> for SelfPlaySection {
    type Error = String;

    fn try_from(t: SelfPlayToml) -> Result<SelfPlaySection, String> {
        let legacy = [
            ("simulations", t.simulations.is_some()),
            ("root", t.root.is_some()),
            ("gumbel_k", t.gumbel_k.is_some()),
            ("leaves_per_tree", t.leaves_per_tree.is_some()),
            ("noise_fraction", t.noise_fraction.is_some()),
        ];
        let search = match (&t.search, legacy.iter().find(|(_, given)| *given)) {
            (Some(_), Some((key, _))) => {
                return Err(format!("selfplay.{key} is the older spelling of a [selfplay.search] setting: write the search settings in one place"))
            }
            (Some(search), None) => search.clone(),
            (None, _) => t.legacy_search()?,
        };
        Ok(SelfPlaySection {
            games_per_generation: t.games_per_generation,
            threads: t.threads,
            games_per_shard: t.games_per_shard,
            in_process: t.in_process,
            carry_games: t.carry_games,
            attacker_share: t.attacker_share,
            play: SelfPlayConfig {
                games_in_flight: t.games_in_flight,
                positions_per_call: t.positions_per_call,
                fast_probability: t.fast_probability,
                fast_sims: t.fast_sims,
                // 0 (or no key) in the TOML: the same as the defenders'.
                attacker_sims: (t.attacker_sims > 0).then_some(t.attacker_sims),
                attacker_fast_sims: (t.attacker_fast_sims > 0).then_some(t.attacker_fast_sims),
                temperature_plies: t.temperature_plies,
                sample_plies: t.sample_plies,
                soft_resign_value: t.soft_resign_value,
                past_share: t.past_share,
                opening_plies: t.opening_plies,
                search,
            },
        })
    }
}

/// The most random plies a self-play game may open with: enough to leave any line a network
/// would choose, few enough that the games stay games of the network.
const MAX_OPENING_PLIES: u32 = 16;

// What `[selfplay]` leaves out: the self-play defaults, or (for what only a run has) here.
fn default_fast_sims() -> u32 {
    SelfPlayConfig::default().fast_sims
}
fn default_temperature_plies() -> u32 {
    SelfPlayConfig::default().temperature_plies
}
fn sixteen() -> usize {
    16
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
    /// The most passes over the replay window one generation's steps may make (0 = no cap):
    /// a generation takes at most `max_window_passes` × the window's positions samples from
    /// the window. It keeps a window that is still small (the first generations of a run
    /// from an `--init` model, a resume whose shards are gone) from being trained on for
    /// many epochs; a full window of the usual sizes is not capped.
    #[serde(default, skip_serializing_if = "crate::selfplay::is_zero")]
    pub max_window_passes: f64,
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
    /// Share of a fully searched position's value target taken from its search's root value
    /// instead of the game's result ("Q + z" averaging; see `replay::mix_search_value`).
    /// 0: results only.
    #[serde(default, skip_serializing_if = "crate::selfplay::is_zero")]
    pub search_value_share: f32,
    /// Horizon, in fully searched plies, of the search value mixed in by `search_value_share`:
    /// 1 (the default, not written) takes each ply's own root value; above 1, the
    /// exponentially weighted average of the next searches' values with λ = 1 - 1/horizon
    /// and the result after the last (short-term value targets; `replay::search_values`).
    #[serde(default = "one_f32", skip_serializing_if = "is_one")]
    pub search_value_horizon: f32,
    /// Human game records (files or folders, as `pretrain --games` takes them; relative to
    /// the working directory) mixed into every training batch, so that self-play refines
    /// what the human games taught rather than replacing it. Empty: self-play only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub human_games: Vec<std::path::PathBuf>,
    /// Share of each batch drawn from `human_games` (0 = none; needs `human_games`).
    #[serde(default, skip_serializing_if = "crate::selfplay::is_zero")]
    pub human_share: f64,
    /// Weight of the ownership loss (0 = off): above 0, the network gets the ownership head
    /// (`[net] ownership` follows this weight) and learns, from every position, whose piece
    /// stands on each square at the end of its game (`replay::ownership_target`), with this
    /// weight against the policy loss. An auxiliary target (KataGo's ownership): evaluation
    /// and export do not use the head. A run from an `--init` model without the head starts
    /// the head fresh.
    #[serde(default, skip_serializing_if = "crate::selfplay::is_zero")]
    pub ownership_weight: f64,
}

fn one_f32() -> f32 {
    1.0
}

fn is_one(x: &f32) -> bool {
    *x == 1.0
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
    #[serde(alias = "simulations")]
    pub sims: u32,
    /// The model's agent: "az" (PUCT) or "gumbel" with `sims`, or a whole spec without its
    /// model, e.g. "az:sims=64,probe=2" (the run's model is filled in).
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
    /// Parses and validates a config for a new run: a `[net]` that names no `encoding` gets
    /// [`Encoding::NEWEST`].
    pub fn from_toml(text: &str, origin: &str) -> Result<RunConfig, ConfigError> {
        let mut cfg = RunConfig::parse(text, origin, false)?;
        let names_encoding = toml::from_str::<toml::Table>(text).ok().and_then(|t| t.get("net")?.get("encoding").cloned()).is_some();
        if !names_encoding {
            cfg.net.encoding = Encoding::NEWEST;
        }
        Ok(cfg)
    }

    /// The run config `train --variant SPEC` uses, so that training an AI for any variant
    /// needs no hand-written config: the embedded default's recipe (brandubh's, the one shown
    /// to learn from scratch on two cores), sized to the board. The cost of a self-play move
    /// grows with the squares (the network's work) and the moves (the tree's width), so larger
    /// boards get a larger network but fewer, cheaper searches per generation, a larger replay
    /// window and a longer budget:
    ///
    /// | board | net | full / fast sims | attackers' start | games per generation | window | minutes |
    /// |---|---|---|---|---|---|---|
    /// | up to 7x7 | 4x32 | 48 / 16 | 96 | 64 | 60,000 | 60 |
    /// | 8x8, 9x9 | 5x48 | 48 / 16 | 96 | 48 | 100,000 | 120 |
    /// | 10x10, 11x11 | 6x64 | 32 / 8 | 64 | 32 | 150,000 | 240 |
    /// | larger | 6x64 | 32 / 8 | 64 | 24 | 200,000 | 480 |
    ///
    /// Which side a variant favours is what the run is to find out, so the attackers' search is
    /// not fixed: it starts at twice the full search and is steered each generation towards
    /// even self-play results (`attacker_share = 0.5`; never below the defenders' search). A
    /// fixed 4x attackers' search, brandubh's, left Ard Ri's self-play won 97% by the
    /// attackers, whose value targets then say little about the defenders' chances.
    ///
    /// The name (and so the default run directory, `runs/<name>`) is the variant's name made
    /// file-safe.
    pub fn for_variant(spec: &str, variant: &crate::rules::Variant) -> RunConfig {
        let mut cfg = RunConfig::from_toml(DEFAULT_CONFIG, "embedded default config").expect("the embedded default config is valid");
        cfg.name = variant.name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c.to_ascii_lowercase() } else { '-' }).collect();
        cfg.variant = spec.to_string();
        let size = variant.geometry.size();
        let (blocks, channels, sims, fast, attacker, games, window, minutes) = match size {
            0..=7 => (4, 32, 48, 16, 96, 64, 60_000, 60.0),
            8..=9 => (5, 48, 48, 16, 96, 48, 100_000, 120.0),
            10..=11 => (6, 64, 32, 8, 64, 32, 150_000, 240.0),
            _ => (6, 64, 32, 8, 64, 24, 200_000, 480.0),
        };
        cfg.net.blocks = blocks;
        cfg.net.channels = channels;
        cfg.selfplay.play.search.sims = sims;
        cfg.selfplay.play.fast_sims = fast;
        cfg.selfplay.play.attacker_sims = Some(attacker);
        cfg.selfplay.attacker_share = 0.5;
        cfg.selfplay.games_per_generation = games;
        cfg.selfplay.play.games_in_flight = games.div_ceil(2);
        cfg.train.window_positions = window;
        cfg.budget.minutes = minutes;
        cfg.validate().expect("a sized default config is valid");
        cfg
    }

    /// Parses and validates a run's saved config (`config.toml` in a run directory): a `[net]`
    /// that names no `encoding` was saved before the key existed, by a version-1 run, and
    /// reads as [`Encoding::LEGACY`].
    pub fn from_saved_toml(text: &str, origin: &str) -> Result<RunConfig, ConfigError> {
        RunConfig::parse(text, origin, true)
    }

    /// Parses (a missing `[net] encoding` as the serde default, [`Encoding::LEGACY`]) and
    /// validates.
    fn parse(text: &str, origin: &str, saved: bool) -> Result<RunConfig, ConfigError> {
        let err = |message: String| ConfigError { origin: origin.to_string(), message };
        let mut cfg: RunConfig = toml::from_str(text).map_err(|e| {
            // Line of the span's start: 1 + the newlines before it (a span at column 0 starts
            // right after a newline, which `lines()` would not count as a line of its own).
            let line = e.span().map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            let msg = e.message().trim().replace('\n', " ");
            err(match line {
                Some(l) => format!("line {l}: {msg}"),
                None => msg,
            })
        })?;
        // A saved config names the head its weight gave it; a weight removed since (a resumed
        // run that stops training the head) drops it.
        if saved {
            cfg.net.ownership = cfg.train.ownership_weight > 0.0;
        }
        cfg.validate().map_err(err)?;
        cfg.net.ownership = cfg.train.ownership_weight > 0.0;
        Ok(cfg)
    }

    /// Checks values that parse but cannot work.
    pub fn validate(&self) -> Result<(), String> {
        let positive = |name: &str, v: usize| if v == 0 { Err(format!("{name} must be at least 1")) } else { Ok(()) };
        if self.name.is_empty() || self.name.contains(['/', '\\']) {
            return Err(format!("name {:?} must be a non-empty file name", self.name));
        }
        positive("net.channels", self.net.channels)?;
        let s = &self.selfplay.play;
        positive("selfplay.games_per_generation", self.selfplay.games_per_generation)?;
        positive("selfplay.games_in_flight", s.games_in_flight)?;
        positive("selfplay.positions_per_call", s.positions_per_call)?;
        positive("selfplay.games_per_shard", self.selfplay.games_per_shard)?;
        s.search.validate().map_err(|e| format!("selfplay.search.{e}"))?;
        if !(0.0..1.0).contains(&s.fast_probability) {
            return Err(format!("selfplay.fast_probability = {}: must be in [0, 1)", s.fast_probability));
        }
        if !(0.0..1.0).contains(&s.soft_resign_value) {
            return Err(format!("selfplay.soft_resign_value = {}: must be in [0, 1) (0 = off)", s.soft_resign_value));
        }
        if !(0.0..1.0).contains(&s.past_share) {
            return Err(format!("selfplay.past_share = {}: must be in [0, 1) (0 = no games against past networks)", s.past_share));
        }
        if s.opening_plies > MAX_OPENING_PLIES {
            return Err(format!("selfplay.opening_plies = {}: at most {MAX_OPENING_PLIES} (random plies give no policy targets)", s.opening_plies));
        }
        if s.past_share > 0.0 && !self.selfplay.in_process {
            return Err("selfplay.past_share needs selfplay.in_process = true: `tafl-lab selfplay` workers do not load past networks".into());
        }
        if !(0.0..1.0).contains(&self.selfplay.attacker_share) {
            return Err(format!("selfplay.attacker_share = {}: must be in [0, 1) (0 = off)", self.selfplay.attacker_share));
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
        let non_negative = |v: f64| v >= 0.0 && v.is_finite();
        if !non_negative(t.weight_decay) || !non_negative(t.value_weight) || t.lr_decay <= 0.0 || !t.lr_decay.is_finite() {
            return Err("train.weight_decay and train.value_weight must be >= 0, train.lr_decay > 0".into());
        }
        if !(t.value_discount > 0.0 && t.value_discount <= 1.0) {
            return Err(format!("train.value_discount = {}: must be in (0, 1]", t.value_discount));
        }
        if !(0.0..=1.0).contains(&t.search_value_share) {
            return Err(format!("train.search_value_share = {}: must be in [0, 1] (0 = game results only)", t.search_value_share));
        }
        if !(t.search_value_horizon >= 1.0 && t.search_value_horizon <= 1000.0) {
            return Err(format!("train.search_value_horizon = {}: must be in [1, 1000] plies (1 = each ply's own root value)", t.search_value_horizon));
        }
        if t.search_value_horizon > 1.0 && t.search_value_share <= 0.0 {
            return Err(format!("train.search_value_horizon = {} does nothing without train.search_value_share above 0", t.search_value_horizon));
        }
        if !(t.max_window_passes >= 0.0 && t.max_window_passes <= 100.0) {
            return Err(format!("train.max_window_passes = {}: must be in [0, 100] (0 = no cap)", t.max_window_passes));
        }
        if !(t.ownership_weight >= 0.0 && t.ownership_weight <= 100.0) {
            return Err(format!("train.ownership_weight = {}: must be in [0, 100] (0 = no ownership head)", t.ownership_weight));
        }
        if self.net.ownership && t.ownership_weight == 0.0 {
            return Err("net.ownership = true but train.ownership_weight is 0: the weight gives the head (set it, and leave net.ownership out)".into());
        }
        if t.min_positions > t.window_positions {
            return Err("train.min_positions exceeds train.window_positions".into());
        }
        if !(0.0..1.0).contains(&t.human_share) {
            return Err(format!("train.human_share = {}: must be in [0, 1) (0 = self-play only)", t.human_share));
        }
        match (t.human_games.is_empty(), t.human_share > 0.0) {
            (true, true) => return Err("train.human_share is set but train.human_games names no records".into()),
            (false, false) => return Err("train.human_games is set but train.human_share is 0: give the share of each batch".into()),
            _ => {}
        }
        let e = &self.eval;
        self.eval_agent().map_err(|why| format!("eval.agent = {:?}: {why}", e.agent))?;
        positive("eval.sims", e.sims as usize)?;
        for b in &e.baselines {
            let spec: crate::arena::AgentSpec = b.parse().map_err(|e| format!("eval.baselines: {e}"))?;
            // A baseline with a model (say, the network a run started from) is as fixed as
            // `random` as long as its file is: it must name one that exists.
            if let Some(path) = spec.model.as_ref().filter(|p| !p.exists()) {
                return Err(format!("eval.baselines: {b:?}: model {} not found", path.display()));
            }
        }
        if !(self.budget.minutes >= 0.0 && self.budget.minutes.is_finite()) {
            return Err(format!("budget.minutes = {}: must be a finite number >= 0 (0 = no limit)", self.budget.minutes));
        }
        crate::nn::parse_device(&self.device).map(|_| ()).map_err(|e| format!("device: {e}"))
    }

    /// The self-play settings this config describes.
    pub fn selfplay_config(&self) -> SelfPlayConfig {
        self.selfplay.play.clone()
    }

    /// Learning rate at `generation` (step schedule).
    pub fn learning_rate(&self, generation: u64) -> f64 {
        let t = &self.train;
        let decays = t.lr_decay_generations.iter().filter(|&&g| generation >= g).count();
        t.learning_rate * t.lr_decay.powi(decays as i32)
    }

    /// `eval.agent` as a spec without its model: `az` or `gumbel` (with `eval.sims`), or a
    /// whole spec such as `az:sims=64,probe=2` (its `sims` wins over `eval.sims`).
    fn eval_agent(&self) -> Result<crate::arena::AgentSpec, String> {
        use crate::arena::{AgentKind, AgentSpec};
        let text = self.eval.agent.as_str();
        if !matches!(text.split(':').next().map(str::trim), Some("az" | "gumbel")) {
            return Err("expected an `az` or `gumbel` agent (a spec such as az:sims=64,probe=2)".into());
        }
        if text.contains("model=") {
            return Err("names a model; the run's own model is filled in".into());
        }
        // Parsed with a stand-in model (an `az` spec needs one), which `eval_spec` replaces.
        let sep = if text.contains(':') { ',' } else { ':' };
        let mut spec: AgentSpec = format!("{text}{sep}model=run-model").parse().map_err(|e| format!("{e}"))?;
        spec.model = None;
        let mut spec = if text.contains(':') { spec } else { AgentSpec::new(spec.kind, None, self.eval.sims) };
        if !text.contains("sims=") {
            spec.search.sims = self.eval.sims;
        }
        if let (AgentKind::Gumbel, RootPolicy::Gumbel { k, .. }, false) = (spec.kind, self.selfplay.play.search.root, text.contains("k=")) {
            spec.search.root = RootPolicy::gumbel(k);
        }
        Ok(spec)
    }

    /// The model's agent spec for evaluation games: `eval.agent` with `model` filled in.
    /// Built as a value, so a model path with a comma in it stays one path.
    /// A Gumbel evaluation agent considers as many root moves as self-play's Gumbel root
    /// (the default when self-play uses PUCT) unless its spec says `k=`.
    pub fn eval_spec(&self, model: &std::path::Path) -> crate::arena::AgentSpec {
        let mut spec = self.eval_agent().expect("a validated config's eval.agent parses");
        spec.model = Some(model.to_path_buf());
        spec.default_device(&self.device).default_precision(self.precision)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default config with `line` added at the top of `[table]` (which it must have).
    fn default_with(table: &str, line: &str) -> String {
        let head = format!("[{table}]\n");
        assert!(DEFAULT_CONFIG.contains(&head), "the default config has a [{table}] table");
        DEFAULT_CONFIG.replace(&head, &format!("{head}{line}\n"))
    }

    /// A config written out (as a run saves it) reads back as itself.
    fn assert_survives_a_save(c: &RunConfig) {
        let written = toml::to_string(c).unwrap();
        assert_eq!(&RunConfig::from_saved_toml(&written, "config.toml").unwrap(), c, "{written}");
    }

    /// `train --variant`: the recipe grows with the board (network, window, budget) while
    /// each generation gets cheaper, and every sized config is valid and steers the attackers.
    #[test]
    fn for_variant_sizes_the_default_recipe_to_the_board() {
        let sized = |name: &str| RunConfig::for_variant(name, &crate::rules::Variant::preset(name).expect("preset"));
        let rows: Vec<(usize, usize, u32, usize, usize, f64)> = ["brandubh", "tablut", "copenhagen", "alea-evangelii"]
            .iter()
            .map(|v| {
                let c = sized(v);
                assert_eq!((c.name.as_str(), c.variant.as_str()), (*v, *v));
                assert_eq!(c.selfplay.attacker_share, 0.5, "{v}");
                assert!(c.selfplay.play.attacker_sims.is_some_and(|n| n >= c.selfplay.play.search.sims), "{v}");
                assert_eq!(c.validate(), Ok(()), "{v}");
                (c.net.blocks, c.net.channels, c.selfplay.play.search.sims, c.selfplay.games_per_generation, c.train.window_positions, c.budget.minutes)
            })
            .collect();
        assert_eq!(
            rows,
            vec![(4, 32, 48, 64, 60_000, 60.0), (5, 48, 48, 48, 100_000, 120.0), (6, 64, 32, 32, 150_000, 240.0), (6, 64, 32, 24, 200_000, 480.0)]
        );
        // A TOML variant file or a rules string names the run after the variant, file-safe.
        let v = crate::rules::Variant::from_spec("configs/variants/magpie.toml").expect("file");
        assert_eq!(RunConfig::for_variant("configs/variants/magpie.toml", &v).name, "magpie");
    }

    /// The embedded default with `[net] encoding` set to `value`, or without the key.
    fn default_with_encoding(value: Option<&str>) -> String {
        let text = DEFAULT_CONFIG.lines().filter(|l| !l.trim_start().starts_with("encoding")).collect::<Vec<_>>().join("\n");
        match value {
            Some(v) => text.replace("[net]\n", &format!("[net]\nencoding = {v}\n")),
            None => text,
        }
    }

    /// `attacker_share` scales the attackers' simulations by exp(target - share), between the
    /// full search's and 16 times it.
    #[test]
    fn the_attackers_simulations_follow_their_share() {
        let mut cfg = RunConfig::from_toml(DEFAULT_CONFIG, "default.toml").unwrap();
        cfg.selfplay.play.search.sims = 32;
        cfg.selfplay.attacker_share = 0.4;
        let s = &cfg.selfplay;
        assert_eq!(s.next_attacker_sims(96, 0.0), 143, "96 * e^0.4");
        assert_eq!(s.next_attacker_sims(96, 0.4), 96, "on target: unchanged");
        assert_eq!(s.next_attacker_sims(96, 1.0), 53, "96 * e^-0.6");
        assert_eq!(s.next_attacker_sims(0, 0.0), 48, "0 is the full search's 32: 32 * e^0.4");
        assert_eq!(s.next_attacker_sims(33, 1.0), 32, "never below the full search");
        assert_eq!(s.next_attacker_sims(500, 0.0), 512, "never above 16 times it");
    }

    /// A missing `encoding` is the newest for a new run's config and version 1 for a saved
    /// one; a named one is that one either way; an unknown one is refused.
    #[test]
    fn a_missing_encoding_means_newest_for_new_runs_and_version_1_for_saved_configs() {
        let bare = default_with_encoding(None);
        assert!(!bare.contains("encoding"), "{bare}");
        assert_eq!(RunConfig::from_toml(&bare, "new.toml").unwrap().net.encoding, Encoding::NEWEST);
        assert_eq!(RunConfig::from_saved_toml(&bare, "config.toml").unwrap().net.encoding, Encoding::V1);
        for e in Encoding::ALL {
            let text = default_with_encoding(Some(&e.version().to_string()));
            assert_eq!(RunConfig::from_toml(&text, "new.toml").unwrap().net.encoding, e);
            assert_eq!(RunConfig::from_saved_toml(&text, "config.toml").unwrap().net.encoding, e);
            // Saved, a config names its encoding, so it reads back the same either way.
            let cfg = RunConfig::from_toml(&text, "new.toml").unwrap();
            let written = toml::to_string(&cfg).unwrap();
            assert!(written.contains(&format!("encoding = {}", e.version())), "{written}");
            assert_eq!(RunConfig::from_saved_toml(&written, "config.toml").unwrap(), cfg);
        }
        let err = RunConfig::from_toml(&default_with_encoding(Some("3")), "new.toml").unwrap_err().to_string();
        assert!(err.contains("encoding 3") && err.contains("1 (10 planes), 2 (19 planes)"), "{err}");
        // The shipped model's run config predates the key: its network is version 1.
        let shipped = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/models/brandubh/config.toml")).unwrap();
        assert_eq!(RunConfig::from_saved_toml(&shipped, "config.toml").unwrap().net.encoding, Encoding::V1);
    }

    /// `attacker_sims` and `attacker_fast_sims` are `Option`s: 0 (older configs) or no key
    /// reads as none (the defenders' search), and a config written back has no key for none.
    #[test]
    fn an_attackers_search_of_0_or_none_is_the_same_as_the_defenders() {
        let cfg = RunConfig::from_toml(DEFAULT_CONFIG, "default.toml").unwrap();
        assert_eq!(cfg.selfplay.play.attacker_sims, Some(192));
        let written = toml::to_string(&cfg).unwrap();
        assert!(written.contains("attacker_sims = 192"), "{written}");
        for text in [DEFAULT_CONFIG.replace("attacker_sims = 192", "attacker_sims = 0"), DEFAULT_CONFIG.replace("attacker_sims = 192", "")] {
            let c = RunConfig::from_toml(&text, "old.toml").unwrap();
            assert_eq!((c.selfplay.play.attacker_sims, c.selfplay.play.attacker_fast_sims), (None, None));
            let written = toml::to_string(&c).unwrap();
            assert!(!written.contains("attacker_sims") && !written.contains("attacker_fast_sims"), "{written}");
            assert_eq!(RunConfig::from_toml(&written, "written.toml").unwrap(), c, "reads back the same");
        }
    }

    /// `[eval] agent` is a spec without its model (or the older `az`/`gumbel` with `sims`).
    #[test]
    fn the_eval_agent_is_a_spec_whose_model_the_run_fills_in() {
        let mut cfg = RunConfig::from_toml(DEFAULT_CONFIG, "default.toml").unwrap();
        let model = std::path::Path::new("runs/x/models/000003.safetensors");
        cfg.eval.agent = "az:sims=64,probe=2".into();
        assert_eq!(cfg.validate(), Ok(()));
        let spec = cfg.eval_spec(model);
        assert_eq!((spec.model.as_deref(), spec.search.sims, spec.search.fork_probe), (Some(model), 64, true));
        cfg.eval.agent = "gumbel".into();
        cfg.eval.sims = 24;
        assert_eq!(cfg.eval_spec(model).search.sims, 24, "the older form takes eval.sims");
        for (bad, says) in [("mcts:sims=4", "expected an `az` or `gumbel` agent"), ("az:model=m.safetensors", "names a model"), ("az:sims=x", "eval.agent")] {
            cfg.eval.agent = bad.into();
            let e = cfg.validate().unwrap_err();
            assert!(e.contains(says) && e.starts_with("eval.agent"), "{bad}: {e}");
        }
    }

    /// `soft_resign_value`: off (no key) by default and not written back then; a value is
    /// kept through a save; 1 or more is refused by name.
    #[test]
    fn soft_resignation_is_off_by_default_and_range_checked() {
        let cfg = RunConfig::from_toml(DEFAULT_CONFIG, "default.toml").unwrap();
        assert_eq!(cfg.selfplay.play.soft_resign_value, 0.0);
        assert!(!toml::to_string(&cfg).unwrap().contains("soft_resign_value"));
        let text = default_with("selfplay", "soft_resign_value = 0.9");
        let c = RunConfig::from_toml(&text, "soft.toml").unwrap();
        assert_eq!(c.selfplay.play.soft_resign_value, 0.9);
        assert_survives_a_save(&c);
        let bad = default_with("selfplay", "soft_resign_value = 1.0");
        let e = RunConfig::from_toml(&bad, "bad.toml").unwrap_err().to_string();
        assert!(e.contains("selfplay.soft_resign_value = 1: must be in [0, 1)"), "{e}");
    }

    /// `[selfplay.search] forced_playouts`: off by default and not written back then; kept
    /// through a save on a PUCT root; refused by name on the default Gumbel root.
    #[test]
    fn forced_playouts_are_off_by_default_and_need_a_puct_root() {
        let cfg = RunConfig::from_toml(DEFAULT_CONFIG, "default.toml").unwrap();
        assert_eq!(cfg.selfplay.play.search.forced_playouts, 0.0);
        assert!(!toml::to_string(&cfg).unwrap().contains("forced_playouts"));
        let gumbel = r#"root = { kind = "gumbel", k = 16 }"#;
        assert!(DEFAULT_CONFIG.contains(gumbel));
        let puct = DEFAULT_CONFIG.replace(gumbel, "root = { kind = \"puct\" }\nforced_playouts = 2.0");
        let c = RunConfig::from_toml(&puct, "forced.toml").unwrap();
        assert_eq!(c.selfplay.play.search.forced_playouts, 2.0);
        assert_survives_a_save(&c);
        let bad = DEFAULT_CONFIG.replace(gumbel, &format!("{gumbel}\nforced_playouts = 2.0"));
        let e = RunConfig::from_toml(&bad, "bad.toml").unwrap_err().to_string();
        assert!(e.contains("selfplay.search.forced_playouts applies to PUCT roots only"), "{e}");
    }

    /// `past_share`: off by default and not written back then; in [0, 1) and only with
    /// in-process self-play, each refused by name.
    #[test]
    fn games_against_past_networks_are_off_by_default_and_checked() {
        let cfg = RunConfig::from_toml(DEFAULT_CONFIG, "default.toml").unwrap();
        assert_eq!(cfg.selfplay.play.past_share, 0.0);
        assert!(!toml::to_string(&cfg).unwrap().contains("past_share"));
        let with = |line: &str| default_with("selfplay", line);
        let c = RunConfig::from_toml(&with("past_share = 0.25"), "past.toml").unwrap();
        assert_eq!(c.selfplay.play.past_share, 0.25);
        assert_survives_a_save(&c);
        let e = RunConfig::from_toml(&with("past_share = 1.0"), "bad.toml").unwrap_err().to_string();
        assert!(e.contains("selfplay.past_share = 1: must be in [0, 1)"), "{e}");
        let text = with("past_share = 0.25").replace("in_process = true", "in_process = false");
        assert!(text.contains("in_process = false"), "the default config names in_process");
        let e = RunConfig::from_toml(&text, "workers.toml").unwrap_err().to_string();
        assert!(e.contains("selfplay.past_share needs selfplay.in_process = true"), "{e}");
    }

    /// `opening_plies`: none by default and not written back then; a count survives a save;
    /// too many are refused by name.
    #[test]
    fn random_openings_are_off_by_default_and_bounded() {
        let cfg = RunConfig::from_toml(DEFAULT_CONFIG, "default.toml").unwrap();
        assert_eq!(cfg.selfplay.play.opening_plies, 0);
        assert!(!toml::to_string(&cfg).unwrap().contains("opening_plies"));
        let with = |line: &str| default_with("selfplay", line);
        let c = RunConfig::from_toml(&with("opening_plies = 2"), "open.toml").unwrap();
        assert_eq!(c.selfplay.play.opening_plies, 2);
        assert_survives_a_save(&c);
        let e = RunConfig::from_toml(&with("opening_plies = 17"), "bad.toml").unwrap_err().to_string();
        assert!(e.contains("selfplay.opening_plies = 17: at most 16"), "{e}");
    }

    /// `ownership_weight`: off by default (no head, nothing written); a weight gives the
    /// network the head (`[net] ownership`) and both survive a save; a weight out of range, or
    /// the head without a weight, is refused by name.
    #[test]
    fn the_ownership_weight_gives_the_head_and_is_checked() {
        let cfg = RunConfig::from_toml(DEFAULT_CONFIG, "default.toml").unwrap();
        assert!(cfg.train.ownership_weight == 0.0 && !cfg.net.ownership);
        assert!(!toml::to_string(&cfg).unwrap().contains("ownership"));
        let with = |line: &str| default_with("train", line);
        let c = RunConfig::from_toml(&with("ownership_weight = 0.5"), "own.toml").unwrap();
        assert!(c.train.ownership_weight == 0.5 && c.net.ownership);
        assert_survives_a_save(&c);
        let e = RunConfig::from_toml(&with("ownership_weight = -1"), "bad.toml").unwrap_err().to_string();
        assert!(e.contains("train.ownership_weight = -1: must be in [0, 100]"), "{e}");
        let head_only = default_with("net", "ownership = true");
        assert_ne!(head_only, DEFAULT_CONFIG, "the default config has a [net] table");
        let e = RunConfig::from_toml(&head_only, "head.toml").unwrap_err().to_string();
        assert!(e.contains("net.ownership = true but train.ownership_weight is 0"), "{e}");
        // A run's saved config whose weight was taken out drops the head it names.
        let saved = toml::to_string(&c).unwrap();
        assert!(saved.contains("ownership = true"), "{saved}");
        let off = RunConfig::from_saved_toml(&saved.replace("ownership_weight = 0.5\n", ""), "config.toml").unwrap();
        assert!(off.train.ownership_weight == 0.0 && !off.net.ownership);
    }

    /// `max_window_passes`: off by default and not written then; a cap survives a save; a
    /// negative one is refused by name.
    #[test]
    fn the_window_pass_cap_is_off_by_default_and_checked() {
        let cfg = RunConfig::from_toml(DEFAULT_CONFIG, "default.toml").unwrap();
        assert!(cfg.train.max_window_passes == 0.0 && !toml::to_string(&cfg).unwrap().contains("max_window_passes"));
        let with = |line: &str| default_with("train", line);
        let c = RunConfig::from_toml(&with("max_window_passes = 0.5"), "cap.toml").unwrap();
        assert_eq!(c.train.max_window_passes, 0.5);
        assert_survives_a_save(&c);
        let e = RunConfig::from_toml(&with("max_window_passes = -1"), "bad.toml").unwrap_err().to_string();
        assert!(e.contains("train.max_window_passes = -1: must be in [0, 100]"), "{e}");
    }

    /// `[net] value_per_side`: off by default and not written then; on, it survives a save.
    #[test]
    fn per_side_values_are_a_net_setting_off_by_default() {
        let cfg = RunConfig::from_toml(DEFAULT_CONFIG, "default.toml").unwrap();
        assert!(!cfg.net.value_per_side && !toml::to_string(&cfg).unwrap().contains("value_per_side"));
        let text = default_with("net", "value_per_side = true");
        let c = RunConfig::from_toml(&text, "side.toml").unwrap();
        assert!(c.net.value_per_side);
        assert_survives_a_save(&c);
    }

    /// `search_value_share`: 0 (no key) by default and not written back then; a share is
    /// kept through a save; outside [0, 1] is refused by name.
    #[test]
    fn the_search_value_share_defaults_to_results_only_and_is_range_checked() {
        let cfg = RunConfig::from_toml(DEFAULT_CONFIG, "default.toml").unwrap();
        assert_eq!(cfg.train.search_value_share, 0.0);
        assert!(!toml::to_string(&cfg).unwrap().contains("search_value_share"));
        let text = default_with("train", "search_value_share = 0.5");
        let c = RunConfig::from_toml(&text, "mixed.toml").unwrap();
        assert_eq!(c.train.search_value_share, 0.5);
        assert_survives_a_save(&c);
        let bad = default_with("train", "search_value_share = 1.5");
        let e = RunConfig::from_toml(&bad, "bad.toml").unwrap_err().to_string();
        assert!(e.contains("train.search_value_share = 1.5: must be in [0, 1]"), "{e}");
    }

    /// `search_value_horizon`: 1 (no key) by default and not written back then; a horizon
    /// with a share is kept through a save; below 1, or without a share, refused by name.
    #[test]
    fn the_search_value_horizon_defaults_to_the_own_root_value_and_needs_a_share() {
        let cfg = RunConfig::from_toml(DEFAULT_CONFIG, "default.toml").unwrap();
        assert_eq!(cfg.train.search_value_horizon, 1.0);
        assert!(!toml::to_string(&cfg).unwrap().contains("search_value_horizon"));
        let text = default_with("train", "search_value_share = 0.5\nsearch_value_horizon = 8");
        let c = RunConfig::from_toml(&text, "short.toml").unwrap();
        assert_eq!(c.train.search_value_horizon, 8.0);
        assert_survives_a_save(&c);
        for (line, want) in [
            ("search_value_share = 0.5\nsearch_value_horizon = 0.5", "train.search_value_horizon = 0.5: must be in [1, 1000]"),
            ("search_value_horizon = 8", "train.search_value_horizon = 8 does nothing without train.search_value_share"),
        ] {
            let e = RunConfig::from_toml(&default_with("train", line), "bad.toml").unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
    }
}

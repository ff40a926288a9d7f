//! Players built from short spec strings: `random`, `mcts:sims=N` (random-rollout MCTS, no
//! network), `az:model=PATH,sims=N` (PUCT guided by a network), `gumbel:model=PATH,sims=N,k=16`
//! (Gumbel root with sequential halving; strong at small budgets).
//!
//! Options, comma-separated after the colon: `sims`, `model`, `k` (gumbel), `cpuct`, `batch`
//! (leaves per network call), `device` (auto, cpu, cuda). A value with a comma in it (a model
//! path) is written in double quotes, with `\"` and `\\` inside: `az:model="runs/a,b/latest"`.
//! Code that makes specs builds them as values ([`AgentSpec::new`]), never by formatting text.

use crate::nn::{checkpoint, parse_device, NetEvaluator, NnError};
use crate::rules::{Move, Position, Variant};
use crate::search::{Evaluator, RolloutEvaluator, RootPolicy, Search, SearchConfig, SearchResult};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

/// Errors making an agent.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("agent spec {spec:?}: {message}")]
    Spec { spec: String, message: String },
    #[error(transparent)]
    Model(#[from] NnError),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AgentKind {
    Random,
    Mcts,
    Az,
    Gumbel,
}

/// A parsed agent spec.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentSpec {
    pub kind: AgentKind,
    pub sims: u32,
    pub model: Option<PathBuf>,
    pub k: usize,
    pub c_puct: f32,
    pub batch: usize,
    pub device: String,
    text: String,
}

impl fmt::Display for AgentSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Splits `opts` at the commas that are not inside double quotes.
fn split_options(opts: &str) -> Result<Vec<&str>, String> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in opts.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ',' if !quoted => {
                parts.push(&opts[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if quoted {
        return Err("unterminated quote".into());
    }
    parts.push(&opts[start..]);
    Ok(parts.into_iter().filter(|o| !o.trim().is_empty()).collect())
}

/// An option value: as written, or the text inside double quotes with `\"` and `\\` unescaped.
fn unquote(value: &str) -> Result<String, String> {
    let Some(inner) = value.strip_prefix('"') else {
        return Ok(value.to_string());
    };
    let inner = inner.strip_suffix('"').ok_or_else(|| format!("{value}: text after the closing quote"))?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e @ ('"' | '\\')) => out.push(e),
                _ => return Err(format!("{value}: only \\\" and \\\\ may follow a backslash")),
            },
            '"' => return Err(format!("{value}: text after the closing quote")),
            c => out.push(c),
        }
    }
    Ok(out)
}

/// A value as an option: quoted when it holds a comma, a quote, a backslash or surrounding space.
fn quote_if_needed(value: &str) -> String {
    if value.contains([',', '"', '\\']) || value.trim() != value || value.is_empty() {
        let mut s = String::from('"');
        for c in value.chars() {
            if c == '"' || c == '\\' {
                s.push('\\');
            }
            s.push(c);
        }
        s.push('"');
        s
    } else {
        value.to_string()
    }
}

/// Default simulations and leaf batch of each kind.
fn kind_defaults(kind: AgentKind) -> (u32, usize) {
    match kind {
        AgentKind::Random | AgentKind::Mcts => (400, 1),
        AgentKind::Az => (200, 8),
        AgentKind::Gumbel => (32, 8),
    }
}

fn kind_name(kind: AgentKind) -> &'static str {
    match kind {
        AgentKind::Random => "random",
        AgentKind::Mcts => "mcts",
        AgentKind::Az => "az",
        AgentKind::Gumbel => "gumbel",
    }
}

impl FromStr for AgentSpec {
    type Err = AgentError;

    fn from_str(s: &str) -> Result<AgentSpec, AgentError> {
        let err = |message: String| AgentError::Spec { spec: s.to_string(), message };
        let (kind, opts) = s.trim().split_once(':').unwrap_or((s.trim(), ""));
        let kind = match kind {
            "random" => AgentKind::Random,
            "mcts" => AgentKind::Mcts,
            "az" => AgentKind::Az,
            "gumbel" => AgentKind::Gumbel,
            other => return Err(err(format!("unknown kind {other:?} (expected random, mcts, az or gumbel)"))),
        };
        let (sims, batch) = kind_defaults(kind);
        let mut spec = AgentSpec {
            kind,
            sims,
            model: None,
            k: RootPolicy::DEFAULT_K,
            c_puct: SearchConfig::default().c_puct,
            batch,
            device: "auto".into(),
            text: s.trim().to_string(),
        };
        let opts = split_options(opts).map_err(err)?;
        for opt in &opts {
            let (key, value) = opt.split_once('=').ok_or_else(|| err(format!("option {opt:?} is not key=value")))?;
            let (key, value) = (key.trim(), value.trim());
            let number = |what: &str| err(format!("{key}={value:?}: expected {what}"));
            match key {
                "sims" => spec.sims = value.parse().ok().filter(|&n| n > 0).ok_or_else(|| number("a positive integer"))?,
                "k" => spec.k = value.parse().ok().filter(|&n| n > 0).ok_or_else(|| number("a positive integer"))?,
                "batch" => spec.batch = value.parse().ok().filter(|&n| n > 0).ok_or_else(|| number("a positive integer"))?,
                "cpuct" => spec.c_puct = value.parse().ok().filter(|&c: &f32| c > 0.0 && c.is_finite()).ok_or_else(|| number("a positive number"))?,
                "model" => spec.model = Some(PathBuf::from(unquote(value).map_err(|m| err(format!("model: {m}")))?)),
                "device" => spec.device = value.to_string(),
                _ => return Err(err(format!("unknown option {key:?} (expected sims, model, k, cpuct, batch, device)"))),
            }
        }
        match kind {
            AgentKind::Random if !opts.is_empty() => return Err(err("random takes no options".into())),
            AgentKind::Mcts if spec.model.is_some() => return Err(err("mcts uses random rollouts, not a model (use az or gumbel)".into())),
            AgentKind::Az | AgentKind::Gumbel if spec.model.is_none() => return Err(err("needs model=PATH".into())),
            _ => {}
        }
        if kind != AgentKind::Gumbel && opts.iter().any(|o| o.trim().starts_with("k=")) {
            return Err(err("k applies to gumbel only".into()));
        }
        Ok(spec)
    }
}

impl AgentSpec {
    /// A spec built as a value (no text to parse, so any path works, commas included): `kind`
    /// with its defaults, `model` and `sims`. Its text is the canonical form, which parses
    /// back to the same spec.
    pub fn new(kind: AgentKind, model: Option<PathBuf>, sims: u32) -> AgentSpec {
        let (_, batch) = kind_defaults(kind);
        let mut spec = AgentSpec {
            kind,
            sims,
            model,
            k: RootPolicy::DEFAULT_K,
            c_puct: SearchConfig::default().c_puct,
            batch,
            device: "auto".into(),
            text: String::new(),
        };
        spec.text = spec.canonical();
        spec
    }

    /// The spec's canonical text: the kind, then every option that differs from the kind's
    /// defaults, with the model path quoted when it needs to be.
    pub fn canonical(&self) -> String {
        let (sims, batch) = kind_defaults(self.kind);
        let mut opts = Vec::new();
        if let Some(m) = &self.model {
            opts.push(format!("model={}", quote_if_needed(&m.to_string_lossy())));
        }
        if self.kind != AgentKind::Random && self.sims != sims {
            opts.push(format!("sims={}", self.sims));
        }
        if self.kind == AgentKind::Gumbel && self.k != RootPolicy::DEFAULT_K {
            opts.push(format!("k={}", self.k));
        }
        if self.c_puct != SearchConfig::default().c_puct {
            opts.push(format!("cpuct={}", self.c_puct));
        }
        if self.batch != batch {
            opts.push(format!("batch={}", self.batch));
        }
        if self.device != "auto" {
            opts.push(format!("device={}", self.device));
        }
        if opts.is_empty() {
            kind_name(self.kind).to_string()
        } else {
            format!("{}:{}", kind_name(self.kind), opts.join(","))
        }
    }

    /// The spec with `k` (Gumbel's considered moves) and `device` set, its text canonical.
    pub fn with_k_device(mut self, k: usize, device: &str) -> AgentSpec {
        self.k = k;
        self.device = device.to_string();
        self.text = self.canonical();
        self
    }

    /// The spec text with its simulation count replaced by `sims` (other options keep their
    /// order and spelling): the label of one budget of a sweep.
    pub fn text_with_sims(&self, sims: u32) -> String {
        let (kind, opts) = self.text.split_once(':').unwrap_or((&self.text, ""));
        let mut parts: Vec<String> = split_options(opts)
            .unwrap_or_default()
            .into_iter()
            .filter(|o| !o.trim().starts_with("sims="))
            .map(str::to_string)
            .collect();
        parts.push(format!("sims={sims}"));
        format!("{kind}:{}", parts.join(","))
    }

    /// The search settings of a searching agent (None for `random`).
    pub fn search_config(&self) -> Option<SearchConfig> {
        let base = SearchConfig { simulations: self.sims, c_puct: self.c_puct, batch: self.batch, ..SearchConfig::default() };
        match self.kind {
            AgentKind::Random => None,
            // Uniform priors: no first-play penalty, so every move gets tried.
            AgentKind::Mcts => Some(SearchConfig { fpu_reduction: 0.0, ..base }),
            AgentKind::Az => Some(base),
            AgentKind::Gumbel => Some(SearchConfig { root: RootPolicy::gumbel(self.k), ..base }),
        }
    }

    /// The spec with `device` as its device, unless the spec text named one (`device=`).
    pub fn default_device(mut self, device: &str) -> AgentSpec {
        let named = self
            .text
            .split_once(':')
            .is_some_and(|(_, opts)| split_options(opts).unwrap_or_default().iter().any(|o| o.trim().starts_with("device=")));
        if !named {
            self.device = device.to_string();
        }
        self
    }

    /// The same spec under another display text (used when a sweep changes `sims`).
    pub fn with_text(mut self, text: &str) -> AgentSpec {
        self.text = text.to_string();
        self
    }

    /// Whether the agent runs a network.
    pub fn uses_model(&self) -> bool {
        self.model.is_some()
    }
}

enum Engine {
    Random(SmallRng),
    Search { search: Option<Search>, evaluator: Box<dyn Evaluator>, cfg: SearchConfig, seed: u64 },
}

/// A player.
pub struct Agent {
    engine: Engine,
}

impl Agent {
    /// Builds an agent for `variant`, loading its model (checked against the variant).
    pub fn new(spec: &AgentSpec, variant: &Arc<Variant>, seed: u64) -> Result<Agent, AgentError> {
        let engine = match spec.search_config() {
            None => Engine::Random(SmallRng::seed_from_u64(seed)),
            Some(cfg) => {
                let evaluator: Box<dyn Evaluator> = match &spec.model {
                    None => Box::new(RolloutEvaluator::new(seed ^ 0x5eed)),
                    Some(path) => {
                        let device = parse_device(&spec.device)?;
                        let (net, _) = checkpoint::load(path, Some(variant), device)?;
                        Box::new(NetEvaluator::new(net, variant))
                    }
                };
                Engine::Search { search: None, evaluator, cfg, seed }
            }
        };
        Ok(Agent { engine })
    }

    /// Searches `pos` (reusing the tree from earlier moves when it leads there). `None` for
    /// `random`, or when the game is over.
    pub fn think(&mut self, pos: &Position) -> Option<SearchResult> {
        self.think_for(pos, None)
    }

    /// As [`Agent::think`], but with a time limit instead of the simulation budget when
    /// `time` is given.
    pub fn think_for(&mut self, pos: &Position, time: Option<std::time::Duration>) -> Option<SearchResult> {
        let Engine::Search { search, evaluator, cfg, seed } = &mut self.engine else {
            return None;
        };
        if pos.is_over() {
            return None;
        }
        let s = match search {
            Some(s) => {
                s.reroot(pos);
                s
            }
            None => search.insert(Search::new(pos.clone(), cfg.clone(), *seed)),
        };
        let result = match time {
            None => s.run(evaluator.as_mut()),
            Some(t) => {
                let mut timed = cfg.clone();
                // PUCT searches until the deadline; a Gumbel root keeps its schedule (its
                // sequential halving is planned for a budget) and stops early if time runs out.
                if timed.root == crate::search::RootPolicy::Puct {
                    timed.simulations = u32::MAX / 2;
                }
                s.set_config(timed);
                s.start();
                let r = s.run_until(evaluator.as_mut(), std::time::Instant::now() + t);
                s.set_config(cfg.clone());
                r
            }
        };
        Some(result)
    }

    /// The move to play in `pos`; `None` when the game is over or the side to move has no
    /// legal move.
    pub fn choose(&mut self, pos: &Position) -> Option<Move> {
        self.choose_for(pos, None)
    }

    /// The move to play, searching for at most `time` when given; `None` as for
    /// [`Agent::choose`].
    pub fn choose_for(&mut self, pos: &Position, time: Option<std::time::Duration>) -> Option<Move> {
        if pos.is_over() {
            return None;
        }
        match &mut self.engine {
            Engine::Random(rng) => {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    return None;
                }
                Some(moves[rng.gen_range(0..moves.len())])
            }
            Engine::Search { .. } => {
                let best = self.think_for(pos, time)?.best?;
                if let Engine::Search { search, .. } = &mut self.engine {
                    // The tree's root is `pos` (think_for rerooted it); should the move not
                    // advance it, forget the tree rather than keep a wrong one.
                    if search.as_mut().map_or(true, |s| s.advance(best).is_err()) {
                        *search = None;
                    }
                }
                pos.is_legal(best).then_some(best)
            }
        }
    }

    /// Forgets the tree and restarts the agent's randomness from `seed` (before a new game,
    /// so that a game depends only on its own seed).
    pub fn reset(&mut self, seed: u64) {
        match &mut self.engine {
            Engine::Random(rng) => *rng = SmallRng::seed_from_u64(seed),
            Engine::Search { search, evaluator, seed: s, .. } => {
                *search = None;
                *s = seed;
                evaluator.reseed(seed ^ 0x5eed);
            }
        }
    }
}

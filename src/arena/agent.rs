//! Players built from short spec strings: `random`, `mcts:sims=N` (random-rollout MCTS, no
//! network), `az:model=PATH,sims=N` (PUCT guided by a network), `gumbel:model=PATH,sims=N,k=16`
//! (Gumbel root with sequential halving; strong at small budgets).
//!
//! Options, comma-separated after the colon: `sims`, `model`, `k` (gumbel), `cpuct`, `batch`
//! (leaves per network call), `device` (auto, cpu, cuda).

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
        let (sims, batch) = match kind {
            AgentKind::Random | AgentKind::Mcts => (400, 1),
            AgentKind::Az => (200, 8),
            AgentKind::Gumbel => (32, 8),
        };
        let mut spec = AgentSpec {
            kind,
            sims,
            model: None,
            k: 16,
            c_puct: 1.5,
            batch,
            device: "auto".into(),
            text: s.trim().to_string(),
        };
        for opt in opts.split(',').filter(|o| !o.trim().is_empty()) {
            let (key, value) = opt.split_once('=').ok_or_else(|| err(format!("option {opt:?} is not key=value")))?;
            let (key, value) = (key.trim(), value.trim());
            let number = |what: &str| err(format!("{key}={value:?}: expected {what}"));
            match key {
                "sims" => spec.sims = value.parse().ok().filter(|&n| n > 0).ok_or_else(|| number("a positive integer"))?,
                "k" => spec.k = value.parse().ok().filter(|&n| n > 0).ok_or_else(|| number("a positive integer"))?,
                "batch" => spec.batch = value.parse().ok().filter(|&n| n > 0).ok_or_else(|| number("a positive integer"))?,
                "cpuct" => spec.c_puct = value.parse().ok().filter(|&c: &f32| c > 0.0).ok_or_else(|| number("a positive number"))?,
                "model" => spec.model = Some(PathBuf::from(value)),
                "device" => spec.device = value.to_string(),
                _ => return Err(err(format!("unknown option {key:?} (expected sims, model, k, cpuct, batch, device)"))),
            }
        }
        match kind {
            AgentKind::Random if !opts.trim().is_empty() => return Err(err("random takes no options".into())),
            AgentKind::Mcts if spec.model.is_some() => return Err(err("mcts uses random rollouts, not a model (use az or gumbel)".into())),
            AgentKind::Az | AgentKind::Gumbel if spec.model.is_none() => return Err(err("needs model=PATH".into())),
            _ => {}
        }
        if kind != AgentKind::Gumbel && opts.split(',').any(|o| o.trim().starts_with("k=")) {
            return Err(err("k applies to gumbel only".into()));
        }
        Ok(spec)
    }
}

impl AgentSpec {
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
        let named = self.text.split_once(':').is_some_and(|(_, opts)| opts.split(',').any(|o| o.trim().starts_with("device=")));
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

    /// The move to play in `pos` (which must not be over).
    pub fn choose(&mut self, pos: &Position) -> Move {
        self.choose_for(pos, None)
    }

    /// The move to play, searching for at most `time` when given.
    pub fn choose_for(&mut self, pos: &Position, time: Option<std::time::Duration>) -> Move {
        match &mut self.engine {
            Engine::Random(rng) => {
                let moves = pos.legal_moves();
                moves[rng.gen_range(0..moves.len())]
            }
            Engine::Search { .. } => {
                let r = self.think_for(pos, time).expect("a search agent searches unfinished positions");
                let best = r.best.expect("unfinished positions have moves");
                if let Engine::Search { search: Some(s), .. } = &mut self.engine {
                    s.advance(best).expect("the searched move is legal");
                }
                best
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

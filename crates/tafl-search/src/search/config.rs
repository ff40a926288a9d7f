//! The search's settings: [`SearchConfig`] (the one home of every search setting and its
//! default), the root's exploration ([`Noise`], [`RootPolicy`]) and how long a decision
//! searches ([`Budget`]). Kept apart from the search itself so that agents, run configs and
//! the engines read settings without the tree code.

use serde::{Deserialize, Serialize};

/// Dirichlet noise mixed into the root priors (self-play exploration). In a TOML table
/// (`noise = { fraction = 0.25 }`) a missing field takes its default.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Noise {
    /// Alpha times the number of legal moves (alpha is scaled to the move count, as KataGo
    /// does: 10.8 ≈ 0.03 x 361 of AlphaZero's Go setting).
    pub alpha_total: f32,
    /// Weight of the noise in the mixed priors.
    pub fraction: f32,
}

impl Default for Noise {
    fn default() -> Self {
        Noise { alpha_total: 10.8, fraction: 0.25 }
    }
}

/// How the root chooses where simulations go. In TOML: `root = { kind = "puct" }` or
/// `root = { kind = "gumbel", k = 16 }` (the other Gumbel constants default to the paper's).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum RootPolicy {
    /// PUCT everywhere (AlphaZero).
    Puct,
    /// Gumbel-top-k sampling of `k` root moves and sequential halving among them (Danihelka
    /// et al. 2022); PUCT below the root. `gumbel_scale` 0 turns the sampling off.
    Gumbel {
        #[serde(default = "default_k")]
        k: usize,
        #[serde(default = "default_c_visit")]
        c_visit: f32,
        #[serde(default = "default_c_scale")]
        c_scale: f32,
        #[serde(default = "default_gumbel_scale")]
        gumbel_scale: f32,
    },
}

// The paper's constants, one home each (serde's defaults and `RootPolicy::gumbel` use them).
fn default_k() -> usize {
    RootPolicy::DEFAULT_K
}
fn default_c_visit() -> f32 {
    50.0
}
fn default_c_scale() -> f32 {
    0.1
}
fn default_gumbel_scale() -> f32 {
    1.0
}

impl RootPolicy {
    /// Moves a Gumbel root considers unless told otherwise (agents, self-play, run configs).
    pub const DEFAULT_K: usize = 16;

    /// Gumbel root with the paper's constants.
    pub fn gumbel(k: usize) -> RootPolicy {
        RootPolicy::Gumbel { k, c_visit: default_c_visit(), c_scale: default_c_scale(), gumbel_scale: default_gumbel_scale() }
    }
}

/// Search parameters: the one home of every search setting and its default. Agents
/// (`arena::AgentSpec` holds one), self-play, run configs (`[selfplay.search]`) and the engine
/// all use this type. A setting has one name everywhere: the field, the TOML key and the
/// agent spec's option (`sims`, `cpuct`, `leaves_per_tree`). As a TOML table every field is
/// optional and takes its default; configs saved before the names were unified say
/// `simulations`, `c_puct` and `batch` (for `leaves_per_tree`), which still read:
///
/// ```toml
/// sims = 48
/// cpuct = 1.5
/// fpu_reduction = 0.2
/// leaves_per_tree = 8
/// root = { kind = "gumbel", k = 16 }
/// noise = { fraction = 0.25 }     # PUCT roots only; leave out for none
/// forced_playouts = 2.0           # PUCT roots only; 0 or left out: off
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SearchConfig {
    /// Simulations per move (new ones; visits kept from tree reuse come on top).
    #[serde(alias = "simulations")]
    pub sims: u32,
    /// The PUCT exploration constant.
    #[serde(alias = "c_puct")]
    pub cpuct: f32,
    /// First-play urgency: an unvisited child is valued at the parent's value minus this
    /// times the square root of the prior mass already visited (Leela Zero's rule).
    pub fpu_reduction: f32,
    /// Leaves gathered per tree before one evaluation (virtual loss keeps them apart): the
    /// spec's `leaves_per_tree` option. Not the positions per network call, which a caller that steps
    /// many trees at once sets (`[selfplay] positions_per_call`), nor the training batch.
    #[serde(alias = "batch")]
    pub leaves_per_tree: usize,
    /// Dirichlet noise for a PUCT root, mixed into the network's priors once per decision
    /// (`None`: the clean priors, as for the fast searches of playout cap randomization).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise: Option<Noise>,
    pub root: RootPolicy,
    /// The escape probe (see the module documentation): when the attackers are to move at a
    /// node being expanded and the king has a move to an escape square, each attacker move
    /// after which the king escapes at once is proven lost without an evaluation.
    pub escape_probe: bool,
    /// The fork probe (module documentation): also prove lost each attacker move after
    /// which a king move leaves an escape threat that no attacker reply stops.
    pub fork_probe: bool,
    /// Contempt: a game-ending draw in the tree (repetition, ply cap, a proven draw) is worth
    /// `-contempt` to the side the search plays for and `+contempt` to its opponent, so that
    /// with a positive value it plays on rather than repeat where it has a fair alternative
    /// (the spec's `contempt`; 0, the default, values draws at 0 for both, as before). The
    /// network's own value is unchanged. A tree reused across one ply (self-play's) keeps the
    /// draws it backed up before with the other side's contempt; an agent's tree, reused
    /// across its move and the reply, keeps its side.
    #[serde(skip_serializing_if = "is_zero")]
    pub contempt: f32,
    /// Forced playouts with policy target pruning (KataGo, Wu 2019), for a PUCT root in
    /// self-play: `k` in the forced count sqrt(k * prior * root visits) (KataGo: 2; 0, the
    /// default, turns it off). Every root child gets at least its forced count of visits, so
    /// noise-raised moves are looked at enough to be judged; the policy target then takes back
    /// from each child except the most visited the forced visits its PUCT score did not earn,
    /// and drops a child left with one visit, so the target does not learn the noise. The move
    /// played is chosen from the visits as before.
    #[serde(skip_serializing_if = "is_zero")]
    pub forced_playouts: f32,
}

fn is_zero(v: &f32) -> bool {
    *v == 0.0
}

impl SearchConfig {
    /// Checks values that parse but cannot work; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        let finite_positive = |v: f32| v > 0.0 && v.is_finite();
        if self.sims == 0 {
            return Err("sims must be at least 1".into());
        }
        if self.leaves_per_tree == 0 {
            return Err("leaves_per_tree must be at least 1".into());
        }
        if !finite_positive(self.cpuct) {
            return Err(format!("cpuct = {}: must be a positive number", self.cpuct));
        }
        if !(self.fpu_reduction >= 0.0 && self.fpu_reduction.is_finite()) {
            return Err(format!("fpu_reduction = {}: must be a number >= 0", self.fpu_reduction));
        }
        if !(0.0..1.0).contains(&self.contempt) {
            return Err(format!("contempt = {}: must be a number in [0, 1)", self.contempt));
        }
        if !(self.forced_playouts >= 0.0 && self.forced_playouts.is_finite()) {
            return Err(format!("forced_playouts = {}: must be a number >= 0 (0: off)", self.forced_playouts));
        }
        if self.forced_playouts > 0.0 && self.root != RootPolicy::Puct {
            return Err("forced_playouts applies to PUCT roots only (root.kind = \"puct\")".into());
        }
        if let Some(n) = self.noise {
            if self.root != RootPolicy::Puct {
                return Err("noise applies to PUCT roots only (root.kind = \"puct\")".into());
            }
            if !(0.0..=1.0).contains(&n.fraction) || !finite_positive(n.alpha_total) {
                return Err(format!("noise: fraction {} must be in [0, 1] and alpha_total {} positive", n.fraction, n.alpha_total));
            }
        }
        if let RootPolicy::Gumbel { k, c_visit, c_scale, gumbel_scale } = self.root {
            if k < 2 {
                return Err(format!("root.k = {k}: must be at least 2"));
            }
            if !finite_positive(c_visit) || !finite_positive(c_scale) || gumbel_scale < 0.0 || !gumbel_scale.is_finite() {
                return Err("root: c_visit and c_scale must be positive, gumbel_scale >= 0".into());
            }
        }
        Ok(())
    }
}

/// The defaults: PUCT at 200 simulations, 8 leaves per tree at a time, no noise (the `az`
/// agent's search; run configs and spec options change a setting at a time from here).
impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            sims: 200,
            cpuct: 1.5,
            fpu_reduction: 0.2,
            leaves_per_tree: 8,
            noise: None,
            root: RootPolicy::Puct,
            escape_probe: true,
            fork_probe: false,
            contempt: 0.0,
            forced_playouts: 0.0,
        }
    }
}

impl SearchConfig {
    /// Simulations of random-rollout MCTS ([`SearchConfig::rollout`]); `play` and `engine`
    /// give their agent as many unless told otherwise.
    pub const ROLLOUT_SIMS: u32 = 400;

    /// Random-rollout MCTS (`mcts` agents): [`Self::ROLLOUT_SIMS`] simulations of one leaf
    /// each and no first-play reduction (the priors are uniform: every move gets tried).
    pub fn rollout() -> SearchConfig {
        SearchConfig { sims: Self::ROLLOUT_SIMS, leaves_per_tree: 1, fpu_reduction: 0.0, ..SearchConfig::default() }
    }

    /// A Gumbel root at a small budget, 32 simulations (its strength at few simulations is
    /// why it exists): `gumbel` agents and self-play's full search.
    pub fn gumbel() -> SearchConfig {
        SearchConfig { sims: 32, root: RootPolicy::gumbel(RootPolicy::DEFAULT_K), ..SearchConfig::default() }
    }
}

/// How long one decision searches; a root proven won or lost ends it sooner either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// The configuration's `sims` new simulations.
    Sims,
    /// Until the deadline (the root's evaluation is always done). A PUCT root searches until
    /// then, however many simulations that makes; a Gumbel root keeps its schedule (its
    /// sequential halving is planned for the configured simulations) and stops early if the
    /// deadline comes first.
    Until(std::time::Instant),
}

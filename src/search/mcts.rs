//! Monte Carlo tree search over one game: PUCT selection with first-play urgency, Dirichlet
//! noise at the root, a Gumbel root with sequential halving for small budgets, virtual-loss
//! leaf batching, tree reuse, and an exact solver for won and lost positions.
//!
//! A decision begins with [`Search::start`] (called by [`Search::new`], [`Search::advance`]
//! and [`Search::reroot`]; call it again after [`Search::set_config`]). The root is prepared
//! once per decision, lazily, with the configuration in force when the decision first gathers
//! leaves: Dirichlet noise is mixed into the network's priors exactly once (the clean priors
//! are kept, so a reused root gets fresh noise, or none for a search without noise, instead
//! of noise on noise), and a Gumbel root draws its candidates.
//!
//! The search never calls an evaluator itself. It is a state machine:
//! [`Search::gather`] selects leaves (with virtual loss, so several leaves of one tree differ),
//! the caller evaluates [`Search::requests`] together with the leaves of other games, and
//! [`Search::apply`] expands and backs them up. [`Search::run`] is that loop for one game;
//! [`super::lockstep`] steps many games so one evaluator call serves all of them.
//!
//! The solver: when a node is expanded, every child move that may end the game is made once to
//! see whether it does (the rules' [`EndScreen`] clears the rest, most of them, from the
//! destination square alone, and never clears a move that ends the game). A move that wins
//! proves its parent won; a node whose children are all proven is proven too, and proofs
//! propagate up the tree. Selection never enters a proven node (it
//! backs up the exact value instead) and never picks a child proven lost for the mover, so
//! a king one move from escape always escapes, and an escape threat is blocked when it can be.
//!
//! The escape probe extends the solver by one ply where the attackers most often go wrong.
//! Without it, learning that an attacker move lets the king escape costs an evaluation of
//! that move's position, and an attacker node facing an escape threat is proven lost only
//! after every one of its (often 100) children has been evaluated: at a few hundred
//! simulations the search rarely sees a threat that no move can block. So when an
//! attackers' node is expanded, each attacker move is made once and the king's moves to
//! escape squares after it are tried; a move after which one of them wins is proven lost (a
//! sound proof: one winning reply is shown), with no evaluation, and if every move is, the
//! node is proven lost. The cost is a make, a scan of the king's moves and an unmake per
//! attacker move (docs/performance.md has the figures). Wins of the defenders other than
//! the king reaching an escape square (an exit fort, say) are left to the ordinary solver.
//!
//! The fork probe (`fork_probe`, off by default) goes two plies further, to the mistake that
//! loses most of the attackers' self-play games: a move that lets the king reach, in one
//! move, a square from which it threatens escapes no single attacker reply can stop. For each
//! attacker move it tries the king's moves that are not escapes themselves; after one that
//! leaves the king a route to an escape square, every attacker reply is made, those landing
//! on the routes or beside the king first (the only ones that can block a route or capture
//! the king, so a failed fork is usually refuted at once). If no reply ends the game for
//! the attackers or a draw, or leaves the king without an escape at once, the attacker move
//! is proven lost. The check is exhaustive over the replies, hence sound under any rules;
//! its cost falls on the (few) king moves that open a route.

use super::evaluator::{EvalRequest, Evaluation, Evaluator};
use super::tree::{Node, NodeId, Proof, Tree};
use crate::rules::{EndScreen, Move, MoveError, Position, Side, Square};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Gamma};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

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
/// agent spec's option (`sims`, `cpuct`, `batch`). As a TOML table every field is optional
/// and takes its default; configs saved before the names were unified say `simulations`,
/// `c_puct` and `leaves_per_tree`, which still read:
///
/// ```toml
/// sims = 48
/// cpuct = 1.5
/// fpu_reduction = 0.2
/// batch = 8
/// root = { kind = "gumbel", k = 16 }
/// noise = { fraction = 0.25 }     # PUCT roots only; leave out for none
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
    /// Leaves gathered per tree before one evaluation (virtual loss keeps them apart).
    #[serde(alias = "leaves_per_tree")]
    pub batch: usize,
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
}

impl SearchConfig {
    /// Checks values that parse but cannot work; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        let finite_positive = |v: f32| v > 0.0 && v.is_finite();
        if self.sims == 0 {
            return Err("sims must be at least 1".into());
        }
        if self.batch == 0 {
            return Err("batch must be at least 1".into());
        }
        if !finite_positive(self.cpuct) {
            return Err(format!("cpuct = {}: must be a positive number", self.cpuct));
        }
        if !(self.fpu_reduction >= 0.0 && self.fpu_reduction.is_finite()) {
            return Err(format!("fpu_reduction = {}: must be a number >= 0", self.fpu_reduction));
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
        SearchConfig { sims: 200, cpuct: 1.5, fpu_reduction: 0.2, batch: 8, noise: None, root: RootPolicy::Puct, escape_probe: true, fork_probe: false }
    }
}

impl SearchConfig {
    /// Simulations of random-rollout MCTS ([`SearchConfig::rollout`]); `play` and `engine`
    /// give their agent as many unless told otherwise.
    pub const ROLLOUT_SIMS: u32 = 400;

    /// Random-rollout MCTS (`mcts` agents): [`Self::ROLLOUT_SIMS`] simulations of one leaf
    /// each and no first-play reduction (the priors are uniform: every move gets tried).
    pub fn rollout() -> SearchConfig {
        SearchConfig { sims: Self::ROLLOUT_SIMS, batch: 1, fpu_reduction: 0.0, ..SearchConfig::default() }
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

/// What a finished search knows about one root move.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveStat {
    pub mv: Move,
    pub visits: u32,
    pub prior: f32,
    /// Mean value for the side to move at the root, if visited or proven.
    pub q: Option<f32>,
    /// Proven result for the side to move at the root, if any.
    pub proof: Proof,
}

/// The outcome of a search.
#[derive(Clone, Debug)]
pub struct SearchResult {
    pub best: Option<Move>,
    /// Value for the side to move at the root, -1..1.
    pub value: f32,
    pub proof: Proof,
    /// Every root move, most visited first.
    pub moves: Vec<MoveStat>,
    /// Principal variation: the best move, then the most visited reply, and so on.
    pub pv: Vec<Move>,
    /// Policy training target over the legal moves (visit counts for PUCT, the improved
    /// policy for Gumbel).
    pub policy: Vec<(Move, f32)>,
    pub simulations: u32,
}

/// A leaf waiting for its evaluation.
struct Leaf {
    path: Vec<NodeId>,
    position: Position,
    moves: Vec<Move>,
}

/// Sequential halving at a Gumbel root.
///
/// The schedule (as in Danihelka et al. 2022 and DeepMind's mctx): with `B` new
/// simulations left for the root's children when the root is prepared, `m = min(k, B,
/// legal moves)` candidates are drawn by Gumbel-top-k, and `R = ceil(log2 m)` (at least 1)
/// rounds are planned. A round with `m` candidates gives each `max(1, B / (R m))` visits, in
/// turn, best candidate first. After each round the candidates are ranked by
/// `gumbel + log prior + sigma(completed Q)` and the better half (rounded up) is kept, but
/// never fewer than two. Rounds go on among the last two (or among one candidate, when there
/// is only one) until the whole budget is spent: no simulation is lost to rounding. The move played is
/// the best-ranked remaining candidate.
struct GumbelState {
    /// Gumbel noise plus log prior, per root child.
    base: Vec<f32>,
    /// Root child offsets still in the running, best first after each halving.
    considered: Vec<usize>,
    /// Planned number of halving rounds, ceil(log2 m).
    rounds: u32,
    /// New simulations the schedule shares out (the budget left when the root was prepared).
    budget: u32,
    rounds_started: u32,
    queue: VecDeque<usize>,
    /// The budget is spent.
    finished: bool,
}

// Returned once per simulation and taken apart at once: a box would cost an allocation each.
#[allow(clippy::large_enum_variant)]
enum Descent {
    Leaf(Leaf),
    /// Reached a proven node; its exact value was backed up.
    Proven,
    /// Reached a leaf already waiting for an evaluation.
    Collision,
}

/// MCTS over one game. See the module documentation for the protocol.
pub struct Search {
    cfg: SearchConfig,
    tree: Tree,
    root_pos: Position,
    leaves: Vec<Leaf>,
    /// Leaves already applied (or abandoned), kept so that the next ones reuse their path,
    /// position and move lists instead of allocating them for every simulation.
    spare: Vec<Leaf>,
    /// Which children of the node being expanded may end the game (reused between expansions).
    screen: EndScreen,
    done: u32,
    gumbel: Option<GumbelState>,
    /// Whether this decision's root setup (noise or Gumbel sampling) has happened.
    root_ready: bool,
    /// The network's priors of the root's children while Dirichlet noise is mixed into the
    /// tree's copies; empty when the tree holds the clean priors.
    clean_priors: Vec<f32>,
    /// Scratch space of the escape and fork probes.
    king_moves: Vec<Move>,
    fork_scratch: ForkScratch,
    rng: SmallRng,
}

const NO_MOVE: Move = Move::new(Square::new(0, 0), Square::new(0, 0));

fn proof_of(winner: Option<Side>, to_move: Side) -> Proof {
    match winner {
        None => Proof::Draw,
        Some(w) if w == to_move => Proof::Win,
        Some(_) => Proof::Loss,
    }
}

/// Whether the king, with the defenders to move in `pos`, wins at once by reaching an escape
/// square: its moves to escape squares are made and the outcome read. `moves` is scratch.
fn king_escapes(pos: &mut Position, moves: &mut Vec<Move>) -> bool {
    debug_assert_eq!(pos.to_move(), Side::Defenders);
    moves.clear();
    pos.generate_moves_from(pos.king(), moves);
    moves.iter().any(|&m| {
        if !pos.variant().is_escape(m.to) {
            return false;
        }
        let undo = pos.make(m);
        let won = pos.outcome().is_some_and(|o| o.winner == Some(Side::Defenders));
        pos.unmake(m, &undo);
        won
    })
}

/// Scratch lists of [`king_forks`], kept between expansions.
#[derive(Default)]
struct ForkScratch {
    king_moves: Vec<Move>,
    replies: Vec<Move>,
    routes: Vec<Square>,
    escape_moves: Vec<Move>,
}

/// Whether the defenders, to move in `pos`, have a king move (not itself an escape) after
/// which every attacker reply leaves the game won for the defenders: over with them winning,
/// or the king escaping at once. The replies are tried exhaustively, so the answer is exact.
fn king_forks(pos: &mut Position, s: &mut ForkScratch) -> bool {
    debug_assert_eq!(pos.to_move(), Side::Defenders);
    s.king_moves.clear();
    pos.generate_moves_from(pos.king(), &mut s.king_moves);
    let mut found = false;
    for i in 0..s.king_moves.len() {
        let k = s.king_moves[i];
        if pos.variant().is_escape(k.to) {
            continue;
        }
        let undo = pos.make(k);
        found = pos.outcome().is_none() && unanswerable(pos, s);
        pos.unmake(k, &undo);
        if found {
            break;
        }
    }
    found
}

/// With the attackers to move in `pos` (not over): whether every reply loses at once, the
/// king escaping next (or the reply ending the game for the defenders).
fn unanswerable(pos: &mut Position, s: &mut ForkScratch) -> bool {
    // The king's open routes now: the squares it passes through and ends on, for each move to
    // an escape square. None, and no reply can lose at once in this way.
    let king = pos.king();
    s.escape_moves.clear();
    pos.generate_moves_from(king, &mut s.escape_moves);
    s.routes.clear();
    for &m in &s.escape_moves {
        if pos.variant().is_escape(m.to) {
            let (df, dr) = ((m.to.file() as i32 - m.from.file() as i32).signum(), (m.to.rank() as i32 - m.from.rank() as i32).signum());
            let (mut f, mut r) = (m.from.file() as i32, m.from.rank() as i32);
            while (f, r) != (m.to.file() as i32, m.to.rank() as i32) {
                f += df;
                r += dr;
                s.routes.push(Square::new(f as u8, r as u8));
            }
        }
    }
    if s.routes.is_empty() {
        return false;
    }
    s.replies.clear();
    pos.generate_moves(&mut s.replies);
    // Replies that can block a route or capture the king first: the likely refutations.
    let near = |sq: Square| sq.file().abs_diff(king.file()) + sq.rank().abs_diff(king.rank()) == 1;
    let (routes, replies) = (&s.routes, &mut s.replies);
    replies.sort_by_key(|m| !(routes.contains(&m.to) || near(m.to)));
    for i in 0..s.replies.len() {
        let r = s.replies[i];
        let undo = pos.make(r);
        let refuted = match pos.outcome() {
            Some(o) => o.winner != Some(Side::Defenders),
            None => !king_escapes(pos, &mut s.escape_moves),
        };
        pos.unmake(r, &undo);
        if refuted {
            return false;
        }
    }
    true
}

impl Search {
    /// A search rooted at `pos`.
    pub fn new(pos: Position, cfg: SearchConfig, seed: u64) -> Search {
        let mut tree = Tree::new(NO_MOVE);
        if let Some(o) = pos.outcome() {
            tree.nodes[0].expanded = true;
            tree.nodes[0].proof = proof_of(o.winner, pos.to_move());
        }
        let mut s = Search {
            cfg,
            tree,
            root_pos: pos,
            leaves: Vec::new(),
            spare: Vec::new(),
            screen: EndScreen::default(),
            done: 0,
            gumbel: None,
            root_ready: false,
            clean_priors: Vec::new(),
            king_moves: Vec::new(),
            fork_scratch: ForkScratch::default(),
            rng: SmallRng::seed_from_u64(seed),
        };
        s.start();
        s
    }

    pub fn config(&self) -> &SearchConfig {
        &self.cfg
    }

    /// Replaces the configuration. Call [`Search::start`] afterwards: a decision already
    /// under way keeps the root it prepared (noise, Gumbel candidates).
    pub fn set_config(&mut self, cfg: SearchConfig) {
        self.cfg = cfg;
    }

    /// The root position.
    pub fn position(&self) -> &Position {
        &self.root_pos
    }

    /// Starts a new decision at the current root: resets the simulation count and restores
    /// the network's priors at the root (removing an earlier decision's noise). The root is
    /// prepared (noise, Gumbel sampling) once, when the decision first gathers leaves or
    /// expands the root, with the configuration in force then; calling `start` several times
    /// before that prepares it only once.
    pub fn start(&mut self) {
        self.done = 0;
        self.gumbel = None;
        self.root_ready = false;
        self.spare.append(&mut self.leaves);
        self.restore_root_priors();
    }

    /// Whether this decision needs no more evaluations (with the configured simulations).
    pub fn is_finished(&self) -> bool {
        self.finished_within(Some(self.cfg.sims))
    }

    /// The most new simulations a decision under `budget` may run (`None`: no count).
    fn simulation_cap(&self, budget: Budget) -> Option<u32> {
        match budget {
            Budget::Until(_) if self.cfg.root == RootPolicy::Puct => None,
            _ => Some(self.cfg.sims),
        }
    }

    /// [`Search::is_finished`] with `cap` new simulations at most.
    fn finished_within(&self, cap: Option<u32>) -> bool {
        if !self.leaves.is_empty() {
            return false;
        }
        let root = self.tree.root();
        if root.proof != Proof::Unknown || cap.is_some_and(|c| self.done >= c) {
            return true;
        }
        match &self.gumbel {
            Some(g) => g.queue.is_empty() && g.finished,
            None => false,
        }
    }

    /// Selects up to `max` more leaves to evaluate; returns how many were added. Fewer come
    /// back when the budget is spent, when a leaf is already waiting, or when a Gumbel round
    /// needs its results before the next can start.
    pub fn gather(&mut self, max: usize) -> usize {
        self.gather_within(max, Some(self.cfg.sims))
    }

    /// [`Search::gather`] with `cap` new simulations at most (`None`: no count).
    fn gather_within(&mut self, max: usize, cap: Option<u32>) -> usize {
        if !self.root_ready && self.tree.root().expanded {
            self.prepare_root();
        }
        let mut added = 0;
        while added < max {
            let root = self.tree.root();
            if root.proof != Proof::Unknown || cap.is_some_and(|c| self.done + self.leaves.len() as u32 >= c) {
                break;
            }
            if !root.expanded {
                if self.leaves.is_empty() {
                    let mut leaf = self.root_leaf();
                    leaf.position.generate_moves(&mut leaf.moves);
                    self.push_leaf(leaf);
                    added += 1;
                }
                break;
            }
            let forced = if self.gumbel.is_some() {
                match self.next_forced() {
                    Some(a) => Some(a),
                    None => break,
                }
            } else {
                None
            };
            match self.descend(forced) {
                Descent::Leaf(leaf) => {
                    self.push_leaf(leaf);
                    added += 1;
                }
                Descent::Proven => self.done += 1,
                Descent::Collision => {
                    if let (Some(a), Some(g)) = (forced, self.gumbel.as_mut()) {
                        g.queue.push_front(a);
                    }
                    break;
                }
            }
        }
        added
    }

    /// The leaves waiting for evaluation, in the order [`Search::apply`] expects results.
    pub fn requests(&self) -> impl Iterator<Item = EvalRequest<'_>> {
        self.leaves.iter().map(|l| EvalRequest { position: &l.position, moves: &l.moves })
    }

    /// Number of leaves waiting.
    pub fn pending(&self) -> usize {
        self.leaves.len()
    }

    /// Expands and backs up every waiting leaf with its evaluation.
    ///
    /// # Panics
    /// If `evals` does not hold one evaluation per waiting leaf.
    pub fn apply(&mut self, evals: &[Evaluation]) {
        assert_eq!(evals.len(), self.leaves.len(), "one evaluation per leaf");
        let mut leaves = std::mem::take(&mut self.leaves);
        for (leaf, eval) in leaves.iter_mut().zip(evals) {
            let id = *leaf.path.last().expect("paths start at the root");
            if !self.tree.nodes[id as usize].expanded {
                self.tree.nodes[id as usize].raw_value = eval.value();
                self.expand(id, &mut leaf.position, &leaf.moves, &eval.priors);
            }
            let node = &self.tree.nodes[id as usize];
            let value = node.proof.value().unwrap_or_else(|| eval.value());
            self.backup(&leaf.path, value, true);
            self.update_proofs(&leaf.path);
            self.done += 1;
        }
        // Keep the leaves for reuse, and the emptied list for the next batch.
        self.spare.append(&mut leaves);
        self.leaves = leaves;
        if !self.root_ready && self.tree.root().expanded {
            self.prepare_root();
        }
    }

    /// Runs a whole decision with `evaluator`: the configured simulations.
    pub fn run(&mut self, evaluator: &mut dyn Evaluator) -> SearchResult {
        self.run_for(evaluator, Budget::Sims)
    }

    /// Runs a decision with `evaluator` until `budget` is spent (or the root is proven).
    pub fn run_for(&mut self, evaluator: &mut dyn Evaluator, budget: Budget) -> SearchResult {
        let cap = self.simulation_cap(budget);
        let deadline = match budget {
            Budget::Sims => None,
            Budget::Until(d) => Some(d),
        };
        while !self.finished_within(cap) && (self.done == 0 || deadline.map_or(true, |d| std::time::Instant::now() < d)) {
            self.step(evaluator, cap);
        }
        self.result()
    }

    /// One gather-evaluate-apply round on this tree alone.
    fn step(&mut self, evaluator: &mut dyn Evaluator, cap: Option<u32>) {
        self.gather_within(self.cfg.batch.max(1), cap);
        if self.leaves.is_empty() {
            return;
        }
        let evals = {
            let reqs: Vec<_> = self.requests().collect();
            evaluator.evaluate(&reqs)
        };
        self.apply(&evals);
    }

    /// Moves the root along `mv`, keeping the subtree below it.
    ///
    /// # Errors
    /// An illegal move, or a move after the end of the game.
    pub fn advance(&mut self, mv: Move) -> Result<(), MoveError> {
        self.root_pos.play(mv)?;
        // Noise lived only on the old root's children; the new root's children are clean.
        self.clean_priors.clear();
        let root = self.tree.root();
        let child = root.children().find(|&c| self.tree.nodes[c].mv == mv);
        self.tree = match child {
            Some(c) => self.tree.subtree(c as NodeId),
            None => Tree::new(mv),
        };
        if !self.tree.nodes[0].expanded {
            // A child the escape probe proved without expanding it: as a root it needs its
            // children (and the solver finds the escape among them at once).
            self.tree.nodes[0].proof = Proof::Unknown;
        }
        if let Some(o) = self.root_pos.outcome() {
            self.tree.nodes[0].expanded = true;
            self.tree.nodes[0].num_children = 0;
            self.tree.nodes[0].proof = proof_of(o.winner, self.root_pos.to_move());
        }
        self.start();
        Ok(())
    }

    /// Moves the root to `pos` if it is the root or a position one or two plies below it
    /// that the tree already holds; otherwise starts a fresh tree there. Returns whether the
    /// tree was kept.
    pub fn reroot(&mut self, pos: &Position) -> bool {
        let same = |a: &Position, b: &Position| a.hash() == b.hash() && a.ply() == b.ply();
        if same(&self.root_pos, pos) {
            self.start();
            return true;
        }
        let root = self.tree.root().clone();
        for c in root.children() {
            let mv = self.tree.nodes[c].mv;
            let mut p = self.root_pos.clone();
            p.make(mv);
            if same(&p, pos) {
                self.advance(mv).expect("tree moves are legal");
                return true;
            }
        }
        *self = Search::new(pos.clone(), self.cfg.clone(), self.rng.gen());
        false
    }

    /// The result of the search so far.
    pub fn result(&self) -> SearchResult {
        let root = self.tree.root();
        let nodes = &self.tree.nodes;
        let mut moves: Vec<MoveStat> = root
            .children()
            .map(|c| {
                let n = &nodes[c];
                let proof = match n.proof {
                    Proof::Win => Proof::Loss,
                    Proof::Loss => Proof::Win,
                    p => p,
                };
                MoveStat { mv: n.mv, visits: n.visits, prior: n.prior, q: n.q(), proof }
            })
            .collect();
        let best = self.best_child().map(|c| nodes[c].mv);
        let policy = self.policy_target();
        moves.sort_by(|a, b| b.visits.cmp(&a.visits).then(b.prior.total_cmp(&a.prior)));
        let value = match root.proof.value() {
            Some(v) => v,
            None if root.visits > 0 => -root.value_sum / root.visits as f32,
            None => 0.0,
        };
        let mut pv = Vec::new();
        if let Some(b) = self.best_child() {
            pv.push(nodes[b].mv);
            let mut id = b;
            while let Some(c) = nodes[id].children().max_by_key(|&c| (nodes[c].proof == Proof::Loss, nodes[c].visits)) {
                if nodes[c].visits == 0 && nodes[c].proof == Proof::Unknown {
                    break;
                }
                pv.push(nodes[c].mv);
                id = c;
            }
        }
        SearchResult { best, value, proof: root.proof, moves, pv, policy, simulations: self.done }
    }

    /// The move to play: the best move at temperature 0, otherwise a move drawn with
    /// probability proportional to visits^(1/temperature) among moves not proven lost.
    /// Gumbel searches always play their sequential-halving winner (its sampling already
    /// explores). Proven wins are always played.
    pub fn choose(&mut self, temperature: f32) -> Option<Move> {
        let best = self.best_child()?;
        let nodes = &self.tree.nodes;
        if temperature <= 0.0 || self.gumbel.is_some() || self.tree.root().proof != Proof::Unknown {
            return Some(nodes[best].mv);
        }
        let candidates: Vec<usize> = self.tree.root().children().filter(|&c| nodes[c].proof != Proof::Win && nodes[c].visits > 0).collect();
        let weights: Vec<f64> = candidates.iter().map(|&c| (nodes[c].visits as f64).powf(1.0 / temperature as f64)).collect();
        let total: f64 = weights.iter().sum();
        if candidates.is_empty() || total <= 0.0 {
            return Some(nodes[best].mv);
        }
        let mut r = self.rng.gen::<f64>() * total;
        for (c, w) in candidates.iter().zip(&weights) {
            r -= w;
            if r <= 0.0 {
                return Some(nodes[*c].mv);
            }
        }
        Some(nodes[*candidates.last().expect("not empty")].mv)
    }

    // ----- internals ------------------------------------------------------------------

    /// A leaf at the root (path `[0]`, no moves yet), recycled from a spare one if any.
    fn root_leaf(&mut self) -> Leaf {
        match self.spare.pop() {
            Some(mut leaf) => {
                leaf.path.clear();
                leaf.path.push(0);
                leaf.position.clone_from(&self.root_pos);
                leaf.moves.clear();
                leaf
            }
            None => Leaf { path: vec![0], position: self.root_pos.clone(), moves: Vec::with_capacity(64) },
        }
    }

    fn push_leaf(&mut self, leaf: Leaf) {
        for &id in &leaf.path {
            self.tree.nodes[id as usize].in_flight += 1;
        }
        self.leaves.push(leaf);
    }

    /// Walks from the root to a leaf, forcing root child `forced` if given.
    fn descend(&mut self, forced: Option<usize>) -> Descent {
        let mut leaf = self.root_leaf();
        let mut id: NodeId = 0;
        loop {
            let node = &self.tree.nodes[id as usize];
            if let Some(v) = node.proof.value() {
                self.backup(&leaf.path, v, false);
                self.spare.push(leaf);
                return Descent::Proven;
            }
            if !node.expanded {
                if node.in_flight > 0 {
                    self.spare.push(leaf);
                    return Descent::Collision;
                }
                leaf.position.generate_moves(&mut leaf.moves);
                return Descent::Leaf(leaf);
            }
            let child = match forced {
                Some(a) if id == 0 => node.first_child + a as NodeId,
                _ => self.select(id),
            };
            leaf.position.make(self.tree.nodes[child as usize].mv);
            leaf.path.push(child);
            id = child;
        }
    }

    /// PUCT with first-play urgency and virtual loss; children proven won for the opponent
    /// are never chosen while another exists.
    fn select(&self, id: NodeId) -> NodeId {
        let nodes = &self.tree.nodes;
        let parent = &nodes[id as usize];
        let n_parent = (parent.visits + parent.in_flight).max(1) as f32;
        let sqrt_n = n_parent.sqrt();
        let parent_value = if parent.visits > 0 { -parent.value_sum / parent.visits as f32 } else { 0.0 };
        let visited_mass: f32 = parent.children().filter(|&c| nodes[c].visits + nodes[c].in_flight > 0).map(|c| nodes[c].prior).sum();
        let fpu = parent_value - self.cfg.fpu_reduction * visited_mass.sqrt();
        let mut best = parent.first_child;
        let mut best_score = f32::NEG_INFINITY;
        for c in parent.children() {
            let ch = &nodes[c];
            if ch.proof == Proof::Win {
                continue;
            }
            let n = ch.visits + ch.in_flight;
            let q = match ch.proof.value() {
                Some(v) => -v,
                None if n > 0 => (ch.value_sum - ch.in_flight as f32) / n as f32,
                None => fpu,
            };
            let score = q + self.cfg.cpuct * ch.prior * sqrt_n / (1 + n) as f32;
            if score > best_score {
                best_score = score;
                best = c as NodeId;
            }
        }
        best
    }

    /// Creates the children of `id` with their priors and checks which moves end the game.
    fn expand(&mut self, id: NodeId, pos: &mut Position, moves: &[Move], priors: &[f32]) {
        debug_assert_eq!(moves.len(), priors.len());
        if moves.is_empty() {
            // The rules end a game when the side to move has no move; be safe anyway.
            let node = &mut self.tree.nodes[id as usize];
            node.expanded = true;
            node.proof = Proof::Loss;
            return;
        }
        let to_move = pos.to_move();
        // Only the moves the screen cannot clear are made to see whether they end the game
        // (making every child was most of the tree work in self-play's profile).
        self.screen.prepare(pos);
        let screen = &self.screen;
        // Straight into the tree's node array: no temporary list per expansion.
        self.tree.add_children(
            id,
            moves.iter().zip(priors).map(|(&mv, &p)| {
                let mut child = Node::new(mv, p);
                if !screen.may_end(pos, mv) {
                    return child;
                }
                let undo = pos.make(mv);
                if let Some(o) = pos.outcome() {
                    child.expanded = true;
                    child.proof = proof_of(o.winner, to_move.opponent());
                    child.raw_value = child.proof.value().unwrap_or(0.0);
                }
                pos.unmake(mv, &undo);
                child
            }),
        );
        if (self.cfg.escape_probe || self.cfg.fork_probe) && to_move == Side::Attackers {
            self.probe_escapes(id, pos);
        }
        let proof = self.proof_from_children(id);
        self.tree.nodes[id as usize].proof = proof;
    }

    /// The escape probe (module documentation): at the attackers' node `id` (position `pos`,
    /// children just created), proves lost each attacker move after which the king escapes at
    /// once. Every move is tried: one that opens a line (or captures a piece in the king's
    /// way) can give the king a route it does not have now.
    fn probe_escapes(&mut self, id: NodeId, pos: &mut Position) {
        let mut king_moves = std::mem::take(&mut self.king_moves);
        let node = &self.tree.nodes[id as usize];
        for c in node.first_child as usize..(node.first_child as usize + node.num_children as usize) {
            if self.tree.nodes[c].proof != Proof::Unknown {
                continue;
            }
            let mv = self.tree.nodes[c].mv;
            let undo = pos.make(mv);
            let lost = pos.outcome().is_none()
                && ((self.cfg.escape_probe && king_escapes(pos, &mut king_moves)) || (self.cfg.fork_probe && king_forks(pos, &mut self.fork_scratch)));
            pos.unmake(mv, &undo);
            if lost {
                // The child's side to move (the defenders) wins: its value is theirs.
                let child = &mut self.tree.nodes[c];
                child.proof = Proof::Win;
                child.raw_value = Proof::Win.value().unwrap_or(1.0);
            }
        }
        self.king_moves = king_moves;
    }

    fn proof_from_children(&self, id: NodeId) -> Proof {
        let nodes = &self.tree.nodes;
        let node = &nodes[id as usize];
        let (mut all, mut draw) = (true, false);
        for c in node.children() {
            match nodes[c].proof {
                Proof::Loss => return Proof::Win,
                Proof::Unknown => all = false,
                Proof::Draw => draw = true,
                Proof::Win => {}
            }
        }
        match (all, draw) {
            (false, _) => Proof::Unknown,
            (true, true) => Proof::Draw,
            (true, false) => Proof::Loss,
        }
    }

    /// Re-derives proofs from the leaf of `path` upward while they change.
    fn update_proofs(&mut self, path: &[NodeId]) {
        for &id in path.iter().rev().skip(1) {
            if self.tree.nodes[id as usize].proof != Proof::Unknown {
                break;
            }
            let p = self.proof_from_children(id);
            if p == Proof::Unknown {
                break;
            }
            self.tree.nodes[id as usize].proof = p;
        }
    }

    /// Adds a visit with `value` (from the view of the side to move at the end of `path`) to
    /// every node on the path, removing the virtual loss if `pending`.
    fn backup(&mut self, path: &[NodeId], value: f32, pending: bool) {
        let mut v = -value;
        for &id in path.iter().rev() {
            let n = &mut self.tree.nodes[id as usize];
            n.visits += 1;
            n.value_sum += v;
            if pending {
                n.in_flight -= 1;
            }
            v = -v;
        }
    }

    /// Puts the network's priors back on the root's children if noise was mixed into them.
    fn restore_root_priors(&mut self) {
        if self.clean_priors.is_empty() {
            return;
        }
        let children = self.tree.root().children();
        debug_assert_eq!(children.len(), self.clean_priors.len());
        for (c, p) in children.zip(std::mem::take(&mut self.clean_priors)) {
            self.tree.nodes[c].prior = p;
        }
    }

    /// Sets up the root for this decision (once): Dirichlet noise for PUCT, the candidates
    /// and schedule for a Gumbel root.
    fn prepare_root(&mut self) {
        self.root_ready = true;
        // Whatever happened before, mix into the network's own priors.
        self.restore_root_priors();
        let root = self.tree.root().clone();
        if root.num_children == 0 {
            return;
        }
        match self.cfg.root {
            RootPolicy::Puct => {
                if let Some(noise) = self.cfg.noise {
                    let n = root.num_children as usize;
                    let alpha = (noise.alpha_total / n as f32).max(0.01) as f64;
                    let gamma = Gamma::new(alpha, 1.0).expect("positive alpha");
                    let mut sample: Vec<f64> = (0..n).map(|_| gamma.sample(&mut self.rng)).collect();
                    let total: f64 = sample.iter().sum::<f64>().max(1e-30);
                    sample.iter_mut().for_each(|x| *x /= total);
                    let clean: Vec<f32> = root.children().map(|c| self.tree.nodes[c].prior).collect();
                    for ((c, x), &p) in root.children().zip(sample).zip(&clean) {
                        self.tree.nodes[c].prior = (1.0 - noise.fraction) * p + noise.fraction * x as f32;
                    }
                    self.clean_priors = clean;
                }
            }
            RootPolicy::Gumbel { k, gumbel_scale, .. } => {
                let base: Vec<f32> = root
                    .children()
                    .map(|c| {
                        let u: f32 = self.rng.gen_range(1e-12f32..1.0);
                        gumbel_scale * -(-u.ln()).ln() + self.tree.nodes[c].prior.max(1e-12).ln()
                    })
                    .collect();
                // More candidates than simulations would leave some unvisited, yet in the
                // running for the final choice.
                let budget = self.cfg.sims.saturating_sub(self.done);
                let mut considered: Vec<usize> = (0..base.len()).collect();
                considered.sort_by(|&a, &b| base[b].total_cmp(&base[a]));
                considered.truncate(k.min(budget as usize).clamp(1, base.len()));
                let rounds = (considered.len() as f32).log2().ceil().max(1.0) as u32;
                self.gumbel = Some(GumbelState { base, considered, rounds, budget, rounds_started: 0, queue: VecDeque::new(), finished: false });
            }
        }
    }

    /// The next root child a Gumbel round wants visited; starts the next round (halving the
    /// candidates, down to two) when the current one is complete. `None` while results are
    /// outstanding or when the budget is spent. See [`GumbelState`] for the schedule.
    fn next_forced(&mut self) -> Option<usize> {
        if let Some(a) = self.gumbel.as_mut().and_then(|g| g.queue.pop_front()) {
            return Some(a);
        }
        if !self.leaves.is_empty() {
            return None;
        }
        let remaining = self.cfg.sims.saturating_sub(self.done);
        if remaining == 0 {
            self.gumbel.as_mut().expect("gumbel search").finished = true;
            return None;
        }
        let scores = if self.gumbel.as_ref().is_some_and(|g| g.rounds_started > 0) { self.gumbel_scores() } else { Vec::new() };
        let g = self.gumbel.as_mut().expect("gumbel search");
        if g.rounds_started > 0 {
            g.considered.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
            let keep = g.considered.len().div_ceil(2).max(2);
            g.considered.truncate(keep);
        }
        g.rounds_started += 1;
        let m = g.considered.len() as u32;
        let per = (g.budget / (g.rounds * m)).max(1);
        let total = (per * m).min(remaining);
        for i in 0..total {
            g.queue.push_back(g.considered[(i % m) as usize]);
        }
        g.queue.pop_front()
    }

    /// Completed Q of each root child for the side to move at the root: its mean value if
    /// visited or proven, otherwise the mixed value estimate of the paper's appendix:
    /// `v_mix = (v_hat + sum N / sum_visited prior * sum_visited prior q) / (1 + sum N)`,
    /// with `v_hat` the network's value of the root.
    fn completed_q(&self) -> Vec<f32> {
        let nodes = &self.tree.nodes;
        let root = self.tree.root();
        let raw: Vec<Option<f32>> = root.children().map(|c| nodes[c].q()).collect();
        let (mut visits, mut mass, mut weighted) = (0.0f32, 0.0f32, 0.0f32);
        for (c, q) in root.children().zip(&raw) {
            if let Some(q) = q {
                visits += nodes[c].visits as f32;
                mass += nodes[c].prior;
                weighted += nodes[c].prior * q;
            }
        }
        // Eq. 33 of the paper: the network's own value of the root (not the root's running
        // mean, which already holds the children's results).
        let v_hat = root.raw_value;
        let v_mix = if mass > 0.0 { (v_hat + visits * weighted / mass) / (1.0 + visits) } else { v_hat };
        raw.into_iter().map(|q| q.unwrap_or(v_mix)).collect()
    }

    /// sigma(completed Q), min-max normalised as in DeepMind's mctx.
    fn sigma_q(&self) -> Vec<f32> {
        let RootPolicy::Gumbel { c_visit, c_scale, .. } = self.cfg.root else {
            return vec![0.0; self.tree.root().num_children as usize];
        };
        let q = self.completed_q();
        let (lo, hi) = q.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), &x| (l.min(x), h.max(x)));
        let span = (hi - lo).max(1e-6);
        let nodes = &self.tree.nodes;
        let max_n = self.tree.root().children().map(|c| nodes[c].visits).max().unwrap_or(0) as f32;
        q.iter().map(|x| (c_visit + max_n) * c_scale * (x - lo) / span).collect()
    }

    fn gumbel_scores(&self) -> Vec<f32> {
        let g = self.gumbel.as_ref().expect("gumbel search");
        self.sigma_q().iter().zip(&g.base).map(|(s, b)| s + b).collect()
    }

    /// The root child to play, as an arena index.
    fn best_child(&self) -> Option<usize> {
        let nodes = &self.tree.nodes;
        let root = self.tree.root();
        if root.num_children == 0 {
            return None;
        }
        // A proven win: an immediate one first, then the most visited.
        if let Some(c) = root.children().filter(|&c| nodes[c].proof == Proof::Loss).max_by_key(|&c| (nodes[c].is_terminal(), nodes[c].visits)) {
            return Some(c);
        }
        let alive: Vec<usize> = root.children().filter(|&c| nodes[c].proof != Proof::Win).collect();
        let pool = if alive.is_empty() { root.children().collect() } else { alive };
        if let Some(g) = &self.gumbel {
            let scores = self.gumbel_scores();
            let first = root.first_child as usize;
            let best = g.considered.iter().map(|&a| a + first).filter(|c| pool.contains(c)).max_by(|&a, &b| scores[a - first].total_cmp(&scores[b - first]));
            if best.is_some() {
                return best;
            }
        }
        pool.into_iter().max_by(|&a, &b| {
            let (x, y) = (&nodes[a], &nodes[b]);
            x.visits.cmp(&y.visits).then(x.q().unwrap_or(-2.0).total_cmp(&y.q().unwrap_or(-2.0))).then(x.prior.total_cmp(&y.prior))
        })
    }

    /// Training target: the improved policy softmax(log prior + sigma(completed Q)) for a
    /// Gumbel root, normalised visit counts otherwise.
    fn policy_target(&self) -> Vec<(Move, f32)> {
        let nodes = &self.tree.nodes;
        let root = self.tree.root();
        if root.num_children == 0 {
            return Vec::new();
        }
        let weights: Vec<f32> = if self.gumbel.is_some() {
            let logits: Vec<f32> = root.children().zip(self.sigma_q()).map(|(c, s)| nodes[c].prior.max(1e-12).ln() + s).collect();
            let m = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            logits.iter().map(|l| (l - m).exp()).collect()
        } else {
            root.children().map(|c| nodes[c].visits as f32).collect()
        };
        let total: f32 = weights.iter().sum();
        let n = weights.len() as f32;
        root.children().zip(weights).map(|(c, w)| (nodes[c].mv, if total > 0.0 { w / total } else { 1.0 / n })).collect()
    }

    /// Number of nodes in the tree (for tests and memory figures).
    pub fn tree_size(&self) -> usize {
        self.tree.nodes.len()
    }
}

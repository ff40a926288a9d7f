//! Monte Carlo tree search over one game: PUCT selection with first-play urgency, Dirichlet
//! noise and forced playouts (with policy target pruning) at the root, a Gumbel root with
//! sequential halving for small budgets, virtual-loss leaf batching, tree reuse, and an exact
//! solver for won and lost positions.
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
//! The escape and fork probes that extend the solver are in [`super::probes`]; the Gumbel
//! root in [`super::gumbel`]; the settings in [`super::config`].

use super::config::{Budget, RootPolicy, SearchConfig};
use super::evaluator::{EvalRequest, Evaluation, Evaluator};
use super::gumbel::GumbelState;
use super::probes::ForkScratch;
use super::tree::{Node, NodeId, Proof, Tree};
use crate::rules::{EndScreen, Move, MoveError, Position, Side, Square};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Gamma};

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

impl SearchResult {
    /// A move drawn from the policy target with `u`, a uniform number in [0, 1): the
    /// exploration of a Gumbel root without noise (`gumbel_scale = 0`), whose own choice is
    /// deterministic. A proven root plays its best move: sampling would only throw a proof
    /// away. `None` when the search had no move.
    pub fn sample_policy(&self, u: f64) -> Option<Move> {
        if self.proof != Proof::Unknown {
            return self.best;
        }
        let weights: Vec<f64> = self.policy.iter().map(|&(_, p)| f64::from(p)).collect();
        weighted_draw(&weights, u).map_or(self.best, |i| Some(self.policy[i].0))
    }
}

/// The index that `u`, a uniform number in [0, 1), draws from `weights` in proportion to
/// them (a negative weight counts as 0); `None` when no weight is positive or their sum is
/// not finite. The one weighted draw of a root's move ([`Search::choose`],
/// [`SearchResult::sample_policy`]).
fn weighted_draw(weights: &[f64], u: f64) -> Option<usize> {
    let total: f64 = weights.iter().map(|w| w.max(0.0)).sum();
    if total <= 0.0 || !total.is_finite() {
        return None;
    }
    let mut r = u.clamp(0.0, 1.0) * total;
    for (i, w) in weights.iter().enumerate() {
        r -= w.max(0.0);
        if r < 0.0 {
            return Some(i);
        }
    }
    weights.iter().rposition(|&w| w > 0.0)
}

/// A leaf waiting for its evaluation. Leaves are recycled ([`Search::root_leaf`]), so the
/// position's box is allocated once per leaf slot, and a leaf moves (between the spare list,
/// the descent and the waiting list, several times a simulation) as a few words rather than
/// as a whole board (over 700 bytes).
pub(super) struct Leaf {
    pub(super) path: Vec<NodeId>,
    pub(super) position: Box<Position>,
    pub(super) moves: Vec<Move>,
}

enum Descent {
    Leaf(Leaf),
    /// Reached a proven node; its exact value was backed up.
    Proven,
    /// Reached a leaf already waiting for an evaluation.
    Collision,
}

/// MCTS over one game. See the module documentation for the protocol.
pub struct Search {
    pub(super) cfg: SearchConfig,
    pub(super) tree: Tree,
    pub(super) root_pos: Position,
    pub(super) leaves: Vec<Leaf>,
    /// Leaves already applied (or abandoned), kept so that the next ones reuse their path,
    /// position and move lists instead of allocating them for every simulation.
    pub(super) spare: Vec<Leaf>,
    /// Which children of the node being expanded may end the game (reused between expansions).
    pub(super) screen: EndScreen,
    pub(super) done: u32,
    pub(super) gumbel: Option<GumbelState>,
    /// Whether this decision's root setup (noise or Gumbel sampling) has happened.
    pub(super) root_ready: bool,
    /// The network's priors of the root's children while Dirichlet noise is mixed into the
    /// tree's copies; empty when the tree holds the clean priors.
    pub(super) clean_priors: Vec<f32>,
    /// Scratch space of the escape and fork probes.
    pub(super) king_moves: Vec<Move>,
    pub(super) fork_scratch: ForkScratch,
    pub(super) rng: SmallRng,
}

const NO_MOVE: Move = Move::new(Square::new(0, 0), Square::new(0, 0));

pub(super) fn proof_of(winner: Option<Side>, to_move: Side) -> Proof {
    match winner {
        None => Proof::Draw,
        Some(w) if w == to_move => Proof::Win,
        Some(_) => Proof::Loss,
    }
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
            let proven = self.proven_value(self.tree.nodes[id as usize].proof, leaf.path.len() - 1);
            let value = proven.unwrap_or_else(|| eval.value());
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
        self.gather_within(self.cfg.leaves_per_tree.max(1), cap);
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
                MoveStat { mv: n.mv, visits: n.visits, prior: n.prior, q: self.root_child_q(c), proof }
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
        // Visited candidates only: every weight is at least 1, so a draw is always made.
        if candidates.is_empty() {
            return Some(nodes[best].mv);
        }
        let weights: Vec<f64> = candidates.iter().map(|&c| (nodes[c].visits as f64).powf(1.0 / temperature as f64)).collect();
        let u = self.rng.gen::<f64>();
        Some(weighted_draw(&weights, u).map_or(nodes[best].mv, |i| nodes[candidates[i]].mv))
    }

    // ----- internals ------------------------------------------------------------------

    /// The exact value of `proof` for the side to move at a node `depth` plies below the
    /// root, with the contempt: a draw is worth `-contempt` to the root's side and
    /// `+contempt` to the other (sides alternate every ply).
    fn proven_value(&self, proof: Proof, depth: usize) -> Option<f32> {
        match proof {
            Proof::Draw => Some(if depth % 2 == 0 { -self.cfg.contempt } else { self.cfg.contempt }),
            p => p.value(),
        }
    }

    /// [`Node::q`] of root child `c` (an arena index) for the root's side, with the contempt.
    pub(super) fn root_child_q(&self, c: usize) -> Option<f32> {
        let n = &self.tree.nodes[c];
        match n.proof {
            Proof::Draw => self.proven_value(Proof::Draw, 1).map(|v| -v),
            _ => n.q(),
        }
    }

    /// A leaf at the root (path `[0]`, no moves yet), recycled from a spare one if any.
    fn root_leaf(&mut self) -> Leaf {
        match self.spare.pop() {
            Some(mut leaf) => {
                leaf.path.clear();
                leaf.path.push(0);
                (*leaf.position).clone_from(&self.root_pos);
                leaf.moves.clear();
                leaf
            }
            None => Leaf { path: vec![0], position: Box::new(self.root_pos.clone()), moves: Vec::with_capacity(64) },
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
            if let Some(v) = self.proven_value(node.proof, leaf.path.len() - 1) {
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
                _ if id == 0 && self.cfg.forced_playouts > 0.0 => self.forced_playout().unwrap_or_else(|| self.select(0, 0)),
                _ => self.select(id, leaf.path.len() - 1),
            };
            leaf.position.make(self.tree.nodes[child as usize].mv);
            leaf.path.push(child);
            id = child;
        }
    }

    /// PUCT with first-play urgency and virtual loss; children proven won for the opponent
    /// are never chosen while another exists.
    fn select(&self, id: NodeId, depth: usize) -> NodeId {
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
            let q = match self.proven_value(ch.proof, depth + 1) {
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

    /// A root child owed a forced playout (KataGo): one visited already (unvisited children
    /// come in through first-play urgency, as before) whose visits, in flight included, are
    /// below sqrt(k * prior * root visits). The one with the highest prior if several; none
    /// proven lost for the root's side.
    fn forced_playout(&self) -> Option<NodeId> {
        let nodes = &self.tree.nodes;
        let root = self.tree.root();
        let total = (root.visits + root.in_flight) as f32;
        root.children()
            .filter(|&c| {
                let ch = &nodes[c];
                let n = (ch.visits + ch.in_flight) as f32;
                ch.proof != Proof::Win && n > 0.0 && n < (self.cfg.forced_playouts * ch.prior * total).sqrt()
            })
            .max_by(|&a, &b| nodes[a].prior.total_cmp(&nodes[b].prior))
            .map(|c| c as NodeId)
    }

    /// The root's visit counts with the forced playouts PUCT did not earn taken back
    /// (KataGo's policy target pruning): each child but the one to play gives back up to its
    /// forced count while its PUCT score, with the visits it keeps, stays at or below the best
    /// child's; a child left with one visit is dropped. Without forced playouts, the visits.
    fn pruned_visits(&self) -> Vec<f32> {
        let nodes = &self.tree.nodes;
        let root = self.tree.root();
        let visits: Vec<f32> = root.children().map(|c| nodes[c].visits as f32).collect();
        let k = self.cfg.forced_playouts;
        let Some(best) = self.best_child().filter(|_| k > 0.0) else { return visits };
        let total = root.visits as f32;
        let sqrt_n = total.sqrt();
        let first = root.first_child as usize;
        let explore = |c: usize, n: f32| self.cfg.cpuct * nodes[c].prior * sqrt_n / (1.0 + n);
        let Some(best_q) = self.root_child_q(best) else { return visits };
        let bar = best_q + explore(best, visits[best - first]);
        root.children()
            .zip(&visits)
            .map(|(c, &n)| {
                let q = match self.root_child_q(c) {
                    Some(q) if c != best && n > 0.0 => q,
                    _ => return n,
                };
                // The fewest visits at which this child's PUCT score is not above the bar.
                let earned = if q >= bar { n } else { (self.cfg.cpuct * nodes[c].prior * sqrt_n / (bar - q) - 1.0).ceil().max(0.0) };
                let forced = (k * nodes[c].prior * total).sqrt();
                let kept = earned.max((n - forced).ceil()).min(n);
                if kept <= 1.0 {
                    0.0
                } else {
                    kept
                }
            })
            .collect()
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
        // Whether any child is proven: if none is, the node is not (most expansions), and its
        // children need not be read again.
        let mut proven = false;
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
                    proven = true;
                }
                pos.unmake(mv, &undo);
                child
            }),
        );
        if (self.cfg.escape_probe || self.cfg.fork_probe) && to_move == Side::Attackers {
            proven |= self.probe_escapes(id, pos);
        }
        if proven {
            let proof = self.proof_from_children(id);
            self.tree.nodes[id as usize].proof = proof;
        }
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

    /// Re-derives proofs from the leaf of `path` upward while they change. A node's proof
    /// follows from its children's, so it can change only when a child is proven: an unproven
    /// leaf (most) changes nothing above it, and its siblings are not read.
    fn update_proofs(&mut self, path: &[NodeId]) {
        for w in path.windows(2).rev() {
            let (id, child) = (w[0], w[1]);
            if self.tree.nodes[child as usize].proof == Proof::Unknown || self.tree.nodes[id as usize].proof != Proof::Unknown {
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
                self.gumbel = Some(GumbelState::new(base, k, self.cfg.sims.saturating_sub(self.done)));
            }
        }
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
            let (qx, qy) = (self.root_child_q(a).unwrap_or(-2.0), self.root_child_q(b).unwrap_or(-2.0));
            x.visits.cmp(&y.visits).then(qx.total_cmp(&qy)).then(x.prior.total_cmp(&y.prior))
        })
    }

    /// Training target: the improved policy softmax(log prior + sigma(completed Q)) for a
    /// Gumbel root, normalised visit counts otherwise (pruned of the forced playouts, if any).
    /// A root proven won targets the winning move it plays: such a root is often proven when
    /// it is expanded (a move ends the game at once), before any simulation, and its children's
    /// visits and the Gumbel state say nothing then. Where no child has a visit the target is
    /// the network's own prior, which teaches nothing, rather than a uniform spread.
    fn policy_target(&self) -> Vec<(Move, f32)> {
        let nodes = &self.tree.nodes;
        let root = self.tree.root();
        if root.num_children == 0 {
            return Vec::new();
        }
        if root.proof == Proof::Win {
            if let Some(c) = self.best_child() {
                return root.children().map(|k| (nodes[k].mv, if k == c { 1.0 } else { 0.0 })).collect();
            }
        }
        let mut weights: Vec<f32> = if self.gumbel.is_some() {
            let logits: Vec<f32> = root.children().zip(self.sigma_q()).map(|(c, s)| nodes[c].prior.max(1e-12).ln() + s).collect();
            let m = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            logits.iter().map(|l| (l - m).exp()).collect()
        } else {
            self.pruned_visits()
        };
        if weights.iter().sum::<f32>() <= 0.0 {
            weights = root.children().map(|c| nodes[c].prior.max(0.0)).collect();
        }
        let total: f32 = weights.iter().sum();
        let n = weights.len() as f32;
        root.children().zip(weights).map(|(c, w)| (nodes[c].mv, if total > 0.0 { w / total } else { 1.0 / n })).collect()
    }

    /// Number of nodes in the tree (for tests and memory figures).
    pub fn tree_size(&self) -> usize {
        self.tree.nodes.len()
    }
}

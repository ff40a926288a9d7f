//! The search tree: one flat arena of nodes, children stored contiguously, indices instead of
//! pointers (no `Rc`, no per-node allocation). Re-rooting after a move copies the kept subtree
//! into a fresh arena, so memory never grows with the length of a game.

use crate::rules::Move;

/// Index of a node in the arena.
pub type NodeId = u32;

/// A game-theoretic value proven by the solver, from the view of the side to move at the node.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Proof {
    Unknown,
    Win,
    Loss,
    Draw,
}

impl Proof {
    /// The exact value for the side to move, if proven.
    pub fn value(self) -> Option<f32> {
        match self {
            Proof::Unknown => None,
            Proof::Win => Some(1.0),
            Proof::Loss => Some(-1.0),
            Proof::Draw => Some(0.0),
        }
    }
}

/// One node: the position reached by `mv` from its parent.
#[derive(Clone, Debug)]
pub struct Node {
    /// The move from the parent (meaningless at the root).
    pub mv: Move,
    pub prior: f32,
    /// Completed visits.
    pub visits: u32,
    /// Visits on their way (selected, waiting for an evaluation): the virtual loss.
    pub in_flight: u32,
    /// Sum of backed-up values from the view of the side that played `mv`.
    pub value_sum: f32,
    /// The evaluator's own value of the node when it was expanded (the exact value for a
    /// game end), from the view of the side to move at the node; 0 before expansion. A
    /// Gumbel root uses it for the mixed value of its unvisited moves.
    pub raw_value: f32,
    pub first_child: NodeId,
    pub num_children: u32,
    /// Whether the children exist (a terminal node is expanded with none).
    pub expanded: bool,
    pub proof: Proof,
}

impl Node {
    pub fn new(mv: Move, prior: f32) -> Node {
        Node { mv, prior, visits: 0, in_flight: 0, value_sum: 0.0, raw_value: 0.0, first_child: 0, num_children: 0, expanded: false, proof: Proof::Unknown }
    }

    /// Mean value from the view of the side that played `mv` (the parent's side to move).
    pub fn q(&self) -> Option<f32> {
        match self.proof.value() {
            Some(v) => Some(-v),
            None if self.visits > 0 => Some(self.value_sum / self.visits as f32),
            None => None,
        }
    }

    pub fn children(&self) -> std::ops::Range<usize> {
        self.first_child as usize..(self.first_child + self.num_children) as usize
    }

    pub fn is_terminal(&self) -> bool {
        self.expanded && self.num_children == 0
    }
}

/// The arena. Node 0 is the root.
#[derive(Clone, Debug)]
pub struct Tree {
    pub nodes: Vec<Node>,
}

impl Tree {
    pub fn new(root_move: Move) -> Tree {
        Tree { nodes: vec![Node::new(root_move, 1.0)] }
    }

    pub fn root(&self) -> &Node {
        &self.nodes[0]
    }

    /// Appends children and links them to `parent`.
    pub fn add_children(&mut self, parent: NodeId, children: impl IntoIterator<Item = Node>) {
        let first = self.nodes.len() as NodeId;
        self.nodes.extend(children);
        let count = self.nodes.len() as u32 - first;
        let p = &mut self.nodes[parent as usize];
        p.first_child = first;
        p.num_children = count;
        p.expanded = true;
    }

    /// A new tree holding the subtree below `new_root`, which becomes node 0.
    pub fn subtree(&self, new_root: NodeId) -> Tree {
        let mut out = Tree { nodes: vec![self.nodes[new_root as usize].clone()] };
        // Breadth-first copy: (old id, new id) of nodes whose children are still to copy.
        let mut queue = std::collections::VecDeque::from([(new_root, 0u32)]);
        while let Some((old, new)) = queue.pop_front() {
            let node = &self.nodes[old as usize];
            if node.num_children == 0 {
                continue;
            }
            let first = out.nodes.len() as NodeId;
            for (i, c) in node.children().enumerate() {
                let mut child = self.nodes[c].clone();
                child.in_flight = 0;
                out.nodes.push(child);
                queue.push_back((c as NodeId, first + i as NodeId));
            }
            out.nodes[new as usize].first_child = first;
        }
        out.nodes[0].in_flight = 0;
        out
    }
}

//! Players built from short spec strings: `random`, `mcts:sims=N` (random-rollout MCTS, no
//! network), `az:model=PATH,sims=N` (PUCT guided by a network), `gumbel:model=PATH,sims=N,k=16`
//! (Gumbel root with sequential halving; strong at small budgets).
//!
//! Options, comma-separated after the colon: `sims`, `model`, `k` (gumbel), `cpuct`,
//! `leaves_per_tree` (leaves gathered per tree before one network call; `batch` still reads), `device` (auto, cpu, cuda), `precision` (auto, fp32, bf16: the
//! number format of the network's inference, see [`Precision`]). A value with a comma in it (a model
//! path) is written in double quotes, with `\"` and `\\` inside: `az:model="runs/a,b/latest"`.
//! Code that makes specs builds them as values ([`AgentSpec::new`]), never by formatting text.
//!
//! `repetition=draw` makes a searching agent read a threefold repetition as a draw in its own
//! search while the referee keeps the variant's rule ([`RepetitionReading`]): what an agent
//! facing OpenTafl does by default, since OpenTafl 0.4.8 scores Copenhagen's repetition win as
//! a draw, and a search that plays for it throws away a win both programs would accept.

use super::external::{External, ExternalSpec, Fault, Protocol};
use crate::nn::{checkpoint, parse_device, NetEvaluator, NnError, Precision};
use crate::rules::notation::opentafl_repetition;
use crate::rules::ruleset::Repetition;
use crate::rules::{Move, Position, RuleSet, Side, Variant};
use crate::search::solver::{wins_within_limit, Limit, OneSided, Scope};
use crate::search::{Budget, Evaluator, Proof, RolloutEvaluator, RootPolicy, Search, SearchConfig, SearchResult};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

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
    /// An external engine speaking HTP (`htp:cmd=PATH,args="..."`).
    Htp,
    /// An external engine speaking OTEP (`otep:cmd=PATH,args="..."`).
    Otep,
}

/// A typed agent: its kind, its model, its device and the [`SearchConfig`] it searches with.
/// Text and value convert both ways: `parse` reads any spelling, `Display` writes the
/// canonical one ([`AgentSpec::canonical`]), which parses back to the same spec.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentSpec {
    pub kind: AgentKind,
    pub model: Option<PathBuf>,
    /// The device the spec names (`device=`); part of its text.
    pub device: Option<String>,
    /// The command's `--device`, used when the spec names none; not part of the text, so
    /// labels stay as the user wrote them.
    pub command_device: Option<String>,
    /// The precision the spec names (`precision=`); part of its text.
    pub precision: Option<Precision>,
    /// The command's `--precision`, used when the spec names none; not part of the text.
    pub command_precision: Option<Precision>,
    /// A searching agent's think time per move (`time=SECONDS`): it searches until the time
    /// is up instead of for `sims` simulations (see [`Budget::Until`]). Matching an external
    /// engine's think time this way compares the two at equal time, not at a search budget
    /// one of them chose.
    pub think_time: Option<Duration>,
    /// The guard (`guard=PLIES`, 0 = off): before the agent plays the move its search chose,
    /// an exact one-sided search ([`wins_within_limit`]) checks that the opponent cannot then
    /// force a win within PLIES plies; if it can, the next most visited move is checked, and so
    /// on (the search's choice stands when every move fails). A network's value misses such
    /// wins a few plies deeper than the search looks; the guard is exact where it speaks. It
    /// makes at most [`GUARD_MOVES`] moves, and with `time=` it has the end of the time:
    /// twice what it took on the last move, at most a quarter (`guard_reserve`).
    pub guard: u32,
    /// How the agent's own search reads a threefold repetition (`repetition=rules|draw`);
    /// `None` when the spec does not say: the variant's rule, unless the host sets a reading
    /// ([`AgentSpec::scored_by_opentafl`]). The referee always scores by the variant's rule.
    pub repetition: Option<RepetitionReading>,
    /// The search settings (unused by `random` and external engines).
    pub search: SearchConfig,
    /// How to run an external engine (`htp`, `otep`).
    pub external: Option<ExternalSpec>,
    /// The variant the model must have been trained for when it is not the one played: a
    /// designer's A/B (`balance --set`) plays a network trained on the preset under changed
    /// rules on the same board, and says so in its rows' changes. Not part of the text; `None`
    /// (the usual case) checks the model against the variant played.
    pub model_variant: Option<Arc<Variant>>,
}

/// How a searching agent reads a threefold repetition in its own search (`repetition=`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RepetitionReading {
    /// As the variant's rules score it (`repetition=rules`).
    Rules,
    /// As a draw, whatever the rules say (`repetition=draw`): the reading of a host that
    /// scores it so (OpenTafl 0.4.8 for Copenhagen's `tfr:dl`).
    Draw,
}

impl fmt::Display for AgentSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.canonical())
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

/// The search an agent of `kind` runs unless its spec says otherwise: random-rollout MCTS
/// ([`SearchConfig::rollout`]), PUCT for `az` ([`SearchConfig::default`]), a small-budget
/// Gumbel root for `gumbel` ([`SearchConfig::gumbel`]). The search layer holds the values.
pub fn kind_search(kind: AgentKind) -> SearchConfig {
    match kind {
        AgentKind::Random | AgentKind::Mcts | AgentKind::Htp | AgentKind::Otep => SearchConfig::rollout(),
        AgentKind::Az => SearchConfig::default(),
        AgentKind::Gumbel => SearchConfig::gumbel(),
    }
}

fn kind_name(kind: AgentKind) -> &'static str {
    match kind {
        AgentKind::Random => "random",
        AgentKind::Mcts => "mcts",
        AgentKind::Az => "az",
        AgentKind::Gumbel => "gumbel",
        AgentKind::Htp => "htp",
        AgentKind::Otep => "otep",
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
            "htp" => AgentKind::Htp,
            "otep" => AgentKind::Otep,
            other => return Err(err(format!("unknown kind {other:?} (expected random, mcts, az, gumbel, htp or otep)"))),
        };
        let mut spec = AgentSpec::new(kind, None, kind_search(kind).sims);
        let opts = split_options(opts).map_err(err)?;
        if let Some(ext) = spec.external.as_mut() {
            for opt in &opts {
                let (key, value) = opt.split_once('=').ok_or_else(|| err(format!("option {opt:?} is not key=value")))?;
                let (key, value) = (key.trim(), value.trim());
                let seconds = || {
                    value
                        .parse()
                        .ok()
                        .filter(|&s: &f64| s > 0.0 && s.is_finite() && s < 1e6)
                        .map(Duration::from_secs_f64)
                        .ok_or_else(|| err(format!("{key}={value:?}: expected a positive number of seconds")))
                };
                match key {
                    "cmd" => ext.cmd = PathBuf::from(unquote(value).map_err(|m| err(format!("cmd: {m}")))?),
                    "args" => ext.args = unquote(value).map_err(|m| err(format!("args: {m}")))?.split_whitespace().map(str::to_string).collect(),
                    "time" => ext.move_time = seconds()?,
                    "game_time" => ext.game_time = Some(seconds()?),
                    "tcp" if ext.protocol == Protocol::Htp => {
                        ext.tcp = match value {
                            "1" | "true" | "yes" => true,
                            "0" | "false" | "no" => false,
                            _ => return Err(err(format!("tcp={value:?}: expected 1 or 0"))),
                        }
                    }
                    "tcp" => return Err(err("tcp applies to htp engines only (hnefatafl-text-protocol --host)".into())),
                    _ => {
                        return Err(err(format!(
                            "unknown option {key:?} (an external engine takes cmd, args, time, game_time{})",
                            if ext.protocol == Protocol::Htp { ", tcp" } else { "" }
                        )))
                    }
                }
            }
            if ext.cmd.as_os_str().is_empty() {
                return Err(err("needs cmd=PROGRAM".into()));
            }
            return Ok(spec);
        }
        for opt in &opts {
            let (key, value) = opt.split_once('=').ok_or_else(|| err(format!("option {opt:?} is not key=value")))?;
            let (key, value) = (key.trim(), value.trim());
            let number = |what: &str| err(format!("{key}={value:?}: expected {what}"));
            let count = || value.parse().ok().filter(|&n: &usize| n > 0).ok_or_else(|| number("a positive integer"));
            match key {
                "sims" => spec.search.sims = value.parse().ok().filter(|&n| n > 0).ok_or_else(|| number("a positive integer"))?,
                "k" if kind == AgentKind::Gumbel => spec.search.root = RootPolicy::gumbel(count()?),
                "k" => return Err(err("k applies to gumbel only".into())),
                "leaves_per_tree" | "batch" => spec.search.leaves_per_tree = count()?,
                "cpuct" => spec.search.cpuct = value.parse().ok().filter(|&c: &f32| c > 0.0 && c.is_finite()).ok_or_else(|| number("a positive number"))?,
                "model" => spec.model = Some(PathBuf::from(unquote(value).map_err(|m| err(format!("model: {m}")))?)),
                "probe" => {
                    (spec.search.escape_probe, spec.search.fork_probe) = match value {
                        "2" => (true, true),
                        "1" | "true" | "yes" => (true, false),
                        "0" | "false" | "no" => (false, false),
                        _ => return Err(number("0, 1 or 2")),
                    }
                }
                "guard" => spec.guard = value.parse().ok().filter(|&n: &u32| n <= 15).ok_or_else(|| number("a number of plies, 0 to 15"))?,
                "contempt" => {
                    spec.search.contempt = value.parse().ok().filter(|c: &f32| (0.0..1.0).contains(c)).ok_or_else(|| number("a number from 0 to below 1"))?
                }
                "time" => {
                    let secs =
                        value.parse().ok().filter(|&s: &f64| s > 0.0 && s.is_finite() && s < 1e6).ok_or_else(|| number("a positive number of seconds"))?;
                    spec.think_time = Some(Duration::from_secs_f64(secs));
                }
                "repetition" => {
                    spec.repetition = Some(match value {
                        "rules" => RepetitionReading::Rules,
                        "draw" => RepetitionReading::Draw,
                        _ => return Err(number("rules or draw")),
                    })
                }
                "device" => spec.device = Some(value.to_string()),
                "precision" => spec.precision = Some(value.parse().map_err(|m: String| err(format!("precision: {m}")))?),
                _ => {
                    return Err(err(format!(
                        "unknown option {key:?} (expected sims, time, model, k, cpuct, leaves_per_tree, probe, guard, contempt, repetition, device, precision)"
                    )))
                }
            }
        }
        match kind {
            AgentKind::Random if !opts.is_empty() => return Err(err("random takes no options".into())),
            AgentKind::Gumbel if spec.think_time.is_some() => {
                return Err(err("time applies to az and mcts (a Gumbel root plans its sequential halving for sims)".into()))
            }
            AgentKind::Mcts if spec.model.is_some() => return Err(err("mcts uses random rollouts, not a model (use az or gumbel)".into())),
            AgentKind::Az | AgentKind::Gumbel if spec.model.is_none() => return Err(err("needs model=PATH".into())),
            _ => {}
        }
        Ok(spec)
    }
}

impl AgentSpec {
    /// A spec built as a value (no text to parse, so any path works, commas included): `kind`
    /// with its default search ([`kind_search`]), `model` and `sims`.
    pub fn new(kind: AgentKind, model: Option<PathBuf>, sims: u32) -> AgentSpec {
        let external = match kind {
            AgentKind::Htp | AgentKind::Otep => Some(ExternalSpec {
                protocol: if kind == AgentKind::Htp { Protocol::Htp } else { Protocol::Otep },
                cmd: PathBuf::new(),
                args: Vec::new(),
                move_time: Duration::from_secs_f64(ExternalSpec::DEFAULT_MOVE_SECONDS),
                game_time: None,
                tcp: false,
                log: None,
            }),
            _ => None,
        };
        AgentSpec {
            kind,
            model,
            device: None,
            command_device: None,
            precision: None,
            command_precision: None,
            search: SearchConfig { sims, ..kind_search(kind) },
            think_time: None,
            guard: 0,
            repetition: None,
            external,
            model_variant: None,
        }
    }

    /// The spec's canonical text: the kind, the model (quoted when it needs to be), the
    /// simulations of a searching agent (always: a label should say its budget), then every
    /// other option that differs from the kind's defaults, in a fixed order. Only settings
    /// a spec text can hold appear; a spec whose other search settings were changed in code
    /// prints the text of its spec-visible part.
    pub fn canonical(&self) -> String {
        let d = kind_search(self.kind);
        let mut opts = Vec::new();
        if let Some(ext) = &self.external {
            opts.push(format!("cmd={}", quote_if_needed(&ext.cmd.to_string_lossy())));
            if !ext.args.is_empty() {
                opts.push(format!("args={}", quote_if_needed(&ext.args.join(" "))));
            }
            if ext.move_time != Duration::from_secs_f64(ExternalSpec::DEFAULT_MOVE_SECONDS) {
                opts.push(format!("time={}", ext.move_time.as_secs_f64()));
            }
            if let Some(g) = ext.game_time {
                opts.push(format!("game_time={}", g.as_secs_f64()));
            }
            if ext.tcp {
                opts.push("tcp=1".into());
            }
            return format!("{}:{}", kind_name(self.kind), opts.join(","));
        }
        if let Some(m) = &self.model {
            opts.push(format!("model={}", quote_if_needed(&m.to_string_lossy())));
        }
        if self.kind != AgentKind::Random {
            opts.push(format!("sims={}", self.search.sims));
            if let Some(t) = self.think_time {
                opts.push(format!("time={}", t.as_secs_f64()));
            }
            if let (AgentKind::Gumbel, RootPolicy::Gumbel { k, .. }) = (self.kind, self.search.root) {
                if k != RootPolicy::DEFAULT_K {
                    opts.push(format!("k={k}"));
                }
            }
            if self.search.cpuct != d.cpuct {
                opts.push(format!("cpuct={}", self.search.cpuct));
            }
            if self.search.leaves_per_tree != d.leaves_per_tree {
                opts.push(format!("leaves_per_tree={}", self.search.leaves_per_tree));
            }
            if (self.search.escape_probe, self.search.fork_probe) != (d.escape_probe, d.fork_probe) {
                opts.push(format!("probe={}", u8::from(self.search.escape_probe) + u8::from(self.search.fork_probe)));
            }
            if self.guard != 0 {
                opts.push(format!("guard={}", self.guard));
            }
            if self.search.contempt != d.contempt {
                opts.push(format!("contempt={}", self.search.contempt));
            }
            match self.repetition {
                None => {}
                Some(RepetitionReading::Rules) => opts.push("repetition=rules".into()),
                Some(RepetitionReading::Draw) => opts.push("repetition=draw".into()),
            }
        }
        if let Some(device) = &self.device {
            opts.push(format!("device={device}"));
        }
        if let Some(precision) = self.precision {
            opts.push(format!("precision={precision}"));
        }
        if opts.is_empty() {
            kind_name(self.kind).to_string()
        } else {
            format!("{}:{}", kind_name(self.kind), opts.join(","))
        }
    }

    /// The spec with `device` named.
    pub fn with_device(mut self, device: &str) -> AgentSpec {
        self.device = Some(device.to_string());
        self
    }

    /// The spec with `device` (a command's `--device`) as its device, unless the spec named
    /// one (`device=`).
    pub fn default_device(mut self, device: &str) -> AgentSpec {
        self.command_device = Some(device.to_string());
        self
    }

    /// The spec with `precision` (a command's `--precision`) as its precision, unless the
    /// spec named one (`precision=`).
    pub fn default_precision(mut self, precision: Precision) -> AgentSpec {
        self.command_precision = Some(precision);
        self
    }

    /// The precision of the agent's network: the spec's, else the command's, else `auto`.
    pub fn precision(&self) -> Precision {
        self.precision.or(self.command_precision).unwrap_or_default()
    }

    /// The device the agent's model runs on: the one the spec names, else the command's,
    /// else `auto`.
    pub fn device(&self) -> &str {
        self.device.as_deref().or(self.command_device.as_deref()).unwrap_or("auto")
    }

    /// The spec with `sims` simulations (one budget of a sweep).
    pub fn with_sims(mut self, sims: u32) -> AgentSpec {
        self.search.sims = sims;
        self
    }

    /// The search settings of a searching agent (None for `random` and external engines).
    pub fn search_config(&self) -> Option<SearchConfig> {
        matches!(self.kind, AgentKind::Mcts | AgentKind::Az | AgentKind::Gumbel).then(|| self.search.clone())
    }

    /// Whether the agent runs a network.
    pub fn uses_model(&self) -> bool {
        self.model.is_some()
    }

    /// The spec of a searching agent for a game that OpenTafl scores (an `otep` opponent in a
    /// match, or OpenTafl hosting `tafl-lab engine`): where the spec does not say how to read
    /// a repetition, the search reads it as OpenTafl 0.4.8 scores it ([`opentafl_repetition`]:
    /// Copenhagen's repetition win is a draw there), so the default settings do not play for a
    /// result the other program will not give. The spec's text then says `repetition=draw`.
    /// Every other spec, and every variant both read alike, comes back as it was.
    pub fn scored_by_opentafl(mut self, variant: &Variant) -> AgentSpec {
        let theirs = opentafl_repetition(&variant.rules);
        if self.search_config().is_some() && self.repetition.is_none() && theirs == Repetition::Draw && variant.rules.repetition != theirs {
            self.repetition = Some(RepetitionReading::Draw);
        }
        self
    }

    /// Two specs as they play each other: each one facing OpenTafl (`otep`) reads repetition
    /// as OpenTafl scores it ([`AgentSpec::scored_by_opentafl`]); every game of every command
    /// goes through it ([`crate::arena::play_match_until`]), and `match` labels with it.
    pub fn pairing(a: &AgentSpec, b: &AgentSpec, variant: &Variant) -> (AgentSpec, AgentSpec) {
        let facing = |me: &AgentSpec, other: &AgentSpec| {
            if other.kind == AgentKind::Otep {
                me.clone().scored_by_opentafl(variant)
            } else {
                me.clone()
            }
        };
        (facing(a, b), facing(b, a))
    }
}

// One per agent, built once: the size of the largest variant costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
enum Engine {
    External(Box<External>),
    Random(SmallRng),
    Search {
        search: Option<Search>,
        evaluator: Box<dyn Evaluator>,
        cfg: SearchConfig,
        seed: u64,
        think_time: Option<Duration>,
        guard: u32,
        /// How long the guard took on the last move (`None` before its first): what the next
        /// move keeps back from its search ([`guard_reserve`]).
        guard_cost: Option<Duration>,
        /// The variant the search reads positions under when it is not the one played
        /// (`repetition=draw` under rules that score repetition otherwise): the same board,
        /// only the repetition rule differs ([`Position::reread`]).
        reading: Option<Arc<Variant>>,
    },
}

/// The most moves the guard (`guard=`) may make for one move of the game, over all the
/// root moves it checks: about a third of a second on a 2-core Xeon, and the same answer on
/// any machine. A 7-ply check of one brandubh move costs tens of thousands of moves when the
/// move is safe, fewer when it is not.
pub const GUARD_MOVES: u64 = 4_000_000;

/// The most of a `time=` budget the guard keeps back from the search (all of it on the first
/// move, before its cost is known).
const GUARD_TIME_SHARE: f64 = 0.25;

/// The time a move's search leaves to the guard, of a `think` budget: twice what the guard
/// took on the last move, at least a hundredth of the budget, at most [`GUARD_TIME_SHARE`]
/// of it (that on the first move). A fixed quarter left most of it unused: a 3-ply check
/// takes milliseconds, so the guarded agent searched a quarter less than its opponent at
/// equal time. A guard that runs past its share still stops at the move's deadline.
fn guard_reserve(think: Duration, last_cost: Option<Duration>) -> Duration {
    let most = think.mul_f64(GUARD_TIME_SHARE);
    match last_cost {
        None => most,
        Some(c) => (c * 2).clamp(think / 100, most),
    }
}

/// The guard's choice (see [`AgentSpec::guard`]): the most visited root move after which the
/// opponent cannot force a win within `plies` plies; `None` when every move checked fails
/// (the search's own choice then stands). Moves the search proved lost are passed over;
/// when the limit runs out, the move being checked is taken.
fn guarded(pos: &Position, result: &SearchResult, plies: u32, mut limit: Limit) -> Option<Move> {
    let mut p = pos.clone();
    let opponent = pos.to_move().opponent();
    for stat in &result.moves {
        if stat.proof == Proof::Loss {
            continue;
        }
        let undo = p.make(stat.mv);
        let safe = p.outcome().is_some() || !matches!(wins_within_limit(&p, opponent, plies, &mut limit), OneSided::Wins { .. });
        p.unmake(stat.mv, &undo);
        if safe {
            return Some(stat.mv);
        }
    }
    None
}

/// A player.
pub struct Agent {
    engine: Engine,
    /// What plays, in words ([`Agent::about`]).
    about: String,
}

/// The search settings in words: the root policy, the budget, the probes, the guard and the
/// contempt, with the spec option that sets each.
pub fn describe_search(cfg: &SearchConfig, think_time: Option<Duration>, guard: u32) -> String {
    let root = match cfg.root {
        RootPolicy::Puct => format!("PUCT (cpuct {})", cfg.cpuct),
        RootPolicy::Gumbel { k, .. } => format!("Gumbel root (k={k}), PUCT below (cpuct {})", cfg.cpuct),
    };
    let budget = match think_time {
        Some(t) => format!("{} s a move (time=)", t.as_secs_f64()),
        None => format!("{} simulations a move (sims=)", cfg.sims),
    };
    let probes = match (cfg.escape_probe, cfg.fork_probe) {
        (false, false) => "no probes (probe=0)",
        (true, false) => "escape probe (probe=1)",
        (_, true) => "escape and fork probes (probe=2)",
    };
    let guard = if guard == 0 { "no guard (guard=0)".to_string() } else { format!("guard of {guard} plies (guard=)") };
    format!("{root}, {budget}, {probes}, {guard}, contempt {} (contempt=)", cfg.contempt)
}

impl Agent {
    /// Builds an agent for `variant`, loading its model (checked against the variant).
    pub fn new(spec: &AgentSpec, variant: &Arc<Variant>, seed: u64) -> Result<Agent, AgentError> {
        if let Some(ext) = &spec.external {
            let e = External::new(ext.clone(), variant).map_err(|message| AgentError::Spec { spec: spec.to_string(), message })?;
            let about = format!("external engine {} ({:?}), {} s a move", ext.cmd.display(), ext.protocol, ext.move_time.as_secs_f64());
            return Ok(Agent { engine: Engine::External(Box::new(e)), about });
        }
        let (engine, about) = match spec.search_config() {
            None => (Engine::Random(SmallRng::seed_from_u64(seed)), "uniformly random legal moves".to_string()),
            Some(cfg) => {
                let reading = match spec.repetition {
                    Some(RepetitionReading::Draw) if variant.rules.repetition != Repetition::Draw => {
                        let rules = RuleSet { repetition: Repetition::Draw, ..variant.rules.clone() };
                        let v = variant.with_rules(rules).map_err(|e| AgentError::Spec { spec: spec.to_string(), message: format!("repetition=draw: {e}") })?;
                        Some(Arc::new(v))
                    }
                    _ => None,
                };
                let mut search = describe_search(&cfg, spec.think_time, spec.guard);
                if reading.is_some() {
                    search.push_str(", threefold repetition read as a draw (repetition=draw; the game is scored by the variant's rule)");
                }
                let (evaluator, about): (Box<dyn Evaluator>, String) = match &spec.model {
                    None => (Box::new(RolloutEvaluator::new(seed ^ 0x5eed)), format!("random rollouts (no network); search: {search}")),
                    Some(path) => {
                        let device = parse_device(spec.device())?;
                        let trained_for = spec.model_variant.as_deref().unwrap_or(variant);
                        // The file a folder or `latest` names, found once: loaded, and named below.
                        let file = checkpoint::resolve(path)?;
                        let (net, meta) = checkpoint::load(&file, Some(trained_for), device)?;
                        let precision = spec.precision().resolved_name(device);
                        let about = format!(
                            "network {} ({} blocks x {} channels{}, input encoding {}, {precision} on {device:?}, trained for {}); search: {search}",
                            file.display(),
                            meta.net.blocks,
                            meta.net.channels,
                            meta.net.heads(),
                            meta.net.encoding.version(),
                            trained_for.name
                        );
                        (Box::new(NetEvaluator::new(net, variant, spec.precision())), about)
                    }
                };
                let engine = Engine::Search { search: None, evaluator, cfg, seed, think_time: spec.think_time, guard: spec.guard, guard_cost: None, reading };
                (engine, about)
            }
        };
        Ok(Agent { engine, about })
    }

    /// What plays, in words: the network (file, size, input encoding, number format, device)
    /// or the rollouts, and the search ([`describe_search`]). `play` and `engine` print it, so
    /// a user sees the settings behind every move.
    pub fn about(&self) -> &str {
        &self.about
    }

    /// Searches `pos` (reusing the tree from earlier moves when it leads there). `None` for
    /// `random`, or when the game is over.
    pub fn think(&mut self, pos: &Position) -> Option<SearchResult> {
        self.think_for(pos, None)
    }

    /// As [`Agent::think`], but searching for `time` instead of the simulation budget when
    /// it is given, else for the spec's `time=` if it has one ([`Budget::Until`]: PUCT until
    /// the time is up, Gumbel within its budget).
    pub fn think_for(&mut self, pos: &Position, time: Option<std::time::Duration>) -> Option<SearchResult> {
        let read = self.read(pos);
        self.search_read(&read, time)
    }

    /// `pos` as the agent's search reads it: under its repetition reading where it has one
    /// (`repetition=draw`, [`Position::reread`]), else as it is. The reading differs from the
    /// variant played only in its repetition rule; a position of some other variant is read
    /// as it is.
    fn read<'a>(&self, pos: &'a Position) -> std::borrow::Cow<'a, Position> {
        match &self.engine {
            Engine::Search { reading: Some(v), .. } => pos.reread(v).map_or(std::borrow::Cow::Borrowed(pos), std::borrow::Cow::Owned),
            _ => std::borrow::Cow::Borrowed(pos),
        }
    }

    /// [`Agent::think_for`] on a position already read ([`Agent::read`]).
    fn search_read(&mut self, pos: &Position, time: Option<std::time::Duration>) -> Option<SearchResult> {
        let Engine::Search { search, evaluator, cfg, seed, think_time, .. } = &mut self.engine else {
            return None;
        };
        let time = time.or(*think_time);
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
        let budget = match time {
            None => Budget::Sims,
            Some(t) => Budget::Until(std::time::Instant::now() + t),
        };
        Some(s.run_for(evaluator.as_mut(), budget))
    }

    /// The move to play in `pos`; `None` when the game is over or the side to move has no
    /// legal move.
    pub fn choose(&mut self, pos: &Position) -> Option<Move> {
        self.choose_for(pos, None)
    }

    /// The move to play, searching for at most `time` when given; `None` as for
    /// [`Agent::choose`].
    pub fn choose_for(&mut self, pos: &Position, time: Option<std::time::Duration>) -> Option<Move> {
        self.decide(pos, time).map(|(m, _)| m)
    }

    /// As [`Agent::choose_for`], with the search behind the move (`None` for `random` and
    /// external engines): the guard's choice, where it overrules the search, is the move, and
    /// the search's value and simulations stay what an engine host reports.
    pub fn decide(&mut self, pos: &Position, time: Option<std::time::Duration>) -> Option<(Move, Option<SearchResult>)> {
        if pos.is_over() {
            return None;
        }
        match &mut self.engine {
            Engine::Random(rng) => {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    return None;
                }
                Some((moves[rng.gen_range(0..moves.len())], None))
            }
            Engine::Search { guard, think_time, guard_cost, .. } => {
                let (guard, think_time, last_cost) = (*guard, time.or(*think_time), *guard_cost);
                let started = std::time::Instant::now();
                let search_time = think_time.filter(|_| guard > 0).map(|t| t - guard_reserve(t, last_cost));
                // Read once: the search and the guard see the same position.
                let read = self.read(pos);
                let result = self.search_read(&read, search_time.or(think_time))?;
                let mut best = result.best?;
                let mut cost = last_cost;
                if guard > 0 && result.proof != Proof::Win {
                    let checking = std::time::Instant::now();
                    let limit = Limit { moves: GUARD_MOVES, deadline: think_time.map(|t| started + t), scope: Scope::Tactical };
                    best = guarded(&read, &result, guard, limit).unwrap_or(best);
                    cost = Some(checking.elapsed());
                }
                if let Engine::Search { search, guard_cost, .. } = &mut self.engine {
                    *guard_cost = cost;
                    // The tree's root is `pos` (think_for rerooted it); should the move not
                    // advance it, forget the tree rather than keep a wrong one.
                    if search.as_mut().map_or(true, |s| s.advance(best).is_err()) {
                        *search = None;
                    }
                }
                pos.is_legal(best).then_some((best, Some(result)))
            }
            // Without the game's moves, an external engine is given the position itself.
            Engine::External(e) => e.respond(pos, &[]).ok().map(|m| (m, None)),
        }
    }

    /// The move to play in `pos`, reached from the variant's start by `history`: what a
    /// referee calls. An external engine is kept in step with the game and may fault
    /// ([`Fault`]); the agents of this crate always move.
    pub fn respond(&mut self, pos: &Position, history: &[Move]) -> Result<Move, Fault> {
        if let Engine::External(e) = &mut self.engine {
            return e.respond(pos, history);
        }
        self.choose(pos).ok_or_else(|| Fault::Forfeit { side: pos.to_move(), cause: crate::arena::external::ForfeitCause::Refused, reason: "no move".into() })
    }

    /// When the agent is an external engine (playing `side`) that would score the game the
    /// rules ended in `pos` otherwise, the disagreement (see [`External::disputed_ending`]).
    pub fn disputed_ending(&mut self, pos: &Position, history: &[Move], side: Side) -> Option<Fault> {
        match &mut self.engine {
            Engine::External(e) => e.disputed_ending(pos, history, side),
            _ => None,
        }
    }

    /// Whether the agent is an external engine.
    pub fn is_external(&self) -> bool {
        matches!(self.engine, Engine::External(_))
    }

    /// Forgets the tree and restarts the agent's randomness from `seed` (before a new game,
    /// so that a game depends only on its own seed).
    pub fn reset(&mut self, seed: u64) {
        match &mut self.engine {
            Engine::External(e) => e.reset(),
            Engine::Random(rng) => *rng = SmallRng::seed_from_u64(seed),
            Engine::Search { search, evaluator, seed: s, guard_cost, .. } => {
                *search = None;
                *guard_cost = None;
                *s = seed;
                evaluator.reseed(seed ^ 0x5eed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guard_keeps_back_twice_its_last_cost_within_a_hundredth_and_a_quarter_of_the_time() {
        let t = Duration::from_millis(400);
        // First move: the cost is unknown, so the most.
        assert_eq!(guard_reserve(t, None), Duration::from_millis(100));
        // A cheap check gives the search nearly all the time, not less than a hundredth back.
        assert_eq!(guard_reserve(t, Some(Duration::from_millis(10))), Duration::from_millis(20));
        assert_eq!(guard_reserve(t, Some(Duration::ZERO)), Duration::from_millis(4));
        // A dear one never takes more than a quarter.
        assert_eq!(guard_reserve(t, Some(Duration::from_millis(90))), Duration::from_millis(100));
    }

    fn guard_cost(agent: &Agent) -> Option<Duration> {
        match &agent.engine {
            Engine::Search { guard_cost, .. } => *guard_cost,
            _ => None,
        }
    }

    #[test]
    fn a_guarded_move_on_the_clock_keeps_its_cost_for_the_next_and_a_new_game_forgets_it() {
        let variant = Arc::new(Variant::from_spec("brandubh").unwrap());
        let pos = Position::start(variant.clone());
        let mut agent = Agent::new(&"mcts:sims=50,time=0.05,guard=2".parse().unwrap(), &variant, 1).unwrap();
        assert_eq!(guard_cost(&agent), None);
        agent.choose(&pos).expect("a move");
        assert!(guard_cost(&agent).is_some(), "the guard's cost is kept for the next move");
        agent.reset(2);
        assert_eq!(guard_cost(&agent), None, "a new game starts with the most kept back");
        // Without the guard nothing is kept.
        let mut plain = Agent::new(&"mcts:sims=50,time=0.05".parse().unwrap(), &variant, 1).unwrap();
        plain.choose(&pos).expect("a move");
        assert_eq!(guard_cost(&plain), None);
    }

    /// Copenhagen, attackers to move, where b4-a4 makes the third occurrence of the board
    /// after a8-b8: the rules (the defenders lose on a repetition) make it a win.
    fn copenhagen_repetition_at_hand() -> (Arc<Variant>, Position, Move) {
        let variant = Arc::new(Variant::from_spec("copenhagen").unwrap());
        let mut pos = Position::start(variant.clone());
        for m in "a8-b8 d6-c6 a4-b4 c6-d6 b4-a4 d6-c6 a4-b4 c6-d6".split(' ') {
            pos.play(Move::parse(m, pos.geometry()).unwrap()).unwrap();
        }
        let repeat = Move::parse("b4-a4", pos.geometry()).unwrap();
        let mut after = pos.clone();
        after.play(repeat).unwrap();
        assert_eq!(after.outcome().map(|o| (o.winner, o.reason)), Some((Some(Side::Attackers), crate::rules::Reason::Repetition)));
        (variant, pos, repeat)
    }

    #[test]
    fn an_agent_that_reads_repetition_as_a_draw_does_not_see_the_repetition_win() {
        let (variant, pos, repeat) = copenhagen_repetition_at_hand();
        let mut by_rules = Agent::new(&"mcts:sims=64".parse().unwrap(), &variant, 1).unwrap();
        let r = by_rules.think(&pos).unwrap();
        assert_eq!((r.proof, r.best), (Proof::Win, Some(repeat)), "by the rules the repetition wins at once");
        let mut drawing = Agent::new(&"mcts:sims=64,repetition=draw".parse().unwrap(), &variant, 1).unwrap();
        assert!(drawing.about().contains("repetition read as a draw"), "{}", drawing.about());
        let r = drawing.think(&pos).unwrap();
        assert_ne!(r.proof, Proof::Win, "read as a draw, the repetition wins nothing");
        let stat = r.moves.iter().find(|m| m.mv == repeat).expect("the repeating move was searched");
        assert_eq!(stat.proof, Proof::Draw, "{stat:?}");
        // The move it chose is played on the game's own board (the rules' variant), and the
        // guard reads the position as the search does.
        let mv = drawing.choose(&pos).unwrap();
        assert!(pos.is_legal(mv));
        let mut guarded = Agent::new(&"mcts:sims=64,guard=2,repetition=draw".parse().unwrap(), &variant, 1).unwrap();
        assert!(pos.is_legal(guarded.choose(&pos).unwrap()));
    }

    #[test]
    fn against_opentafl_a_searching_agent_reads_copenhagen_repetition_as_opentafl_scores_it() {
        let cph = Variant::from_spec("copenhagen").unwrap();
        let brandubh = Variant::from_spec("brandubh").unwrap();
        let az: AgentSpec = "az:model=m,time=1".parse().unwrap();
        let facing = az.clone().scored_by_opentafl(&cph);
        assert_eq!(facing.repetition, Some(RepetitionReading::Draw));
        assert_eq!(facing.to_string(), "az:model=m,sims=200,time=1,repetition=draw", "the label says so");
        // Rules both programs read alike, a spec that says how to read it, and agents that
        // do not search are left as they were.
        assert_eq!(brandubh.rules.repetition, crate::rules::notation::opentafl_repetition(&brandubh.rules));
        assert_eq!(az.clone().scored_by_opentafl(&brandubh), az);
        let told: AgentSpec = "az:model=m,repetition=rules".parse().unwrap();
        assert_eq!(told.clone().scored_by_opentafl(&cph), told);
        let random: AgentSpec = "random".parse().unwrap();
        assert_eq!(random.clone().scored_by_opentafl(&cph), random);
        // In a pairing only the side facing OpenTafl changes.
        let otep: AgentSpec = "otep:cmd=x".parse().unwrap();
        assert_eq!(AgentSpec::pairing(&az, &otep, &cph), (facing.clone(), otep.clone()));
        assert_eq!(AgentSpec::pairing(&otep, &az, &cph), (otep.clone(), facing));
        assert_eq!(AgentSpec::pairing(&az, &told, &cph), (az.clone(), told.clone()));
    }
}

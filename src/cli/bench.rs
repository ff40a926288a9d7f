//! `tafl-lab bench`: throughput figures, printed (never asserted: speed belongs in benchmarks,
//! not tests).

use anyhow::Result;
use clap::Subcommand;
use rand::{Rng, SeedableRng};
use serde_json::json;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tafl_lab::nn::encoding::Encoder;
use tafl_lab::nn::{NetConfig, NetEvaluator, Precision, TaflNet};
use tafl_lab::play::random_playout;
use tafl_lab::rules::perft::perft;
use tafl_lab::rules::{Position, Variant};
use tafl_lab::search::{EvalRequest, Evaluation, Evaluator, SearchConfig, Ticket};
use tafl_lab::selfplay::{self, SelfPlayConfig};
use tafl_lab::train::{RunConfig, DEFAULT_CONFIG};

/// Measure throughput and print figures.
#[derive(clap::Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub what: BenchWhat,
}

#[derive(Subcommand)]
pub enum BenchWhat {
    Rules(RulesBenchArgs),
    Search(SearchBenchArgs),
}

/// Perft leaves/s and random playouts/s on one thread (copenhagen and brandubh), and the
/// proof-number search's expansions/s (copenhagen).
#[derive(clap::Args)]
pub struct RulesBenchArgs {
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Perft depth for copenhagen (4 is the reference figure; 3 is quick).
    #[arg(long, default_value_t = 4)]
    pub depth: u32,
    /// Seconds of random playouts per variant.
    #[arg(long, allow_negative_numbers = true, default_value_t = 3.0)]
    pub seconds: f64,
}

/// Network forward throughput and the evaluations per second search achieves in
/// self-play (lockstep games, Gumbel root), at the same batch size, for brandubh and
/// copenhagen with their default small networks (random weights); then the default run
/// config's self-play (configs/runs/brandubh.toml) in games per hour.
#[derive(clap::Args)]
pub struct SearchBenchArgs {
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Seconds per measurement (raw fp32; search, with as many seconds of raw interleaved).
    #[arg(long, allow_negative_numbers = true, default_value_t = 5.0)]
    pub seconds: f64,
    /// Positions per network call (self-play's `positions_per_call`; the raw rate's batch).
    #[arg(long, alias = "batch", default_value_t = 256)]
    pub positions_per_call: usize,
    /// Simulations per move in the self-play measurement.
    #[arg(long, default_value_t = 32)]
    pub sims: u32,
    #[command(flatten)]
    pub device: super::DeviceArgs,
    /// Variants to measure (comma-separated).
    #[arg(long, default_value = "brandubh,copenhagen")]
    pub variants: String,
    /// Games of the default config's self-play to time (0 skips it; 64 is one generation).
    #[arg(long, default_value_t = 64)]
    pub selfplay_games: u64,
    /// Lanes: threads that each run their own copy of the network (raw) and their own
    /// self-play games (search), with the cores shared out as torch threads; 0 = one per core,
    /// as the default run config's self-play runs.
    #[arg(long, default_value_t = 0)]
    pub lanes: usize,
}

/// `--seconds` must be a positive, finite number of seconds.
fn check_seconds(seconds: f64) -> Result<()> {
    if seconds.is_finite() && seconds > 0.0 && seconds <= 1e6 {
        Ok(())
    } else {
        anyhow::bail!("--seconds {seconds}: expected a positive number of seconds (at most 1000000)")
    }
}

pub fn run(args: &BenchArgs, out: &mut impl Write) -> Result<()> {
    match &args.what {
        BenchWhat::Rules(a) => rules(a, out),
        BenchWhat::Search(a) => search(a, out),
    }
}

fn perft_rate(name: &str, depth: u32) -> Result<(u64, f64)> {
    let mut pos = Position::start(Arc::new(Variant::preset(name)?));
    let t = Instant::now();
    let stats = perft(&mut pos, depth);
    let secs = t.elapsed().as_secs_f64();
    Ok((stats.leaves, stats.leaves as f64 / secs))
}

fn playout_rate(name: &str, seconds: f64) -> Result<(u64, f64, f64)> {
    let start = Position::start(Arc::new(Variant::preset(name)?));
    let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
    let mut buf = Vec::with_capacity(256);
    let budget = Duration::from_secs_f64(seconds);
    let t = Instant::now();
    let (mut games, mut plies) = (0u64, 0u64);
    while t.elapsed() < budget {
        for _ in 0..64 {
            let mut pos = start.clone();
            plies += u64::from(random_playout(&mut pos, &mut |n| rng.gen_range(0..n), &mut buf).1);
            games += 1;
        }
    }
    let secs = t.elapsed().as_secs_f64();
    Ok((games, games as f64 / secs, plies as f64 / games as f64))
}

/// The proof-number search's expansions per second: the attackers' win sought from
/// Copenhagen's start (none is found), a fixed budget.
fn prover_rate(expansions: u64) -> Result<f64> {
    use tafl_lab::search::prover::{prove_win, ProveLimit, Proved};
    let pos = Position::start(Arc::new(Variant::preset("copenhagen")?));
    let t = Instant::now();
    let r = prove_win(&pos, tafl_lab::rules::Side::Attackers, ProveLimit { expansions, deadline: None })?;
    let secs = t.elapsed().as_secs_f64();
    let done = match r {
        Proved::OutOfLimit { expansions } | Proved::Exhausted { expansions } | Proved::Unchecked { expansions } => expansions,
        Proved::Win(shape) => shape.expansions,
    };
    Ok(done as f64 / secs)
}

fn rules(args: &RulesBenchArgs, out: &mut impl Write) -> Result<()> {
    let RulesBenchArgs { json, depth, seconds } = *args;
    check_seconds(seconds)?;
    if depth == 0 || depth + 1 > tafl_lab::rules::perft::MAX_DEPTH {
        anyhow::bail!("--depth {depth}: expected 1 to {}", tafl_lab::rules::perft::MAX_DEPTH - 1);
    }
    let (cph_leaves, cph_rate) = perft_rate("copenhagen", depth)?;
    let bdepth = depth + 1;
    let (br_leaves, br_rate) = perft_rate("brandubh", bdepth)?;
    let (br_games, br_playouts, br_len) = playout_rate("brandubh", seconds)?;
    let (cp_games, cp_playouts, cp_len) = playout_rate("copenhagen", seconds)?;
    let prover_expansions = 200_000;
    let prover = prover_rate(prover_expansions)?;
    if json {
        let v = json!({
            "threads": 1,
            "copenhagen": {"perft_depth": depth, "perft_leaves": cph_leaves, "perft_leaves_per_s": cph_rate,
                           "playouts": cp_games, "playouts_per_s": cp_playouts, "mean_plies": cp_len,
                           "prover_expansions": prover_expansions, "prover_expansions_per_s": prover},
            "brandubh": {"perft_depth": bdepth, "perft_leaves": br_leaves, "perft_leaves_per_s": br_rate,
                         "playouts": br_games, "playouts_per_s": br_playouts, "mean_plies": br_len},
        });
        writeln!(out, "{v}")?;
    } else {
        writeln!(out, "rules benchmark, one thread")?;
        writeln!(out, "copenhagen perft({depth}): {cph_leaves} leaves, {:.2} M leaves/s", cph_rate / 1e6)?;
        writeln!(out, "brandubh   perft({bdepth}): {br_leaves} leaves, {:.2} M leaves/s", br_rate / 1e6)?;
        writeln!(out, "brandubh   random playouts: {br_playouts:.0}/s (mean {br_len:.1} plies, {br_games} games)")?;
        writeln!(out, "copenhagen random playouts: {cp_playouts:.0}/s (mean {cp_len:.1} plies, {cp_games} games)")?;
        writeln!(out, "copenhagen proof-number search: {prover:.0} expansions/s (the attackers' win sought from the start, {prover_expansions} expansions)")?;
    }
    Ok(())
}

struct SearchFigures {
    variant: String,
    net: NetConfig,
    /// Forward evaluations/s at the benchmark's precision, every lane running the network
    /// alone (the machine's network capacity in the layout search uses), in slices
    /// interleaved with the search's.
    raw: f64,
    /// The same in fp32, measured on its own before the search.
    raw_fp32: f64,
    /// Leaf evaluations search received per second (network and cache), all lanes.
    search: f64,
    /// Positions the network evaluated per second during search.
    network: f64,
    cache_hit_rate: f64,
    mean_batch: f64,
    moves_per_s: f64,
    /// Lane-microseconds in the evaluator per position the network evaluated (encoding,
    /// forward pass, priors); compare with `lanes / raw` for the forward pass alone.
    row_us: f64,
    /// Lane-microseconds outside the evaluator (tree work, move making, the cache) per
    /// evaluation search received.
    tree_us: f64,
}

/// Positions from random games, for realistic inputs.
fn sample_positions(variant: &Arc<Variant>, n: usize) -> Vec<Position> {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let mut pos = Position::start(variant.clone());
        while pos.outcome().is_none() && out.len() < n {
            out.push(pos.clone());
            let moves = pos.legal_moves();
            pos.make(moves[rand::Rng::gen_range(&mut rng, 0..moves.len())]);
        }
    }
    out
}

/// The network alone, on a prepared batch: forward passes with the results brought to the
/// host (as fp32), as search must.
struct RawForward {
    net: TaflNet,
    x: tch::Tensor,
    batch: usize,
}

impl RawForward {
    /// `net` converted to `kind`, on a batch of `input` (`batch` encodings).
    fn new(mut net: TaflNet, input: &[f32], batch: usize, kind: tch::Kind) -> RawForward {
        let n = net.board_size as i64;
        net.vs.set_kind(kind);
        let planes = net.config.encoding.planes() as i64;
        let x = tch::Tensor::from_slice(input).view([batch as i64, planes, n, n]).to_device(net.device()).to_kind(kind);
        let mut raw = RawForward { net, x, batch };
        raw.forward();
        raw
    }

    fn forward(&mut self) {
        tch::no_grad(|| {
            let (p, v) = self.net.forward_t(&self.x, false);
            let _ = (p.to_kind(tch::Kind::Float).to_device(tch::Device::Cpu), v.to_kind(tch::Kind::Float).to_device(tch::Device::Cpu));
        })
    }

    /// Forward passes for `budget`: (positions evaluated, seconds taken).
    fn run(&mut self, budget: Duration) -> (u64, f64) {
        let t = Instant::now();
        let mut calls = 0u64;
        while t.elapsed() < budget {
            self.forward();
            calls += 1;
        }
        (calls * self.batch as u64, t.elapsed().as_secs_f64())
    }
}

/// An evaluator that counts the seconds spent in it: what search's evaluations cost
/// (encoding, the forward pass, the priors) apart from the tree work around them.
struct Timed<E> {
    inner: E,
    seconds: f64,
}

impl<E: Evaluator> Timed<E> {
    fn timed<T>(&mut self, f: impl FnOnce(&mut E) -> T) -> T {
        let t = Instant::now();
        let r = f(&mut self.inner);
        self.seconds += t.elapsed().as_secs_f64();
        r
    }
}

impl<E: Evaluator> Evaluator for Timed<E> {
    fn evaluate(&mut self, batch: &[EvalRequest<'_>]) -> Vec<Evaluation> {
        self.timed(|e| e.evaluate(batch))
    }
    fn cache_key(&self, position: &Position) -> Option<u64> {
        self.inner.cache_key(position)
    }
    fn start(&mut self, batch: &[EvalRequest<'_>]) -> Ticket {
        self.timed(|e| e.start(batch))
    }
    fn finish(&mut self, ticket: Ticket) -> Vec<Evaluation> {
        self.timed(|e| e.finish(ticket))
    }
}

/// `lanes` copies of one fresh network (the same weights, from `seed`), in inference form.
fn lane_nets(size: u8, cfg: NetConfig, device: tch::Device, lanes: usize, seed: i64) -> Vec<TaflNet> {
    (0..lanes)
        .map(|_| {
            tch::manual_seed(seed);
            let mut net = TaflNet::new(size, cfg, device);
            net.fold_batch_norms();
            net
        })
        .collect()
}

/// The counters of several lanes' runs added up.
fn total<'a>(runs: impl IntoIterator<Item = &'a selfplay::Progress>) -> selfplay::Progress {
    let mut t = selfplay::Progress::default();
    runs.into_iter().for_each(|p| t.add(p));
    t
}

/// Runs `f(lane, item)` on one thread per item, at once, and collects the results in lane order.
fn on_lanes<N: Send, T: Send>(nets: Vec<N>, f: impl Fn(usize, N) -> T + Sync) -> Vec<T> {
    std::thread::scope(|scope| {
        let f = &f;
        let handles: Vec<_> = nets.into_iter().enumerate().map(|(i, net)| scope.spawn(move || f(i, net))).collect();
        handles.into_iter().map(|h| h.join().expect("a benchmark lane panicked")).collect()
    })
}

fn search_figures(name: &str, seconds: f64, batch: usize, sims: u32, lanes: usize, device: tch::Device, precision: Precision) -> Result<SearchFigures> {
    let variant = Arc::new(Variant::from_spec(name)?);
    let size = variant.geometry.size();
    let net_cfg = NetConfig::default_for(size);
    // Raw: the network alone on a prepared input tensor, in fp32 and at the precision, in
    // the inference form the evaluators run (batch norms folded), on every lane at once, so
    // the ratio compares search with the network capacity of the same layout.
    let enc = Encoder::new(&variant, net_cfg.encoding);
    let mut input = vec![0f32; batch * enc.len()];
    for (p, chunk) in sample_positions(&variant, batch).iter().zip(input.chunks_exact_mut(enc.len())) {
        enc.encode(p, chunk);
    }
    let kind = precision.kind(device);
    let raw_fp32: f64 = on_lanes(lane_nets(size, net_cfg, device, lanes, 1), |_, net| {
        let (evals, secs) = RawForward::new(net, &input, batch, tch::Kind::Float).run(Duration::from_secs_f64(seconds));
        evals as f64 / secs
    })
    .iter()
    .sum();
    // Search, interleaved with raw at the precision: lockstep self-play with the same network
    // and batch size on every lane, each lane with its own evaluator (as `train` runs
    // `[selfplay] threads` workers), pausing every `slice` to run the network alone for a
    // slice. Measured in alternating slices, a slower or faster stretch of the machine (other
    // tenants, clock changes) falls on both figures alike: measured one after the other, the
    // ratio moved by +-8 points between runs of one build on the 2-core build machine.
    let slice = Duration::from_secs_f64((seconds / 10.0).clamp(0.01, 0.5));
    let cfg = SelfPlayConfig {
        games_in_flight: (batch / 4).max(1),
        positions_per_call: batch,
        search: SearchConfig { sims, ..SearchConfig::gumbel() },
        ..SelfPlayConfig::default()
    };
    let pairs: Vec<(TaflNet, TaflNet)> = lane_nets(size, net_cfg, device, lanes, 1).into_iter().zip(lane_nets(size, net_cfg, device, lanes, 1)).collect();
    let runs = on_lanes(pairs, |lane, (net, raw_net)| {
        let mut raw = RawForward::new(raw_net, &input, batch, kind);
        let (mut raw_evals, mut raw_secs) = (0u64, 0.0);
        let mut evaluator = Timed { inner: NetEvaluator::new(net, &variant, precision), seconds: 0.0 };
        let t = Instant::now();
        let mut slice_start = Instant::now();
        let p = selfplay::play(&variant, &cfg, &mut evaluator, 1 + lane as u64, &mut |_| true, &mut |_| {}, &mut |_| {
            if slice_start.elapsed() >= slice {
                let (e, s) = raw.run(slice);
                raw_evals += e;
                raw_secs += s;
                slice_start = Instant::now();
            }
            t.elapsed().as_secs_f64() - raw_secs < seconds
        });
        (p, t.elapsed().as_secs_f64() - raw_secs, raw_evals as f64 / raw_secs.max(1e-9), evaluator.seconds)
    });
    let raw = runs.iter().map(|r| r.2).sum();
    let secs = runs.iter().map(|r| r.1).fold(0.0, f64::max);
    let p = total(runs.iter().map(|r| &r.0));
    let lane_secs: f64 = runs.iter().map(|r| r.1).sum();
    let evaluator_secs: f64 = runs.iter().map(|r| r.3).sum();
    Ok(SearchFigures {
        row_us: 1e6 * evaluator_secs / p.cache.misses.max(1) as f64,
        tree_us: 1e6 * (lane_secs - evaluator_secs) / p.evaluations.max(1) as f64,
        variant: name.to_string(),
        net: net_cfg,
        raw,
        raw_fp32,
        search: p.evaluations as f64 / secs,
        network: p.cache.misses as f64 / secs,
        cache_hit_rate: p.cache.hit_rate(),
        mean_batch: p.cache.misses as f64 / p.batches.max(1) as f64,
        moves_per_s: p.moves as f64 / secs,
    })
}

/// The default run config's self-play, timed: `games` games (64 in flight, as a generation
/// of `tafl-lab train` plays them, on its `[selfplay] threads` workers) with a fresh network
/// of the config's size and seed.
struct SelfPlayFigures {
    games: u64,
    seconds: f64,
    moves: u64,
    cache_hit_rate: f64,
    /// Positions per network call.
    mean_batch: f64,
    /// Positions the network evaluated.
    network_evals: u64,
}

fn default_selfplay(games: u64, device: tch::Device, precision: Precision) -> Result<SelfPlayFigures> {
    let cfg = RunConfig::from_toml(DEFAULT_CONFIG, "embedded default config (configs/runs/brandubh.toml)")?;
    let variant = Arc::new(Variant::from_spec(&cfg.variant)?);
    let nets = lane_nets(variant.geometry.size(), cfg.net, device, cfg.selfplay.workers(super::cores()), cfg.seed as i64);
    let sp = cfg.selfplay_config();
    // Game slots are shared by the workers, as in a generation of `train`.
    let next = std::sync::atomic::AtomicU64::new(0);
    let t = Instant::now();
    let runs = on_lanes(nets, |_, net| {
        let mut evaluator = NetEvaluator::new(net, &variant, precision);
        let mut next_game = |_: &selfplay::Progress| {
            let k = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            (k < games).then(|| (k, selfplay::game_seed(cfg.seed, 1, k)))
        };
        selfplay::play_games(&variant, &sp, &mut evaluator, &mut next_game, &mut |_, _| {}, &mut |_| true)
    });
    let seconds = t.elapsed().as_secs_f64();
    let p = total(&runs);
    Ok(SelfPlayFigures {
        games: p.games,
        seconds,
        moves: p.moves,
        cache_hit_rate: p.cache.hit_rate(),
        mean_batch: p.cache.misses as f64 / p.batches.max(1) as f64,
        network_evals: p.cache.misses,
    })
}

fn search(args: &SearchBenchArgs, out: &mut impl Write) -> Result<()> {
    check_seconds(args.seconds)?;
    let (json, seconds, batch, sims, variants) = (args.json, args.seconds, args.positions_per_call.max(1), args.sims.max(1), &args.variants);
    let device = tafl_lab::nn::parse_device(&args.device.device)?;
    let precision = args.device.precision;
    let cores = super::cores();
    let lanes = if args.lanes == 0 { cores } else { args.lanes };
    let threads = (cores / lanes).max(1);
    tafl_lab::nn::set_torch_threads(threads);
    let mut figures = Vec::new();
    for name in variants.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if !json {
            eprintln!("measuring {name} ({seconds} s raw fp32, then {seconds} s search interleaved with {seconds} s raw)...");
        }
        figures.push(search_figures(name, seconds, batch, sims, lanes, device, precision)?);
    }
    let default = if args.selfplay_games > 0 {
        if !json {
            eprintln!("timing {} games of the default config's self-play...", args.selfplay_games);
        }
        Some(default_selfplay(args.selfplay_games, device, precision)?)
    } else {
        None
    };
    let per_hour = |d: &SelfPlayFigures| d.games as f64 * 3600.0 / d.seconds;
    if json {
        let mut obj = serde_json::Map::new();
        obj.insert("device".into(), json!(format!("{device:?}")));
        obj.insert("precision".into(), json!(precision.resolved_name(device)));
        obj.insert("lanes".into(), json!(lanes));
        obj.insert("torch_threads".into(), json!(threads));
        obj.insert("batch".into(), json!(batch));
        obj.insert("sims".into(), json!(sims));
        for f in &figures {
            obj.insert(
                f.variant.clone(),
                json!({
                    "net": f.net.to_string(),
                    "encoding": f.net.encoding.version(),
                    "raw_evals_per_s": f.raw,
                    "raw_fp32_evals_per_s": f.raw_fp32,
                    "search_evals_per_s": f.search,
                    "ratio": f.search / f.raw,
                    "network_evals_per_s": f.network,
                    "network_ratio": f.network / f.raw,
                    "cache_hit_rate": f.cache_hit_rate,
                    "mean_batch": f.mean_batch,
                    "selfplay_moves_per_s": f.moves_per_s,
                    "raw_us_per_row": lanes as f64 * 1e6 / f.raw,
                    "evaluator_us_per_row": f.row_us,
                    "tree_us_per_eval": f.tree_us,
                }),
            );
        }
        if let Some(d) = &default {
            obj.insert("selfplay_games_per_hour".into(), json!(per_hour(d)));
            obj.insert(
                "default_selfplay".into(),
                json!({"config": "configs/runs/brandubh.toml", "games": d.games, "seconds": d.seconds,
                       "moves": d.moves, "cache_hit_rate": d.cache_hit_rate, "mean_batch": d.mean_batch,
                       "network_evals": d.network_evals}),
            );
        }
        writeln!(out, "{}", serde_json::Value::Object(obj))?;
    } else {
        writeln!(
            out,
            "search benchmark: device {device:?}, precision {}, {lanes} lanes of {threads} torch threads, batch {batch}, gumbel sims {sims}",
            precision.resolved_name(device)
        )?;
        writeln!(
            out,
            "{:<12} {:>6} {:>10} {:>12} {:>14} {:>7} {:>15} {:>10} {:>11} {:>9} {:>18}",
            "variant",
            "net",
            "raw fp32",
            "raw evals/s",
            "search evals/s",
            "ratio",
            "network evals/s",
            "cache hits",
            "mean batch",
            "moves/s",
            "µs raw/eval/tree"
        )?;
        for f in &figures {
            writeln!(
                out,
                "{:<12} {:>6} {:>10.0} {:>12.0} {:>14.0} {:>6.1}% {:>15.0} {:>9.1}% {:>11.1} {:>9.1} {:>6.1}/{:>5.1}/{:>5.1}",
                f.variant,
                f.net.to_string(),
                f.raw_fp32,
                f.raw,
                f.search,
                100.0 * f.search / f.raw,
                f.network,
                100.0 * f.cache_hit_rate,
                f.mean_batch,
                f.moves_per_s,
                lanes as f64 * 1e6 / f.raw,
                f.row_us,
                f.tree_us
            )?;
        }
        if let Some(d) = &default {
            writeln!(
                out,
                "default config self-play (configs/runs/brandubh.toml): {:.0} games/hour ({} games, {} moves in {:.1} s, cache hits {:.1}%, {} network evaluations, mean batch {:.1})",
                per_hour(d),
                d.games,
                d.moves,
                d.seconds,
                100.0 * d.cache_hit_rate,
                d.network_evals,
                d.mean_batch
            )?;
        }
    }
    Ok(())
}

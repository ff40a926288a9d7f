//! `tafl-lab engine`: a model (or random-rollout MCTS) behind the OpenTafl Engine Protocol or
//! the Hnefatafl Text Protocol (HTP, of the `hnefatafl-copenhagen` programs) on standard input
//! and output.

use anyhow::{bail, Result};
use std::sync::Arc;
use std::time::Duration;
use tafl_lab::engine::htp::HtpEngine;
use tafl_lab::engine::{Engine, EngineConfig, TimeControl};
use tafl_lab::rules::Variant;

/// Speak an engine protocol on stdin/stdout: the OpenTafl Engine Protocol, or HTP (the
/// Hnefatafl Text Protocol of hnefatafl-copenhagen). Without --agent or --model: random-rollout
/// MCTS.
#[derive(clap::Args)]
pub struct EngineArgs {
    /// `opentafl` (OpenTafl Engine Protocol) or `htp` (Hnefatafl Text Protocol: board_size
    /// 7/11/13 picks brandubh/copenhagen/copenhagen-13, generate_move answers
    /// `= play ROLE FROM TO, score: V, ...`, time_settings fischer budgets the think time).
    #[arg(long, default_value = "opentafl")]
    pub protocol: String,
    /// The engine's agent: --agent SPEC, or --model and --sims.
    #[command(flatten)]
    pub agent: super::AgentArgs,
    /// Variant before the host sends `rules` or `board_size` (default: the agent's model's, else
    /// brandubh for opentafl and copenhagen for htp).
    #[arg(long)]
    pub variant: Option<String>,
    /// Milliseconds per move.
    #[arg(long)]
    pub movetime: Option<u64>,
    #[command(flatten)]
    pub device: super::DeviceArgs,
}

/// Runs the protocol until the host quits; the engine writes to standard output itself.
pub fn run(args: &EngineArgs) -> Result<()> {
    let htp = match args.protocol.as_str() {
        "opentafl" => false,
        "htp" => true,
        other => bail!("--protocol {other:?}: expected opentafl or htp"),
    };
    tafl_lab::nn::set_torch_threads(super::cores());
    let (agent, variant) = args.agent.resolve(args.variant.as_deref(), &args.device)?;
    let time = match args.movetime {
        Some(ms) => TimeControl::MoveTime(Duration::from_millis(ms.max(1))),
        None => TimeControl::Simulations,
    };
    // On standard error, which hosts do not read as protocol: what plays (the network and the
    // search), so a user sees the settings a host gets.
    let budget = match &time {
        TimeControl::MoveTime(t) => format!("{} ms a move", t.as_millis()),
        TimeControl::Simulations => "the agent's own budget a move (its time=, else its sims=), or a share of the host's clock once it sends one".into(),
    };
    eprintln!("tafl-lab engine ({}): agent {agent}; {budget}", args.protocol);
    if htp {
        // HTP's board is 11x11 until the host says `board_size`.
        let variant = match variant {
            Some(v) => v,
            None => Arc::new(Variant::preset("copenhagen")?),
        };
        let mut engine = HtpEngine::new(EngineConfig { agent, variant, time, seed: 1 })?;
        eprintln!("tafl-lab engine: {}", engine.about());
        let stdin = std::io::stdin();
        let stdout = std::io::stdout();
        engine.run(stdin.lock(), &mut stdout.lock())?;
        exit_now();
    }
    let variant = match variant {
        Some(v) => v,
        None => Arc::new(Variant::preset("brandubh")?),
    };
    let mut engine = Engine::new(EngineConfig { agent, variant, time, seed: 1 })?;
    eprintln!("tafl-lab engine: {}", engine.about());
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    engine.run(stdin.lock(), &mut stdout.lock())?;
    exit_now()
}

/// Ends the process once the host has said goodbye (or closed the input). Everything the engine
/// owes the host is written and flushed by then; what is left is tearing down the search tree
/// and LibTorch's exit handlers, which took 0.1-0.2 s here. A host that kills everything a
/// fixed time after the game (`../shared/peers/opentafl-host.sh` kills OpenTafl 2 s after it,
/// and on a loaded machine OpenTafl says `goodbye` late in those 2 s) would see that as an
/// unclean exit, so the engine skips it. A failed final flush still exits non-zero.
fn exit_now() -> ! {
    use std::io::Write;
    let code = if std::io::stdout().flush().is_ok() { 0 } else { 1 };
    // SAFETY: `_exit` ends the process at once; nothing of this process is left to save.
    unsafe { libc::_exit(code) }
}

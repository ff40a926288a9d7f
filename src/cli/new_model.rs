//! `tafl-lab new-model`: an untrained network file, to start a run from or to test with.

use anyhow::{bail, Result};
use std::io::Write;
use std::path::PathBuf;
use tafl_lab::nn::{checkpoint, ModelMeta, NetConfig, TaflNet};
use tafl_lab::rules::Variant;

/// Write a freshly initialised (untrained) network for a variant.
#[derive(clap::Args)]
pub struct NewModelArgs {
    #[arg(long, default_value = "brandubh")]
    pub variant: String,
    /// Output file (.safetensors).
    #[arg(long)]
    pub out: PathBuf,
    /// Residual blocks (default: by board size, 4 on 7x7, 6 above).
    #[arg(long)]
    pub blocks: Option<usize>,
    /// Channels (default: by board size, 32 on 7x7, 48 on 9x9, 64 above).
    #[arg(long)]
    pub channels: Option<usize>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

pub fn run(args: &NewModelArgs, out: &mut impl Write) -> Result<()> {
    let variant = Variant::from_spec(&args.variant)?;
    let d = NetConfig::default_for(variant.geometry.size());
    let cfg = NetConfig { blocks: args.blocks.unwrap_or(d.blocks), channels: args.channels.unwrap_or(d.channels) };
    if cfg.channels == 0 {
        bail!("--channels: must be at least 1");
    }
    tch::manual_seed(args.seed as i64);
    let net = TaflNet::new(variant.geometry.size(), cfg, tch::Device::Cpu);
    checkpoint::save(&net, &ModelMeta::new(&variant, cfg, 0), &args.out)?;
    writeln!(out, "wrote {} ({} network, {} parameters, untrained) for {}", args.out.display(), cfg, net.parameter_count(), variant.name)?;
    Ok(())
}

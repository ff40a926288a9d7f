//! `tafl-lab new-model`: an untrained network file, to start a run from or to test with.

use anyhow::Result;
use std::io::Write;
use std::path::PathBuf;
use tafl_lab::nn::{checkpoint, ModelMeta, TaflNet};
use tafl_lab::rules::Variant;

/// Write a freshly initialised (untrained) network for a variant.
#[derive(clap::Args)]
pub struct NewModelArgs {
    #[arg(long, default_value = "brandubh")]
    pub variant: String,
    /// Output file (.safetensors).
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub net: super::NetArgs,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

pub fn run(args: &NewModelArgs, out: &mut impl Write) -> Result<()> {
    let variant = Variant::from_spec(&args.variant)?;
    let cfg = args.net.config(variant.geometry.size())?;
    tch::manual_seed(args.seed as i64);
    let net = TaflNet::new(variant.geometry.size(), cfg, tch::Device::Cpu);
    checkpoint::save(&net, &ModelMeta::new(&variant, cfg, 0), &args.out)?;
    writeln!(
        out,
        "wrote {} ({} network, input encoding {}, {} parameters, untrained) for {}",
        args.out.display(),
        cfg,
        cfg.encoding,
        net.parameter_count(),
        variant.name
    )?;
    Ok(())
}

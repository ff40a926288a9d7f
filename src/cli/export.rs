//! `tafl-lab export`: a model for other engines (TorchScript, safetensors, the I/O contract in
//! `model.json`, fixture inputs with their outputs).

use anyhow::Result;
use std::io::Write;
use std::path::PathBuf;
use tafl_lab::export;

/// Export a model for other engines: model.pt (TorchScript), weights.safetensors,
/// model.json (the I/O contract) and fixture inputs with their outputs.
#[derive(clap::Args)]
pub struct ExportArgs {
    /// Model file, `latest` pointer or run directory.
    #[arg(long)]
    pub model: PathBuf,
    /// Output directory.
    #[arg(long)]
    pub out: PathBuf,
}

pub fn run(args: &ExportArgs, out: &mut impl Write) -> Result<()> {
    let e = export::export(&args.model, &args.out)?;
    writeln!(
        out,
        "exported {} (generation {}, {} network) to {}: {}",
        e.meta.variant,
        e.meta.generation,
        e.meta.net.describe(),
        args.out.display(),
        e.files.iter().map(|f| f.file_name().unwrap_or_default().to_string_lossy().into_owned()).collect::<Vec<_>>().join(", ")
    )?;
    writeln!(out, "weights sha256 {}", e.weights_sha256)?;
    Ok(())
}

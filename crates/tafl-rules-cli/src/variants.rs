//! `tafl-lab variants`: the preset names, so users know what `--variant` accepts.

use anyhow::Result;
use clap::Args;
use std::io::Write;
use tafl_rules::Variant;

/// List the preset variants.
#[derive(Args)]
pub struct VariantsArgs {}

pub fn run(_args: &VariantsArgs, out: &mut impl Write) -> Result<()> {
    for (name, _) in tafl_rules::variant::PRESETS {
        let v = Variant::preset(name)?;
        let (a, d) = v.piece_counts();
        writeln!(out, "{:<18} {:>2}x{:<2} {:>2} attackers, {:>2} defenders + king  {}", name, v.geometry.size(), v.geometry.size(), a, d, v.description)?;
    }
    Ok(())
}

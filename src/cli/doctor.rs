//! `tafl-lab doctor`: what this build links and what it sees, for bug reports and setup checks.

use anyhow::Result;
use std::io::Write;

/// Print versions, the torch library in use and the devices it sees.
#[derive(clap::Args)]
pub struct DoctorArgs {}

pub fn run(_args: &DoctorArgs, out: &mut impl Write) -> Result<()> {
    writeln!(out, "tafl-lab {}", env!("CARGO_PKG_VERSION"))?;
    writeln!(out, "libtorch {} (found at build time: {})", env!("TAFL_TORCH_VERSION"), env!("TAFL_TORCH_LIB"))?;
    let cuda = tch::Cuda::device_count();
    let mut devices = vec!["cpu".to_string()];
    devices.extend((0..cuda).map(|i| format!("cuda:{i}")));
    writeln!(out, "devices: {}", devices.join(", "))?;
    writeln!(out, "cudnn: {}", if tch::Cuda::cudnn_is_available() { "available" } else { "not available" })?;
    let t = tch::Tensor::from_slice(&[1.0f32, 2.0, 3.0]);
    let s: f64 = t.sum(tch::Kind::Float).double_value(&[]);
    writeln!(out, "torch self-check: sum([1,2,3]) = {s}")?;
    writeln!(out, "cpu threads: {}", super::cores())?;
    let bf16 = tafl_lab::nn::cpu_has_bf16();
    writeln!(
        out,
        "cpu bf16: {} (--precision auto runs cpu inference in {})",
        if bf16 { "native (AVX-512 BF16)" } else { "not native" },
        tafl_lab::nn::Precision::Auto.resolved_name(tch::Device::Cpu)
    )?;
    Ok(())
}

//! The network layer: the network and its inference, on tch. (The other users of tch build
//! on this one: `train` for SGD, losses and its tensors, `export` for TorchScript.)
//!
//! [`encoding`] fixes the I/O contract (input planes, policy index; versioned),
//! [`symmetry`] the 8 board symmetries, [`net`] the ResNet, [`checkpoint`] the model files with
//! their metadata, and [`evaluator`] the batched [`crate::search::Evaluator`] over a network.
//! [`Precision`] says which number format inference uses (training is always fp32).

pub mod checkpoint;
pub mod encoding;
pub mod evaluator;
pub mod net;
pub mod symmetry;

pub use checkpoint::ModelMeta;
pub use evaluator::NetEvaluator;
pub use net::{NetConfig, TaflNet};
pub use symmetry::Symmetry;

use std::path::PathBuf;
use std::sync::Once;
use tch::{Device, Kind};

/// Errors of the network layer, each one line naming the file.
#[derive(Debug, thiserror::Error)]
pub enum NnError {
    #[error("{}: {message}", path.display())]
    Io { path: PathBuf, message: String },
    #[error("{}: {message}", path.display())]
    Format { path: PathBuf, message: String },
    #[error("{}: the model was trained for {model}, not {wanted}", path.display())]
    WrongVariant { path: PathBuf, model: String, wanted: String },
    #[error("{0}")]
    Device(String),
}

/// Parses `auto`, `cpu`, `cuda` or `cuda:N`.
pub fn parse_device(s: &str) -> Result<Device, NnError> {
    match s {
        "auto" => Ok(Device::cuda_if_available()),
        "cpu" => Ok(Device::Cpu),
        _ => {
            let index = match s.strip_prefix("cuda") {
                Some("") => 0,
                Some(rest) => rest
                    .strip_prefix(':')
                    .and_then(|i| i.parse::<usize>().ok())
                    .ok_or_else(|| NnError::Device(format!("bad device {s:?} (expected auto, cpu, cuda or cuda:N)")))?,
                None => return Err(NnError::Device(format!("bad device {s:?} (expected auto, cpu, cuda or cuda:N)"))),
            };
            if !tch::Cuda::is_available() {
                return Err(NnError::Device(format!("device {s}: no CUDA device is available")));
            }
            if index >= tch::Cuda::device_count() as usize {
                return Err(NnError::Device(format!("device {s}: only {} CUDA devices", tch::Cuda::device_count())));
            }
            Ok(Device::Cuda(index))
        }
    }
}

/// The number format of network inference (self-play, agents, the engines). Training and
/// model files are always fp32; an evaluator converts its own copy of the weights.
///
/// bf16 keeps fp32's range with an 8-bit mantissa: priors and values move in the third
/// significant digit, far below what a few hundred simulations resolve, while CPUs with
/// AVX-512 BF16 or AMX run the convolutions 1.8-4x faster (measured in docs/performance.md).
/// Elsewhere bf16 is emulated and slower, so `auto` picks it only where the CPU has it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// bf16 on a CPU with native bf16 arithmetic, fp32 otherwise (and on CUDA).
    #[default]
    Auto,
    Fp32,
    Bf16,
}

impl Precision {
    /// The tensor kind an evaluator on `device` computes in.
    pub fn kind(self, device: Device) -> Kind {
        match self {
            Precision::Fp32 => Kind::Float,
            Precision::Bf16 => Kind::BFloat16,
            Precision::Auto if device == Device::Cpu && cpu_has_bf16() => Kind::BFloat16,
            Precision::Auto => Kind::Float,
        }
    }

    /// `fp32` or `bf16`: what [`Precision::kind`] picks on `device`.
    pub fn resolved_name(self, device: Device) -> &'static str {
        if self.kind(device) == Kind::BFloat16 {
            "bf16"
        } else {
            "fp32"
        }
    }
}

impl std::str::FromStr for Precision {
    type Err = String;
    fn from_str(s: &str) -> Result<Precision, String> {
        match s {
            "auto" => Ok(Precision::Auto),
            "fp32" => Ok(Precision::Fp32),
            "bf16" => Ok(Precision::Bf16),
            _ => Err(format!("bad precision {s:?} (expected auto, fp32 or bf16)")),
        }
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Precision::Auto => "auto",
            Precision::Fp32 => "fp32",
            Precision::Bf16 => "bf16",
        })
    }
}

/// Whether this CPU does bf16 arithmetic natively (AVX-512 BF16, which every CPU with AMX
/// also has).
pub fn cpu_has_bf16() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512bf16")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The cores this process may use (the one place that asks).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Sets torch's intra-op thread count for the phase that follows (after
/// [`set_torch_threads`]), for a process whose phases want different counts: `train` runs
/// self-play on one worker per core with one torch thread each, then its SGD steps on all
/// cores. Call it only while no other thread runs torch: a thread takes the count when it
/// first runs a parallel torch operation, so worker threads started afterwards get it.
pub fn set_intra_op_threads(threads: usize) {
    tch::set_num_threads(threads.max(1) as i32);
}

/// Sets torch's intra-op thread count once per process (later calls are ignored), and one
/// inter-op thread: tafl-lab parallelises across games itself.
pub fn set_torch_threads(threads: usize) {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        tch::set_num_threads(threads.max(1) as i32);
        tch::set_num_interop_threads(1);
    });
}

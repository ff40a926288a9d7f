//! The network layer: everything that touches tch.
//!
//! [`encoding`] fixes the I/O contract (input planes, policy index; versioned),
//! [`symmetry`] the 8 board symmetries, [`net`] the ResNet, [`checkpoint`] the model files with
//! their metadata, and [`evaluator`] the batched [`crate::search::Evaluator`] over a network.

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
use tch::Device;

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

/// Sets torch's intra-op thread count once per process (later calls are ignored), and one
/// inter-op thread: tafl-lab parallelises across games itself.
pub fn set_torch_threads(threads: usize) {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        tch::set_num_threads(threads.max(1) as i32);
        tch::set_num_interop_threads(1);
    });
}

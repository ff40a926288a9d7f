//! Model files: safetensors with a `tafl_lab` metadata entry (JSON) that records what the
//! weights mean: the variant and its rules fingerprint, board size, encoding version and
//! architecture. A model never loads for a variant, board or encoding it was not made for.

use super::encoding::{ENCODING_VERSION, PLANES};
use super::net::{NetConfig, TaflNet};
use super::NnError;
use crate::fsio::atomic_write;
use crate::rules::Variant;
use safetensors::tensor::{Dtype, TensorView};
use safetensors::SafeTensors;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tch::{Device, Kind, Tensor};

/// The metadata key holding [`ModelMeta`] as JSON.
pub const META_KEY: &str = "tafl_lab";
/// Value of [`ModelMeta::format`].
pub const FORMAT: &str = "tafl-lab-model/1";

/// What a model file says about itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelMeta {
    pub format: String,
    pub variant: String,
    pub board_size: u8,
    /// The rules fingerprint (hex), as `Variant::rules_fingerprint`.
    pub rules_fingerprint: String,
    pub encoding_version: u32,
    pub input_planes: usize,
    pub net: NetConfig,
    /// Training generation (0 for an untrained network).
    pub generation: u64,
    /// The variant as TOML, so the model describes its game completely.
    pub variant_toml: String,
}

impl ModelMeta {
    pub fn new(variant: &Variant, net: NetConfig, generation: u64) -> ModelMeta {
        ModelMeta {
            format: FORMAT.into(),
            variant: variant.name.clone(),
            board_size: variant.geometry.size(),
            rules_fingerprint: format!("{:016x}", variant.rules_fingerprint()),
            encoding_version: ENCODING_VERSION,
            input_planes: PLANES,
            net,
            generation,
            variant_toml: variant.to_toml(),
        }
    }

    /// Refuses a model made for another variant, board size or encoding.
    pub fn check_variant(&self, variant: &Variant, path: &Path) -> Result<(), NnError> {
        let fp = format!("{:016x}", variant.rules_fingerprint());
        if self.board_size != variant.geometry.size() || self.rules_fingerprint != fp {
            return Err(NnError::WrongVariant {
                path: path.to_path_buf(),
                model: format!("{} ({1}x{1}, rules {2})", self.variant, self.board_size, self.rules_fingerprint),
                wanted: format!("{} ({1}x{1}, rules {fp})", variant.name, variant.geometry.size()),
            });
        }
        Ok(())
    }
}

/// Metadata that parses but cannot describe a model this build can load.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MetaError {
    /// The board size is not a supported tafl board (odd, 7..=19).
    #[error("board_size {size}: {reason}")]
    BoardSize { size: u8, reason: String },
    /// The embedded variant does not load.
    #[error("embedded variant: {0}")]
    Variant(String),
    /// The embedded variant is played on another board than `board_size` says.
    #[error("board_size {meta} but the embedded variant {name:?} is {variant}x{variant}")]
    Geometry { meta: u8, name: String, variant: u8 },
    /// No input planes.
    #[error("input_planes = 0")]
    Planes,
    /// An impossible or absurd architecture.
    #[error("{0}")]
    Architecture(String),
    /// The file holds fewer weights than the architecture's trunk alone needs.
    #[error("{found} weights in the file, fewer than the {needed} of a {net} trunk")]
    TooFewWeights { found: usize, needed: usize, net: NetConfig },
}

impl ModelMeta {
    /// Checks that the metadata describes a network this build can construct: a supported
    /// board size equal to the embedded variant's, input planes, and a sane architecture.
    ///
    /// # Errors
    /// The first problem found.
    pub fn validate(&self) -> Result<(), MetaError> {
        crate::rules::Geometry::new(self.board_size).map_err(|e| MetaError::BoardSize { size: self.board_size, reason: e.to_string() })?;
        if self.input_planes == 0 {
            return Err(MetaError::Planes);
        }
        self.net.check().map_err(MetaError::Architecture)?;
        let v = Variant::from_toml_str(&self.variant_toml, "variant_toml").map_err(|e| MetaError::Variant(e.to_string()))?;
        if v.geometry.size() != self.board_size {
            return Err(MetaError::Geometry { meta: self.board_size, name: v.name, variant: v.geometry.size() });
        }
        Ok(())
    }
}

fn format_err(path: &Path, message: impl Into<String>) -> NnError {
    NnError::Format { path: path.to_path_buf(), message: message.into() }
}

/// Writes `net` and its metadata to `path` atomically.
pub fn save(net: &TaflNet, meta: &ModelMeta, path: &Path) -> Result<(), NnError> {
    let json = serde_json::to_string(meta).expect("metadata serializes");
    write_tensors(path, net.vs.variables().into_iter().collect(), Some(json))
}

/// Writes named tensors (as f32) and an optional `tafl_lab` metadata string atomically.
pub fn write_tensors(path: &Path, mut tensors: Vec<(String, Tensor)>, meta: Option<String>) -> Result<(), NnError> {
    tensors.sort_by(|a, b| a.0.cmp(&b.0));
    let data: Vec<(String, Vec<usize>, Vec<u8>)> = tensors
        .iter()
        .map(|(name, t)| {
            let t = t.to_device(Device::Cpu).to_kind(Kind::Float).contiguous();
            let shape: Vec<usize> = t.size().iter().map(|&d| d as usize).collect();
            let n = t.numel();
            let mut buf = vec![0f32; n];
            t.copy_data(&mut buf, n);
            let bytes = buf.iter().flat_map(|x| x.to_le_bytes()).collect();
            (name.clone(), shape, bytes)
        })
        .collect();
    let views = data
        .iter()
        .map(|(name, shape, bytes)| TensorView::new(Dtype::F32, shape.clone(), bytes).map(|v| (name.as_str(), v)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format_err(path, e.to_string()))?;
    let info = meta.map(|json| HashMap::from([(META_KEY.to_string(), json)]));
    let bytes = safetensors::tensor::serialize(views, &info).map_err(|e| format_err(path, e.to_string()))?;
    atomic_write(path, &bytes).map_err(|e| NnError::Io { path: path.to_path_buf(), message: e.to_string() })
}

/// Copies the tensors of a safetensors file into `vars` (same names and shapes, all present).
pub fn read_into(path: &Path, vars: &mut HashMap<String, Tensor>) -> Result<(), NnError> {
    let bytes = std::fs::read(path).map_err(|e| NnError::Io { path: path.to_path_buf(), message: e.to_string() })?;
    copy_into(&bytes, path, vars)
}

fn copy_into(bytes: &[u8], path: &Path, vars: &mut HashMap<String, Tensor>) -> Result<(), NnError> {
    let st = SafeTensors::deserialize(bytes).map_err(|e| format_err(path, format!("not a safetensors file ({e:?})")))?;
    if st.len() != vars.len() {
        return Err(format_err(path, format!("{} tensors, expected {}", st.len(), vars.len())));
    }
    tch::no_grad(|| {
        for (name, var) in vars.iter_mut() {
            let view = st.tensor(name).map_err(|_| format_err(path, format!("tensor {name} missing")))?;
            let shape: Vec<i64> = view.shape().iter().map(|&d| d as i64).collect();
            if view.dtype() != Dtype::F32 || shape != var.size() {
                return Err(format_err(path, format!("tensor {name}: {:?} {shape:?}, expected F32 {:?}", view.dtype(), var.size())));
            }
            let t = Tensor::f_from_data_size(view.data(), &shape, Kind::Float).map_err(|e| format_err(path, e.to_string()))?;
            var.copy_(&t.to_device(var.device()));
        }
        Ok(())
    })
}

/// The checkpoint a shipped model directory holds (`models/brandubh/model.safetensors`).
pub const MODEL_FILE: &str = "model.safetensors";

/// Follows run-directory and model-directory conventions: a directory means its
/// `models/latest` pointer (a run), its `latest` pointer (a run's `models/`), its
/// `model.safetensors` (a shipped model) or its `weights.safetensors` (an `export` folder),
/// the first found; a file named
/// `latest` holds the name of the newest checkpoint beside it.
pub fn resolve(path: &Path) -> Result<PathBuf, NnError> {
    let io = |e: std::io::Error| NnError::Io { path: path.to_path_buf(), message: e.to_string() };
    let mut p = path.to_path_buf();
    if p.is_dir() {
        let candidates = [p.join("models").join("latest"), p.join("latest"), p.join(MODEL_FILE), p.join("weights.safetensors")];
        p = match candidates.into_iter().find(|c| c.is_file()) {
            Some(c) => c,
            None => {
                return Err(NnError::Io {
                    path: p,
                    message: format!("a directory without a model (looked for models/latest, latest, {MODEL_FILE} and weights.safetensors)"),
                })
            }
        };
    }
    if p.file_name().is_some_and(|n| n == "latest") {
        let target = std::fs::read_to_string(&p).map_err(io)?;
        let dir = p.parent().unwrap_or(Path::new("."));
        p = dir.join(target.trim());
    }
    if !p.is_file() {
        return Err(NnError::Io { path: p, message: "no such model file".into() });
    }
    Ok(p)
}

/// A model file an agent loads: the file [`resolve`] finds (the one [`load`] reads) and
/// the sha256 of its bytes, so that a result says which weights it measured.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelFile {
    /// The file as resolved from the spec's `model=` path (relative when that was).
    pub path: String,
    /// Lower-case hex sha256 of the whole file.
    pub sha256: String,
}

/// The sha256 (lower-case hex) of the bytes of `path`, read in blocks. No torch involved.
pub fn sha256_file(path: &Path) -> Result<String, NnError> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let io = |e: std::io::Error| NnError::Io { path: path.to_path_buf(), message: e.to_string() };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(format!("{:x}", hasher.finalize()))
}

/// The file a `model=PATH` loads ([`resolve`]: a directory or `latest` pointer followed to
/// its checkpoint) with its sha256.
pub fn model_file(path: &Path) -> Result<ModelFile, NnError> {
    let file = resolve(path)?;
    Ok(ModelFile { sha256: sha256_file(&file)?, path: file.display().to_string() })
}

/// Reads only the metadata of a model file.
pub fn read_meta(path: &Path) -> Result<ModelMeta, NnError> {
    let bytes = std::fs::read(path).map_err(|e| NnError::Io { path: path.to_path_buf(), message: e.to_string() })?;
    meta_of(&bytes, path)
}

fn meta_of(bytes: &[u8], path: &Path) -> Result<ModelMeta, NnError> {
    let (_, header) = SafeTensors::read_metadata(bytes).map_err(|e| format_err(path, format!("not a safetensors file ({e:?})")))?;
    let json =
        header.metadata().as_ref().and_then(|m| m.get(META_KEY)).ok_or_else(|| format_err(path, format!("no `{META_KEY}` metadata: not a tafl-lab model")))?;
    let meta: ModelMeta = serde_json::from_str(json).map_err(|e| format_err(path, format!("bad metadata: {e}")))?;
    if meta.format != FORMAT {
        return Err(format_err(path, format!("format {:?}, this build reads {FORMAT:?}", meta.format)));
    }
    if meta.encoding_version != ENCODING_VERSION || meta.input_planes != PLANES {
        return Err(format_err(
            path,
            format!("encoding version {} with {} planes; this build uses version {ENCODING_VERSION} with {PLANES}", meta.encoding_version, meta.input_planes),
        ));
    }
    meta.validate().map_err(|e| format_err(path, format!("bad metadata: {e}")))?;
    Ok(meta)
}

/// Loads a model onto `device`, checking it was made for `variant` when given.
pub fn load(path: &Path, variant: Option<&Variant>, device: Device) -> Result<(TaflNet, ModelMeta), NnError> {
    let path = &resolve(path)?;
    let bytes = std::fs::read(path).map_err(|e| NnError::Io { path: path.to_path_buf(), message: e.to_string() })?;
    let meta = meta_of(&bytes, path)?;
    if let Some(v) = variant {
        meta.check_variant(v, path)?;
    }
    // Before allocating the network: a file too small for the architecture it names is
    // corrupt (and must not make us build a huge network only to refuse its weights).
    let (header_len, _) = SafeTensors::read_metadata(&bytes).map_err(|e| format_err(path, format!("not a safetensors file ({e:?})")))?;
    let found = bytes.len().saturating_sub(header_len.saturating_add(8)) / 4;
    let needed = meta.net.trunk_weights();
    if found < needed {
        return Err(format_err(path, format!("bad metadata: {}", MetaError::TooFewWeights { found, needed, net: meta.net })));
    }
    let net = TaflNet::try_new(meta.board_size, meta.net, device).map_err(|e| format_err(path, format!("bad metadata: {e}")))?;
    copy_into(&bytes, path, &mut net.vs.variables())?;
    Ok((net, meta))
}

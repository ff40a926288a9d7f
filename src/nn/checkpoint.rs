//! Model files: safetensors with a `tafl_lab` metadata entry (JSON) that records what the
//! weights mean: the variant and its rules fingerprint, board size, encoding version and
//! architecture. A model never loads for a variant, board or encoding it was not made for.

use super::encoding::Encoding;
use super::net::{NetConfig, TaflNet, OWNERSHIP_HEAD};
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
    /// The version of the input planes ([`Encoding::version`]); always `net.encoding`'s.
    /// Files from before versions existed hold 1 here and no `encoding` in `net`.
    pub encoding_version: u32,
    /// The number of input planes of `encoding_version` (repeated for readers outside).
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
            encoding_version: net.encoding.version(),
            input_planes: net.encoding.planes(),
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
    /// An encoding version this build does not know.
    #[error("encoding_version {0}: this build reads versions {known}", known = Encoding::known())]
    EncodingVersion(u32),
    /// The recorded plane count, or the network's encoding, is not that of the version.
    #[error("encoding_version {version} has {planes} input planes and net.encoding {version}, not input_planes = {input_planes} and net.encoding {net}")]
    Planes { version: u32, planes: usize, input_planes: usize, net: Encoding },
    /// An impossible or absurd architecture.
    #[error("{0}")]
    Architecture(String),
    /// The file holds fewer weights than the architecture's trunk alone needs.
    #[error("{found} weights in the file, fewer than the {needed} of a {net} trunk")]
    TooFewWeights { found: usize, needed: usize, net: NetConfig },
}

impl ModelMeta {
    /// Checks that the metadata describes a network this build can construct: a supported
    /// board size equal to the embedded variant's, an encoding version this build knows (with
    /// its plane count, and the network's encoding the same), and a sane architecture.
    ///
    /// # Errors
    /// The first problem found.
    pub fn validate(&self) -> Result<(), MetaError> {
        crate::rules::Geometry::new(self.board_size).map_err(|e| MetaError::BoardSize { size: self.board_size, reason: e.to_string() })?;
        let encoding = Encoding::from_version(self.encoding_version).ok_or(MetaError::EncodingVersion(self.encoding_version))?;
        if self.input_planes != encoding.planes() || self.net.encoding != encoding {
            return Err(MetaError::Planes {
                version: self.encoding_version,
                planes: encoding.planes(),
                input_planes: self.input_planes,
                net: self.net.encoding,
            });
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
            // A model with a NaN or an infinity in it plays nonsense and poisons whatever
            // starts from it: never written.
            if let Some(x) = buf.iter().find(|x| !x.is_finite()) {
                return Err(format_err(path, format!("refusing to save: tensor {name} holds the non-finite weight {x}")));
            }
            let bytes = buf.iter().flat_map(|x| x.to_le_bytes()).collect();
            Ok((name.clone(), shape, bytes))
        })
        .collect::<Result<_, NnError>>()?;
    let views = data
        .iter()
        .map(|(name, shape, bytes)| TensorView::new(Dtype::F32, shape.clone(), bytes).map(|v| (name.as_str(), v)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format_err(path, e.to_string()))?;
    let info = meta.map(|json| HashMap::from([(META_KEY.to_string(), json)]));
    let bytes = safetensors::tensor::serialize(views, &info).map_err(|e| format_err(path, e.to_string()))?;
    atomic_write(path, &bytes).map_err(|e| NnError::Io { path: path.to_path_buf(), message: e.to_string() })
}

/// What may differ between a file's tensors and the network's variables they are copied into
/// (nothing, by default): the heads a run may add to the network of its start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeadChanges {
    /// The ownership head's tensors are copied only where both sides have them (added: it
    /// starts as built; dropped: left out).
    pub ownership: bool,
    /// The value head's last layer becomes per side: the file's one output layer (3 rows)
    /// starts both sides' (6 rows).
    pub split_value: bool,
}

impl HeadChanges {
    /// The changes from a network of `from` to one of `to` (their trunks equal).
    pub fn between(from: &NetConfig, to: &NetConfig) -> HeadChanges {
        HeadChanges { ownership: from.ownership != to.ownership, split_value: !from.value_per_side && to.value_per_side }
    }
}

/// The value head's last layer, whose rows [`HeadChanges::split_value`] doubles.
const VALUE_OUT: [&str; 2] = ["value_out.weight", "value_out.bias"];

/// Copies the tensors of a safetensors file into `vars` (same names and shapes, all present),
/// but for the `changes` allowed (an optimizer's state saved before a head was added or
/// dropped).
pub fn read_into(path: &Path, vars: &mut HashMap<String, Tensor>, changes: HeadChanges) -> Result<(), NnError> {
    let bytes = std::fs::read(path).map_err(|e| NnError::Io { path: path.to_path_buf(), message: e.to_string() })?;
    copy_into(&bytes, path, vars, changes)
}

/// Copies a safetensors file's tensors into `vars`: the same names and shapes, all present,
/// but for the `changes` allowed.
fn copy_into(bytes: &[u8], path: &Path, vars: &mut HashMap<String, Tensor>, changes: HeadChanges) -> Result<(), NnError> {
    let st = SafeTensors::deserialize(bytes).map_err(|e| format_err(path, format!("not a safetensors file ({e:?})")))?;
    let head = |name: &str| changes.ownership && name.starts_with(&format!("{OWNERSHIP_HEAD}."));
    let in_file = st.names().into_iter().filter(|n| !head(n)).count();
    let wanted = vars.keys().filter(|n| !head(n)).count();
    if in_file != wanted {
        return Err(format_err(path, format!("{in_file} tensors, expected {wanted}")));
    }
    tch::no_grad(|| {
        for (name, var) in vars.iter_mut() {
            if head(name) && st.tensor(name).is_err() {
                continue;
            }
            let view = st.tensor(name).map_err(|_| format_err(path, format!("tensor {name} missing")))?;
            let shape: Vec<i64> = view.shape().iter().map(|&d| d as i64).collect();
            let split = changes.split_value && VALUE_OUT.contains(&name.as_str()) && {
                let mut doubled = shape.clone();
                doubled[0] *= 2;
                doubled == var.size()
            };
            if view.dtype() != Dtype::F32 || (shape != var.size() && !split) {
                return Err(format_err(path, format!("tensor {name}: {:?} {shape:?}, expected F32 {:?}", view.dtype(), var.size())));
            }
            let t = Tensor::f_from_data_size(view.data(), &shape, Kind::Float).map_err(|e| format_err(path, e.to_string()))?;
            if !bool::try_from(t.isfinite().all()).unwrap_or(false) {
                return Err(format_err(path, format!("tensor {name} holds non-finite weights (NaN or infinity)")));
            }
            let t = if split { Tensor::cat(&[&t, &t], 0) } else { t };
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
    meta.validate().map_err(|e| format_err(path, format!("bad metadata: {e}")))?;
    Ok(meta)
}

/// Loads a model onto `device`, checking it was made for `variant` when given.
pub fn load(path: &Path, variant: Option<&Variant>, device: Device) -> Result<(TaflNet, ModelMeta), NnError> {
    load_with(path, variant, None, device)
}

/// As [`load`], into a network of `config`, which the model must start
/// ([`NetConfig::starts`]): the same trunk and input planes; an ownership head the file lacks
/// starts from torch's generator, one the network lacks is left out; a single value head
/// starts each side's of a per-side one. The metadata returned describes `config`. How a run
/// with an ownership loss or per-side values starts from a model without them, and how
/// `export` leaves the training-only head out.
pub fn load_as(path: &Path, variant: Option<&Variant>, config: NetConfig, device: Device) -> Result<(TaflNet, ModelMeta), NnError> {
    load_with(path, variant, Some(config), device)
}

fn load_with(path: &Path, variant: Option<&Variant>, config: Option<NetConfig>, device: Device) -> Result<(TaflNet, ModelMeta), NnError> {
    let path = &resolve(path)?;
    let bytes = std::fs::read(path).map_err(|e| NnError::Io { path: path.to_path_buf(), message: e.to_string() })?;
    let mut meta = meta_of(&bytes, path)?;
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
    let changes = match config {
        Some(c) if !meta.net.starts(&c) => {
            return Err(format_err(
                path,
                format!(
                    "a network {} (input encoding {}), which cannot start one {} (input encoding {})",
                    meta.net.describe(),
                    meta.net.encoding,
                    c.describe(),
                    c.encoding
                ),
            ));
        }
        Some(c) => {
            let changes = HeadChanges::between(&meta.net, &c);
            meta.net = c;
            changes
        }
        None => HeadChanges::default(),
    };
    let net = TaflNet::try_new(meta.board_size, meta.net, device).map_err(|e| format_err(path, format!("bad metadata: {e}")))?;
    copy_into(&bytes, path, &mut net.vs.variables(), changes)?;
    Ok((net, meta))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::{NetEvaluator, Precision};
    use crate::search::{EvalRequest, Evaluator};
    use std::sync::Arc;

    const SHIPPED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/models/brandubh");

    /// The shipped brandubh model predates encoding versions: it loads as a version-1 network
    /// (a 10-plane stem), its export's fixture inputs are today's version-1 planes bit for bit,
    /// the network gives the fixture outputs, and the evaluator's priors and values are the
    /// softmax of those outputs: it plays as before.
    #[test]
    fn the_shipped_version_1_model_loads_and_evaluates_as_before() {
        let dir = Path::new(SHIPPED);
        let text = std::fs::read_to_string(dir.join("model.json")).expect("model.json");
        assert!(text.contains("\"encoding_version\": 1"), "the shipped export is of version 1");
        let (net, meta) = load(&dir.join(MODEL_FILE), None, Device::Cpu).expect("the shipped model loads");
        assert_eq!((meta.encoding_version, meta.input_planes, meta.net.encoding), (1, 10, Encoding::V1));
        assert_eq!(net.vs.variables()["stem.weight"].size(), [meta.net.channels as i64, 10, 3, 3]);
        let variant = Arc::new(crate::export::model_variant(&meta, dir).expect("embedded variant"));
        let fixtures: HashMap<String, Tensor> = Tensor::read_safetensors(dir.join("fixtures.safetensors")).expect("fixtures").into_iter().collect();
        let positions = crate::export::fixture_positions(&variant);
        let enc = super::super::encoding::Encoder::new(&variant, net.config.encoding);
        let input: Vec<f32> = positions.iter().flat_map(|p| enc.planes(p)).collect();
        let stored = Vec::<f32>::try_from(fixtures["input"].flatten(0, -1)).expect("floats");
        assert_eq!(input, stored, "version-1 planes of the fixture positions, bit for bit");
        let n = variant.geometry.size() as i64;
        let x = Tensor::from_slice(&input).view([positions.len() as i64, 10, n, n]);
        let out = tch::no_grad(|| net.forward_flat(&x));
        let diff = (&out - &fixtures["output"]).abs().max().double_value(&[]);
        assert!(diff < 1e-4, "outputs differ from the fixtures by {diff}");
        // The evaluator (batch norms folded, fp32) encodes with the model's version 1.
        let moves: Vec<_> = positions.iter().map(|p| p.legal_moves()).collect();
        let reqs: Vec<_> = positions.iter().zip(&moves).map(|(p, m)| EvalRequest { position: p, moves: m }).collect();
        let evals = NetEvaluator::new(net, &variant, Precision::Fp32).evaluate(&reqs);
        let g = variant.geometry;
        let ps = super::super::encoding::policy_size(g) as i64;
        for (i, (e, m)) in evals.iter().zip(&moves).enumerate() {
            let row = fixtures["output"].get(i as i64);
            let logits: Vec<f64> = m.iter().map(|&mv| row.double_value(&[super::super::encoding::policy_index(g, mv) as i64])).collect();
            let max = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let total: f64 = logits.iter().map(|l| (l - max).exp()).sum();
            for (p, l) in e.priors.iter().zip(&logits) {
                assert!((f64::from(*p) - (l - max).exp() / total).abs() < 1e-4, "position {i}: prior {p}");
            }
            let wdl: Vec<f64> = (0..3).map(|k| row.double_value(&[ps + k])).collect();
            let z: f64 = wdl.iter().map(|w| w.exp()).sum();
            for (got, w) in e.wdl.iter().zip(&wdl) {
                assert!((f64::from(*got) - w.exp() / z).abs() < 1e-4, "position {i}: wdl {:?}", e.wdl);
            }
        }
    }

    fn tmp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tafl-lab-checkpoint-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir.join(name)
    }

    /// A network of each encoding saves and loads with its encoding and stem; metadata written
    /// before versions existed (no `encoding` in `net`) reads as version 1; an unknown version
    /// or a plane count that is not the version's is refused in one line.
    #[test]
    fn models_record_their_encoding_and_old_metadata_reads_as_version_1() {
        let v = Variant::preset("brandubh").expect("preset");
        for e in Encoding::ALL {
            let net = TaflNet::new(7, NetConfig::new(1, 4).with_encoding(e), Device::Cpu);
            let path = tmp(&format!("v{}.safetensors", e.version()));
            save(&net, &ModelMeta::new(&v, net.config, 0), &path).expect("saved");
            let (back, meta) = load(&path, Some(&v), Device::Cpu).expect("loads");
            assert_eq!((meta.encoding_version, meta.input_planes, back.config.encoding), (e.version(), e.planes(), e));
            assert_eq!(back.vs.variables()["stem.weight"].size()[1], e.planes() as i64);
        }
        let net = TaflNet::new(7, NetConfig::new(1, 4).with_encoding(Encoding::V1), Device::Cpu);
        let json = serde_json::to_string(&ModelMeta::new(&v, net.config, 0)).expect("serializes");
        let old = json.replace(",\"encoding\":1", "");
        assert!(!old.contains("\"encoding\""), "{old}");
        let path = tmp("old.safetensors");
        write_tensors(&path, net.vs.variables().into_iter().collect(), Some(old.clone())).expect("written");
        assert_eq!(load(&path, Some(&v), Device::Cpu).expect("an old file loads").1.net.encoding, Encoding::V1);
        for (bad, says) in [
            (old.replace("\"encoding_version\":1", "\"encoding_version\":3"), "encoding_version 3: this build reads versions 1 (10 planes), 2 (19 planes)"),
            (old.replace("\"input_planes\":10", "\"input_planes\":19"), "encoding_version 1 has 10 input planes"),
            (old.replace("\"encoding_version\":1", "\"encoding_version\":2").replace("\"input_planes\":10", "\"input_planes\":19"), "net.encoding 1"),
        ] {
            write_tensors(&path, net.vs.variables().into_iter().collect(), Some(bad)).expect("written");
            let err = load(&path, Some(&v), Device::Cpu).expect_err("refused").to_string();
            assert!(err.contains("bad metadata") && err.contains(says) && !err.contains('\n'), "{err}");
        }
        let _ = std::fs::remove_dir_all(tmp("x").parent().expect("dir"));
    }

    /// A model with the ownership head loads with it; `load_as` drops it or adds a fresh one
    /// with every other weight the file's, and refuses another architecture in one line.
    #[test]
    fn the_ownership_head_is_kept_dropped_or_added_by_load_as() {
        let v = Variant::preset("brandubh").expect("preset");
        let with = NetConfig::new(1, 4).with_ownership(true);
        let net = TaflNet::new(7, with, Device::Cpu);
        // A folder of its own: another test removes `tmp`'s when it ends.
        let dir = std::env::temp_dir().join(format!("tafl-lab-ownership-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("with.safetensors");
        save(&net, &ModelMeta::new(&v, net.config, 0), &path).expect("saved");
        let (back, meta) = load(&path, Some(&v), Device::Cpu).expect("loads");
        assert!(meta.net.ownership && back.vs.variables().contains_key("ownership_out.weight"));
        let (plain, meta) = load_as(&path, Some(&v), with.with_ownership(false), Device::Cpu).expect("loads without the head");
        let (a, b) = (plain.vs.variables(), net.vs.variables());
        assert!(!meta.net.ownership && a.len() + 2 == b.len() && a.iter().all(|(k, t)| t.equal(&b[k])));
        let path2 = dir.join("plain.safetensors");
        save(&plain, &meta, &path2).expect("saved");
        let (again, meta) = load_as(&path2, Some(&v), with, Device::Cpu).expect("loads with a fresh head");
        let c = again.vs.variables();
        assert!(meta.net.ownership && c.len() == b.len() && a.iter().all(|(k, t)| t.equal(&c[k])));
        let err = load_as(&path2, Some(&v), NetConfig::new(2, 4), Device::Cpu).expect_err("another trunk").to_string();
        assert!(err.contains("a network 1x4 (input encoding 2), which cannot start one 2x4") && !err.contains('\n'), "{err}");
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A model with one value output layer starts a per-side network whose values are the
    /// model's for both sides (each side's rows start as the model's); the way back is
    /// refused.
    #[test]
    fn a_single_value_layer_starts_both_sides_of_a_per_side_one() {
        let v = Variant::preset("brandubh").expect("preset");
        let dir = std::env::temp_dir().join(format!("tafl-lab-per-side-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let plain = TaflNet::new(7, NetConfig::new(1, 4), Device::Cpu);
        let path = dir.join("plain.safetensors");
        save(&plain, &ModelMeta::new(&v, plain.config, 0), &path).expect("saved");
        let (split, meta) = load_as(&path, Some(&v), plain.config.with_value_per_side(true), Device::Cpu).expect("loads per side");
        assert!(meta.net.value_per_side && split.vs.variables()["value_out.weight"].size()[0] == 6);
        let x = Tensor::rand([6, plain.config.encoding.planes() as i64, 7, 7], (Kind::Float, Device::Cpu)).round();
        let (vp, vs) = tch::no_grad(|| (plain.forward_t(&x, false).1, split.forward_t(&x, false).1));
        assert!(vp.allclose(&vs, 1e-6, 1e-6, false), "the same values for both sides");
        let back = dir.join("split.safetensors");
        save(&split, &meta, &back).expect("saved");
        let err = load_as(&back, Some(&v), plain.config, Device::Cpu).expect_err("per side cannot become one").to_string();
        assert!(err.contains("a network 1x4 with per-side values (input encoding 2), which cannot start one 1x4 (input"), "{err}");
        let _ = std::fs::remove_dir_all(dir);
    }
}

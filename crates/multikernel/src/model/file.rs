//! Model files: versioned JSON, written atomically (temp file + rename), refused with a clear
//! message when the format, version or content is wrong.

use crate::error::{Error, Result};
use crate::model::batch_model::BatchModel;
use crate::solver::gomp::GompModel;
use crate::solver::lp_mkl::LpMklModel;
use crate::solver::mirror_descent::PolyMklModel;
use crate::solver::online::sequence_model::SequenceModel;
use crate::solver::online::vector_model::KernelMachine;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The format tag every model file carries.
pub const FORMAT: &str = "multikernel-model";
/// The version this build writes and reads.
pub const VERSION: u32 = 1;

/// Any trained model. The JSON field `kind` names the variant (`kernel-machine`,
/// `sequence`, `gomp`, `lp-mkl`, `poly-mkl`); adding a variant keeps older files readable.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", content = "model", rename_all = "kebab-case")]
pub enum AnyModel {
    /// Online proximal MKL on vector data (Alg. 1).
    KernelMachine(KernelMachine),
    /// SPOM on sequences (Alg. 3, first-order chain).
    Sequence(SequenceModel),
    /// MKL-GOMP (Sindhwani & Lozano 2012, Sec. 3) on vector data.
    Gomp(BatchModel<GompModel>),
    /// lp-norm MKL for the squared loss (Kloft et al. 2011) on vector data.
    LpMkl(BatchModel<LpMklModel>),
    /// Polynomial product-kernel MKL by randomized mirror descent or UCD (Afkanpour et al.
    /// 2013, Alg. 2).
    PolyMkl(BatchModel<PolyMklModel>),
}

#[derive(Serialize, Deserialize)]
struct Envelope {
    format: String,
    version: u32,
    #[serde(flatten)]
    model: AnyModel,
}

/// Writes `model` to `path` atomically.
pub fn save(path: &Path, model: &AnyModel) -> Result<()> {
    #[derive(Serialize)]
    struct Out<'a> {
        format: &'a str,
        version: u32,
        #[serde(flatten)]
        model: &'a AnyModel,
    }
    let text = serde_json::to_vec(&Out {
        format: FORMAT,
        version: VERSION,
        model,
    })
    .map_err(|e| Error::model(path.display().to_string(), format!("cannot serialize: {e}")))?;
    crate::io::write_atomic(path, &text)
}

/// Reads a model file, checking its format tag and version first.
pub fn load(path: &Path) -> Result<AnyModel> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let err = |msg: String| Error::model(path.display().to_string(), msg);
    let value: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| err(format!("not a multikernel model (invalid JSON: {e})")))?;
    match value.get("format").and_then(|f| f.as_str()) {
        Some(FORMAT) => {}
        _ => {
            return Err(err(format!(
                "not a multikernel model (no \"format\": \"{FORMAT}\")"
            )))
        }
    }
    match value.get("version").and_then(|v| v.as_u64()) {
        Some(v) if v == VERSION as u64 => {}
        Some(v) => {
            return Err(err(format!(
                "version {v} is not supported by this build (it reads version {VERSION})"
            )))
        }
        None => return Err(err("no version field".into())),
    }
    let env: Envelope =
        serde_json::from_value(value).map_err(|e| err(format!("inconsistent content: {e}")))?;
    Ok(env.model)
}

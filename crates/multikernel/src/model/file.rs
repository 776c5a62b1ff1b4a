//! The model-file format: JSON in an envelope that names the format, its version and the
//! crate that wrote it,
//!
//! ```text
//! {"format": "multikernel-model", "version": 2, "crate_version": "0.1.0",
//!  "kind": "gomp", "model": {...}}
//! ```
//!
//! written atomically (a temporary file renamed into place) and refused with a clear message
//! when the format, the version or the content is wrong. Files hold no timings, so the same
//! seed gives byte-identical files.
//!
//! # Versions
//! - 2 (this build writes it): adds `crate_version`; the online learner's training settings
//!   are typed; no training times.
//! - 1 (commit 3b69a82 and before): no `crate_version`; the training settings were loose
//!   JSON. Read unchanged: the typed settings accept version 1's spellings
//!   (`"schedule": "InvSqrt"`), and unknown keys are ignored.
//!
//! Every model read is checked with `Model::validate` before it is returned.

use super::Model;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The format tag every model file carries.
pub(crate) const FORMAT: &str = "multikernel-model";
/// The version this build writes.
pub const VERSION: u32 = 2;
/// The versions this build reads.
pub(crate) const READS: [u32; 2] = [1, 2];

#[derive(Serialize)]
struct Out<'a> {
    format: &'a str,
    version: u32,
    crate_version: &'a str,
    #[serde(flatten)]
    model: &'a Model,
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(flatten)]
    model: Model,
}

/// The model as the bytes of a model file.
pub(crate) fn to_bytes(model: &Model) -> Result<Vec<u8>> {
    serde_json::to_vec(&Out {
        format: FORMAT,
        version: VERSION,
        crate_version: env!("CARGO_PKG_VERSION"),
        model,
    })
    .map_err(|e| Error::model("<in memory>", format!("cannot serialize: {e}")))
}

/// Reads a model from the bytes of a model file; `origin` names them in messages (a path,
/// or `<bytes>`).
pub(crate) fn from_bytes(bytes: &[u8], origin: &str) -> Result<Model> {
    let err = |msg: String| Error::model(origin, msg);
    // A file of another kind this crate knows (a checkpoint, a data file) is named.
    let other_kind = || match crate::data::read::looks_like(bytes) {
        Some(kind) if kind.contains("checkpoint") => format!(
            "; the file is {kind}, which train --resume reads: give the model file train wrote \
             to --out"
        ),
        Some(kind) if kind.contains("model") => String::new(),
        Some(kind) => format!(
            "; the file looks like {kind}: a model is the file train wrote to --out (the data \
             go to --data)"
        ),
        None => String::new(),
    };
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        err(format!(
            "not a multikernel model (invalid JSON: {e}){}",
            other_kind()
        ))
    })?;
    match value.get("format").and_then(|f| f.as_str()) {
        Some(FORMAT) => {}
        _ => {
            return Err(err(format!(
                "not a multikernel model (no \"format\": \"{FORMAT}\"){}",
                other_kind()
            )))
        }
    }
    match value.get("version").and_then(|v| v.as_u64()) {
        Some(v) if READS.iter().any(|&r| u64::from(r) == v) => {}
        Some(v) => {
            return Err(err(format!(
                "version {v} is not supported by this build (it reads versions 1 and 2; \
                 written by multikernel {})",
                value
                    .get("crate_version")
                    .and_then(|c| c.as_str())
                    .unwrap_or("of an unknown version")
            )))
        }
        None => return Err(err("no version field".into())),
    }
    let env: Envelope =
        serde_json::from_value(value).map_err(|e| err(format!("inconsistent content: {e}")))?;
    env.model
        .validate()
        .map_err(|e| err(format!("inconsistent content: {e}")))?;
    Ok(env.model)
}

/// Writes `model` to `path` atomically.
pub(crate) fn save(path: &Path, model: &Model) -> Result<()> {
    let bytes = to_bytes(model)?;
    crate::io::write_atomic(path, &bytes)
}

/// Reads and checks a model file.
pub(crate) fn load(path: &Path) -> Result<Model> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    from_bytes(&bytes, &path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A checkpoint or a data file given as a model is named as what it is.
    #[test]
    fn other_kinds_of_file_are_named() {
        let ck = crate::checkpoint::to_bytes("tagger", 2, "a", "b", b"{}");
        let e = from_bytes(&ck, "run.ckpt").unwrap_err().to_string();
        assert!(
            e.starts_with("model run.ckpt: not a multikernel model (invalid JSON")
                && e.contains("the file is a multikernel checkpoint")
                && e.contains(
                    "which train --resume reads: give the model file train wrote to --out"
                ),
            "{e}"
        );
        let conllu = b"# sent_id = 1\n1\tAli\t_\t_\t_\t_\t0\troot\t_\t_\n";
        let e = from_bytes(conllu, "tb.conllu").unwrap_err().to_string();
        assert!(e.contains("the file looks like a CoNLL-U treebank"), "{e}");
        let e = from_bytes(br#"{"format":"x"}"#, "m")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            r#"model m: not a multikernel model (no "format": "multikernel-model")"#
        );
    }
}

//! Model files from bytes.

use crate::data::{Matrix, MatrixRef};
use crate::kernel::MemoryLimit;
use crate::model::Model;

/// Model bytes: load; a model that loads predicts (or refuses) on a small matrix of its width
/// under a 64 MiB limit, summarizes itself, and round-trips through bytes to a model that
/// predicts the same, to the bit.
pub fn model_bytes(data: &[u8]) {
    let Ok(model) = Model::from_bytes(data) else {
        return;
    };
    let limit = MemoryLimit { bytes: 64 << 20 };
    let cols = model.n_features();
    let x = Matrix::from_vec(
        4,
        cols,
        (0..4 * cols)
            .map(|i| ((i * 7919) % 401) as f64 / 100.0 - 2.0)
            .collect(),
    );
    let _ = model.summary().to_string();
    let _ = model.schema();
    let first = outputs(&model, MatrixRef::from(&x), &limit);
    let bytes = model.to_bytes().expect("a loaded model serializes");
    let again = Model::from_bytes(&bytes).expect("a model's own bytes load");
    let second = outputs(&again, MatrixRef::from(&x), &limit);
    assert_eq!(first, second, "the round trip changed the model's outputs");
}

/// The model's outputs on `x` as comparable bits (decision values or label sequences), or
/// the error's text.
fn outputs(model: &Model, x: MatrixRef<'_>, limit: &MemoryLimit) -> Result<Vec<u64>, String> {
    match model {
        Model::Parser(p) => {
            let tok = |form: &str, upos: &str| crate::task::parse::ParseToken {
                form: form.into(),
                lemma: form.into(),
                upos: upos.into(),
                xpos: upos.into(),
                feats: "Case=Nom".into(),
                space_after: true,
            };
            let s = crate::task::parse::ParseSentence {
                tokens: vec![tok("a", "DET"), tok("b", "NOUN"), tok("c", "VERB")],
                heads: None,
                deprels: None,
            };
            let s = std::slice::from_ref(&s);
            p.parse(s)
                .map(|h| {
                    let rels = p.label(s, &h).unwrap_or_default().concat();
                    let mut v: Vec<u64> = h.concat().into_iter().map(|x| x as u64).collect();
                    v.extend(rels.iter().map(|r| r.len() as u64));
                    v
                })
                .map_err(|e| e.to_string())
        }
        Model::Sequence(_) => model
            .predict_sequences_with(x, &[0..1, 1..4], limit)
            .map(|s| s.concat().into_iter().map(|l| l as u64).collect())
            .map_err(|e| e.to_string()),
        _ => model
            .decision_function_with(x, limit)
            .map(|f| f.data.iter().map(|v| v.to_bits()).collect())
            .map_err(|e| e.to_string()),
    }
}

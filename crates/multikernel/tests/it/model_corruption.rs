//! Model files against corruption (issue 11, item 2): every model kind's file, with bytes
//! flipped, cut short, a stretch deleted or repeated, or spliced with another file, either
//! fails to load with a model error, or loads into a model whose prediction, decision
//! values, summary and serialization return `Ok` or `Err`: never a panic, an abort or an
//! allocation sized by a number in the file rather than by what the file holds.

use multikernel::data::{Matrix, MatrixRef};
use multikernel::error::Error;
use multikernel::kernel::MemoryLimit;
use multikernel::model::Model;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// The model files of every kind: the version-1 fixtures (online binary, multiclass,
/// regression, logistic; sequence hinge and CRF; GOMP binary and multiclass; lp-MKL
/// multiclass and regression; mirror descent binary; UCD regression).
fn models() -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models-v1");
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "model"))
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    out.sort();
    assert_eq!(out.len(), 12, "one fixture per kind");
    out
}

/// A small deterministic matrix of `cols` columns, values in about [-2, 2].
fn probe(rows: usize, cols: usize) -> Matrix {
    let data = (0..rows * cols)
        .map(|i| ((i * 7919) % 401) as f64 / 100.0 - 2.0)
        .collect();
    Matrix::from_vec(rows, cols, data)
}

/// Everything a user does with a loaded model, on a probe of its width; errors are fine.
fn exercise(model: &Model) {
    let limit = MemoryLimit { bytes: 64 << 20 };
    let x = probe(5, model.n_features());
    let view = MatrixRef::from(&x);
    let _ = model.summary().to_string();
    let _ = format!("{:#}", model.summary());
    let _ = model.schema();
    match model {
        Model::Sequence(_) => {
            let _ = model.predict_sequences_with(view, &[0..2, 2..5], &limit);
        }
        _ => {
            let _ = model.decision_function_with(view, &limit);
            let _ = model.predict_with(view, &limit);
        }
    }
    if let Ok(bytes) = model.to_bytes() {
        let _ = Model::from_bytes(&bytes);
    }
}

/// Loads `bytes`; a load error must be a model error. Returns whether it loaded.
fn try_bytes(bytes: &[u8]) -> bool {
    match Model::from_bytes(bytes) {
        Ok(model) => {
            exercise(&model);
            true
        }
        Err(Error::Model { .. }) => false,
        Err(e) => panic!("a corrupted file gave a non-model error: {e}"),
    }
}

/// One corruption of `a` (with `b` as the other file of a splice), chosen by `rng`.
fn corrupt(rng: &mut ChaCha8Rng, a: &[u8], b: &[u8]) -> (String, Vec<u8>) {
    let mut v = a.to_vec();
    let n = v.len();
    let at = rng.gen_range(0..n);
    match rng.gen_range(0..6) {
        0 => {
            let flips = rng.gen_range(1..=4);
            for _ in 0..flips {
                let i = rng.gen_range(0..n);
                v[i] ^= 1 << rng.gen_range(0..8);
            }
            (format!("{flips} bits flipped"), v)
        }
        1 => {
            // A printable byte put in place of another: a digit, a sign, a bracket, ...
            const SET: &[u8] = b"0123456789-+.eE[]{},:\"nul";
            let c = SET[rng.gen_range(0..SET.len())];
            v[at] = c;
            (format!("byte {at} set to {:?}", c as char), v)
        }
        2 => {
            v.truncate(at);
            (format!("truncated to {at} bytes"), v)
        }
        3 => {
            let len = rng.gen_range(1..=(n - at).min(200));
            v.drain(at..at + len);
            (format!("{len} bytes deleted at {at}"), v)
        }
        4 => {
            let len = rng.gen_range(1..=(n - at).min(200));
            let stretch = v[at..at + len].to_vec();
            let to = rng.gen_range(0..=n);
            v.splice(to..to, stretch);
            (format!("{len} bytes at {at} repeated at {to}"), v)
        }
        _ => {
            let cut = rng.gen_range(0..b.len());
            v.truncate(at);
            v.extend_from_slice(&b[cut..]);
            (format!("spliced at {at} with the other file from {cut}"), v)
        }
    }
}

#[test]
fn corrupted_model_files_load_or_fail_cleanly_never_panic() {
    let models = models();
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let (mut loaded, mut refused) = (0usize, 0usize);
    for (i, (name, bytes)) in models.iter().enumerate() {
        assert!(try_bytes(bytes), "{name} loads as it is");
        let other = &models[(i + 1) % models.len()].1;
        for k in 0..250 {
            let (what, bad) = corrupt(&mut rng, bytes, other);
            match catch_unwind(AssertUnwindSafe(|| try_bytes(&bad))) {
                Ok(true) => loaded += 1,
                Ok(false) => refused += 1,
                Err(_) => panic!("{name}, corruption {k} ({what}) panicked"),
            }
        }
    }
    // Most corruptions are refused; some (a digit changed in a weight) still load.
    assert!(refused > loaded, "{refused} refused, {loaded} loaded");
    assert!(loaded > 0);
}

/// Every node of a JSON tree, as a path of keys and indices.
fn paths(v: &serde_json::Value, here: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    out.push(here.clone());
    match v {
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                here.push(Step::Index(i));
                paths(x, here, out);
                here.pop();
            }
        }
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                here.push(Step::Key(k.clone()));
                paths(x, here, out);
                here.pop();
            }
        }
        _ => {}
    }
}

#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

fn node<'a>(v: &'a mut serde_json::Value, path: &[Step]) -> &'a mut serde_json::Value {
    path.iter().fold(v, |v, s| match s {
        Step::Key(k) => &mut v[k.as_str()],
        Step::Index(i) => &mut v[*i],
    })
}

/// One change of a value that keeps the file valid JSON: a number made 0, -1, huge or
/// fractional; an array emptied, shortened, lengthened or its first element repeated; a
/// string emptied; a key removed; a node replaced by another kind of value.
fn mutate(rng: &mut ChaCha8Rng, v: &mut serde_json::Value) -> String {
    use serde_json::{json, Value};
    let mut all = Vec::new();
    paths(v, &mut Vec::new(), &mut all);
    let path = all[rng.gen_range(1..all.len())].clone();
    let target = node(v, &path);
    let what = match target {
        Value::Number(_) => {
            let options = [
                json!(0),
                json!(-1),
                json!(1),
                json!(4294967296u64),
                json!(1e9),
                json!(1e308),
                json!(-1e308),
                json!(0.5),
                json!(u64::MAX),
                json!(i64::MIN),
            ];
            *target = options[rng.gen_range(0..options.len())].clone();
            format!("number set to {target}")
        }
        Value::Array(a) if !a.is_empty() => match rng.gen_range(0..4) {
            0 => {
                a.clear();
                "array emptied".to_string()
            }
            1 => {
                let keep = rng.gen_range(0..a.len());
                a.truncate(keep);
                format!("array cut to {keep}")
            }
            2 => {
                let first = a[0].clone();
                a.push(first);
                "array lengthened".to_string()
            }
            _ => {
                let i = rng.gen_range(0..a.len());
                a.remove(i);
                format!("element {i} removed")
            }
        },
        Value::String(s) => {
            s.clear();
            "string emptied".to_string()
        }
        Value::Object(m) if !m.is_empty() => {
            let keys: Vec<String> = m.keys().cloned().collect();
            let k = &keys[rng.gen_range(0..keys.len())];
            m.remove(k);
            format!("key {k} removed")
        }
        _ => {
            let options = [json!(null), json!(true), json!([]), json!({}), json!(3)];
            *target = options[rng.gen_range(0..options.len())].clone();
            format!("replaced by {target}")
        }
    };
    format!("{path:?}: {what}")
}

#[test]
#[ignore = "full tier: seeded corruptions of every model kind's file, 16 s"]
fn model_files_with_wrong_values_load_or_fail_cleanly_never_panic() {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let (mut loaded, mut refused) = (0usize, 0usize);
    for (name, bytes) in models() {
        let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        for k in 0..200 {
            let mut v = value.clone();
            let mut what = Vec::new();
            for _ in 0..rng.gen_range(1..=2) {
                what.push(mutate(&mut rng, &mut v));
            }
            let bad = serde_json::to_vec(&v).unwrap();
            match catch_unwind(AssertUnwindSafe(|| try_bytes(&bad))) {
                Ok(true) => loaded += 1,
                Ok(false) => refused += 1,
                Err(_) => panic!("{name}, change {k} ({what:?}) panicked"),
            }
        }
    }
    // Both outcomes happen (the changes reach the checks, and some leave a usable model).
    assert!(
        refused > 100 && loaded > 100,
        "{refused} refused, {loaded} loaded"
    );
}

//! Checks the trained models' `validate` share: stored arrays of the lengths and shapes the
//! rest of the model implies, and finite numbers where a prediction needs them. Lengths that
//! disagree give [`Error::ShapeMismatch`]; other inconsistencies [`Error::Model`] with the
//! model's name as origin (a caller that read the model from a file names the file).

use crate::data::standardize::Standardizer;
use crate::data::Matrix;
use crate::error::{Error, Result};
use crate::kernel::FittedKernel;

/// `found == expected`, else a shape error about `what`.
pub(crate) fn len(what: impl FnOnce() -> String, expected: usize, found: usize) -> Result<()> {
    if found == expected {
        Ok(())
    } else {
        Err(Error::shape(what(), expected, found))
    }
}

/// Every value finite, else a model error naming `what`.
pub(crate) fn finite(origin: &str, what: impl FnOnce() -> String, values: &[f64]) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(Error::model(
            origin,
            format!("{} has a non-finite value at {i}", what()),
        )),
    }
}

/// A `rows x cols` matrix whose stored values are as many as its shape says, all finite.
pub(crate) fn matrix(origin: &str, what: &str, m: &Matrix, rows: usize, cols: usize) -> Result<()> {
    len(|| format!("{origin}: rows of {what}"), rows, m.rows)?;
    len(|| format!("{origin}: columns of {what}"), cols, m.cols)?;
    // `rows * cols` cannot overflow by itself: a stored vector of that length exists.
    let expected = rows
        .checked_mul(cols)
        .ok_or_else(|| Error::model(origin, format!("{what} is {rows} x {cols}: too large")))?;
    len(
        || format!("{origin}: values of {what}"),
        expected,
        m.data.len(),
    )?;
    finite(origin, || what.to_string(), &m.data)
}

/// The stored parts of a model `f(x) = sum_m w_m k_m(x, X) coef + b` with one coefficient
/// matrix shared by the kernels (lp-MKL, the wrappers): the training rows `X` of the
/// features' width, the standardizer and every kernel of that width, one finite weight
/// `>= 0` per kernel, at least one output, a finite bias, `coef` of `X`'s rows by the
/// outputs.
pub(crate) struct SharedCoefModel<'a> {
    pub n_features: usize,
    pub x_train: &'a Matrix,
    pub standardizer: Option<&'a Standardizer>,
    pub kernels: &'a [FittedKernel],
    pub weights: &'a [f64],
    pub coef: &'a Matrix,
    pub bias: &'a [f64],
}

impl SharedCoefModel<'_> {
    /// Checks that the parts agree with each other and hold finite numbers.
    pub(crate) fn validate(&self, origin: &str) -> Result<()> {
        let (d, n) = (self.n_features, self.x_train.rows);
        matrix(origin, "the training rows", self.x_train, n, d)?;
        if let Some(s) = self.standardizer {
            s.validate()?;
            len(
                || format!("{origin}: features of the standardizer"),
                d,
                s.n_features(),
            )?;
        }
        len(
            || format!("{origin}: kernel weights (one per kernel)"),
            self.kernels.len(),
            self.weights.len(),
        )?;
        for (m, k) in self.kernels.iter().enumerate() {
            k.validate()?;
            len(
                || format!("{origin}: features of kernel {m} ({})", k.name),
                d,
                k.n_features(),
            )?;
        }
        shared_coef(
            origin,
            self.kernels.len(),
            n,
            self.weights,
            self.coef,
            self.bias,
        )
    }
}

/// The coefficients of a model `f = sum_m w_m K_m coef + b` over `n` training points (on
/// rows, [`SharedCoefModel`], or on precomputed kernels): one finite weight `>= 0` per
/// kernel, at least one output, a finite bias, `coef` of `n` rows by the outputs.
pub(crate) fn shared_coef(
    origin: &str,
    n_kernels: usize,
    n: usize,
    weights: &[f64],
    coef: &Matrix,
    bias: &[f64],
) -> Result<()> {
    len(
        || format!("{origin}: kernel weights (one per kernel)"),
        n_kernels,
        weights.len(),
    )?;
    if let Some(m) = weights.iter().position(|t| !(t.is_finite() && *t >= 0.0)) {
        return Err(Error::model(
            origin,
            format!(
                "the weight of kernel {m} is {}, not a finite number >= 0",
                weights[m]
            ),
        ));
    }
    let k = bias.len();
    if k == 0 {
        return Err(Error::model(origin, "the model has no output"));
    }
    finite(origin, || "the bias".into(), bias)?;
    matrix(origin, "the coefficients", coef, n, k)
}

/// `index < bound`, else a model error: `what` refers to something that does not exist.
pub(crate) fn index(
    origin: &str,
    what: impl FnOnce() -> String,
    i: usize,
    bound: usize,
) -> Result<()> {
    if i < bound {
        Ok(())
    } else {
        Err(Error::model(
            origin,
            format!("{} is {i}, not below {bound}", what()),
        ))
    }
}

/// A number that must be finite and positive (a ridge, a scale), else a model error.
pub(crate) fn positive(origin: &str, what: &str, v: f64) -> Result<()> {
    if v > 0.0 && v.is_finite() {
        Ok(())
    } else {
        Err(Error::model(
            origin,
            format!("{what} is {v}, not a positive finite number"),
        ))
    }
}

/// Mangled copies of a model's JSON for the models' validation tests.
#[cfg(test)]
pub(crate) mod mangle {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use serde::de::DeserializeOwned;
    use serde_json::Value;
    use std::panic::{catch_unwind, AssertUnwindSafe};

    /// A JSON path: object keys and array indices.
    #[derive(Debug, Clone)]
    enum Step {
        Key(String),
        Index(usize),
    }

    /// The nodes a change can hit, by kind: arrays, matrices (objects with `rows` and
    /// `cols`), numbers that are fields (counts, indices, scalars) and numbers in arrays.
    #[derive(Default)]
    struct Nodes {
        arrays: Vec<Vec<Step>>,
        matrices: Vec<Vec<Step>>,
        fields: Vec<Vec<Step>>,
        elements: Vec<Vec<Step>>,
    }

    fn collect(v: &Value, path: &mut Vec<Step>, in_array: bool, out: &mut Nodes) {
        match v {
            Value::Array(a) => {
                out.arrays.push(path.clone());
                for (i, x) in a.iter().enumerate() {
                    path.push(Step::Index(i));
                    collect(x, path, true, out);
                    path.pop();
                }
            }
            Value::Object(o) => {
                if o.contains_key("rows") && o.contains_key("cols") {
                    out.matrices.push(path.clone());
                }
                for (k, x) in o {
                    path.push(Step::Key(k.clone()));
                    collect(x, path, false, out);
                    path.pop();
                }
            }
            Value::Number(_) if in_array => out.elements.push(path.clone()),
            Value::Number(_) => out.fields.push(path.clone()),
            _ => {}
        }
    }

    fn at<'a>(v: &'a mut Value, path: &[Step]) -> &'a mut Value {
        path.iter().fold(v, |v, s| match s {
            Step::Key(k) => &mut v[k.as_str()],
            Step::Index(i) => &mut v[*i],
        })
    }

    /// One random change: an array shortened, lengthened or emptied; a number replaced by 0,
    /// -1, one more, one less or a huge value; a matrix's `rows` and `cols` swapped.
    /// The kind of node is drawn first (each kind equally likely), then the node, so that
    /// the many values of the stored matrices do not drown the structure.
    fn mangle(v: &Value, rng: &mut ChaCha8Rng, nodes: &Nodes) -> (Value, String) {
        let kinds: Vec<&Vec<Vec<Step>>> = [
            &nodes.arrays,
            &nodes.matrices,
            &nodes.fields,
            &nodes.elements,
        ]
        .into_iter()
        .filter(|k| !k.is_empty())
        .collect();
        let kind = kinds[rng.gen_range(0..kinds.len())];
        let mut out = v.clone();
        let path = &kind[rng.gen_range(0..kind.len())];
        let node = at(&mut out, path);
        let what = match node {
            Value::Array(a) => match rng.gen_range(0..3) {
                0 => {
                    a.pop();
                    "shortened"
                }
                1 => {
                    if let Some(x) = a.first().cloned() {
                        a.push(x);
                    }
                    "lengthened"
                }
                _ => {
                    a.clear();
                    "emptied"
                }
            },
            Value::Object(o) => {
                let (r, c) = (o["rows"].clone(), o["cols"].clone());
                o.insert("rows".into(), c);
                o.insert("cols".into(), r);
                "rows and cols swapped"
            }
            Value::Number(n) => {
                let x = n.as_f64().unwrap_or(0.0);
                let new = match rng.gen_range(0..6) {
                    0 => 0.0,
                    1 => -1.0,
                    2 => x + 1.0,
                    3 => x - 1.0,
                    4 => 1e9,
                    _ => 1e300,
                };
                // Integers stay integers where they can (indices, counts).
                *node = if n.is_f64() || new.fract() != 0.0 || !(0.0..=1e18).contains(&new) {
                    serde_json::json!(new)
                } else {
                    serde_json::json!(new as u64)
                };
                "number replaced"
            }
            _ => "unchanged",
        };
        (out, format!("{what} at {path:?}"))
    }

    /// Applies `count` single random changes to the JSON of a valid model. Each copy that
    /// still deserializes is validated; `validate` must not panic, and when it accepts a
    /// copy, `predict` must not panic either (it may return an error). Returns how many
    /// copies were refused by deserialization or validation and how many were accepted.
    pub(crate) fn check_copies<M: DeserializeOwned>(
        valid: &Value,
        count: usize,
        seed: u64,
        validate: impl Fn(&M) -> crate::Result<()>,
        predict: impl Fn(&M) -> crate::Result<crate::data::Matrix>,
    ) -> (usize, usize) {
        let mut nodes = Nodes::default();
        collect(valid, &mut Vec::new(), false, &mut nodes);
        assert!(!nodes.arrays.is_empty());
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (mut refused, mut accepted) = (0, 0);
        for _ in 0..count {
            let (v, what) = mangle(valid, &mut rng, &nodes);
            let Ok(m) = serde_json::from_value::<M>(v) else {
                refused += 1;
                continue;
            };
            let checked = catch_unwind(AssertUnwindSafe(|| validate(&m)))
                .unwrap_or_else(|_| panic!("validate panicked: {what}"));
            if checked.is_err() {
                refused += 1;
                continue;
            }
            accepted += 1;
            catch_unwind(AssertUnwindSafe(|| predict(&m)))
                .unwrap_or_else(|_| panic!("predict panicked after validate accepted: {what}"))
                .ok();
        }
        (refused, accepted)
    }
}

//! Degenerate data (issue 11, item 5), a test per case, for every learner family it applies
//! to: constant features, duplicated rows, one class only, one row, values near 1e300, a
//! kernel whose Gram matrix is all zeros. Each fit gives either a clear error (a typed one
//! whose message names the problem) or a sensible model: every weight and every prediction
//! finite, and a model file that loads back.

use multikernel::data::{Dataset, Matrix, SequenceData, Targets};
use multikernel::error::Error;
use multikernel::estimator::{
    fit, Budget, Fitted, GompSpec, Learner, LearnerSpec, LpMklSpec, OnlineSpec, OnlineSteps,
    PolySpec, Task,
};
use multikernel::model::Model;

/// A seeded generator (the data of every case is the same on every run).
struct Rng(rand_chacha::ChaCha8Rng);

impl Rng {
    fn normal_ish(&mut self) -> f64 {
        use rand::Rng as _;
        (0..4).map(|_| self.0.r#gen::<f64>()).sum::<f64>() - 2.0
    }
}

/// What a table's target column is.
#[derive(Clone, Copy, PartialEq)]
enum Target {
    /// Two classes by the sign of the first feature (or alternating when it is constant).
    Binary,
    /// Three classes.
    Three,
    /// Real values.
    Real,
}

/// Class targets from class numbers: the classes present, in order (as a reader gives them).
fn classes(y: &[usize]) -> Targets {
    let mut present: Vec<usize> = y.to_vec();
    present.sort_unstable();
    present.dedup();
    Targets::Classes {
        classes: present.iter().map(|c| format!("c{c}")).collect(),
        y: y.iter()
            .map(|c| present.binary_search(c).unwrap())
            .collect(),
    }
}

fn names(d: usize) -> Vec<String> {
    (0..d).map(|j| format!("f{j}")).collect()
}

/// A table from its rows; the targets from `target` (classes from the row index when
/// `by_index`).
fn table(rows: Vec<Vec<f64>>, target: Target) -> Dataset {
    let n = rows.len();
    let d = rows.first().map_or(0, Vec::len);
    let first: Vec<f64> = rows.iter().map(|r| r[0]).collect();
    let constant = first.iter().all(|v| *v == first[0]);
    let targets = match target {
        Target::Binary | Target::Three => {
            let k = if target == Target::Binary { 2 } else { 3 };
            let y: Vec<usize> = (0..n)
                .map(|i| {
                    if constant || !first[i].is_finite() {
                        i % k
                    } else if k == 2 {
                        usize::from(first[i] > 0.0)
                    } else {
                        usize::from(first[i] > -0.3) + usize::from(first[i] > 0.3)
                    }
                })
                .collect();
            classes(&y)
        }
        Target::Real => Targets::Real(
            rows.iter()
                .enumerate()
                .map(|(i, r)| {
                    if constant {
                        (i % 3) as f64
                    } else {
                        r.iter().map(|v| v.signum() * v.abs().min(1.0)).sum::<f64>()
                    }
                })
                .collect(),
        ),
    };
    Dataset {
        x: Matrix::from_rows(&rows),
        targets,
        feature_names: names(d),
    }
}

fn random_rows(n: usize, d: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = Rng(rand::SeedableRng::seed_from_u64(seed));
    (0..n)
        .map(|_| (0..d).map(|_| rng.normal_ish()).collect())
        .collect()
}

/// Every learner on a vector task: (label, task, spec). `kernels` for the kernel learners
/// (mirror descent and UCD take their base kernels from the features).
fn learners(target: Target, kernels: &[&str]) -> Vec<(String, LearnerSpec)> {
    let task = match target {
        Target::Binary => Task::Binary,
        Target::Three => Task::Multiclass,
        Target::Real => Task::Regression,
    };
    let ks: Vec<_> = kernels.iter().map(|k| k.parse().unwrap()).collect();
    let poly = PolySpec {
        degree: 2,
        budget: Budget::Iterations(20),
        ..PolySpec::default()
    };
    let mut out = vec![
        (
            "online",
            Learner::Online(OnlineSpec {
                steps: OnlineSteps {
                    epochs: 3,
                    ..OnlineSteps::default()
                },
                ..OnlineSpec::default()
            }),
        ),
        (
            "gomp",
            Learner::Gomp(GompSpec {
                max_kernels: 3,
                ..GompSpec::default()
            }),
        ),
        ("lp-mkl", Learner::LpMkl(LpMklSpec { p: 4.0 / 3.0 })),
    ];
    if target != Target::Three {
        // Mirror descent and UCD: one output (binary or regression).
        out.push(("mirror-descent", Learner::MirrorDescent(poly.clone())));
        out.push(("ucd", Learner::Ucd(poly)));
    }
    out.into_iter()
        .map(|(name, l)| {
            let kernels = if matches!(l, Learner::MirrorDescent(_) | Learner::Ucd(_)) {
                Vec::new()
            } else {
                ks.clone()
            };
            (
                format!("{name} {}", task.name()),
                LearnerSpec::new(task, l).with_kernels(kernels).with_seed(2),
            )
        })
        .collect()
}

/// Whether a JSON value holds a `null` inside an array (serde_json writes NaN and infinities
/// as `null`, so a non-finite weight shows up as one).
fn null_in_array(v: &serde_json::Value, inside: bool) -> bool {
    match v {
        serde_json::Value::Null => inside,
        serde_json::Value::Array(a) => a.iter().any(|x| null_in_array(x, true)),
        serde_json::Value::Object(o) => o.values().any(|x| null_in_array(x, false)),
        _ => false,
    }
}

/// A model is sensible: its weights and its predictions on `x` are finite, its file loads
/// back and predicts the same.
fn assert_sensible(label: &str, m: &Model, x: &Matrix) -> Result<(), String> {
    let bytes = m
        .to_bytes()
        .map_err(|e| format!("{label}: to_bytes: {e}"))?;
    let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    if null_in_array(&json, false) {
        return Err(format!("{label}: a non-finite number in the model file"));
    }
    for row in &m.summary().kernels {
        if row.values.iter().any(|v| !v.is_finite()) {
            return Err(format!("{label}: kernel {} has {:?}", row.name, row.values));
        }
    }
    let back = Model::from_bytes(&bytes).map_err(|e| format!("{label}: reload: {e}"))?;
    let f = m
        .decision_function(x.view())
        .map_err(|e| format!("{label}: decision function: {e}"))?;
    if f.data.iter().any(|v| !v.is_finite()) {
        return Err(format!(
            "{label}: non-finite decision values {:?}",
            &f.data[..f.data.len().min(6)]
        ));
    }
    if let Targets::Real(v) = m.predict(x.view()).map_err(|e| format!("{label}: {e}"))? {
        if v.iter().any(|p| !p.is_finite()) {
            return Err(format!("{label}: non-finite predictions"));
        }
    }
    let g = back.decision_function(x.view()).unwrap();
    if g.data != f.data {
        return Err(format!("{label}: the reloaded model predicts differently"));
    }
    Ok(())
}

/// A clear error: a typed variant (not a model-file or I/O error) whose message contains one
/// of `words`.
fn assert_clear(label: &str, e: &Error, words: &[&str]) -> Result<(), String> {
    let typed = matches!(
        e,
        Error::Data(_)
            | Error::Numerical(_)
            | Error::InvalidParameter { .. }
            | Error::ShapeMismatch { .. }
            | Error::Unsupported(_)
    );
    let msg = e.to_string();
    if typed && words.iter().any(|w| msg.contains(w)) {
        Ok(())
    } else {
        Err(format!("{label}: unclear error {e:?}"))
    }
}

/// Fits every spec on `data` and checks each outcome: a sensible model, or an error naming
/// one of `words` (only when `error_ok`). Collects every failure, then fails once.
fn check_all(case: &str, data: &Dataset, specs: Vec<(String, LearnerSpec)>, words: &[&str]) {
    let mut failures = Vec::new();
    for (label, spec) in specs {
        let label = format!("{case}, {label}");
        let r: multikernel::Result<Fitted> = fit(data, &spec, &());
        let verdict = match &r {
            Ok(f) => assert_sensible(&label, &f.model, &data.x),
            Err(e) => assert_clear(&label, e, words),
        };
        match verdict {
            Ok(()) => eprintln!(
                "{label}: {}",
                match &r {
                    Ok(_) => "a model".to_string(),
                    Err(e) => format!("error: {e}"),
                }
            ),
            Err(f) => failures.push(f),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The same specs without standardization (the kernels see the raw values).
fn unstandardized(specs: Vec<(String, LearnerSpec)>) -> Vec<(String, LearnerSpec)> {
    specs
        .into_iter()
        .map(|(l, mut s)| {
            s.standardize = false;
            (format!("{l} unstandardized"), s)
        })
        .collect()
}

const KERNELS: &[&str] = &["rbf", "linear", "poly:degree=2"];

#[test]
fn constant_features() {
    for target in [Target::Binary, Target::Three, Target::Real] {
        // Every feature constant.
        let rows = vec![vec![2.5, -1.0, 0.0]; 30];
        let d = table(rows, target);
        check_all(
            "all features constant",
            &d,
            learners(target, KERNELS),
            &["constant"],
        );
        check_all(
            "all features constant",
            &d,
            unstandardized(learners(target, KERNELS)),
            &["constant"],
        );
        // One constant column among informative ones.
        let mut rows = random_rows(30, 3, 1);
        for r in &mut rows {
            r[1] = 7.0;
        }
        check_all(
            "a constant feature",
            &table(rows, target),
            learners(target, &["perfeature:linear", "rbf"]),
            &[],
        );
    }
}

#[test]
fn duplicated_rows() {
    for target in [Target::Binary, Target::Three, Target::Real] {
        let base = random_rows(15, 4, 2);
        let rows: Vec<Vec<f64>> = base
            .iter()
            .flat_map(|r| [r.clone(), r.clone(), r.clone()])
            .collect();
        check_all(
            "every row three times",
            &table(rows, target),
            learners(target, KERNELS),
            &[],
        );
    }
}

#[test]
fn one_class_only() {
    for target in [Target::Binary, Target::Three] {
        let mut d = table(random_rows(20, 3, 3), target);
        d.targets = classes(&[1; 20]);
        check_all("one class only", &d, learners(target, KERNELS), &["class"]);
    }
    // Regression's analogue: a constant target.
    let mut d = table(random_rows(20, 3, 3), Target::Real);
    d.targets = Targets::Real(vec![4.0; 20]);
    check_all(
        "a constant target",
        &d,
        learners(Target::Real, KERNELS),
        &[],
    );
}

#[test]
fn one_row() {
    for target in [Target::Binary, Target::Three, Target::Real] {
        let d = table(random_rows(1, 3, 4), target);
        check_all(
            "one row",
            &d,
            learners(target, KERNELS),
            &["class", "two rows"],
        );
    }
}

#[test]
fn values_near_1e300() {
    for target in [Target::Binary, Target::Three, Target::Real] {
        let rows: Vec<Vec<f64>> = random_rows(30, 3, 5)
            .into_iter()
            .map(|r| r.into_iter().map(|v| v * 1e300).collect())
            .collect();
        let d = table(rows, target);
        let words = ["too large"];
        check_all("values near 1e300", &d, learners(target, KERNELS), &words);
        check_all(
            "values near 1e300",
            &d,
            unstandardized(learners(target, KERNELS)),
            &words,
        );
    }
}

/// Regression targets near 1e300 (the features ordinary).
#[test]
fn targets_near_1e300() {
    let mut d = table(random_rows(30, 3, 10), Target::Real);
    if let Targets::Real(y) = &mut d.targets {
        y.iter_mut().for_each(|v| *v *= 1e300);
    }
    check_all(
        "targets near 1e300",
        &d,
        learners(Target::Real, KERNELS),
        &["too large"],
    );
}

#[test]
fn all_zero_gram_matrix() {
    for target in [Target::Binary, Target::Three, Target::Real] {
        // A feature that is zero everywhere: linear kernels on it are 0 everywhere.
        let mut rows = random_rows(30, 2, 6);
        for r in &mut rows {
            r[1] = 0.0;
        }
        let zero_only: Vec<Vec<f64>> = rows.iter().map(|r| vec![0.0 * r[0]]).collect();
        let mut only = table(zero_only, target);
        // Targets from the informative feature (the table's own would be alternating).
        only.targets = table(rows.clone(), target).targets;
        let both = table(rows, target);
        for norm in ["none", "trace", "diag", "variance"] {
            let k = format!("linear:norm={norm}");
            let unstd = |specs: Vec<(String, LearnerSpec)>| {
                specs
                    .into_iter()
                    .map(|(l, mut s)| {
                        s.standardize = false;
                        (format!("{l} {k}"), s)
                    })
                    .collect::<Vec<_>>()
            };
            check_all(
                "only a zero Gram matrix",
                &only,
                unstd(learners(target, &[&k])),
                &["zero", "constant"],
            );
            check_all(
                "a zero Gram matrix among others",
                &both,
                unstd(learners(target, &["perfeature:linear", &k])),
                &[],
            );
        }
    }
}

/// Sequences (the online learner, SPOM): constant features, one label only, one sequence of
/// one position, values near 1e300, an all-zero feature.
#[test]
fn degenerate_sequences() {
    let spec = |kernels: &[&str]| {
        LearnerSpec::new(
            Task::Sequence,
            Learner::Online(OnlineSpec {
                steps: OnlineSteps {
                    epochs: 2,
                    ..OnlineSteps::default()
                },
                ..OnlineSpec::default()
            }),
        )
        .with_kernels(kernels.iter().map(|k| k.parse().unwrap()).collect())
    };
    let seqs = |x: Vec<Vec<f64>>, labels: Vec<usize>, lens: &[usize]| {
        let mut spans = Vec::new();
        let mut at = 0;
        for &l in lens {
            spans.push(at..at + l);
            at += l;
        }
        let d = x[0].len();
        SequenceData::new(
            Matrix::from_rows(&x),
            labels,
            spans,
            vec!["a".into(), "b".into()],
            names(d),
            None,
        )
        .unwrap()
    };
    let lens = [3, 4, 2, 5, 3, 3];
    let n: usize = lens.iter().sum();
    let labels: Vec<usize> = (0..n).map(|i| i % 2).collect();
    let cases: Vec<(&str, SequenceData, &[&str])> = vec![
        (
            "constant features",
            seqs(vec![vec![1.0, 3.0]; n], labels.clone(), &lens),
            &["constant"],
        ),
        (
            "one label only",
            seqs(random_rows(n, 2, 7), vec![0; n], &lens),
            &["label", "class"],
        ),
        (
            "one position",
            seqs(random_rows(1, 2, 8), vec![1], &[1]),
            &["label", "class"],
        ),
        (
            "values near 1e300",
            seqs(
                random_rows(n, 2, 9)
                    .into_iter()
                    .map(|r| r.into_iter().map(|v| v * 1e300).collect())
                    .collect(),
                labels.clone(),
                &lens,
            ),
            &["too large"],
        ),
        (
            "an all-zero feature",
            seqs(vec![vec![0.0]; n], labels, &lens),
            &["zero", "constant"],
        ),
    ];
    let mut failures = Vec::new();
    for (case, data, words) in cases {
        for kernels in [&["linear:norm=diag"][..], &["linear", "rbf"], &["bspline"]] {
            let label = format!("sequences, {case}, {kernels:?}");
            let x = data.x.clone();
            match fit(&data, &spec(kernels), &()) {
                Ok(f) => {
                    let m = &f.model;
                    let verdict = (|| {
                        let bytes = m.to_bytes().map_err(|e| e.to_string())?;
                        let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
                        if null_in_array(&json, false) {
                            return Err("a non-finite number in the model file".to_string());
                        }
                        Model::from_bytes(&bytes).map_err(|e| e.to_string())?;
                        m.predict_sequences_with(x.view(), &data.spans, &Default::default())
                            .map_err(|e| e.to_string())?;
                        Ok(())
                    })();
                    match verdict {
                        Ok(()) => eprintln!("{label}: a model"),
                        Err(e) => failures.push(format!("{label}: {e}")),
                    }
                }
                Err(e) => match assert_clear(&label, &e, words) {
                    Ok(()) => eprintln!("{label}: error: {e}"),
                    Err(f) => failures.push(f),
                },
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

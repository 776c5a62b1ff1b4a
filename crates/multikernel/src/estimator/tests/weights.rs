//! Row weights (`TableRef::with_weights`) against slow twins: an integer weight is the row
//! repeated, a zero weight the row dropped, weights all 1 the unweighted model (byte for
//! byte); bad weights and the learners that do not take them are refused.

use crate::data::{Dataset, Matrix, TableRef, Targets};
use crate::error::Error;
use crate::estimator::fit;
use crate::estimator::spec::{
    GompSpec, Learner, LearnerKind, LearnerSpec, LpMklSpec, Task, WrapperSpec,
};
use crate::estimator::{AutoConfig, FitRequest};
use crate::model::Model;
use crate::solver::smo::{svc_from, SmoParams};
use rand::{Rng, SeedableRng};

/// `n` rows of 2 features, two classes by a noisy circle, labels as `Targets::Classes`.
fn table(n: usize, seed: u64) -> Dataset {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut x = Matrix::zeros(n, 2);
    let mut y = Vec::new();
    for i in 0..n {
        let (a, b): (f64, f64) = (rng.gen_range(-2.0..2.0), rng.gen_range(-2.0..2.0));
        x.set(i, 0, a);
        x.set(i, 1, b);
        let noise: f64 = rng.gen_range(-0.5..0.5);
        y.push(usize::from(a * a + b * b + noise > 2.0));
    }
    Dataset {
        x,
        targets: Targets::Classes {
            classes: vec!["in".into(), "out".into()],
            y,
        },
        feature_names: vec!["a".into(), "b".into()],
    }
}

/// The rows of `d` each repeated `k[i]` times (dropped at 0).
fn repeated(d: &Dataset, k: &[usize]) -> Dataset {
    let idx: Vec<usize> = (0..d.len())
        .flat_map(|i| std::iter::repeat_n(i, k[i]))
        .collect();
    d.select(&idx)
}

/// Fixed kernels (no data-dependent width or normalization) and no standardization, so that
/// repeating rows changes nothing but the loss.
fn spec(learner: Learner, kernels: &[&str]) -> LearnerSpec {
    let mut s = LearnerSpec::new(Task::Binary, learner)
        .with_kernels(kernels.iter().map(|k| k.parse().unwrap()).collect())
        .with_c(3.0);
    s.standardize = false;
    s
}

fn lp_mkl_spec(kernels: &[&str]) -> LearnerSpec {
    spec(Learner::LpMkl(LpMklSpec { p: 2.0 }), kernels)
}

fn svm_spec() -> LearnerSpec {
    spec(
        Learner::SimpleMkl(WrapperSpec {
            svm_tol: 1e-11,
            ..WrapperSpec::default()
        }),
        &["rbf:sigma2=1,norm=none"],
    )
}

fn fit_model(t: TableRef<'_>, s: &LearnerSpec) -> Model {
    fit(t, s, &()).unwrap().model
}

fn decision(m: &Model, x: &Matrix) -> Vec<f64> {
    m.decision_function(x.view()).unwrap().data
}

fn assert_close(a: &[f64], b: &[f64], tol: f64, what: &str) {
    assert_eq!(a.len(), b.len());
    let worst = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    assert!(worst <= tol, "{what}: decision values differ by {worst:e}");
}

/// Integer weights 0..=3 (at least one row of each).
fn counts(n: usize) -> Vec<usize> {
    (0..n).map(|i| (i * 7 + 3) % 4).collect()
}

#[test]
fn integer_weights_are_repeated_rows_for_lp_mkl_and_the_svm() {
    let data = table(30, 1);
    let held = table(12, 2);
    let k = counts(data.len());
    let w: Vec<f64> = k.iter().map(|&v| v as f64).collect();
    let rep = repeated(&data, &k);
    let kernel_sets: [&[&str]; 3] = [
        // dense + factor (the dense solve), a factor only (Woodbury), one dense kernel
        &["rbf:sigma2=2,norm=none", "linear:norm=none"],
        &["linear:norm=none"],
        &["rbf:sigma2=1,norm=none"],
    ];
    // The weighted fit against the fit on the repeated rows, on held-out rows.
    let same = |s: &LearnerSpec, what: &str| {
        let weighted = fit_model(data.view().with_weights(&w).unwrap(), s);
        let twin = fit_model(rep.view(), s);
        assert_close(
            &decision(&weighted, &held.x),
            &decision(&twin, &held.x),
            1e-6,
            what,
        );
    };
    for kernels in kernel_sets {
        for bias in [true, false] {
            let mut s = lp_mkl_spec(kernels);
            s.bias = bias;
            same(&s, &format!("lp-MKL {kernels:?} bias {bias}"));
        }
    }
    same(&svm_spec(), "the SVM (SimpleMKL, one kernel)");
}

/// The SMO solver alone: per-row boxes `C w_i` against the repeated rows' kernel matrix.
#[test]
fn smo_with_row_boxes_is_the_svm_on_repeated_rows() {
    let data = table(25, 3);
    let k = counts(data.len());
    let w: Vec<f64> = k.iter().map(|&v| v as f64).collect();
    let idx: Vec<usize> = (0..data.len())
        .flat_map(|i| std::iter::repeat_n(i, k[i]))
        .collect();
    let gram = |rows: &[usize], cols: &[usize]| {
        let mut g = Matrix::zeros(rows.len(), cols.len());
        for (a, &i) in rows.iter().enumerate() {
            for (b, &j) in cols.iter().enumerate() {
                let d2: f64 = (0..2)
                    .map(|c| (data.x.get(i, c) - data.x.get(j, c)).powi(2))
                    .sum();
                g.set(a, b, (-d2 / 2.0).exp());
            }
        }
        g
    };
    let all: Vec<usize> = (0..data.len()).collect();
    let y: Vec<f64> = match &data.targets {
        Targets::Classes { y, .. } => y.iter().map(|&c| if c == 1 { 1.0 } else { -1.0 }).collect(),
        Targets::Real(_) => unreachable!(),
    };
    let yr: Vec<f64> = idx.iter().map(|&i| y[i]).collect();
    let params = SmoParams {
        tol: 1e-11,
        ..SmoParams::default()
    };
    let weighted = svc_from(
        gram(&all, &all).view(),
        &y,
        2.0,
        Some(&w),
        None,
        &params,
        &(),
    )
    .unwrap();
    let twin = svc_from(gram(&idx, &idx).view(), &yr, 2.0, None, None, &params, &()).unwrap();
    let probe: Vec<usize> = (0..data.len()).collect();
    let f1 = weighted.decision(gram(&probe, &all).view()).unwrap();
    let f2 = twin.decision(gram(&probe, &idx).view()).unwrap();
    assert_close(&f1, &f2, 1e-6, "SMO");
    assert!(weighted.gap.abs() < 1e-6, "gap {}", weighted.gap);
    // Rows of weight 0 have no coefficient.
    for (i, &c) in weighted.coef.iter().enumerate() {
        if k[i] == 0 {
            assert_eq!(c, 0.0);
        }
    }
}

#[test]
fn a_zero_weight_drops_the_row() {
    let data = table(24, 4);
    let held = table(10, 5);
    let mut w = vec![1.0; data.len()];
    let dropped = [2usize, 9, 17];
    for &i in &dropped {
        w[i] = 0.0;
    }
    let kept: Vec<usize> = (0..data.len()).filter(|i| !dropped.contains(i)).collect();
    let rest = data.select(&kept);
    for (s, what) in [
        (
            lp_mkl_spec(&["rbf:sigma2=2,norm=none", "linear:norm=none"]),
            "lp-MKL",
        ),
        (svm_spec(), "the SVM"),
    ] {
        let weighted = fit_model(data.view().with_weights(&w).unwrap(), &s);
        let twin = fit_model(rest.view(), &s);
        assert_close(
            &decision(&weighted, &held.x),
            &decision(&twin, &held.x),
            1e-6,
            what,
        );
    }
}

#[test]
fn weights_all_one_give_the_unweighted_model_byte_for_byte() {
    let data = table(20, 6);
    let ones = vec![1.0; data.len()];
    let online = {
        let mut s = LearnerSpec::new(Task::Binary, Learner::default_for(LearnerKind::Online))
            .with_kernels(vec!["rbf:sigma2=1,norm=none".parse().unwrap()]);
        if let Learner::Online(o) = &mut s.learner {
            o.steps.epochs = 3;
        }
        s
    };
    for s in [
        lp_mkl_spec(&["rbf:sigma2=2,norm=none", "linear:norm=none"]),
        svm_spec(),
        online,
    ] {
        let plain = fit_model(data.view(), &s).to_bytes().unwrap();
        let weighted = fit_model(data.view().with_weights(&ones).unwrap(), &s)
            .to_bytes()
            .unwrap();
        assert!(plain == weighted, "{:?}", s.learner.kind());
    }
}

#[test]
fn bad_weights_and_learners_without_them_are_refused() {
    let data = table(12, 7);
    let n = data.len();
    let t = data.view();
    let msg = |w: Vec<f64>| t.with_weights(&w).map(|_| ()).unwrap_err().to_string();
    let mut nan = vec![1.0; n];
    nan[3] = f64::NAN;
    assert!(msg(nan).contains("row 4"));
    let mut neg = vec![1.0; n];
    neg[0] = -1.0;
    assert!(msg(neg).contains(">= 0"));
    assert!(msg(vec![0.0; n]).contains("at least one positive"));
    assert!(matches!(
        t.with_weights(&[1.0; 3]),
        Err(Error::ShapeMismatch { .. })
    ));
    let w: Vec<f64> = (0..n).map(|i| 1.0 + i as f64).collect();
    let s = LearnerSpec::new(Task::Binary, Learner::Gomp(GompSpec::default()));
    let e = fit(t.with_weights(&w).unwrap(), &s, &())
        .unwrap_err()
        .to_string();
    assert!(e.contains("gomp") && e.contains("lp-mkl"), "{e}");
}

/// The built-in selection takes weights (the folds' training rows keep theirs) and the
/// online learner trains on them.
#[test]
fn the_selection_and_the_online_learner_take_weights() {
    let data = table(40, 8);
    let w: Vec<f64> = (0..data.len()).map(|i| [0.5, 1.0, 2.0][i % 3]).collect();
    let mut s = lp_mkl_spec(&["rbf:sigma2=1,norm=none", "linear:norm=none"]);
    s.learner = Learner::default_for(LearnerKind::LpMkl);
    let cfg = AutoConfig {
        c_grid: vec![1.0, 10.0],
        ..AutoConfig::default()
    };
    let fitted = fit(
        data.view().with_weights(&w).unwrap(),
        FitRequest::new(&s).select(Some(&cfg)),
        &(),
    )
    .unwrap();
    assert!(fitted.model.decision_function(data.x.view()).is_ok());
    let mut o = LearnerSpec::new(Task::Binary, Learner::default_for(LearnerKind::Online))
        .with_kernels(vec!["rbf:sigma2=1,norm=none".parse().unwrap()]);
    if let Learner::Online(on) = &mut o.learner {
        on.steps.epochs = 3;
    }
    let a = fit_model(data.view().with_weights(&w).unwrap(), &o);
    let b = fit_model(data.view(), &o);
    assert_ne!(decision(&a, &data.x), decision(&b, &data.x));
}

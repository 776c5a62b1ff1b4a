//! The online proximal learner (Alg. 1 of martins2011) against a slow, explicit twin, and its
//! behaviour on the shipped UCI tables.
#![allow(clippy::needless_range_loop)]

use crate::data::{read_table, Matrix, TargetKind, Targets};
use crate::kernel::{FittedKernel, Gram, KernelKind, KernelSpec, MemoryLimit, Normalization};
use crate::pipeline::table::vector::{fit_vector, VectorFitConfig};
use crate::prox::{Groups, RegSpec};
use crate::solver::online::{OnlineLearner, OnlineParams, OnlineSteps, StepSchedule};
use crate::task::TaskKind;
use crate::task::{Loss, VectorTask};
use rand::{Rng, SeedableRng};
use std::path::PathBuf;

/// The test metric of a kernel machine (accuracy for classes, as `reproduce uci` scores it).
fn score(
    model: &crate::pipeline::table::vector_model::KernelMachine,
    test: &crate::data::Dataset,
) -> f64 {
    let pred = model
        .predict(test.x.view(), &MemoryLimit::default())
        .unwrap();
    crate::task::prediction_metric(&pred, &test.targets).1
}

fn uci(name: &str, target: TargetKind) -> crate::data::Dataset {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../data/uci/{name}.csv"));
    read_table(&p, None, target, None, None).unwrap()
}

/// Alg. 1 written out on explicit weight vectors: theta = (theta_1, ..., theta_M), theta_m in
/// R^{|features_m|}, score f(x) = sum_m theta_m . x[features_m] + b. Same step sizes, same
/// order of examples, prox through the regularizer's own `prox` on the explicit vector.
fn explicit_alg1(
    x: &Matrix,
    y: &[f64],
    groups: &[Vec<usize>],
    loss: Loss,
    p: &OnlineParams,
) -> (Vec<f64>, f64) {
    let dim: usize = groups.iter().map(|g| g.len()).sum();
    let sizes: Vec<usize> = groups.iter().map(|g| g.len()).collect();
    let gr = Groups::contiguous(&sizes);
    let reg = p.reg.build();
    let feat = |i: usize| -> Vec<f64> {
        groups
            .iter()
            .flat_map(|g| g.iter().map(move |&j| x.get(i, j)))
            .collect()
    };
    let mut theta = vec![0.0; dim];
    let mut b = 0.0;
    let l0 = y.iter().map(|&t| loss.at_zero(t, 1)).sum::<f64>() / y.len() as f64;
    let gamma = (2.0 * l0 / p.lambda).sqrt();
    let mut t = 0u64;
    for _ in 0..p.steps.epochs {
        for i in 0..y.len() {
            let phi = feat(i);
            let f: f64 = theta.iter().zip(&phi).map(|(a, c)| a * c).sum::<f64>() + b;
            let mut g = [0.0];
            loss.eval(&[f], y[i], &mut g);
            t += 1;
            let eta = p.steps.eta0 / (t as f64).sqrt();
            for (th, ph) in theta.iter_mut().zip(&phi) {
                *th -= eta * g[0] * ph;
            }
            b -= eta * g[0];
            for step in reg.steps() {
                step.apply(&mut theta, &gr, eta * p.lambda);
            }
            let norm = theta.iter().map(|v| v * v).sum::<f64>().sqrt();
            if norm > gamma {
                theta.iter_mut().for_each(|v| *v *= gamma / norm);
            }
        }
    }
    let scores = (0..y.len())
        .map(|i| theta.iter().zip(feat(i)).map(|(a, c)| a * c).sum::<f64>() + b)
        .collect();
    (scores, b)
}

/// The kernelized learner (coefficients on training points, per-group scales, cached scores,
/// norms updated by the formula of Sec. 3.4) gives the same model as the explicit twin.
#[test]
fn kernelized_learner_equals_explicit_twin() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let (n, d) = (40, 6);
    let x = Matrix::from_vec(n, d, (0..n * d).map(|_| rng.gen_range(-1.0..1.0)).collect());
    let y: Vec<f64> = (0..n)
        .map(|i| {
            if x.get(i, 0) + 0.5 * x.get(i, 3) > 0.1 {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    let groups = vec![vec![0, 1], vec![2], vec![3, 4, 5]];
    let names: Vec<String> = (0..d).map(|j| format!("x{j}")).collect();
    for (reg, loss) in [
        (RegSpec::L21Sq, Loss::Hinge),
        (RegSpec::L21, Loss::Logistic),
        (RegSpec::L2q { q: 4.0 / 3.0 }, Loss::Squared),
        (RegSpec::Elastic { sigma: 0.3 }, Loss::Hinge),
        (RegSpec::L2, Loss::Logistic),
    ] {
        let params = OnlineParams {
            lambda: 0.05,
            reg: reg.clone(),
            steps: OnlineSteps {
                eta0: 0.7,
                schedule: StepSchedule::InvSqrt,
                epochs: 4,
                averaging: false,
                projection: true,
                shards: 1,
                batch: 1,
                ..OnlineSteps::default()
            },
            seed: 0,
            shuffle: false,
        };
        let grams: Vec<Gram> = groups
            .iter()
            .map(|g| {
                let spec = KernelSpec {
                    kind: KernelKind::Linear,
                    norm: Normalization::None,
                    perfeature: false,
                    features: Some(g.clone()),
                    approx: None,
                };
                FittedKernel::fit(&spec, &x, &names, 0)
                    .unwrap()
                    .gram_sym(&x, &MemoryLimit::default())
                    .unwrap()
            })
            .collect();
        let task = VectorTask::new(loss, y.clone(), 1, true);
        let learner = OnlineLearner::new(&task, &grams, params.clone()).unwrap();
        let (state, _) = learner
            .run(&(), &mut |_, _| crate::run::Control::Continue)
            .unwrap();
        let coefs = state.kernel_coefs(false);
        let bias = state.explicit_values(false)[0][0];
        let (want, want_b) = explicit_alg1(&x, &y, &groups, loss, &params);
        assert!(
            (bias - want_b).abs() < 1e-9,
            "{reg}: bias {bias} vs {want_b}"
        );
        for i in 0..n {
            let mut f = bias;
            for (g, a) in grams.iter().zip(&coefs) {
                f += g.row_dot(i, a);
            }
            assert!(
                (f - want[i]).abs() < 1e-8 * (1.0 + want[i].abs()),
                "{reg} {loss}: point {i}: {f} vs {}",
                want[i]
            );
        }
        // Norms maintained by the Sec. 3.4 formula equal the recomputed ones.
        for (m, (g, a)) in grams.iter().zip(&coefs).enumerate() {
            let exact = (0..n).map(|i| a[i] * g.row_dot(i, a)).sum::<f64>().sqrt();
            let kept = state.kernel[m].norm();
            assert!(
                (exact - kept).abs() < 1e-7 * (1.0 + exact),
                "{reg}: group {m} norm {kept} vs {exact}"
            );
        }
    }
}

/// The average of the iterates kept lazily equals the explicit average of the per-round models.
#[test]
fn averaged_model_is_the_mean_of_iterates() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let (n, d) = (25, 3);
    let x = Matrix::from_vec(n, d, (0..n * d).map(|_| rng.gen_range(-1.0..1.0)).collect());
    let y: Vec<f64> = (0..n)
        .map(|i| if x.get(i, 1) > 0.0 { 1.0 } else { -1.0 })
        .collect();
    let names: Vec<String> = (0..d).map(|j| format!("x{j}")).collect();
    let g = FittedKernel::fit(&"rbf:sigma2=1".parse().unwrap(), &x, &names, 0)
        .unwrap()
        .gram_sym(&x, &MemoryLimit::default())
        .unwrap();
    let grams = vec![g.clone(), g];
    let params = OnlineParams {
        lambda: 0.1,
        reg: RegSpec::L21Sq,
        steps: OnlineSteps {
            eta0: 1.0,
            epochs: 3,
            averaging: true,
            ..OnlineSteps::default()
        },
        shuffle: true,
        ..OnlineParams::default()
    };
    let task = VectorTask::new(Loss::Hinge, y, 1, true);
    // Run round by round, summing the current models explicitly.
    let mut learner = OnlineLearner::new(&task, &grams, params.clone()).unwrap();
    let mut sum = vec![vec![0.0; n]; 2];
    let mut grad = Default::default();
    let mut scores = Vec::new();
    let mut rounds = 0;
    for _ in 0..3 {
        for i in 0..n {
            learner.round((i * 7) % n, &mut grad, &mut scores);
            rounds += 1;
            for (s, c) in sum.iter_mut().zip(learner.state().kernel_coefs(false)) {
                for (a, b) in s.iter_mut().zip(c) {
                    *a += b;
                }
            }
        }
    }
    let avg = learner.state().kernel_coefs(true);
    for m in 0..2 {
        for j in 0..n {
            let want = sum[m][j] / rounds as f64;
            assert!((avg[m][j] - want).abs() < 1e-10 * (1.0 + want.abs()));
        }
    }
}

fn three_kernel_config(
    task: TaskKind,
    reg: RegSpec,
    c: f64,
    n: usize,
    epochs: usize,
) -> VectorFitConfig {
    VectorFitConfig {
        task,
        loss: crate::task::vector::default_loss(task),
        kernels: [
            "linear:norm=trace",
            "poly:degree=2,offset=1,norm=trace",
            "rbf:norm=trace",
        ]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect(),
        params: OnlineParams {
            lambda: 1.0 / (c * n as f64),
            reg,
            steps: OnlineSteps {
                eta0: 1.0,
                schedule: StepSchedule::InvSqrt,
                epochs,
                averaging: false,
                projection: true,
                shards: 1,
                batch: 1,
                ..OnlineSteps::default()
            },
            seed: 1,
            shuffle: true,
        },
        bias: true,
        standardize: true,
        memory: MemoryLimit::default(),
        explicit_linear: true,
    }
}

/// The reported objective goes down over the epochs on every UCI table (first vs last epoch,
/// and the last below the zero model's objective L(0)).
#[test]
fn objective_goes_down_on_every_uci_table() {
    for (name, task) in [
        ("sonar", TaskKind::Binary),
        ("ionosphere", TaskKind::Binary),
        ("breast-cancer", TaskKind::Binary),
        ("pima-diabetes", TaskKind::Binary),
        ("glass", TaskKind::Multiclass),
        ("boston-housing", TaskKind::Regression),
    ] {
        let target = if task == TaskKind::Regression {
            TargetKind::Real
        } else {
            TargetKind::Classes
        };
        let data = uci(name, target);
        let cfg = three_kernel_config(task, RegSpec::L21Sq, 10.0, data.len(), 15);
        let (_, info) = fit_vector(data.view(), &cfg, &()).unwrap();
        let objectives: Vec<f64> = info.trace.iter().map(|t| t.objective).collect();
        assert_eq!(objectives.len(), 15);
        let zero = match task {
            TaskKind::Regression => 0.5, // standardized targets: mean y^2 / 2
            _ => 1.0,
        };
        let (first, last) = (objectives[0], *objectives.last().unwrap());
        assert!(last < first, "{name}: objective {first} -> {last}");
        assert!(
            last < zero,
            "{name}: final objective {last} not below L(0) = {zero}"
        );
    }
}

/// With a large lambda, squared l2,1 (sparse MKL) sets some kernel weights exactly to zero:
/// one linear kernel per feature of sonar.
#[test]
fn large_lambda_zeroes_kernels() {
    let data = uci("sonar", TargetKind::Classes);
    let mut cfg = three_kernel_config(TaskKind::Binary, RegSpec::L21Sq, 0.01, data.len(), 20);
    cfg.kernels = vec!["perfeature:linear".parse().unwrap()];
    let m = fit_vector(data.view(), &cfg, &()).unwrap().0;
    assert_eq!(m.weights.len(), 60);
    let zeros = m.weights.iter().filter(|w| **w == 0.0).count();
    assert!(zeros >= 1, "weights {:?}", m.weights);
    assert!(
        m.weights.iter().any(|w| *w > 0.0),
        "weights {:?}",
        m.weights
    );
    assert!((m.weights.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    // Kernels with weight zero carry no weights in the model (the per-feature linear
    // kernels are explicit groups: weights W, no support coefficients).
    assert!(m.coef.iter().all(Vec::is_empty));
    for (w, p) in m.weights.iter().zip(&m.primal) {
        assert_eq!(*w == 0.0, p.is_empty());
    }
    assert_eq!(m.support.rows, 0);
    // A smaller lambda keeps more kernels.
    let mut cfg_small = cfg.clone();
    cfg_small.params.lambda /= 100.0;
    let m2 = fit_vector(data.view(), &cfg_small, &()).unwrap().0;
    let zeros2 = m2.weights.iter().filter(|w| **w == 0.0).count();
    assert!(
        zeros2 < zeros,
        "{zeros2} zero weights at small lambda vs {zeros}"
    );
}

/// A model learned on ionosphere predicts clearly better than chance on held-out rows, and
/// survives a save/load round trip unchanged.
#[test]
fn model_generalizes_and_round_trips() {
    let data = uci("ionosphere", TargetKind::Classes);
    let Targets::Classes { y, .. } = &data.targets else {
        unreachable!()
    };
    let (tr, te) = crate::data::split::stratified_split(y, 0.7, 4);
    let train = data.select(&tr);
    let test = data.select(&te);
    let cfg = three_kernel_config(TaskKind::Binary, RegSpec::L21Sq, 10.0, train.len(), 20);
    let m = fit_vector(train.view(), &cfg, &()).unwrap().0;
    let acc = score(&m, &test);
    assert!(acc > 0.85, "accuracy {acc}");
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.json");
    crate::model::Model::KernelMachine(m.clone())
        .save(&p)
        .unwrap();
    let crate::model::Model::KernelMachine(back) = crate::model::Model::load(&p).unwrap() else {
        panic!("not a kernel machine")
    };
    assert_eq!(back, m);
    // A wrong version is refused with a clear message.
    let text = std::fs::read_to_string(&p)
        .unwrap()
        .replace("\"version\":2", "\"version\":99");
    std::fs::write(&p, text).unwrap();
    let e = crate::model::Model::load(&p).unwrap_err().to_string();
    assert!(e.contains("version 99"), "{e}");
}

/// A stop requested before the training starts ends the run before its Gram matrices are
/// computed (so Ctrl-C during a selection's refit is not held up by them) and still returns
/// a usable model: zero kernel weights, the bias alone.
#[test]
fn a_stop_before_the_start_skips_the_gram_matrices_and_returns_a_usable_model() {
    use crate::estimator::{fit, Learner, LearnerSpec, OnlineSpec, Task};
    use crate::run::{RunStatus, StopFlag};
    let data = uci("sonar", TargetKind::Classes);
    let spec = LearnerSpec::new(Task::Binary, Learner::Online(OnlineSpec::default()))
        .with_kernels(vec!["rbf".parse().unwrap(), "linear".parse().unwrap()]);
    let stop = StopFlag::new();
    stop.stop();
    let fitted = fit(&data, &spec, &stop).unwrap();
    assert_eq!(fitted.run.status, RunStatus::Cancelled);
    assert_eq!(fitted.run.steps, 0);
    let f = fitted.model.decision_function(data.x.view()).unwrap();
    assert!(
        f.data.windows(2).all(|w| w[0] == w[1]),
        "no kernel term: one value"
    );
    // The same spec without the stop trains as before.
    let trained = fit(&data, &spec, &()).unwrap();
    assert_eq!(trained.run.status, RunStatus::Completed);
}

/// Linear kernels trained as explicit feature groups (the default) give the model trained
/// through their Gram matrices, up to rounding: the same kernel weights and the same scores
/// on held-out rows, for a binary, a multiclass and a regression table, with and without
/// averaging, the linear kernels mixed with a Gram-only Gaussian kernel. The explicit model
/// keeps no support point for them and round-trips through its file.
#[test]
fn explicit_linear_groups_equal_the_gram_path() {
    let tables = [
        ("ionosphere", TargetKind::Classes, TaskKind::Binary),
        ("glass", TargetKind::Classes, TaskKind::Multiclass),
        ("boston-housing", TargetKind::Real, TaskKind::Regression),
    ];
    for (name, kind, task) in tables {
        let data = uci(name, kind);
        let idx: Vec<usize> = (0..data.len()).collect();
        let (tr, te) = idx.split_at(data.len() * 7 / 10);
        let train = data.select(tr);
        let test = data.select(te);
        for averaging in [false, true] {
            let mut cfg = three_kernel_config(task, RegSpec::L21Sq, 10.0, train.len(), 5);
            cfg.kernels = [
                "linear:norm=trace",
                "perfeature:linear:norm=variance,features=0+1+2",
                "linear:norm=diag,features=3+4+5+6",
                "rbf:norm=trace",
            ]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
            cfg.params.steps.averaging = averaging;
            let explicit = fit_vector(train.view(), &cfg, &()).unwrap().0;
            cfg.explicit_linear = false;
            let gram = fit_vector(train.view(), &cfg, &()).unwrap().0;
            let label = format!("{name}, averaging {averaging}");
            assert_eq!(explicit.primal.len(), 6, "{label}");
            assert!(
                explicit.primal[..5].iter().any(|w| !w.is_empty()),
                "{label}"
            );
            assert!(explicit.coef[..5].iter().all(Vec::is_empty), "{label}");
            assert!(gram.primal.is_empty(), "{label}");
            for (a, b) in explicit.weights.iter().zip(&gram.weights) {
                assert!(
                    (a - b).abs() < 1e-7,
                    "{label}: weights {:?} vs {:?}",
                    explicit.weights,
                    gram.weights
                );
            }
            let lim = MemoryLimit::default();
            let se = explicit.scores(test.x.view(), &lim).unwrap();
            let sg = gram.scores(test.x.view(), &lim).unwrap();
            let scale = sg.data.iter().fold(1.0f64, |m, v| m.max(v.abs()));
            for (a, b) in se.data.iter().zip(&sg.data) {
                assert!((a - b).abs() < 1e-7 * scale, "{label}: scores {a} vs {b}");
            }
            explicit.validate().unwrap();
            let text = serde_json::to_string(&explicit).unwrap();
            let back: crate::pipeline::table::vector_model::KernelMachine =
                serde_json::from_str(&text).unwrap();
            assert_eq!(back, explicit, "{label}");
        }
    }
}

/// Gaussian kernels approximated by random Fourier features train as explicit groups: no
/// support point at all, accuracy near the exact kernel's on held-out rows, the same seed
/// the same model, and the approximate model's file round-trips.
#[test]
fn random_fourier_groups_learn_like_the_exact_kernel() {
    let data = uci("ionosphere", TargetKind::Classes);
    let Targets::Classes { y, .. } = &data.targets else {
        unreachable!()
    };
    let (tr, te) = crate::data::split::stratified_split(y, 0.7, 4);
    let train = data.select(&tr);
    let test = data.select(&te);
    let mut cfg = three_kernel_config(TaskKind::Binary, RegSpec::L21Sq, 10.0, train.len(), 20);
    cfg.kernels = vec!["rbf".parse().unwrap()];
    let exact = fit_vector(train.view(), &cfg, &()).unwrap().0;
    cfg.kernels = vec!["rbf:approx=rff,dim=2048".parse().unwrap()];
    let approx = fit_vector(train.view(), &cfg, &()).unwrap().0;
    assert_eq!(approx.support.rows, 0);
    assert_eq!(approx.primal[0].len(), 2048);
    let acc_exact = score(&exact, &test);
    let acc_approx = score(&approx, &test);
    assert!(
        acc_approx > acc_exact - 0.04,
        "approximate {acc_approx} vs exact {acc_exact}"
    );
    let again = fit_vector(train.view(), &cfg, &()).unwrap().0;
    assert_eq!(again, approx);
    let text = serde_json::to_string(&approx).unwrap();
    let back: crate::pipeline::table::vector_model::KernelMachine =
        serde_json::from_str(&text).unwrap();
    back.validate().unwrap();
    assert_eq!(back, approx);
}

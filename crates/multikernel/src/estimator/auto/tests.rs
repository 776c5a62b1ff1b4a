use super::*;
use crate::solver::lp_mkl::lp_mkl;

/// [`super::fit_auto`] on a spec checked here.
fn fit_auto(
    table: TableRef<'_>,
    base: &LearnerSpec,
    cfg: &AutoConfig,
    observer: &dyn Observer,
) -> Result<AutoFitted> {
    super::fit_auto(table, &base.check()?, cfg, observer)
}

/// [`super::fit_single_best`] on a spec checked here.
fn fit_single_best(
    table: TableRef<'_>,
    base: &LearnerSpec,
    cfg: &AutoConfig,
) -> Result<AutoFitted> {
    super::fit_single_best(table, &base.check()?, cfg)
}
use crate::data::{Dataset, Matrix};
use crate::estimator::spec::OnlineSpec;
use crate::kernel::KernelSpec;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// `n` rows of `d` uniform features; the target depends on feature 0 alone, through a
/// bump (a Gaussian kernel on that feature is clearly right).
fn bump(n: usize, d: usize, classes: bool, seed: u64) -> Dataset {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x: Vec<f64> = (0..n * d).map(|_| rng.gen_range(-2.0..2.0)).collect();
    let f: Vec<f64> = (0..n).map(|i| (-2.0 * x[i * d].powi(2)).exp()).collect();
    let targets = if classes {
        Targets::Classes {
            classes: vec!["out".into(), "in".into()],
            y: f.iter().map(|&v| usize::from(v > 0.5)).collect(),
        }
    } else {
        Targets::Real(
            f.iter()
                .map(|v| v + 0.01 * rng.gen_range(-1.0..1.0))
                .collect(),
        )
    };
    Dataset {
        x: Matrix::from_vec(n, d, x),
        targets,
        feature_names: (0..d).map(|j| format!("x{j}")).collect(),
    }
}

fn base(task: Task) -> LearnerSpec {
    LearnerSpec::new(task, Learner::Online(OnlineSpec::default()))
}

#[test]
fn the_kernel_the_data_came_from_is_picked() {
    let data = bump(150, 4, false, 3);
    let kernels: Vec<KernelSpec> = vec![
        "linear:norm=trace".parse().unwrap(),
        "perfeature:rbf:norm=trace".parse().unwrap(),
    ];
    let spec = base(Task::Regression).with_kernels(kernels);
    let single = fit_single_best(data.view(), &spec, &AutoConfig::default()).unwrap();
    let g = &single.record.grid[single.record.chosen.unwrap()];
    assert_eq!(
        g.setting, "rbf:norm=trace,features=0",
        "{:?}",
        single.record
    );
    // Sparse MKL over the same kernels puts (nearly) all its weight there too.
    let cfg = AutoConfig {
        learner: Some(LearnerKind::LpMkl),
        p: Some(1.0),
        ..AutoConfig::default()
    };
    let auto = fit_auto(data.view(), &spec, &cfg, &()).unwrap();
    let crate::model::Model::LpMkl(m) = &auto.fitted.model else {
        panic!("lp-MKL was asked for")
    };
    let theta = &m.learner.theta;
    let best = (0..theta.len())
        .max_by(|&a, &b| theta[a].total_cmp(&theta[b]))
        .unwrap();
    assert!(
        m.learner.kernels[best].name.contains("[f0:x0]"),
        "{:?}",
        m.learner.kernels[best].name
    );
    assert!(theta[best] > 0.9 * theta.iter().sum::<f64>(), "{theta:?}");
}

/// The online learner's grid (the selection above 3,000 rows, or that learner named)
/// reports its fits as the candidates' are: from the first, one step per spec and fold,
/// up to the grid's size; the refit's epochs come after, in their own unit.
#[test]
fn the_online_grid_reports_its_fits() {
    use crate::run::{Control, Progress, StepUnit};
    let data = bump(80, 2, true, 6);
    let spec = base(Task::Binary)
        .with_kernels(vec!["rbf:norm=trace".parse().unwrap()])
        .with_seed(1);
    let cfg = AutoConfig {
        learner: Some(LearnerKind::Online),
        c_grid: vec![1.0, 10.0],
        ..AutoConfig::default()
    };
    let seen = std::sync::Mutex::new(Vec::new());
    let record = |p: &Progress| {
        seen.lock().unwrap().push((p.step, p.total, p.unit));
        Control::Continue
    };
    fit_auto(data.view(), &spec, &cfg, &record).unwrap();
    let seen = seen.into_inner().unwrap();
    let fits: Vec<_> = seen.iter().filter(|e| e.2 == StepUnit::Fit).collect();
    // 2 Cs x 3 eta0s x 15 folds (5 folds repeated over 3 partitions at 80 rows).
    assert_eq!(fits.len(), 90);
    assert!(fits.iter().all(|e| e.1 == Some(90)));
    let mut steps: Vec<u64> = fits.iter().map(|e| e.0).collect();
    steps.sort_unstable();
    assert_eq!(steps, (1..=90).collect::<Vec<u64>>());
    let first_other = seen.iter().position(|e| e.2 != StepUnit::Fit);
    assert_eq!(first_other, Some(90), "the fits, then the refit's epochs");
}

#[test]
fn seeded_and_reproducible_and_stored_in_the_model() {
    let data = bump(120, 3, true, 5);
    let spec = base(Task::Binary).with_seed(7);
    let one = fit_auto(data.view(), &spec, &AutoConfig::default(), &()).unwrap();
    let two = fit_auto(data.view(), &spec, &AutoConfig::default(), &()).unwrap();
    assert_eq!(one.record, two.record);
    assert_eq!(
        one.fitted.model.to_bytes().unwrap(),
        two.fitted.model.to_bytes().unwrap()
    );
    assert!(
        one.record.method.contains("seed 7"),
        "{}",
        one.record.method
    );
    // Every candidate's C grid: 1 + 2 + 4 single kernels (3 features: 3 per-feature
    // ones), 4 Gaussian SVMs, the uniform sum and lp-MKL at each p.
    let m = crate::kernel::dictionary_size(3);
    assert_eq!(one.record.candidates.len(), m + 4 + 1 + P_GRID.len());
    assert_eq!(
        one.record.grid.len(),
        one.record.candidates.len() * C_GRID.len()
    );
    assert!(one.record.why.is_some());
    assert!(one
        .record
        .learner_choice
        .as_deref()
        .unwrap()
        .starts_with("lp-mkl"));
    let back = crate::model::Model::from_bytes(&one.fitted.model.to_bytes().unwrap()).unwrap();
    assert_eq!(back.selection(), Some(&one.record));
    assert!(back
        .summary()
        .notes
        .iter()
        .any(|n| n.starts_with("selected ")));
    // Another seed makes other folds.
    let other = fit_auto(
        data.view(),
        &spec.clone().with_seed(8),
        &AutoConfig::default(),
        &(),
    )
    .unwrap();
    assert_ne!(other.record.grid, one.record.grid);
}

/// The warm-started path over matrices cut from the whole table's, against its slow
/// twin: every (p, C) solved cold to a tight tolerance on matrices cut row by row.
#[test]
fn the_warm_path_scores_what_cold_solves_score() {
    let data = bump(90, 3, false, 11);
    let spec = base(Task::Regression);
    let splits = SplitStrategy::KFold { folds: 3, seed: 2 }
        .splits_for(&data.targets)
        .unwrap();
    let ps = [1.0, 2.0];
    let c_grid = [10.0, 0.1, 1.0];
    let m = crate::kernel::dictionary_size(3);
    let groups: Vec<(Range<usize>, f64)> = ps.iter().map(|&p| (0..m, p)).collect();
    let fast = lp_path_scores(
        data.view(),
        &spec,
        &groups,
        &c_grid,
        &splits,
        Goal::Minimize,
        &(),
    )
    .unwrap();
    let (_, xs) = prepare_rows(data.x.view(), &data.feature_names, data.len(), true).unwrap();
    let kernels = spec.check().unwrap().kernels_for(3);
    let fitted = fit_all(&kernels, &xs, &data.feature_names, 0).unwrap();
    let dense: Vec<Matrix> = kernel_matrices(&fitted, &xs, &MemoryLimit::default())
        .unwrap()
        .iter()
        .map(KernelMatrix::to_dense)
        .collect();
    let Targets::Real(y) = &data.targets else {
        unreachable!()
    };
    for (i, &p) in ps.iter().enumerate() {
        for (j, &c) in c_grid.iter().enumerate() {
            let mut total = 0.0;
            for s in &splits {
                let pick = |rows: &[usize], cols: &[usize]| -> Vec<KernelMatrix> {
                    dense
                        .iter()
                        .map(|k| {
                            let v: Vec<f64> = rows
                                .iter()
                                .flat_map(|&r| cols.iter().map(move |&c| k.get(r, c)))
                                .collect();
                            KernelMatrix::Dense(Matrix::from_vec(rows.len(), cols.len(), v))
                        })
                        .collect()
                };
                let train = pick(&s.train, &s.train);
                let test = pick(&s.validation, &s.train);
                let yt =
                    Matrix::from_vec(s.train.len(), 1, s.train.iter().map(|&r| y[r]).collect());
                let params = LpMklParams {
                    p,
                    lambda: 1.0 / c,
                    tol: 1e-12,
                    max_iter: 5000,
                    ..LpMklParams::default()
                };
                let (sol, _) = lp_mkl(&train, &yt, &params, &()).unwrap();
                let f = sol.decision(&train, &test).unwrap();
                let mse: f64 = s
                    .validation
                    .iter()
                    .enumerate()
                    .map(|(a, &r)| (f.get(a, 0) - y[r]).powi(2))
                    .sum::<f64>()
                    / s.validation.len() as f64;
                total += mse;
            }
            let slow = total / splits.len() as f64;
            let got = fast[i * c_grid.len() + j].unwrap();
            assert!(
                (got - slow).abs() <= 1e-3 * slow,
                "p {p} C {c}: warm path {got}, cold {slow}"
            );
        }
    }
}

/// Issue 28: on the generated `interactions` table of `reproduce uci` (the class is the
/// sign of x1 x2 among 20 features; the learned combination of the default dictionary
/// was 4.6 points below the best single kernel there over 10 splits), the selection's
/// mean test accuracy is at least the CV-chosen best single kernel's minus 0.5 points
/// over its 10 splits (same rows, same seeds; about a minute).
#[test]
#[ignore = "full tier: the built-in selection over 10 splits of a table, minutes"]
fn auto_is_not_below_its_best_single_kernel_on_the_interactions_table() {
    let data = crate::data::synthetic::interactions(600, 20, 1).unwrap();
    let Targets::Classes { y, .. } = &data.targets else {
        unreachable!()
    };
    let (mut auto_sum, mut single_sum) = (0.0, 0.0);
    for split in 0..10u64 {
        let seed = 1000 + split;
        let (tr, te) = crate::data::split::stratified_split(y, 0.7, seed);
        let (train, test) = (data.select(&tr), data.select(&te));
        let spec = base(Task::Binary).with_seed(seed);
        let cfg = AutoConfig::default();
        let score = |f: &AutoFitted| {
            f.fitted
                .model
                .score_with(test.x.view(), &test.targets, &MemoryLimit::default())
                .unwrap()
                .value
        };
        let auto = fit_auto(train.view(), &spec, &cfg, &()).unwrap();
        let single = fit_single_best(train.view(), &spec, &cfg).unwrap();
        assert!(!auto.record.candidates.is_empty());
        auto_sum += score(&auto);
        single_sum += score(&single);
    }
    let (auto, single) = (auto_sum / 10.0, single_sum / 10.0);
    assert!(auto >= single - 0.005, "auto {auto} single {single}");
}

#[test]
fn small_tables_repeat_the_folds_over_three_partitions() {
    let classes = |n: usize| Targets::Classes {
        classes: vec!["a".into(), "b".into()],
        y: (0..n).map(|i| i % 2).collect(),
    };
    let (s, m) = fold_rule(&classes(REPEAT_MAX_ROWS), 5, 7).unwrap();
    assert_eq!(
        s,
        SplitStrategy::RepeatedStratifiedKFold {
            folds: 5,
            repeats: SMALL_REPEATS,
            seed: 7
        }
    );
    assert!(m.starts_with("3 x 5-fold stratified"), "{m}");
    assert_eq!(s.splits_for(&classes(REPEAT_MAX_ROWS)).unwrap().len(), 15);
    let (s, m) = fold_rule(&classes(REPEAT_MAX_ROWS + 1), 5, 7).unwrap();
    assert_eq!(s, SplitStrategy::StratifiedKFold { folds: 5, seed: 7 });
    assert!(m.starts_with("5-fold stratified"), "{m}");
    let real = |n: usize| Targets::Real((0..n).map(|i| i as f64).collect());
    let (s, _) = fold_rule(&real(40), 5, 1).unwrap();
    assert_eq!(s.repeats(), SMALL_REPEATS);
    assert!(matches!(s, SplitStrategy::RepeatedKFold { folds: 5, .. }));
    let (s, _) = fold_rule(&real(REPEAT_MAX_ROWS + 1), 5, 1).unwrap();
    assert_eq!(s, SplitStrategy::KFold { folds: 5, seed: 1 });
}

#[test]
fn too_small_tables_fall_back_to_the_defaults_with_a_reason() {
    let mut data = bump(30, 2, true, 1);
    // One row of the class "in".
    let Targets::Classes { y, .. } = &mut data.targets else {
        unreachable!()
    };
    y.iter_mut().for_each(|v| *v = 0);
    y[4] = 1;
    let auto = fit_auto(
        data.view(),
        &base(Task::Binary),
        &AutoConfig::default(),
        &(),
    )
    .unwrap();
    assert_eq!(auto.record.chosen, None);
    assert!(
        auto.record.method.starts_with("too few rows"),
        "{}",
        auto.record.method
    );
    // Three rows in the smaller class: 3 folds instead of 5.
    let Targets::Classes { y, .. } = &mut data.targets else {
        unreachable!()
    };
    y[5] = 1;
    y[6] = 1;
    let auto = fit_auto(
        data.view(),
        &base(Task::Binary),
        &AutoConfig::default(),
        &(),
    )
    .unwrap();
    // ... repeated over 3 partitions (30 rows, at most 500).
    assert!(
        auto.record.method.starts_with("3 x 3-fold"),
        "{}",
        auto.record.method
    );
    // Sequences are refused by name.
    let e = fit_auto(
        data.view(),
        &base(Task::Sequence),
        &AutoConfig::default(),
        &(),
    );
    assert!(matches!(e, Err(Error::Unsupported(_))));
}

#[test]
fn the_learner_follows_size_and_memory() {
    let m = MemoryLimit::default();
    assert_eq!(choose_learner(500, 10, &m).0, LearnerKind::LpMkl);
    let (k, why) = choose_learner(BATCH_MAX_ROWS + 1, 10, &m);
    assert_eq!(k, LearnerKind::Online);
    assert!(why.contains("no candidates"), "{why}");
    let small = MemoryLimit::gib(0.01);
    let (k, why) = choose_learner(2000, 10, &small);
    assert_eq!(k, LearnerKind::Online);
    assert!(why.contains("memory limit"), "{why}");
}

//! Incremental fits (`partial_fit`) and iterative parameter mixing over explicit groups
//! (pipeline::table::incremental), checked against the whole-table fit.

use multikernel::data::standardize::Standardizer;
use multikernel::data::{read_table, Dataset, TargetKind, Targets};
use multikernel::engine::pipeline::table::incremental::{Given, IncrementalFit};
use multikernel::engine::pipeline::table::vector::{fit_vector, VectorFitConfig};
use multikernel::engine::prox::RegSpec;
use multikernel::engine::solver::online::{OnlineParams, OnlineSteps, StepSchedule};
use multikernel::engine::task::TaskKind;
use multikernel::kernel::MemoryLimit;
use std::path::PathBuf;

fn uci(name: &str, target: TargetKind) -> Dataset {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../data/uci/{name}.csv"));
    read_table(&p, None, target, None, None).unwrap()
}

/// Kernels whose maps do not depend on the data (so the first chunk fits them as the whole
/// table does), one epoch in the table's order.
fn config(task: TaskKind, n: usize, averaging: bool) -> VectorFitConfig {
    VectorFitConfig {
        task,
        loss: multikernel::engine::task::vector::default_loss(task),
        kernels: ["rbf:sigma2=8,approx=rff,dim=256", "linear"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect(),
        params: OnlineParams {
            lambda: 1.0 / (10.0 * n as f64),
            reg: RegSpec::L21Sq,
            steps: OnlineSteps {
                eta0: 1.0,
                schedule: StepSchedule::InvSqrt,
                epochs: 1,
                averaging,
                projection: true,
                shards: 1,
                batch: 1,
                ..OnlineSteps::default()
            },
            seed: 3,
            shuffle: false,
        },
        bias: true,
        standardize: true,
        memory: MemoryLimit::default(),
        explicit_linear: true,
    }
}

/// Chunks of `size` consecutive rows.
fn chunks(data: &Dataset, size: usize) -> Vec<Dataset> {
    let idx: Vec<usize> = (0..data.len()).collect();
    idx.chunks(size).map(|c| data.select(c)).collect()
}

/// partial_fit over consecutive chunks is one epoch of the whole-table fit in the table's
/// order, to the last bit (binary and multiclass, averaging on and off), given the
/// whole table's standardization; the fit survives a JSON round trip mid-way.
#[test]
fn chunks_in_order_give_the_whole_table_epoch() {
    for (name, task) in [
        ("ionosphere", TaskKind::Binary),
        ("glass", TaskKind::Multiclass),
    ] {
        let data = uci(name, TargetKind::Classes);
        for averaging in [false, true] {
            let cfg = config(task, data.len(), averaging);
            let whole = fit_vector(data.view(), &cfg, &()).unwrap().0;
            let parts = chunks(&data, 37);
            let given = Given {
                standardizer: Some(Standardizer::fit(&data.x)),
                classes: match &data.targets {
                    Targets::Classes { classes, .. } => Some(classes.clone()),
                    Targets::Real(_) => None,
                },
                ..Given::default()
            };
            let mut fit = IncrementalFit::start(&cfg, parts[0].view(), given).unwrap();
            for (k, part) in parts.iter().enumerate() {
                if k == 2 {
                    let text = serde_json::to_string(&fit).unwrap();
                    fit = serde_json::from_str(&text).unwrap();
                }
                fit.partial_fit(part.view(), &()).unwrap();
            }
            assert_eq!(fit.rows_seen, data.len() as u64);
            let model = fit.model().unwrap();
            assert_eq!(model.primal, whole.primal, "{name}, averaging {averaging}");
            assert_eq!(model.bias, whole.bias);
            assert_eq!(model.group_norms, whole.group_norms);
            let limit = MemoryLimit::default();
            let a = model.scores(data.x.view(), &limit).unwrap();
            let b = whole.scores(data.x.view(), &limit).unwrap();
            assert_eq!(a, b);
        }
    }
}

/// Iterative parameter mixing: two workers, each one pass over half of the shuffled table
/// per round of mixing, reach the accuracy of one learner over the whole table within a
/// few points; mixing copies of one fit gives that fit after one proximal step; fits set up
/// differently are refused.
#[test]
fn parameter_mixing_learns_like_one_learner() {
    let data = uci("ionosphere", TargetKind::Classes);
    let Targets::Classes { y, .. } = &data.targets else {
        unreachable!()
    };
    let (tr, te) = multikernel::data::split::stratified_split(y, 0.7, 2);
    let (train, test) = (data.select(&tr), data.select(&te));
    let mut cfg = config(TaskKind::Binary, train.len(), true);
    cfg.kernels = vec!["rbf:approx=rff,dim=512".parse().unwrap()];
    let start = IncrementalFit::start(&cfg, train.view(), Given::default()).unwrap();
    let halves = [
        train.select(&(0..train.len() / 2).collect::<Vec<_>>()),
        train.select(&(train.len() / 2..train.len()).collect::<Vec<_>>()),
    ];
    let mut one = start.clone();
    let mut mixed = start.clone();
    for _epoch in 0..10 {
        one.partial_fit(train.view(), &()).unwrap();
        let workers: Vec<IncrementalFit> = halves
            .iter()
            .map(|h| {
                let mut w = mixed.clone();
                w.partial_fit(h.view(), &()).unwrap();
                w
            })
            .collect();
        mixed = IncrementalFit::mix(&workers).unwrap();
    }
    let acc_one = crate::score(&one.model().unwrap(), &test);
    let acc_mixed = crate::score(&mixed.model().unwrap(), &test);
    assert!(acc_one > 0.85, "one learner: {acc_one}");
    assert!(
        acc_mixed > acc_one - 0.05,
        "mixed {acc_mixed} vs one {acc_one}"
    );
    assert_eq!(mixed.rows_seen, one.rows_seen);

    let copies = IncrementalFit::mix(&[one.clone(), one.clone(), one.clone()]).unwrap();
    let alone = IncrementalFit::mix(&[one.clone()]).unwrap();
    let (a, b) = (copies.model().unwrap(), alone.model().unwrap());
    for (p, q) in a.primal[0].iter().zip(&b.primal[0]) {
        assert!((p - q).abs() < 1e-12 * (1.0 + q.abs()));
    }
    let mut other = cfg.clone();
    other.kernels = vec!["rbf:approx=rff,dim=64".parse().unwrap()];
    let different = IncrementalFit::start(&other, train.view(), Given::default()).unwrap();
    let err = IncrementalFit::mix(&[one, different])
        .unwrap_err()
        .to_string();
    assert!(err.contains("fit 2"), "{err}");
}

/// Bad input: an exact (map-less) kernel, a label not among the classes, a chunk with other
/// columns, a binary first chunk with one class; the fit is unchanged by a refused chunk.
#[test]
fn bad_chunks_are_refused_and_change_nothing() {
    let data = uci("ionosphere", TargetKind::Classes);
    let mut cfg = config(TaskKind::Binary, data.len(), false);
    let parts = chunks(&data, 100);
    cfg.kernels = vec!["rbf".parse().unwrap()];
    let err = IncrementalFit::start(&cfg, parts[0].view(), Given::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("approx=rff"), "{err}");
    let cfg = config(TaskKind::Binary, data.len(), false);
    let mut fit = IncrementalFit::start(&cfg, parts[0].view(), Given::default()).unwrap();
    fit.partial_fit(parts[0].view(), &()).unwrap();
    let before = fit.clone();
    let glass = uci("glass", TargetKind::Classes);
    assert!(fit.partial_fit(glass.view(), &()).is_err());
    let mut relabelled = parts[1].clone();
    if let Targets::Classes { classes, .. } = &mut relabelled.targets {
        classes[0] = "neither".into();
    }
    let err = fit
        .partial_fit(relabelled.view(), &())
        .unwrap_err()
        .to_string();
    assert!(err.contains("neither"), "{err}");
    assert_eq!(fit, before);
    let one_class: Vec<usize> = match &data.targets {
        Targets::Classes { y, .. } => (0..data.len()).filter(|&i| y[i] == 0).take(20).collect(),
        Targets::Real(_) => unreachable!(),
    };
    let mut single = data.select(&one_class);
    if let Targets::Classes { classes, y } = &mut single.targets {
        *classes = vec![classes[0].clone()];
        y.iter_mut().for_each(|c| *c = 0);
    }
    let err = IncrementalFit::start(&cfg, single.view(), Given::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("classes="), "{err}");
}

//! Memory refusals (issue 11, item 6): for every learner, a memory limit below what the data
//! need is refused with `Error::Memory` naming the size needed, before the work starts (the
//! observer never sees a step), and prediction under a limit too small for its kernel rows
//! is refused the same way.

use multikernel::data::ocr::read_ocr;
use multikernel::data::{read_table, Dataset, TargetKind};
use multikernel::error::Error;
use multikernel::estimator::{
    fit, Budget, GompSpec, Learner, LearnerSpec, LpMklSpec, OnlineSpec, PolySpec, Task,
};
use multikernel::kernel::MemoryLimit;
use multikernel::run::{Control, Progress};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

fn table(name: &str, target: TargetKind) -> Dataset {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../data/uci/{name}"));
    read_table(&p, None, target, None, None).unwrap()
}

/// 16 KiB: far below one 208 x 208 Gram matrix (338 KiB) or 60 columns of 208 (98 KiB).
const TINY: MemoryLimit = MemoryLimit { bytes: 16 << 10 };

/// The refusal's sizes: needed above the limit, the limit as given.
fn refused(label: &str, r: multikernel::Result<impl std::fmt::Debug>) -> (usize, String) {
    match r {
        Err(Error::Memory {
            what,
            needed,
            limit,
        }) => {
            assert_eq!(limit, TINY.bytes, "{label}");
            assert!(needed > limit, "{label}: needs {needed}");
            let msg = Error::Memory {
                what: what.clone(),
                needed,
                limit,
            }
            .to_string();
            assert!(
                msg.contains("GiB") || msg.contains("MiB") || msg.contains("KiB"),
                "{msg}"
            );
            (needed, what)
        }
        other => panic!("{label}: expected a memory refusal, got {other:?}"),
    }
}

#[test]
fn every_learner_refuses_a_limit_below_its_kernel_matrices_before_any_step() {
    let sonar = table("sonar.csv", TargetKind::Classes);
    let boston = table("boston-housing.csv", TargetKind::Real);
    let poly = PolySpec {
        degree: 2,
        budget: Budget::Iterations(30),
        ..PolySpec::default()
    };
    let kernels = |ks: &[&str]| ks.iter().map(|k| k.parse().unwrap()).collect();
    let specs = vec![
        (
            "online",
            LearnerSpec::new(Task::Binary, Learner::Online(OnlineSpec::default()))
                .with_kernels(kernels(&["rbf", "linear"])),
            &sonar,
        ),
        (
            "gomp",
            LearnerSpec::new(Task::Binary, Learner::Gomp(GompSpec::default())),
            &sonar,
        ),
        (
            "lp-mkl",
            LearnerSpec::new(Task::Regression, Learner::LpMkl(LpMklSpec { p: 2.0 }))
                .with_kernels(kernels(&["rbf", "linear"])),
            &boston,
        ),
        (
            "mirror-descent",
            LearnerSpec::new(Task::Binary, Learner::MirrorDescent(poly.clone())),
            &sonar,
        ),
        (
            "ucd",
            LearnerSpec::new(Task::Regression, Learner::Ucd(poly)),
            &boston,
        ),
    ];
    for (label, mut spec, data) in specs {
        spec.memory = TINY;
        let steps = AtomicU64::new(0);
        let count = |_: &Progress| {
            steps.fetch_add(1, Ordering::SeqCst);
            Control::Continue
        };
        let (needed, what) = refused(label, fit(data, &spec, &count));
        // The kernels' training matrices: n x n each, or n x rank for a kernel with an
        // explicit low-rank factor (GOMP's default dictionary: one linear kernel per feature,
        // rank 1), n = the training rows.
        let n = data.len();
        assert!(needed >= n * 8 * 2, "{label}: {what}: {needed}");
        assert!(what.contains(&n.to_string()), "{label}: {what}");
        assert_eq!(steps.load(Ordering::SeqCst), 0, "{label}: a step ran");
    }
}

#[test]
fn sequences_refuse_too() {
    let ocr =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models-v1/ocr-train.data.gz");
    let words = read_ocr(&ocr).unwrap();
    let mut spec = LearnerSpec::new(
        Task::Sequence,
        Learner::Online(OnlineSpec {
            epochs: 2,
            ..OnlineSpec::default()
        }),
    )
    .with_kernels(vec!["rbf".parse().unwrap()]);
    spec.memory = TINY;
    let steps = AtomicU64::new(0);
    let count = |_: &Progress| {
        steps.fetch_add(1, Ordering::SeqCst);
        Control::Continue
    };
    refused("sequence", fit(&words, &spec, &count));
    assert_eq!(steps.load(Ordering::SeqCst), 0);
}

#[test]
fn prediction_refuses_a_limit_below_its_kernel_rows() {
    let sonar = table("sonar.csv", TargetKind::Classes);
    let spec = LearnerSpec::new(Task::Binary, Learner::Online(OnlineSpec::default()))
        .with_kernels(vec!["rbf".parse().unwrap()]);
    let model = fit(&sonar, &spec, &()).unwrap().model;
    refused("predict", model.predict_with(sonar.x.view(), &TINY));
    refused(
        "score",
        model.score_with(sonar.x.view(), &sonar.targets, &TINY),
    );
    // The same rows under the default limit predict.
    assert_eq!(model.predict(sonar.x.view()).unwrap().len(), sonar.len());
}

//! The estimator layer's run contract for every learner: an observer that stops the run
//! after its first step, and a stop flag set before the run, both end it as `Cancelled`
//! with a model that predicts; a run left alone ends with its learner's own status.

use multikernel::data::ocr::read_ocr;
use multikernel::data::{read_table, Dataset, TargetKind};
use multikernel::estimator::{
    fit, Budget, GompSpec, Learner, LearnerKind, LearnerSpec, LpMklSpec, OnlineSpec, OnlineSteps,
    PolySpec, Task,
};
use multikernel::run::{Control, Progress, RunStatus, StepUnit, StopFlag};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

fn table(name: &str, target: TargetKind) -> Dataset {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../data/uci/{name}"));
    read_table(&p, None, target, None, None).unwrap()
}

/// (label, spec, data, the status of an undisturbed run, its step unit).
fn runs() -> Vec<(&'static str, LearnerSpec, Dataset, RunStatus, StepUnit)> {
    let sonar = table("sonar.csv", TargetKind::Classes);
    let boston = table("boston-housing.csv", TargetKind::Real);
    let poly = PolySpec {
        degree: 2,
        budget: Budget::Iterations(30),
        ..PolySpec::default()
    };
    let kernels = |ks: &[&str]| ks.iter().map(|k| k.parse().unwrap()).collect();
    vec![
        (
            "online",
            LearnerSpec::new(
                Task::Binary,
                Learner::Online(OnlineSpec {
                    steps: OnlineSteps {
                        epochs: 4,
                        ..OnlineSteps::default()
                    },
                    ..OnlineSpec::default()
                }),
            ),
            sonar.clone(),
            RunStatus::Completed,
            StepUnit::Epoch,
        ),
        (
            "gomp",
            LearnerSpec::new(
                Task::Binary,
                Learner::Gomp(GompSpec {
                    max_kernels: 5,
                    ..GompSpec::default()
                }),
            ),
            sonar.clone(),
            RunStatus::Completed,
            StepUnit::Kernel,
        ),
        (
            "lp-mkl",
            LearnerSpec::new(Task::Regression, Learner::LpMkl(LpMklSpec { p: 2.0 }))
                .with_kernels(kernels(&["rbf", "linear", "poly:degree=2"])),
            boston.clone(),
            RunStatus::Converged,
            StepUnit::Iteration,
        ),
        (
            "mirror-descent",
            LearnerSpec::new(Task::Binary, Learner::MirrorDescent(poly.clone())),
            sonar,
            RunStatus::Completed,
            StepUnit::Iteration,
        ),
        (
            "ucd",
            LearnerSpec::new(Task::Regression, Learner::Ucd(poly)),
            boston,
            RunStatus::Completed,
            StepUnit::Iteration,
        ),
    ]
}

#[test]
fn every_learner_stops_when_its_observer_asks() {
    for (label, spec, data, status, unit) in runs() {
        // Undisturbed.
        let steps = AtomicU64::new(0);
        let count = |_: &Progress| {
            steps.fetch_add(1, Ordering::SeqCst);
            Control::Continue
        };
        let full = fit(&data, &spec, &count).unwrap();
        assert_eq!(full.run.status, status, "{label}");
        assert_eq!(full.run.unit, unit, "{label}");
        assert!(full.run.steps >= 2, "{label}: {} steps", full.run.steps);
        // Every step is reported, except the iterations of the eta0 pilot that mirror
        // descent and UCD keep (counted in their steps, run before the first report).
        let seen = steps.load(Ordering::SeqCst);
        assert!(
            seen <= full.run.steps && seen + 5 >= full.run.steps,
            "{label}: {seen}"
        );
        if unit != StepUnit::Iteration || label == "lp-mkl" {
            assert_eq!(seen, full.run.steps, "{label}");
        }
        // Stopped at the first step reported.
        let calls = AtomicU64::new(0);
        let first = |_: &Progress| {
            calls.fetch_add(1, Ordering::SeqCst);
            Control::Stop
        };
        let one = fit(&data, &spec, &first).unwrap();
        assert_eq!(one.run.status, RunStatus::Cancelled, "{label}");
        assert_eq!(calls.load(Ordering::SeqCst), 1, "{label}");
        assert!(one.run.steps < full.run.steps, "{label}");
        let pred = one.model.predict(data.x.view()).unwrap();
        assert_eq!(pred.len(), data.len(), "{label}");
        // Stopped before it started (a flag set from elsewhere, as Ctrl-C does).
        let flag = StopFlag::new();
        flag.stop();
        let none = fit(&data, &spec, &flag).unwrap();
        assert_eq!(none.run.status, RunStatus::Cancelled, "{label}");
        assert!(none.run.steps <= 1, "{label}: {} steps", none.run.steps);
        assert!(none.model.predict(data.x.view()).is_ok(), "{label}");
    }
}

#[test]
fn sequences_stop_too() {
    let ocr =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models-v1/ocr-train.data.gz");
    let words = read_ocr(&ocr).unwrap();
    let spec = LearnerSpec::new(
        Task::Sequence,
        Learner::Online(OnlineSpec {
            steps: OnlineSteps {
                epochs: 3,
                ..OnlineSteps::default()
            },
            ..OnlineSpec::default()
        }),
    );
    let flag = StopFlag::new();
    flag.stop();
    let f = fit(&words, &spec, &flag).unwrap();
    assert_eq!((f.run.status, f.run.steps), (RunStatus::Cancelled, 0));
    let f = fit(&words, &spec, &()).unwrap();
    assert_eq!((f.run.status, f.run.steps), (RunStatus::Completed, 3));
}

/// A sequence fit says that `standardize = false` has no effect on it, for the online
/// learner and the wrappers alike.
#[test]
fn sequence_fits_note_that_standardize_has_no_effect() {
    let ocr =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models-v1/ocr-train.data.gz");
    let words = read_ocr(&ocr).unwrap();
    let note = "sequence inputs are used as they are; standardize = false has no effect";
    let short: [(LearnerKind, &[(&str, &str)]); 2] = [
        (LearnerKind::Online, &[("epochs", "1")]),
        (
            LearnerKind::SimpleMkl,
            &[("max_iter", "1"), ("first_epochs", "1")],
        ),
    ];
    for (kind, settings) in short {
        let mut spec = LearnerSpec::new(Task::Sequence, Learner::default_for(kind));
        for (name, text) in settings {
            spec.set(name, text).unwrap();
        }
        let plain = fit(&words, &spec, &()).unwrap();
        assert!(!plain.notes.iter().any(|n| n == note), "{kind}");
        spec.standardize = false;
        let raw = fit(&words, &spec, &()).unwrap();
        assert!(
            raw.notes.iter().any(|n| n == note),
            "{kind}: {:?}",
            raw.notes
        );
    }
}

#[test]
fn specs_are_checked_before_any_work() {
    let data = table("sonar.csv", TargetKind::Classes);
    // A flag that would stop the run: the check fails first, with the parameter's name.
    let spec = LearnerSpec::new(Task::Binary, Learner::LpMkl(LpMklSpec { p: 0.5 }));
    match fit(&data, &spec, &()) {
        Err(multikernel::Error::InvalidParameter { name, .. }) => assert_eq!(name, "p"),
        other => panic!("{other:?}"),
    }
    // The task must fit the data.
    let spec = LearnerSpec::new(Task::Regression, Learner::Online(OnlineSpec::default()));
    assert!(matches!(
        fit(&data, &spec, &()),
        Err(multikernel::Error::Data(_))
    ));
}

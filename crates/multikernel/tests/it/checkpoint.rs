//! Checkpoints through the library (issue 32, item 3): a fit stopped by its observer after
//! a seeded epoch (the run's cancellation), then resumed from the checkpoint (and stopped
//! again), gives the model of the fit that was never stopped, byte for byte; the store
//! refuses a second learner in the same fit and a checkpoint of another learner.

use multikernel::checkpoint::FileCheckpoints;
use multikernel::data::ocr::read_ocr;
use multikernel::data::{read_table, TargetKind};
use multikernel::estimator::{
    fit, Learner, LearnerSpec, OnlineSpec, OnlineSteps, Task, TrainingData,
};
use multikernel::run::{Checkpointed, Checkpoints, Control, Observer, Progress, RunStatus};
use std::path::{Path, PathBuf};

/// Stops the run once `at` epochs are done.
struct StopAt(u64);

impl Observer for StopAt {
    fn progress(&self, p: &Progress) -> Control {
        if p.step >= self.0 {
            Control::Stop
        } else {
            Control::Continue
        }
    }
}

fn spec(task: Task, kernels: &[&str], epochs: usize) -> LearnerSpec {
    LearnerSpec::new(
        task,
        Learner::Online(OnlineSpec {
            steps: OnlineSteps {
                epochs,
                ..OnlineSteps::default()
            },
            ..OnlineSpec::default()
        }),
    )
    .with_kernels(kernels.iter().map(|k| k.parse().unwrap()).collect())
    .with_seed(5)
}

/// Stops at each of `stops` (increasing), resuming from the checkpoint each time, then
/// finishes: the uninterrupted fit's model bytes.
fn stopped_and_resumed(data: TrainingData<'_>, spec: &LearnerSpec, stops: &[u64]) {
    let want = fit(data, spec, &()).unwrap().model.to_bytes().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("ck");
    let store = |resume: bool| {
        let s = FileCheckpoints::new(Some(path.clone()), 1, "d".into(), "s".into());
        if resume {
            s.resuming(&path).unwrap()
        } else {
            s
        }
    };
    for (k, &at) in stops.iter().enumerate() {
        let s = store(k > 0);
        let f = fit(
            data,
            spec,
            &Checkpointed {
                observer: &StopAt(at),
                checkpoints: &s,
            },
        )
        .unwrap();
        assert_eq!(f.run.status, RunStatus::Cancelled);
        assert_eq!(f.run.steps, at);
        assert_eq!(s.claimed().as_deref(), Some("online"));
    }
    let s = store(true);
    let f = fit(
        data,
        spec,
        &Checkpointed {
            observer: &(),
            checkpoints: &s,
        },
    )
    .unwrap();
    assert_eq!(f.run.status, RunStatus::Completed);
    assert_eq!(f.model.to_bytes().unwrap(), want, "stopped at {stops:?}");
}

#[test]
fn stopped_table_fits_resume_to_the_uninterrupted_model() {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/uci/sonar.csv");
    let t = read_table(&shipped, None, TargetKind::Classes, None, None).unwrap();
    let s = spec(Task::Binary, &["rbf", "linear", "poly:degree=2"], 9);
    let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(32);
    for _ in 0..3 {
        let a = rand::Rng::gen_range(&mut rng, 1..5);
        let b = rand::Rng::gen_range(&mut rng, a + 1..9);
        stopped_and_resumed(TrainingData::Table(t.view()), &s, &[a, b]);
    }
}

#[test]
fn stopped_sequence_fits_resume_to_the_uninterrupted_model() {
    let words = read_ocr(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/models-v1/ocr-train-small.data.gz"),
    )
    .unwrap();
    let s = spec(Task::Sequence, &["linear", "rbf"], 6);
    stopped_and_resumed(TrainingData::Sequences(&words), &s, &[2, 5]);
}

#[test]
fn a_store_serves_one_learner() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ck");
    let s = FileCheckpoints::new(Some(path.clone()), 2, "d".into(), "s".into());
    assert!(!s.due(1) && s.due(2) && s.due(4));
    assert_eq!(s.resume("online").unwrap(), None);
    let e = s.resume("parser").unwrap_err().to_string();
    assert!(e.contains("already keeps this run's checkpoints"), "{e}");
    s.save("online", 2, b"{}").unwrap();
    let other = FileCheckpoints::new(None, 1, "d".into(), "s".into())
        .resuming(&path)
        .unwrap();
    let e = other.resume("tagger").unwrap_err().to_string();
    assert!(e.contains("holds the state of the online learner"), "{e}");
    let e = FileCheckpoints::new(None, 1, "x".into(), "s".into())
        .resuming(&path)
        .unwrap_err()
        .to_string();
    assert!(e.contains("other data"), "{e}");
    let e = FileCheckpoints::new(None, 1, "d".into(), "y".into())
        .resuming(&path)
        .unwrap_err()
        .to_string();
    assert!(e.contains("other settings"), "{e}");
}

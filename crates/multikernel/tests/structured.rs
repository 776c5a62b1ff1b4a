//! The structured-task seam end to end (issue 10 item 3): the arc-factored tree task on short
//! synthetic sentences (gold trees from a known weight vector over the tag-pair and
//! direction-distance templates), trained (a) by SPOM, the online engine with explicit groups
//! only (one per template, squared l2,1), through the structured adapter, and (b) by the
//! 1-slack cutting-plane loop. Both parse held-out sentences well; SPOM's group norms pick the
//! templates the generator used.

use multikernel::prox::RegSpec;
use multikernel::run::{Control, Progress, RunStatus, StopFlag};
use multikernel::solver::cutting_plane::{self, CuttingPlaneParams};
use multikernel::solver::online::{OnlineLearner, OnlineParams};
use multikernel::task::sequence::SequenceTask;
use multikernel::task::structured::{evaluate_explicit, StructLoss, StructuredOnline};
use multikernel::task::tree::synthetic::{SyntheticTrees, TreeGenerator};
use multikernel::task::tree::{ArcFeaturizer, ArcTemplate, TreeTask};
use multikernel::Error;
use std::sync::atomic::{AtomicU64, Ordering};

fn data() -> (SyntheticTrees, ArcFeaturizer, TreeTask, TreeTask) {
    let data = TreeGenerator::default().generate(7);
    let f = ArcFeaturizer::fit(&ArcTemplate::ALL, &data.train);
    let train = TreeTask::new(data.train.clone(), &f).unwrap();
    let test = TreeTask::new(data.test.clone(), &f).unwrap();
    (data, f, train, test)
}

#[test]
fn spom_parses_and_selects_the_generating_templates() {
    let (data, f, train, test) = data();
    let task = StructuredOnline::new(&train, StructLoss::Hinge).unwrap();
    let params = OnlineParams {
        lambda: 3e-3,
        reg: RegSpec::L21Sq,
        eta0: 1.0,
        epochs: 30,
        seed: 1,
        ..OnlineParams::default()
    };
    // No kernel groups: explicit template groups only.
    let learner = OnlineLearner::new(&task, &[], params).unwrap();
    let (state, info) = learner.run(&(), &mut |_, _| Control::Continue);
    assert_eq!(info.status, RunStatus::Completed);
    assert!(state.kernel.is_empty());
    let w: Vec<f64> = state.explicit_values(false).concat();
    let uas = evaluate_explicit(&test, &w).unwrap().value();
    assert!(uas > 0.92, "held-out UAS {uas}");
    // Group norms, one per template: the generator's templates come first, each at least
    // twice as large as any other. The modifier-word template is exactly zero: every tree
    // has each token as a modifier once, so its features cancel in every gradient.
    let norms = state.regularized_norms();
    assert_eq!(norms.len(), f.templates.len());
    let named = |t: ArcTemplate| norms[f.templates.iter().position(|&u| u == t).unwrap()];
    let weakest_used = data
        .used
        .iter()
        .map(|&t| named(t))
        .fold(f64::INFINITY, f64::min);
    for &t in f.templates.iter().filter(|t| !data.used.contains(t)) {
        assert!(
            2.0 * named(t) < weakest_used,
            "{} has norm {} against {weakest_used} ({norms:?})",
            t.name(),
            named(t)
        );
    }
    assert_eq!(named(ArcTemplate::ModWord), 0.0);
}

#[test]
fn cutting_plane_parses_and_converges() {
    let (_, _, train, test) = data();
    let params = CuttingPlaneParams {
        c: 300.0,
        epsilon: 1e-3,
        ..CuttingPlaneParams::default()
    };
    let steps = AtomicU64::new(0);
    let (model, info) = cutting_plane::fit(&train, &params, &|p: &Progress| {
        steps.fetch_add(1, Ordering::SeqCst);
        assert!(p.objective.is_some_and(f64::is_finite));
        Control::Continue
    })
    .unwrap();
    assert_eq!(info.status, RunStatus::Converged);
    assert_eq!(steps.into_inner(), info.steps);
    assert_eq!(info.steps as usize, model.cuts + 1);
    let uas = evaluate_explicit(&test, &model.weights).unwrap().value();
    assert!(uas > 0.92, "held-out UAS {uas}");
    // J(w) = 1/2 ||w||^2 + C R_emp(w) of the returned weights.
    let sq: f64 = model.weights.iter().map(|v| v * v).sum();
    assert!((model.objective - (0.5 * sq + params.c * model.empirical_risk)).abs() < 1e-9);
    assert_eq!(
        model.predict(&test, 0).unwrap().len(),
        test.heads()[0].len()
    );
}

#[test]
fn cutting_plane_stops_when_asked_and_refuses_what_it_cannot_do() {
    let (_, _, train, _) = data();
    let flag = StopFlag::new();
    flag.stop();
    let (model, info) = cutting_plane::fit(&train, &CuttingPlaneParams::default(), &flag).unwrap();
    assert_eq!(info.status, RunStatus::Cancelled);
    assert!(model.weights.iter().all(|&v| v == 0.0));
    // An iteration cap is a status, not an error.
    let capped = CuttingPlaneParams {
        max_iter: 2,
        ..CuttingPlaneParams::default()
    };
    let (model, info) = cutting_plane::fit(&train, &capped, &()).unwrap();
    assert_eq!(info.status, RunStatus::IterationLimit);
    assert_eq!(model.cuts, 2);
    let bad = CuttingPlaneParams {
        c: -1.0,
        ..CuttingPlaneParams::default()
    };
    assert!(matches!(
        cutting_plane::fit(&train, &bad, &()),
        Err(Error::InvalidParameter { name, .. }) if name == "C"
    ));
    // Kernel-scored parts (the OCR chain) are beyond an explicit-feature learner.
    let chain = SequenceTask::new(vec![0, 1], std::iter::once(0..2).collect(), 2, false).unwrap();
    assert!(matches!(
        cutting_plane::fit(&chain, &CuttingPlaneParams::default(), &()),
        Err(Error::Unsupported(_))
    ));
}

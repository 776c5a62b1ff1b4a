//! The online learner over parts (`estimator::parts::online`) against its one-process twins:
//! one part is the one-process fit to the bit (hinge and CRF, with the projection's radius
//! from the parts' `L(0)`), and parts in order are the sharded learner's shards, mixed to
//! the same bits. Malformed states and plans are refused.

use super::tests::{merged, noisy};
use super::*;
use crate::estimator::fit;
use crate::estimator::parts::online::{state_bytes, state_from_bytes, PartPass};
use crate::estimator::spec::LearnerKind;
use crate::estimator::tagger::tests::TEMPLATES;
use crate::estimator::tagger::training_data;
use crate::estimator::Settings;
use crate::solver::online::engine::{OnlineLearner, OnlineState};
use crate::task::structured::{StructLoss, StructuredOnline};

fn online(loss: &str, epochs: usize) -> LearnerSpec {
    Settings::new()
        .with("loss", loss)
        .with("epochs", epochs.to_string())
        .structured_spec(Task::Sequence, LearnerKind::Online, 20.0, 3)
        .unwrap()
}

const FORMAT: PartFormat<'static> = PartFormat::Templates {
    text: TEMPLATES,
    origin: "tpl",
};

/// The parts of `x` in `ranges`, compiled against their merged featurizer.
pub(super) fn compiled(
    x: &[Vec<Vec<String>>],
    y: &[Vec<String>],
    ranges: &[std::ops::Range<usize>],
) -> (PartFeaturizer, Vec<CompiledPart>) {
    let parts: Vec<TagPart> = ranges
        .iter()
        .map(|r| TagPart::new(Sentences::Columns(&x[r.clone()]), &y[r.clone()], FORMAT).unwrap())
        .collect();
    let order: Vec<usize> = (0..parts.len()).collect();
    let f = merged(&parts, &order).part_featurizer(1).unwrap();
    let c = parts.iter().map(|p| p.compile(&f).unwrap()).collect();
    (f, c)
}

/// The plan of `spec` over `parts` with their `L(0)`.
fn plan(spec: &LearnerSpec, n: usize, parts: &[CompiledPart]) -> OnlinePlan {
    let p = OnlinePlan::new(spec, n).unwrap();
    let totals: Vec<f64> = parts.iter().map(|c| c.loss_at_zero_total(&p)).collect();
    p.with_loss_at_zero(&totals).unwrap()
}

/// An epoch's passes' bytes, or a stop.
type Passes = Result<Option<Vec<Vec<u8>>>>;

/// Each epoch's passes of `parts`.
fn passes<'a>(
    plan: &'a OnlinePlan,
    parts: &'a [CompiledPart],
) -> impl FnMut(Option<&[u8]>, usize) -> Passes + 'a {
    move |state, epoch| {
        let out = parts
            .iter()
            .enumerate()
            .map(|(k, c)| c.online_pass(plan, state, epoch, k))
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(out))
    }
}

#[test]
fn one_part_of_online_passes_is_the_one_process_fit_to_the_bit() {
    let (x, y) = noisy();
    let n = x.len();
    let data = training_data(Sentences::Columns(&x), &y, Some((TEMPLATES, "tpl"))).unwrap();
    for loss in ["hinge", "crf"] {
        let spec = online(loss, 4);
        let one = fit(&data, &spec, &()).unwrap();
        let (f, parts) = compiled(&x, &y, std::slice::from_ref(&(0..n)));
        let plan = plan(&spec, n, &parts);
        let back = OnlinePlan::from_bytes(&plan.to_bytes().unwrap()).unwrap();
        assert_eq!(back, plan);
        let mut pass = passes(&plan, &parts);
        let ours = fit_passes(f, &spec, &plan, &mut pass, &()).unwrap();
        assert_eq!(ours.run.steps, 4);
        assert_eq!(
            String::from_utf8(ours.model.to_bytes().unwrap()).unwrap(),
            String::from_utf8(one.model.to_bytes().unwrap()).unwrap(),
            "{loss}"
        );
    }
}

#[test]
fn parts_in_order_mix_as_the_sharded_learner_mixes_its_shards() {
    use crate::solver::online::engine::shard_ranges;
    let (x, y) = noisy();
    let n = x.len();
    let spec = online("hinge", 3);
    let ranges = shard_ranges(n, 3);
    let (f, parts) = compiled(&x, &y, &ranges);
    // In order, without shuffles: the sharded learner's shards are these parts.
    let mut plan = plan(&spec, n, &parts);
    plan.params.shuffle = false;
    let mut pass = passes(&plan, &parts);
    let done = run_passes(&plan, f.dim(), &mut pass, &()).unwrap();
    assert_eq!((done.parts, done.epochs), (3, 3));

    let data = training_data(Sentences::Columns(&x), &y, Some((TEMPLATES, "tpl"))).unwrap();
    let task = crate::task::tagging::TaggingTask::new(&f.0, &data.train).unwrap();
    let adapter = StructuredOnline::new(&task, StructLoss::Hinge).unwrap();
    let mut params = plan.params.clone();
    params.steps.shards = 3;
    let mut learner = OnlineLearner::new(&adapter, &[], params).unwrap();
    for _ in 0..3 {
        learner.epoch_observed(&());
    }
    let bits = |s: &OnlineState| -> Vec<u64> {
        s.explicit_values(true)
            .concat()
            .iter()
            .map(|v| v.to_bits())
            .collect()
    };
    let mixed = done.state.unwrap();
    assert_eq!(mixed.t, learner.state().t);
    assert_eq!(bits(&mixed), bits(learner.state()));
    // Parts out of that order shard otherwise: another model.
    let swapped: Vec<CompiledPart> = {
        let (_, mut p) = compiled(&x, &y, &ranges);
        p.swap(0, 2);
        p
    };
    let mut pass = passes(&plan, &swapped);
    let other = run_passes(&plan, f.dim(), &mut pass, &())
        .unwrap()
        .state
        .unwrap();
    assert_ne!(bits(&other), bits(&mixed));
}

#[test]
fn malformed_states_plans_and_learners_are_refused() {
    let (x, y) = noisy();
    let n = x.len();
    let (f, parts) = compiled(&x, &y, &[0..10, 10..n]);
    let spec = online("hinge", 2);
    let bare = OnlinePlan::new(&spec, n).unwrap();
    let err = parts[0].online_pass(&bare, None, 1, 0).unwrap_err();
    assert!(err.to_string().contains("L(0)"), "{err}");
    let plan = plan(&spec, n, &parts);
    assert!(parts[0].online_pass(&plan, None, 0, 0).is_err());
    // A state of other weights: another featurizer's.
    let (small_f, small) = compiled(&x[..5], &y[..5], std::slice::from_ref(&(0..5)));
    let foreign = PartPass::from_bytes(
        &small[0].online_pass(&plan, None, 1, 0).unwrap(),
        small_f.dim(),
    )
    .unwrap();
    let state = state_bytes(&foreign.state).unwrap();
    assert_eq!(
        state_from_bytes(&state, small_f.dim()).unwrap(),
        foreign.state
    );
    assert!(
        state_from_bytes(&state, f.dim()).is_err(),
        "another number of weights"
    );
    let err = parts[0].online_pass(&plan, Some(&state), 2, 0).unwrap_err();
    assert!(err.to_string().contains("weights"), "{err}");
    // Passes that did not start from the loop's state, or change their number.
    let p0 = parts[0].online_pass(&plan, None, 1, 0).unwrap();
    let mut again = |_: Option<&[u8]>, e: usize| -> Passes {
        Ok(Some(if e == 1 {
            vec![p0.clone(), p0.clone()]
        } else {
            vec![p0.clone()]
        }))
    };
    let err = run_passes(&plan, f.dim(), &mut again, &()).err().unwrap();
    assert!(err.to_string().contains("expected"), "{err}");
    let mut stale = |_: Option<&[u8]>, _: usize| Ok(Some(vec![p0.clone(), p0.clone()]));
    let err = run_passes(&plan, f.dim(), &mut stale, &()).err().unwrap();
    assert!(err.to_string().contains("did not start"), "{err}");
    // Bytes that are not a pass or a state, or a pass whose blocks do not hold together.
    // More rounds than sentences; an epoch past the plan's.
    let mut many = PartPass::from_bytes(&p0, f.dim()).unwrap();
    many.rounds = usize::MAX;
    let many = many.to_bytes().unwrap();
    let mut overflow = |_: Option<&[u8]>, _: usize| Ok(Some(vec![many.clone(), many.clone()]));
    let err = run_passes(&plan, f.dim(), &mut overflow, &())
        .err()
        .unwrap();
    assert!(err.to_string().contains("more rounds"), "{err}");
    let err = parts[0].online_pass(&plan, None, 3, 0).unwrap_err();
    assert!(err.to_string().contains("1 to 2"), "{err}");
    let mut garbage = |_: Option<&[u8]>, _: usize| Ok(Some(vec![b"not cbor".to_vec()]));
    assert!(run_passes(&plan, f.dim(), &mut garbage, &()).is_err());
    assert!(state_from_bytes(&[], f.dim()).is_err());
    assert!(parts[0].online_pass(&plan, Some(b"\xa0"), 2, 0).is_err());
    let mut broken = PartPass::from_bytes(&p0, f.dim()).unwrap();
    assert_eq!(
        PartPass::from_bytes(&broken.to_bytes().unwrap(), f.dim()).unwrap(),
        broken
    );
    let mut cut = p0.clone();
    cut.pop();
    assert!(
        PartPass::from_bytes(&cut, f.dim()).is_err(),
        "a pass cut short"
    );
    broken.break_for_tests();
    assert!(PartPass::from_bytes(&broken.to_bytes().unwrap(), f.dim()).is_err());
    // Other learners, a plan of another spec.
    let mtl = Settings::new()
        .structured_spec(Task::Sequence, LearnerKind::Mtl, 1.0, 0)
        .unwrap();
    let err = OnlinePlan::new(&mtl, n).unwrap_err();
    assert!(
        err.to_string().contains("does not train by passes"),
        "{err}"
    );
    let adagrad = Settings::new()
        .with("schedule", "adagrad")
        .structured_spec(Task::Sequence, LearnerKind::Online, 1.0, 0)
        .unwrap();
    let err = OnlinePlan::new(&adagrad, n).unwrap_err();
    assert!(err.to_string().contains("adagrad"), "{err}");
    let mut none = |_: Option<&[u8]>, _: usize| Ok(None);
    let err = fit_passes(f, &online("hinge", 5), &plan, &mut none, &()).unwrap_err();
    assert!(err.to_string().contains("not made from this"), "{err}");
}

//! A tagger trained over parts of its sentences against the one-process fit: the same
//! featurizer whatever the parts' order, and the same model bytes (CRF++ columns and feature
//! dicts); sums that do not cover the sentences are refused.

use super::*;
use crate::estimator::fit;
use crate::estimator::parts::{LoopState, PartSums, Point, PointReplica, STEPS_START};
use crate::estimator::spec::LearnerKind;
use crate::estimator::tagger::tests::{dicts, toy, TEMPLATES};
use crate::estimator::tagger::{training_data, FeatureValue};
use crate::estimator::Settings;
use crate::model::Model;
use crate::task::tagging::TokenFeatures;
use rand::{Rng, SeedableRng};

/// The toy's sentences and more, shuffled words with one label in six changed at random,
/// so that the cutting plane needs many cuts.
pub(super) fn noisy() -> (Vec<Vec<Vec<String>>>, Vec<Vec<String>>) {
    let (x, y) = toy();
    let tokens: Vec<(Vec<String>, String)> = x
        .iter()
        .flatten()
        .cloned()
        .zip(y.iter().flatten().cloned())
        .collect();
    let labels: Vec<String> = tokens.iter().map(|t| t.1.clone()).collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let (mut xs, mut ys) = (x, y);
    for _ in 0..40 {
        let len = rng.gen_range(1..7);
        let (mut s, mut l) = (Vec::new(), Vec::new());
        for _ in 0..len {
            let (t, lab) = &tokens[rng.gen_range(0..tokens.len())];
            s.push(t.clone());
            l.push(if rng.gen_range(0..6) == 0 {
                labels[rng.gen_range(0..labels.len())].clone()
            } else {
                lab.clone()
            });
        }
        xs.push(s);
        ys.push(l);
    }
    (xs, ys)
}

fn mtl() -> LearnerSpec {
    mtl_q("1")
}

/// Multi-template learning with the block norm `q` (1: the default; 2: the l2 master).
fn mtl_q(q: &str) -> LearnerSpec {
    Settings::new()
        .with("q", q)
        .structured_spec(Task::Sequence, LearnerKind::Mtl, 20.0, 0)
        .unwrap()
}

/// Uneven parts of `0..n`.
fn ranges(n: usize) -> Vec<std::ops::Range<usize>> {
    vec![0..n / 5, n / 5..(2 * n) / 3, (2 * n) / 3..n]
}

/// The model bytes of `fit_parts` over `parts` (each a part's compiled sentences), their
/// sums returned last part first. The first part separates at the point of a replica that
/// holds only the weights it reads (widened at the first separation to the second part's
/// too, and unable to widen later); the others at a replica of all the weights, checked
/// against the loop's point bit for bit (the reading replica wherever it reads). A second
/// pair of replicas joins from the loop's state at the fourth separation, as a process that
/// missed steps.
fn parts_model(
    featurizer: PartFeaturizer,
    parts: &[CompiledPart],
    n: usize,
    spec: &LearnerSpec,
) -> Vec<u8> {
    assert!(parts.len() >= 3);
    let mut full: Option<PointReplica> = None;
    let mut reading: Option<PointReplica> = None;
    let mut late: Option<(PointReplica, PointReplica)> = None;
    let mut dropped = false;
    let f = featurizer.clone();
    let reads = {
        let mut r = parts[0].reads();
        r.iter_mut()
            .zip(parts[1].reads())
            .for_each(|(a, b)| *a |= b);
        r
    };
    // Whether the third part reads weights the first two do not (in the feature dicts'
    // test, its key "rare"): a reading replica of the first two then cannot serve it.
    let third_outside = parts[2].reads().iter().zip(&reads).any(|(&m, &r)| m && !r);
    let on_reads = |w: &[f64]| -> Vec<u64> {
        w.iter()
            .zip(&reads)
            .map(|(v, &r)| if r { v.to_bits() } else { 0 })
            .collect()
    };
    let mut separate = |p: &Point<'_>| -> Result<Option<Vec<PartSums>>> {
        let r = full.get_or_insert_with(|| {
            PointReplica::new(&f.layout(), p.separation_step, None).unwrap()
        });
        if reading.is_none() {
            let mut first = PointReplica::new(&f.layout(), p.separation_step, Some(&[&parts[0]]))?;
            assert!(first.widen(&parts[1])?, "no cut held yet");
            reading = Some(first);
        }
        let narrow = reading.as_mut().unwrap();
        if let Some(step) = p.step {
            dropped |= !step.keep.is_empty();
            r.apply(step.clone())?;
            narrow.apply(step.clone())?;
            if let Some((a, b)) = &mut late {
                a.apply(step.clone())?;
                b.apply(step.clone())?;
            }
            if third_outside {
                assert!(
                    !narrow.widen(&parts[2])?,
                    "a cut dropped the third part's weights"
                );
            }
        }
        assert_eq!(r.steps(), p.index);
        assert_eq!(
            r.hash, p.hash,
            "the steps' fingerprint, separation {}",
            p.index
        );
        assert_eq!(narrow.hash, p.hash);
        assert_eq!(bits(r.at()), bits(p.at), "separation {}", p.index);
        assert_eq!(
            on_reads(narrow.at()),
            on_reads(p.at),
            "separation {}",
            p.index
        );
        if p.index == 3 {
            late = Some((
                PointReplica::from_state(&f.layout(), p.state(), None)?,
                PointReplica::from_state(&f.layout(), p.state(), Some(&[&parts[0], &parts[1]]))?,
            ));
        }
        if let Some((a, b)) = &late {
            assert_eq!(bits(a.at()), bits(p.at), "a replica from the state");
            assert_eq!(on_reads(b.at()), on_reads(p.at), "a reading one");
            assert_eq!((a.hash, b.hash), (p.hash, p.hash));
        }
        // A reading replica refuses a part whose weights it does not hold.
        if third_outside && p.index > 0 {
            assert!(parts[2].separate_at(narrow).is_err());
        }
        let sums = parts
            .iter()
            .enumerate()
            .rev()
            .map(|(k, part)| part.separate_at(if k == 0 { &*narrow } else { &*r }))
            .collect::<Result<Vec<_>>>()?;
        assert_eq!(sums[sums.len() - 1], parts[0].separate_at(r)?);
        Ok(Some(sums))
    };
    let fitted = fit_parts(featurizer, n, spec, &mut separate, &()).unwrap();
    assert!(late.is_some(), "the fit had at least four separations");
    DROPPED.with(|d| d.set(d.get() | dropped));
    fitted.model.to_bytes().unwrap()
}

thread_local! {
    /// Whether a fit of this thread dropped cuts from its working set (a step with `keep`).
    static DROPPED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn bits(w: &[f64]) -> Vec<u64> {
    w.iter().map(|v| v.to_bits()).collect()
}

/// Merged counts in the order `order` of the parts.
pub(super) fn merged(parts: &[TagPart], order: &[usize]) -> TagCounts {
    order
        .iter()
        .map(|&k| parts[k].counts().unwrap())
        .reduce(|a, b| a.merge(b).unwrap())
        .unwrap()
}

#[test]
fn columns_in_parts_train_the_one_process_model_byte_for_byte() {
    let (x, y) = noisy();
    let n = x.len();
    let format = PartFormat::Templates {
        text: TEMPLATES,
        origin: "tpl",
    };
    let parts: Vec<TagPart> = ranges(n)
        .into_iter()
        .map(|r| TagPart::new(Sentences::Columns(&x[r.clone()]), &y[r], format).unwrap())
        .collect();
    let data = training_data(Sentences::Columns(&x), &y, Some((TEMPLATES, "tpl"))).unwrap();
    let whole = TagFeaturizer::fit(data.templates.clone(), &data.train, 1).unwrap();
    // Counts merge in any order into the one-process featurizer.
    for order in [[0, 1, 2], [2, 0, 1], [1, 2, 0]] {
        let f = merged(&parts, &order).part_featurizer(1).unwrap();
        assert_eq!(f.0, whole);
    }
    let featurizer = merged(&parts, &[2, 1, 0]).part_featurizer(1).unwrap();
    let back = PartFeaturizer::from_bytes(&featurizer.to_bytes().unwrap()).unwrap();
    assert_eq!(back, featurizer);
    let compiled: Vec<CompiledPart> = parts.iter().map(|p| p.compile(&back).unwrap()).collect();
    for q in ["1", "2", "4"] {
        let one = fit(&data, &mtl_q(q), &()).unwrap();
        let ours = parts_model(featurizer.clone(), &compiled, n, &mtl_q(q));
        let Model::Tagger(m) = &one.model else {
            panic!("a tagger")
        };
        assert!(
            m.learner.contains("cuts") && !m.learner.contains(" 1 cuts"),
            "{}",
            m.learner
        );
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            String::from_utf8(one.model.to_bytes().unwrap()).unwrap(),
            "q = {q}"
        );
    }
    assert!(
        DROPPED.with(|d| d.get()),
        "some fit dropped cuts, and the replicas followed"
    );
}

#[test]
fn feature_dicts_in_parts_train_the_one_process_model_byte_for_byte() {
    let (x, y) = noisy();
    let d: Vec<Vec<TokenFeatures>> = dicts(&x);
    let n = d.len();
    // A key first seen in the last part comes last, as over all the sentences.
    let mut d = d;
    d[n - 1][0].push(("rare".into(), FeatureValue::Text("yes".into())));
    let keys = ranges(n)
        .into_iter()
        .map(|r| PartKeys::of(Sentences::Dicts(&d[r])).unwrap())
        .reduce(PartKeys::merge)
        .unwrap();
    let keys = PartKeys::from_bytes(&keys.to_bytes().unwrap()).unwrap();
    assert_eq!(keys.0, FeatureKeys::fit(&d).unwrap());
    let parts: Vec<TagPart> = ranges(n)
        .into_iter()
        .map(|r| {
            TagPart::new(
                Sentences::Dicts(&d[r.clone()]),
                &y[r],
                PartFormat::Keys(&keys),
            )
            .unwrap()
        })
        .collect();
    let featurizer = merged(&parts, &[1, 2, 0]).part_featurizer(1).unwrap();
    let compiled: Vec<CompiledPart> = parts
        .iter()
        .map(|p| p.compile(&featurizer).unwrap())
        .collect();
    let one = fit(
        &training_data(Sentences::Dicts(&d), &y, None).unwrap(),
        &mtl(),
        &(),
    )
    .unwrap();
    let ours = parts_model(featurizer, &compiled, n, &mtl());
    assert_eq!(
        String::from_utf8(ours).unwrap(),
        String::from_utf8(one.model.to_bytes().unwrap()).unwrap()
    );
}

#[test]
fn sums_that_miss_a_sentence_or_leave_the_weights_are_refused() {
    let (x, y) = noisy();
    let format = PartFormat::Templates {
        text: TEMPLATES,
        origin: "tpl",
    };
    let part = TagPart::new(Sentences::Columns(&x[..10]), &y[..10], format).unwrap();
    let featurizer = part.counts().unwrap().part_featurizer(1).unwrap();
    let compiled = part.compile(&featurizer).unwrap();
    let dim = featurizer.dim();
    // The sums cover 10 sentences of 11.
    let mut short = |p: &Point<'_>| compiled.separate(p.at, p.hash).map(|s| Some(vec![s]));
    let err = fit_parts(featurizer.clone(), 11, &mtl(), &mut short, &()).unwrap_err();
    assert!(
        err.to_string().contains("cover 10 sentences of 11"),
        "{err}"
    );
    // An index past the weights.
    let mut outside = |_: &Point<'_>| {
        Ok(Some(vec![PartSums {
            indices: vec![dim as u64],
            values: vec![1.0],
            cost: 1.0,
            examples: 10,
            hash: STEPS_START,
        }]))
    };
    let err = fit_parts(featurizer.clone(), 10, &mtl(), &mut outside, &()).unwrap_err();
    assert!(err.to_string().contains("stay below"), "{err}");
    // Sums of another point than the loop's: after other steps.
    let mut elsewhere = |p: &Point<'_>| compiled.separate(p.at, p.hash ^ 1).map(|s| Some(vec![s]));
    let err = fit_parts(featurizer.clone(), 10, &mtl(), &mut elsewhere, &()).unwrap_err();
    assert!(err.to_string().contains("another point"), "{err}");
    // Weights of the wrong length; another learner.
    assert!(compiled.separate(&[0.0; 3], STEPS_START).is_err());
    let online = Settings::new()
        .structured_spec(Task::Sequence, LearnerKind::Online, 1.0, 0)
        .unwrap();
    let mut none = |_: &Point<'_>| Ok(None);
    let err = fit_parts(featurizer, 10, &online, &mut none, &()).unwrap_err();
    assert!(err.to_string().contains("learner mtl"), "{err}");
}

#[test]
fn a_replica_refuses_parts_compiled_over_other_weights() {
    let (x, y) = noisy();
    let format = PartFormat::Templates {
        text: TEMPLATES,
        origin: "tpl",
    };
    let small = TagPart::new(Sentences::Columns(&x[..3]), &y[..3], format).unwrap();
    let large = TagPart::new(Sentences::Columns(&x), &y, format).unwrap();
    let small_f = small.counts().unwrap().part_featurizer(1).unwrap();
    let large_f = large.counts().unwrap().part_featurizer(1).unwrap();
    assert!(large_f.dim() > small_f.dim());
    let compiled = large.compile(&large_f).unwrap();
    let err = PointReplica::new(&small_f.layout(), 1.0, Some(&[&compiled])).unwrap_err();
    assert!(err.to_string().contains("a part's weights"), "{err}");
    let state = LoopState {
        separation_step: 1.0,
        cuts: Vec::new(),
        alpha: Vec::new(),
        factors: vec![1.0; small_f.0.layout().n_groups()],
        best: None,
        steps: 0,
        hash: STEPS_START,
    };
    let err = PointReplica::from_state(&small_f.layout(), state, Some(&[&compiled])).unwrap_err();
    assert!(err.to_string().contains("a part's weights"), "{err}");
    // The same part over its own featurizer is served.
    assert!(PointReplica::new(&large_f.layout(), 1.0, Some(&[&compiled])).is_ok());
}

//! A parser trained over parts of its sentences against the one-process fit: the same
//! featurizer (arcs and labeler) and the same model bytes, any trees or projective ones;
//! each part separated at a replica that holds only the
//! weights it reads.

use super::*;
use crate::data::conllu::{read_conllu, select_folds, write_sentence};
use crate::estimator::fit;
use crate::estimator::parts::{PartSums, Point, PointReplica};
use crate::estimator::spec::LearnerKind;
use crate::estimator::Settings;
use std::path::Path;

const TWT: &str = "../../data/treebank/tr-web.conllu.gz";

/// The first `n` sentences of TWT fold 0, one CoNLL-U block each.
fn blocks(n: usize) -> Vec<String> {
    let all = read_conllu(Path::new(TWT), Heads::Required).unwrap();
    select_folds(&all, &[0])
        .iter()
        .take(n)
        .map(|s| {
            let mut text = String::new();
            write_sentence(s, &s.heads().unwrap(), Some(&s.deprels()), &mut text);
            text
        })
        .collect()
}

fn mtl(q: &str) -> LearnerSpec {
    Settings::new()
        .with("q", q)
        .with("eps", "0.02")
        .structured_spec(Task::Parsing, LearnerKind::Mtl, 1.0, 3)
        .unwrap()
}

/// The parts `ranges` of `blocks` compiled against their featurizer (values and keys merged
/// in the parts' order), with their gold arcs joined; every message through its bytes.
fn featurized(
    blocks: &[String],
    ranges: &[std::ops::Range<usize>],
    projective: bool,
) -> (ParseFeaturizer, Vec<CompiledPart>, Option<PartArcs>) {
    let parts: Vec<ParsePart> = ranges
        .iter()
        .map(|r| ParsePart::new(&blocks[r.clone()], None, projective).unwrap())
        .collect();
    let values = parts
        .iter()
        .map(ParsePart::values)
        .reduce(PartValues::merge)
        .unwrap();
    let values = PartValues::from_bytes(&values.to_bytes().unwrap()).unwrap();
    let keys = parts
        .iter()
        .map(|p| p.keys(&values).unwrap())
        .reduce(PartArcKeys::merge)
        .unwrap();
    let keys = PartArcKeys::from_bytes(&keys.to_bytes().unwrap()).unwrap();
    let featurizer = ParseFeaturizer::of_parts(None, projective, values, keys).unwrap();
    let featurizer = ParseFeaturizer::from_bytes(&featurizer.to_bytes().unwrap()).unwrap();
    let compiled: Vec<CompiledPart> = parts
        .iter()
        .map(|p| p.compile(&featurizer).unwrap())
        .collect();
    let arcs = parts
        .iter()
        .map(|p| p.gold_arcs(&featurizer).unwrap())
        .reduce(|a, b| Some(a?.merge(b?)))
        .unwrap()
        .map(|a| PartArcs::from_bytes(&a.to_bytes().unwrap()).unwrap());
    (featurizer, compiled, arcs)
}

/// The model bytes of `fit_parser_parts` over the parts `ranges` of `blocks`, their values
/// and keys merged in the parts' order, each part separated at its own replica of the
/// point that holds only the weights it reads (checked against the loop's point there).
fn parts_model(
    blocks: &[String],
    ranges: &[std::ops::Range<usize>],
    projective: bool,
    spec: &LearnerSpec,
) -> Vec<u8> {
    let (featurizer, compiled, arcs) = featurized(blocks, ranges, projective);
    let layout = featurizer.layout();
    let mut replicas: Vec<PointReplica> = Vec::new();
    let mut separate = |p: &Point<'_>| -> Result<Option<Vec<PartSums>>> {
        if replicas.is_empty() {
            for c in &compiled {
                replicas.push(PointReplica::new(&layout, p.separation_step, Some(&[c]))?);
            }
        }
        let mut sums = Vec::new();
        for (c, r) in compiled.iter().zip(&mut replicas) {
            if let Some(step) = p.step {
                r.apply(step.clone())?;
            }
            let reads = c.reads();
            for (j, (a, b)) in r.at().iter().zip(p.at).enumerate() {
                if reads[j] {
                    assert_eq!(
                        a.to_bits(),
                        b.to_bits(),
                        "weight {j}, separation {}",
                        p.index
                    );
                }
            }
            sums.push(c.separate_at(r)?);
        }
        Ok(Some(sums))
    };
    let n = blocks.len();
    let fitted = fit_parser_parts(featurizer, n, spec, &mut separate, arcs, &()).unwrap();
    assert!(fitted.run.steps > 3, "a fit of several cuts");
    fitted.model.to_bytes().unwrap()
}

fn one_process(blocks: &[String], projective: bool, spec: &LearnerSpec) -> Vec<u8> {
    let tb = Treebank::from_blocks(blocks, Heads::Required).unwrap();
    fit(&training_data(&tb, None, projective).unwrap(), spec, &())
        .unwrap()
        .model
        .to_bytes()
        .unwrap()
}

#[test]
fn parts_train_the_one_process_parser_byte_for_byte() {
    let b = blocks(30);
    let ranges = [0..6, 6..19, 19..30];
    for (projective, q) in [(false, "1"), (true, "2")] {
        let want = one_process(&b, projective, &mtl(q));
        let ours = parts_model(&b, &ranges, projective, &mtl(q));
        assert!(String::from_utf8_lossy(&want).contains("\"labeler\":{"));
        assert!(
            ours == want,
            "projective {projective}, q {q}: the models differ"
        );
    }
}

#[test]
fn parts_refuse_what_does_not_fit() {
    let b = blocks(10);
    let part = ParsePart::new(&b, None, false).unwrap();
    let values = part.values();
    let keys = part.keys(&values).unwrap();
    let projective = ParseFeaturizer::of_parts(None, true, values.clone(), keys.clone()).unwrap();
    assert!(part.compile(&projective).is_err(), "other trees");
    let featurizer = ParseFeaturizer::of_parts(None, false, values, keys).unwrap();
    let mut never = |_: &Point<'_>| -> Result<Option<Vec<PartSums>>> { Ok(None) };
    // The online learner does not train over parts.
    let online = Settings::new()
        .structured_spec(Task::Parsing, LearnerKind::Online, 1.0, 3)
        .unwrap();
    let err = fit_parser_parts(featurizer.clone(), 10, &online, &mut never, None, &()).unwrap_err();
    assert!(err.to_string().contains("learner mtl"), "{err}");
    // A labeling featurizer needs the gold arcs.
    let mut never = |_: &Point<'_>| -> Result<Option<Vec<PartSums>>> { Ok(None) };
    let err = fit_parser_parts(featurizer, 10, &mtl("1"), &mut never, None, &()).unwrap_err();
    assert!(err.to_string().contains("gold arcs"), "{err}");
    // A block without a tree.
    let mut bad = b[..2].to_vec();
    bad[1] = bad[1].replacen("\t0\t", "\t_\t", 1);
    assert!(ParsePart::new(&bad, None, false).is_err());
}

/// The model bytes of `fit_parser_passes` over the parts `ranges` of `blocks` (the online
/// learner by iterative parameter mixing), every state and pass through its bytes.
fn passes_model(
    blocks: &[String],
    ranges: &[std::ops::Range<usize>],
    projective: bool,
    spec: &LearnerSpec,
) -> Vec<u8> {
    use crate::estimator::parts::online::OnlinePlan;
    let (featurizer, compiled, arcs) = featurized(blocks, ranges, projective);
    let plan = OnlinePlan::new(spec, blocks.len()).unwrap();
    let totals: Vec<f64> = compiled
        .iter()
        .map(|c| c.loss_at_zero_total(&plan))
        .collect();
    let plan = plan.with_loss_at_zero(&totals).unwrap();
    let mut pass = |state: Option<&[u8]>, epoch: usize| -> Result<Option<Vec<Vec<u8>>>> {
        let out = compiled
            .iter()
            .enumerate()
            .map(|(k, c)| c.online_pass(&plan, state, epoch, k))
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(out))
    };
    let fitted = fit_parser_passes(featurizer, spec, &plan, &mut pass, arcs, &()).unwrap();
    fitted.model.to_bytes().unwrap()
}

fn online(loss: &str) -> LearnerSpec {
    Settings::new()
        .with("loss", loss)
        .with("epochs", "3")
        .structured_spec(Task::Parsing, LearnerKind::Online, 1.0, 3)
        .unwrap()
}

#[test]
fn one_part_of_online_passes_is_the_one_process_parser_and_more_parts_mix() {
    let b = blocks(30);
    for (projective, loss) in [(false, "hinge"), (true, "crf")] {
        let want = one_process(&b, projective, &online(loss));
        let ours = passes_model(
            &b,
            std::slice::from_ref(&(0..30)),
            projective,
            &online(loss),
        );
        assert!(String::from_utf8_lossy(&want).contains("\"labeler\":{"));
        assert!(
            ours == want,
            "projective {projective}, {loss}: the models differ"
        );
    }
    // Three parts mix into another model, the same whatever runs them.
    let spec = online("hinge");
    let mixed = passes_model(&b, &[0..6, 6..19, 19..30], false, &spec);
    assert!(mixed != one_process(&b, false, &spec));
    assert!(mixed == passes_model(&b, &[0..6, 6..19, 19..30], false, &spec));
}

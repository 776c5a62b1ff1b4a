//! The batch CRF over parts (`estimator::parts::batch`) against its one-process twin: one
//! part is the one-process fit to the bit; parts in order give the one-process objective
//! and gradient at any point to the last bits, and the same optimum; malformed sums and
//! other learners are refused.

use super::online_tests::compiled;
use super::tests::noisy;
use super::*;
use crate::estimator::fit;
use crate::estimator::parts::batch::{add_parts, PartGradient};
use crate::estimator::spec::LearnerKind;
use crate::estimator::tagger::tests::TEMPLATES;
use crate::estimator::tagger::training_data;
use crate::estimator::Settings;
use crate::model::Model;
use crate::solver::batch::objective::objective_grad;
use crate::task::structured::StructLoss;

fn lbfgs(c: f64) -> LearnerSpec {
    Settings::new()
        .structured_spec(Task::Sequence, LearnerKind::Lbfgs, c, 0)
        .unwrap()
}

/// Every part's gradient at `w`.
fn gradients(parts: &[CompiledPart], w: &[f64]) -> Result<Option<Vec<PartGradient>>> {
    parts
        .iter()
        .map(|p| p.crf_gradient(w))
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

#[test]
fn one_part_of_the_batch_crf_is_the_one_process_fit_to_the_bit() {
    let (x, y) = noisy();
    let n = x.len();
    let data = training_data(Sentences::Columns(&x), &y, Some((TEMPLATES, "tpl"))).unwrap();
    let spec = lbfgs(5.0);
    let one = fit(&data, &spec, &()).unwrap();
    let (f, parts) = compiled(&x, &y, std::slice::from_ref(&(0..n)));
    let mut evaluate = |w: &[f64]| gradients(&parts, w);
    let ours = fit_lbfgs_parts(f, n, &spec, &mut evaluate, &()).unwrap();
    assert_eq!(ours.run.steps, one.run.steps);
    assert!(ours.run.steps > 5);
    assert_eq!(
        String::from_utf8(ours.model.to_bytes().unwrap()).unwrap(),
        String::from_utf8(one.model.to_bytes().unwrap()).unwrap(),
    );
}

#[test]
fn parts_in_order_give_the_one_process_objective_and_optimum() {
    let (x, y) = noisy();
    let n = x.len();
    let spec = lbfgs(5.0);
    let ranges = [0..n / 3, n / 3..n / 2, n / 2..n];
    let (f, parts) = compiled(&x, &y, &ranges);
    let data = training_data(Sentences::Columns(&x), &y, Some((TEMPLATES, "tpl"))).unwrap();
    let task = crate::task::tagging::TaggingTask::new(&f.0, &data.train).unwrap();
    let lambda = 1.0 / (5.0 * n as f64);
    let dim = f.dim();
    // At points that are not the optimum: the same objective and gradient up to rounding.
    for scale in [0.0, 0.3, 3.0] {
        let w: Vec<f64> = (0..dim).map(|j| scale * ((j as f64) * 0.7).sin()).collect();
        let mut want = vec![0.0; dim];
        let v = objective_grad(&task, StructLoss::Crf, lambda, &w, Some(&mut want)).unwrap();
        let mut got = vec![0.0; dim];
        let sums = gradients(&parts, &w).unwrap().unwrap();
        let u = add_parts(&sums, n, lambda, &w, &mut got).unwrap();
        assert!((u - v).abs() <= 1e-12 * v.abs(), "{u} {v}");
        for (a, b) in got.iter().zip(&want) {
            assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()), "{a} {b}");
        }
    }
    // The same optimum: the objective of the fit over parts within L-BFGS's tolerance of
    // one process's, and the same tags.
    let one = fit(&data, &spec, &()).unwrap();
    let mut evaluate = |w: &[f64]| gradients(&parts, w);
    let ours = fit_lbfgs_parts(f, n, &spec, &mut evaluate, &()).unwrap();
    let (Model::Tagger(a), Model::Tagger(b)) = (&one.model, &ours.model) else {
        panic!("taggers")
    };
    let fa = objective_grad(&task, StructLoss::Crf, lambda, &a.weights, None).unwrap();
    let fb = objective_grad(&task, StructLoss::Crf, lambda, &b.weights, None).unwrap();
    assert!((fa - fb).abs() <= 1e-6 * fa, "{fa} {fb}");
    let sentences = Sentences::Columns(&x);
    let tag = |m: &Model| {
        crate::estimator::tagger::SequenceTagger::new(m.clone())
            .unwrap()
            .predict(sentences)
            .unwrap()
    };
    assert_eq!(tag(&one.model), tag(&ours.model));
}

#[test]
fn malformed_gradients_and_other_learners_are_refused() {
    let (x, y) = noisy();
    let n = x.len();
    let (f, parts) = compiled(&x, &y, &[0..n / 2, n / 2..n]);
    let dim = f.dim();
    let w = vec![0.0; dim];
    let good = gradients(&parts, &w).unwrap().unwrap();
    let mut g = vec![0.0; dim];
    assert!(add_parts(&good, n, 0.1, &w, &mut g).is_ok());
    let bad = |edit: &dyn Fn(&mut Vec<PartGradient>)| {
        let mut parts = good.clone();
        edit(&mut parts);
        add_parts(&parts, n, 0.1, &w, &mut vec![0.0; dim])
            .unwrap_err()
            .to_string()
    };
    assert!(bad(&|p| {
        p.pop();
    })
    .contains("sentences"));
    assert!(bad(&|p| p[0].values[0] = f64::NAN).contains("not finite"));
    assert!(bad(&|p| p[1].loss = f64::INFINITY).contains("not finite"));
    assert!(bad(&|p| p[0].indices.swap(0, 1)).contains("increase"));
    assert!(bad(&|p| *p[0].indices.last_mut().unwrap() = dim as u64).contains("below"));
    assert!(bad(&|p| {
        p[0].values.pop();
    })
    .contains("indices"));
    assert!(parts[0].crf_gradient(&w[1..]).is_err());
    // Another learner, and a stop.
    let mtl = Settings::new()
        .structured_spec(Task::Sequence, LearnerKind::Mtl, 1.0, 0)
        .unwrap();
    let mut evaluate = |w: &[f64]| gradients(&parts, w);
    let e = fit_lbfgs_parts(f.clone(), n, &mtl, &mut evaluate, &())
        .unwrap_err()
        .to_string();
    assert!(e.contains("lbfgs"), "{e}");
    let mut stop = |_: &[f64]| -> Result<Option<Vec<PartGradient>>> { Ok(None) };
    assert!(fit_lbfgs_parts(f, n, &lbfgs(1.0), &mut stop, &()).is_err());
}

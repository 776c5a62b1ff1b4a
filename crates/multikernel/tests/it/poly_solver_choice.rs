//! `--algo poly` (`Learner::Poly`): lp-MKL with p = 2 over the explicit product kernels where
//! their list fits the memory limit, mirror descent otherwise, on the same objective.

use multikernel::data::{read_table, Dataset, TargetKind};
use multikernel::estimator::{fit, Budget, Learner, LearnerSpec, PolySpec, Task};
use multikernel::kernel::MemoryLimit;
use multikernel::model::Model;
use std::path::Path;

fn boston_head(rows: usize) -> Dataset {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/uci/boston-housing.csv");
    let d = read_table(&p, None, TargetKind::Real, None, None).unwrap();
    d.select(&(0..rows).collect::<Vec<_>>())
}

fn objective_and_sampling(m: &Model) -> (f64, String) {
    let Model::PolyMkl(b) = m else {
        panic!("a polynomial model")
    };
    (b.learner.objective, b.learner.sampling.clone())
}

fn mse(m: &Model, d: &Dataset) -> f64 {
    m.score_with(d.x.view(), &d.targets, &MemoryLimit::default())
        .unwrap()
        .value
}

#[test]
#[ignore = "full tier: poly fits on boston-housing, 9 s"]
fn lp_where_the_list_fits_mirror_descent_where_it_does_not() {
    let data = boston_head(120);
    let spec_with = |learner: Learner, memory: MemoryLimit| {
        let mut s = LearnerSpec::new(Task::Regression, learner).with_c(1.0);
        s.memory = memory;
        s
    };
    let poly = PolySpec {
        degree: 3,
        budget: Budget::Iterations(3000),
        ..PolySpec::default()
    };
    // 560 product kernels of 13 inputs: about 1.7 MB for lp-MKL.
    let lp = fit(
        &data,
        &spec_with(Learner::Poly(poly.clone()), MemoryLimit::default()),
        &(),
    )
    .unwrap();
    assert!(
        lp.notes[0].starts_with("poly: lp-MKL (p = 2) over all 560"),
        "{:?}",
        lp.notes
    );
    let (j_lp, sampling) = objective_and_sampling(&lp.model);
    assert_eq!(sampling, "lp-mkl");
    // Mirror descent on the same objective never goes below lp-MKL's closed form, and gets
    // close to it.
    let md = fit(
        &data,
        &spec_with(Learner::MirrorDescent(poly.clone()), MemoryLimit::default()),
        &(),
    )
    .unwrap();
    let (j_md, _) = objective_and_sampling(&md.model);
    assert!(j_lp <= j_md * (1.0 + 1e-9), "lp {j_lp} md {j_md}");
    assert!(j_md <= j_lp * 1.01, "lp {j_lp} md {j_md}");
    // Their predictions agree as closely as their objectives.
    let (a, b) = (mse(&lp.model, &data), mse(&md.model, &data));
    assert!((a - b).abs() <= 0.05 * b, "training MSE lp {a} md {b}");
    // The model file round-trips and predicts the same.
    let back = Model::from_bytes(&lp.model.to_bytes().unwrap()).unwrap();
    assert_eq!(
        back.decision_function(data.x.view()).unwrap(),
        lp.model.decision_function(data.x.view()).unwrap()
    );
    // Under a limit the list does not fit (1 MiB: lp-MKL needs 1.8 MB, the sampler 0.7 MB):
    // mirror descent.
    let small = MemoryLimit::gib(1.0 / 1024.0);
    let fallback = fit(&data, &spec_with(Learner::Poly(poly), small), &()).unwrap();
    assert!(
        fallback.notes[0].starts_with("poly: mirror descent: the 560 product kernels"),
        "{:?}",
        fallback.notes
    );
    assert_eq!(objective_and_sampling(&fallback.model).1, "stoch");
}

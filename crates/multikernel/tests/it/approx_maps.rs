//! Nystrom and polynomial-sketch kernels (issue 17) end to end through the library
//! estimator: the online learner trains them as explicit groups (no support points), with
//! accuracy near the exact kernels' on ionosphere; the model file keeps the maps bit for bit.

use multikernel::data::split::stratified_split;
use multikernel::data::{read_table, Dataset, TargetKind, Targets};
use multikernel::estimator::{fit, Learner, LearnerSpec, OnlineSpec, OnlineSteps, Task};
use multikernel::kernel::MemoryLimit;
use multikernel::model::Model;
use std::path::PathBuf;

fn uci(name: &str) -> Dataset {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../data/uci/{name}.csv"));
    read_table(&p, None, TargetKind::Classes, None, None).unwrap()
}

fn spec(kernels: &[&str]) -> LearnerSpec {
    LearnerSpec::new(
        Task::Binary,
        Learner::Online(OnlineSpec {
            steps: OnlineSteps {
                epochs: 20,
                ..OnlineSteps::default()
            },
            ..OnlineSpec::default()
        }),
    )
    .with_kernels(kernels.iter().map(|k| k.parse().unwrap()).collect())
    .with_c(10.0)
    .with_seed(3)
}

fn accuracy(model: &Model, test: &Dataset) -> f64 {
    model
        .score_with(test.x.view(), &test.targets, &MemoryLimit::default())
        .unwrap()
        .value
}

/// A Gaussian kernel by 128 Nystrom landmarks and a degree-2 polynomial kernel by a sketch of
/// 2048 products: trained as explicit groups (no support points), within 0.04 of the exact
/// kernels' test accuracy; the same run twice gives the same model, and the model file
/// round trip gives the same bytes and the same predictions.
#[test]
fn nystrom_and_sketch_groups_learn_like_the_exact_kernels() {
    let data = uci("ionosphere");
    let Targets::Classes { y, .. } = &data.targets else {
        unreachable!()
    };
    let (tr, te) = stratified_split(y, 0.7, 4);
    let (train, test) = (data.select(&tr), data.select(&te));
    let exact = fit(
        &train,
        &spec(&["rbf:norm=trace", "poly:degree=2,offset=1,norm=trace"]),
        &(),
    )
    .unwrap()
    .model;
    let approx_spec = spec(&[
        "rbf:norm=trace,approx=nystrom,dim=128",
        "poly:degree=2,offset=1,norm=trace,approx=sketch,dim=2048",
    ]);
    let approx = fit(&train, &approx_spec, &()).unwrap().model;
    let Model::KernelMachine(m) = &approx else {
        panic!("an online model expected")
    };
    assert_eq!(m.support.rows, 0, "every kernel is an explicit group");
    assert!(m.primal.iter().all(|w| !w.is_empty()));
    let (acc_exact, acc_approx) = (accuracy(&exact, &test), accuracy(&approx, &test));
    eprintln!("test accuracy: exact kernels {acc_exact:.4}, Nystrom + sketch {acc_approx:.4}");
    assert!(
        acc_approx > acc_exact - 0.04,
        "approximate {acc_approx} vs exact {acc_exact}"
    );
    let again = fit(&train, &approx_spec, &()).unwrap().model;
    assert_eq!(again.to_bytes().unwrap(), approx.to_bytes().unwrap());
    let bytes = approx.to_bytes().unwrap();
    let back = Model::from_bytes(&bytes).unwrap();
    assert_eq!(back.to_bytes().unwrap(), bytes);
    assert_eq!(
        back.predict(test.x.view()).unwrap(),
        approx.predict(test.x.view()).unwrap()
    );
}

/// A model file whose Nystrom projection was cut short is refused with an error when read.
#[test]
fn a_mangled_nystrom_model_file_is_an_error() {
    let data = uci("ionosphere");
    let spec = spec(&["rbf:approx=nystrom,dim=16"]);
    let model = fit(&data, &spec, &()).unwrap().model;
    let mut v: serde_json::Value = serde_json::from_slice(&model.to_bytes().unwrap()).unwrap();
    let mut cut = false;
    fn visit(v: &mut serde_json::Value, cut: &mut bool) {
        match v {
            serde_json::Value::Object(o) => {
                if let Some(serde_json::Value::Object(p)) = o.get_mut("projection_t") {
                    if let Some(serde_json::Value::Array(d)) = p.get_mut("data") {
                        d.pop();
                        *cut = true;
                    }
                }
                o.values_mut().for_each(|x| visit(x, cut));
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| visit(x, cut)),
            _ => {}
        }
    }
    visit(&mut v, &mut cut);
    assert!(cut, "the model has a Nystrom projection");
    let e = Model::from_bytes(&serde_json::to_vec(&v).unwrap())
        .unwrap_err()
        .to_string();
    eprintln!("{e}");
    // Refused when read (the model's own check: the kernel has explicit weights but its
    // mangled basis gives no map), never a panic when predicting.
    assert!(
        e.contains("Nystrom projection") || e.contains("no feature map"),
        "{e}"
    );
}

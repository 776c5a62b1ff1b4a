//! OCR (Martins et al. 2011, Sec. 4.1) hot paths on fold 0 of the shipped data
//! (626 words, 4,617 characters; tested on the other 47,535 characters):
//! - `grams/train_lqgb`: the four training Gram matrices (L, Q, G dense; B1-spline sparse);
//! - `grams/test_scores_lqg`: unigram scores of the nine test folds for an L+Q+G expansion
//!   over all training characters (the test Gram rows streamed in blocks, never stored);
//! - `spom/mkl-lqg_20_epochs` and `spom/mkl-lb_20_epochs`: 20 epochs of SPOM (Alg. 3) with the
//!   squared l2,1 regularizer, Grams precomputed.
//!
//! `cargo bench -p multikernel --bench ocr` (run from the workspace root or the crate; the data
//! file is found relative to this crate).

use criterion::{criterion_group, criterion_main, Criterion};
use multikernel::data::ocr::read_ocr;
use multikernel::data::Matrix;
use multikernel::data::SequenceData;
use multikernel::engine::pipeline::sequence::grams::lambda_from_c;
use multikernel::engine::pipeline::sequence::spom::{fit_with_grams, SequenceFitConfig};
use multikernel::engine::pipeline::sequence::KernelGroup;
use multikernel::engine::prox::RegSpec;
use multikernel::engine::solver::online::{OnlineParams, OnlineSteps};
use multikernel::engine::task::sequence::SeqLoss;
use multikernel::kernel::binary::{binary_grams, expansion_scores};
use multikernel::kernel::{FittedKernel, KernelSpec, MemoryLimit};
use std::path::Path;

const L: &str = "linear:norm=diag";
const Q: &str = "poly:degree=2,offset=1,norm=diag";
const G: &str = "rbf:sigma2=5";
const B: &str = "bspline:zeros=0.95";

fn data() -> (SequenceData, SequenceData) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/ocr/letter.data.gz");
    let d = read_ocr(&path).expect("data/ocr/letter.data.gz");
    (d.select_folds(&[0]), d.exclude_folds(&[0]))
}

fn fit(specs: &[&str], x: &Matrix) -> Vec<FittedKernel> {
    specs
        .iter()
        .map(|s| {
            FittedKernel::fit(&s.parse::<KernelSpec>().expect("spec"), x, &[], 1).expect("fit")
        })
        .collect()
}

fn grams(c: &mut Criterion) {
    let (train, test) = data();
    let lim = MemoryLimit::default();
    let mut g = c.benchmark_group("grams");
    g.sample_size(10);
    let k4 = fit(&[L, Q, G, B], &train.x);
    g.bench_function("train_lqgb", |b| {
        b.iter(|| binary_grams(&k4, &train.x, None, &lim).expect("grams"))
    });
    let k3 = fit(&[L, Q, G], &train.x);
    let coefs: Vec<Option<Matrix>> = (0..3)
        .map(|k| {
            let mut m = Matrix::zeros(train.n_positions(), 26);
            for (i, v) in m.data.iter_mut().enumerate() {
                *v = ((i * 7 + k) % 13) as f64 - 6.0;
            }
            Some(m)
        })
        .collect();
    g.bench_function("test_scores_lqg", |b| {
        b.iter(|| expansion_scores(&k3, &train.x, &coefs, 26, &test.x, &lim).expect("scores"))
    });
    g.finish();
}

fn spom(c: &mut Criterion) {
    let (train, _) = data();
    let lim = MemoryLimit::default();
    let mut g = c.benchmark_group("spom");
    g.sample_size(10);
    for (name, specs) in [("mkl-lqg", vec![L, Q, G]), ("mkl-lb", vec![L, B])] {
        let kernels = fit(&specs, &train.x);
        let grams = binary_grams(&kernels, &train.x, None, &lim)
            .expect("grams")
            .expect("binary pixels");
        let groups = KernelGroup::separate(&kernels);
        let cfg = SequenceFitConfig {
            loss: SeqLoss::Hinge,
            kernels: specs.iter().map(|s| s.parse().expect("spec")).collect(),
            average: false,
            params: OnlineParams {
                lambda: lambda_from_c(1.0, train.n_sequences()),
                reg: RegSpec::L21Sq,
                steps: OnlineSteps {
                    eta0: 3.0,
                    epochs: 20,
                    ..OnlineSteps::default()
                },
                seed: 1,
                ..OnlineParams::default()
            },
            memory: lim,
        };
        g.bench_function(format!("{name}_20_epochs"), |b| {
            b.iter(|| {
                fit_with_grams(
                    &train,
                    kernels.clone(),
                    groups.clone(),
                    &grams,
                    &cfg,
                    &(),
                    &mut |_, _| multikernel::run::Control::Continue,
                )
                .expect("fit")
            })
        });
    }
    g.finish();
}

criterion_group!(benches, grams, spom);
criterion_main!(benches);

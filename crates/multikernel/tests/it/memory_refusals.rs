//! Memory refusals (issue 11, item 6): for every learner, a memory limit below what the data
//! need is refused with `Error::Memory` naming the size needed, before the work starts (the
//! observer never sees a step), and prediction under a limit too small for its kernel rows
//! is refused the same way. A template tagger's structures sized by its labels (issue 46,
//! item 3: the label-pair parts of a bigram template with macros, the weights, the sentences'
//! buffers) are estimated before they are allocated and refused the same way.

use multikernel::data::columns::{parse_columns, ColumnSentence};
use multikernel::data::ocr::read_ocr;
use multikernel::data::{read_table, Dataset, TargetKind};
use multikernel::engine::pipeline::columns::tagging::{
    fit_tagger, LabelMemory, TaggerLearner, TaggerSpec,
};
use multikernel::engine::solver::online::params::{OnlineParams, OnlineSteps};
use multikernel::engine::task::structured::StructLoss;
use multikernel::engine::task::tagging::{TagData, TagFeaturizer, TaggingTask, TemplateFile};
use multikernel::error::Error;
use multikernel::estimator::{
    fit, Budget, GompSpec, Learner, LearnerSpec, LpMklSpec, OnlineSpec, PolySpec, Task,
};
use multikernel::kernel::MemoryLimit;
use multikernel::run::{Control, Progress};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

fn table(name: &str, target: TargetKind) -> Dataset {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../data/uci/{name}"));
    read_table(&p, None, target, None, None).unwrap()
}

/// 16 KiB: far below one 208 x 208 Gram matrix (338 KiB) or 60 columns of 208 (98 KiB).
const TINY: MemoryLimit = MemoryLimit { bytes: 16 << 10 };

/// The refusal's sizes: needed above the limit, the limit as given.
fn refused(label: &str, r: multikernel::Result<impl std::fmt::Debug>) -> (usize, String) {
    match r {
        Err(Error::Memory {
            what,
            needed,
            limit,
        }) => {
            assert_eq!(limit, TINY.bytes, "{label}");
            assert!(needed > limit, "{label}: needs {needed}");
            let msg = Error::Memory {
                what: what.clone(),
                needed,
                limit,
            }
            .to_string();
            assert!(
                msg.contains("GiB") || msg.contains("MiB") || msg.contains("KiB"),
                "{msg}"
            );
            (needed, what)
        }
        other => panic!("{label}: expected a memory refusal, got {other:?}"),
    }
}

#[test]
fn every_learner_refuses_a_limit_below_its_kernel_matrices_before_any_step() {
    let sonar = table("sonar.csv", TargetKind::Classes);
    let boston = table("boston-housing.csv", TargetKind::Real);
    let poly = PolySpec {
        degree: 2,
        budget: Budget::Iterations(30),
        ..PolySpec::default()
    };
    let kernels = |ks: &[&str]| ks.iter().map(|k| k.parse().unwrap()).collect();
    let specs = vec![
        (
            "online",
            LearnerSpec::new(Task::Binary, Learner::Online(OnlineSpec::default()))
                .with_kernels(kernels(&["rbf", "linear"])),
            &sonar,
        ),
        (
            "gomp",
            LearnerSpec::new(Task::Binary, Learner::Gomp(GompSpec::default())),
            &sonar,
        ),
        (
            "lp-mkl",
            LearnerSpec::new(Task::Regression, Learner::LpMkl(LpMklSpec { p: 2.0 }))
                .with_kernels(kernels(&["rbf", "linear"])),
            &boston,
        ),
        (
            "mirror-descent",
            LearnerSpec::new(Task::Binary, Learner::MirrorDescent(poly.clone())),
            &sonar,
        ),
        (
            "ucd",
            LearnerSpec::new(Task::Regression, Learner::Ucd(poly)),
            &boston,
        ),
    ];
    for (label, mut spec, data) in specs {
        spec.memory = TINY;
        let steps = AtomicU64::new(0);
        let count = |_: &Progress| {
            steps.fetch_add(1, Ordering::SeqCst);
            Control::Continue
        };
        let (needed, what) = refused(label, fit(data, &spec, &count));
        // The kernels' training matrices: n x n each, or n x rank for a kernel with an
        // explicit low-rank factor (GOMP's default dictionary: one linear kernel per feature,
        // rank 1), n = the training rows.
        let n = data.len();
        assert!(needed >= n * 8 * 2, "{label}: {what}: {needed}");
        assert!(what.contains(&n.to_string()), "{label}: {what}");
        assert_eq!(steps.load(Ordering::SeqCst), 0, "{label}: a step ran");
    }
}

#[test]
fn sequences_refuse_too() {
    let ocr =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models-v1/ocr-train.data.gz");
    let words = read_ocr(&ocr).unwrap();
    let mut spec = LearnerSpec::new(
        Task::Sequence,
        Learner::Online(OnlineSpec {
            steps: OnlineSteps {
                epochs: 2,
                ..OnlineSteps::default()
            },
            ..OnlineSpec::default()
        }),
    )
    .with_kernels(vec!["rbf".parse().unwrap()]);
    spec.memory = TINY;
    let steps = AtomicU64::new(0);
    let count = |_: &Progress| {
        steps.fetch_add(1, Ordering::SeqCst);
        Control::Continue
    };
    refused("sequence", fit(&words, &spec, &count));
    assert_eq!(steps.load(Ordering::SeqCst), 0);
}

#[test]
fn prediction_refuses_a_limit_below_its_kernel_rows() {
    let sonar = table("sonar.csv", TargetKind::Classes);
    let spec = LearnerSpec::new(Task::Binary, Learner::Online(OnlineSpec::default()))
        .with_kernels(vec!["rbf".parse().unwrap()]);
    let model = fit(&sonar, &spec, &()).unwrap().model;
    refused("predict", model.predict_with(sonar.x.view(), &TINY));
    refused(
        "score",
        model.score_with(sonar.x.view(), &sonar.targets, &TINY),
    );
    // The same rows under the default limit predict.
    assert_eq!(model.predict(sonar.x.view()).unwrap().len(), sonar.len());
}

/// The columns file of issue 46's label-pair finding with `labels` labels (250 there: the
/// bytes `benches/hostile/memory.sh` writes, 4.7 KB): 400 tokens in sentences of 20, token `t`
/// the line `w{t % 37} f{t % 11} L{t % labels}` (the label zero-padded to 3 digits).
fn label_pair_columns(labels: usize) -> Vec<ColumnSentence> {
    let mut text = String::new();
    for t in 0..400 {
        text.push_str(&format!("w{} f{} L{:03}\n", t % 37, t % 11, t % labels));
        if t % 20 == 19 {
            text.push('\n');
        }
    }
    parse_columns(text.as_bytes(), Path::new("label-pairs.txt"))
        .unwrap()
        .sentences
}

/// Its templates: a unigram on the word and one bigram template with macros (CRF++'s bigram
/// features: one weight per expansion and label pair, one part per label pair and token).
fn label_pair_templates() -> TemplateFile {
    TemplateFile::parse(b"U00:%x[0,0]\nB01:%x[0,1]\n", Path::new("label-pairs.tpl")).unwrap()
}

/// The case: 250 labels and `B01:%x[0,1]` under 0.05 GiB are refused before the
/// label-pair parts (0.53 GiB) are built, naming the template, the labels, the positions and
/// the estimate.
#[test]
fn label_pair_parts_over_the_limit_are_refused_before_they_are_allocated() {
    let data = TagData::new(label_pair_columns(250), label_pair_templates());
    let mut spec = LearnerSpec::new(
        Task::Sequence,
        Learner::Online(OnlineSpec {
            steps: OnlineSteps {
                epochs: 1,
                ..OnlineSteps::default()
            },
            ..OnlineSpec::default()
        }),
    );
    spec.memory = MemoryLimit::try_gib(0.05).unwrap();
    let steps = AtomicU64::new(0);
    let count = |_: &Progress| {
        steps.fetch_add(1, Ordering::SeqCst);
        Control::Continue
    };
    match fit(&data, &spec, &count) {
        Err(e @ Error::Memory { .. }) => {
            let msg = e.to_string();
            let Error::Memory {
                what,
                needed,
                limit,
            } = e
            else {
                unreachable!()
            };
            assert_eq!(limit, spec.memory.bytes);
            // The label-pair parts alone: 380 positions x 62,500 pairs, each a row offset (8
            // bytes) and one entry (16).
            assert!(needed >= 380 * 62_500 * 24, "{needed}");
            for part in ["250 labels", "B01:%x[0,1]", "380 positions", "weights"] {
                assert!(what.contains(part), "{part}: {what}");
            }
            assert!(
                msg.contains("needs 0.") && msg.contains(" GiB but"),
                "{msg}"
            );
        }
        other => panic!("expected a memory refusal, got {other:?}"),
    }
    assert_eq!(steps.load(Ordering::SeqCst), 0, "a step ran");
}

/// The estimate of the label-pair parts is the bytes the task allocates (counted by hand,
/// and read from the task built), a tagger trains under a limit equal to its estimate and is
/// refused one byte below it, and its prediction is refused under a limit below its
/// sentences' buffers.
#[test]
fn the_estimate_is_the_label_pair_parts_allocated_and_the_limit_is_its_bound() {
    let train = label_pair_columns(20);
    let f = TagFeaturizer::fit(label_pair_templates(), &train, 1).unwrap();
    // 20 sentences of 20 tokens: 19 positions x 400 label pairs each, one row offset per
    // part (and one more per sentence) and one entry per part (every `f` value is kept).
    let by_hand = 20 * ((19 * 400 + 1) * 8 + 19 * 400 * 16);
    assert_eq!(f.pair_part_bytes(&train), (380, by_hand));
    assert_eq!(
        TaggingTask::new(&f, &train).unwrap().pair_part_heap_bytes(),
        by_hand
    );
    let spec = |memory| TaggerSpec {
        learner: TaggerLearner::Online {
            params: OnlineParams {
                steps: OnlineSteps {
                    epochs: 2,
                    averaging: true,
                    ..OnlineSteps::default()
                },
                ..OnlineParams::default()
            },
            loss: StructLoss::Crf,
        },
        min_count: 1,
        track_objective: false,
        average_from: 0,
        calibrate: None,
        memory,
    };
    let est = LabelMemory::training(&f, &train, None, &spec(MemoryLimit::default()));
    assert_eq!(est.pair_parts, by_hand);
    assert_eq!(est.labels, 20);
    // Two copies of the weights (iterate and average) and four at the end of an epoch: 20 x 20
    // label pairs per kept `f` value (11) and 20 labels per kept word (37).
    assert_eq!(est.weights, 6 * 8 * (11 * 400 + 37 * 20));
    assert!(est.buffers > 0 && est.total() < 16 << 20, "{est:?}");
    let at = |bytes| {
        fit_tagger(
            &train,
            None,
            label_pair_templates(),
            &spec(MemoryLimit { bytes }),
            &(),
        )
    };
    let model = at(est.total()).unwrap().model;
    assert!(matches!(
        at(est.total() - 1),
        Err(Error::Memory { needed, .. }) if needed == est.total()
    ));
    let tagging = LabelMemory::applying(&model, &train, false).total();
    let marginals = LabelMemory::applying(&model, &train, true).total();
    assert!(0 < tagging && tagging < marginals, "{tagging} {marginals}");
    let small = MemoryLimit { bytes: tagging - 1 };
    assert!(matches!(
        model.tag_ids_with(&train, &small),
        Err(Error::Memory { .. })
    ));
    assert!(matches!(
        model.marginals_with(&train, &MemoryLimit { bytes: tagging }),
        Err(Error::Memory { .. })
    ));
    assert_eq!(
        model
            .tag_ids_with(&train, &MemoryLimit { bytes: tagging })
            .unwrap(),
        model.tag_ids(&train).unwrap()
    );
    assert_eq!(model.marginals(&train).unwrap().len(), 20);
}

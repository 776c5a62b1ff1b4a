use super::*;
use crate::data::Matrix;
use crate::kernel::Gram;
use crate::prox::RegSpec;
use crate::solver::online::{OnlineParams, OnlineSteps, StepSchedule};
use crate::task::vector::VectorTask;
use crate::task::Loss;
use rand::{Rng, SeedableRng};

/// Points in R^3 and the Gram matrices of two kernel groups on them: linear and
/// `(1 + x.y)^2`.
fn points(n: usize, seed: u64) -> (Vec<[f64; 3]>, Vec<Gram>) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let x: Vec<[f64; 3]> = (0..n)
        .map(|_| [0; 3].map(|_| rng.gen_range(-1.0..1.0)))
        .collect();
    let dot = |a: &[f64; 3], b: &[f64; 3]| a.iter().zip(b).map(|(u, v)| u * v).sum::<f64>();
    let gram = |k: &dyn Fn(f64) -> f64| {
        let data = (0..n * n).map(|e| k(dot(&x[e / n], &x[e % n]))).collect();
        Gram::Dense(Matrix::from_vec(n, n, data))
    };
    let grams = vec![gram(&|d| d), gram(&|d| (1.0 + d) * (1.0 + d))];
    (x, grams)
}

#[test]
fn shards_cover_the_order_in_contiguous_pieces_of_near_equal_length() {
    for n in 0..30 {
        for shards in 1..8 {
            let r = shard_ranges(n, shards);
            assert_eq!(r.len(), shards.min(n).max(1), "{n} {shards}");
            assert_eq!(r[0].start, 0);
            assert_eq!(r.last().unwrap().end, n);
            for w in r.windows(2) {
                assert_eq!(w[0].end, w[1].start);
                assert!(w[0].len() >= w[1].len() && w[0].len() <= w[1].len() + 1);
            }
        }
    }
}

/// The slow twin: with one example per shard, one sharded epoch from zero is, by hand,
/// the mean of the single-example updates followed by one proximal step. A single round of
/// Alg. 1 on example `i` from zero (hinge loss 1, score gradient `-y_i`, constant step `eta`,
/// the l2 regularizer's prox a shrink by `f = 1 / (1 + eta lambda)`, no projection) sets
/// kernel coefficient `i` of each group to `eta y_i f` and the (unregularized) bias to
/// `eta y_i`. The mix divides by the number of shards and shrinks once more by `f`; the
/// averaged iterate is the mean of the shards' single iterates (before the last shrink); the
/// cached scores are `K c` and the maintained norms `c^T K c`.
#[test]
fn one_example_per_shard_is_the_mean_of_single_example_updates() {
    let n = 7;
    let (_, grams) = points(n, 5);
    let y: Vec<f64> = (0..n)
        .map(|i| if i % 3 == 0 { -1.0 } else { 1.0 })
        .collect();
    let task = VectorTask::new(Loss::Hinge, y.clone(), 1, true);
    let (eta, lambda) = (0.4, 0.3);
    let params = OnlineParams {
        lambda,
        reg: RegSpec::L2,
        steps: OnlineSteps {
            eta0: eta,
            schedule: StepSchedule::Constant,
            epochs: 1,
            averaging: true,
            projection: false,
            shards: n,
            ..OnlineSteps::default()
        },
        shuffle: false,
        ..OnlineParams::default()
    };
    let mut learner = OnlineLearner::new(&task, &grams, params).unwrap();
    assert_eq!(learner.epoch_observed(&()), Control::Continue);
    assert_eq!(learner.progressive_loss(), (n as f64, n));
    let st = learner.state();
    assert_eq!(st.t, 1);
    let f = 1.0 / (1.0 + eta * lambda);
    let k = n as f64;
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-13 * (1.0 + b.abs());
    for (m, (coefs, avg)) in st
        .kernel_coefs(false)
        .iter()
        .zip(st.kernel_coefs(true))
        .enumerate()
    {
        for i in 0..n {
            let want = eta * y[i] * f * f / k;
            assert!(
                close(coefs[i], want),
                "group {m} point {i}: {} {want}",
                coefs[i]
            );
            assert!(close(avg[i], eta * y[i] * f / k), "average {m} {i}");
        }
        let Gram::Dense(km) = &grams[m] else {
            unreachable!()
        };
        let g = &st.kernel[m];
        let mut sq = 0.0;
        for p in 0..n {
            let kc: f64 = (0..n).map(|j| km.get(p, j) * coefs[j]).sum();
            assert!(close(g.scale() * g.image()[p], kc), "scores {m} {p}");
            sq += coefs[p] * kc;
        }
        assert!(close(g.sqnorm(), sq), "norm {m}: {} {sq}", g.sqnorm());
    }
    let bias = st.explicit_values(false)[0][0];
    assert!(close(bias, eta * y.iter().sum::<f64>() / k), "{bias}");
}

/// A state after a few sharded epochs (kernel and explicit groups, the squared group lasso,
/// averaging, projection, shuffling), on a pool of `threads` threads.
fn run_on(threads: usize, shards: usize) -> OnlineState {
    let n = 40;
    let (x, grams) = points(n, 9);
    let y: Vec<f64> = x
        .iter()
        .map(|p| if p[0] + 0.5 * p[1] > 0.0 { 1.0 } else { -1.0 })
        .collect();
    let task = VectorTask::new(Loss::Hinge, y, 1, true);
    let params = OnlineParams {
        lambda: 0.05,
        reg: RegSpec::L21Sq,
        steps: OnlineSteps {
            epochs: 4,
            averaging: true,
            shards,
            ..OnlineSteps::default()
        },
        seed: 3,
        ..OnlineParams::default()
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let learner = OnlineLearner::new(&task, &grams, params).unwrap();
        learner.run(&(), &mut |_, _| Control::Continue).unwrap().0
    })
}

/// The same seed and shards give the same state, to the bit, on 1, 2 and 3 threads; the
/// shards do change the run (it is not the sequential learner under another name).
#[test]
fn shards_give_the_same_state_on_any_number_of_threads() {
    for shards in [2, 3, 5] {
        let one = run_on(1, shards);
        assert_eq!(run_on(2, shards), one, "{shards} shards, 2 threads");
        assert_eq!(run_on(3, shards), one, "{shards} shards, 3 threads");
        assert_ne!(run_on(1, 1), one);
    }
}

/// A stop asked during the pass ends it with `Stop`, not counted as an epoch.
#[test]
fn a_stop_inside_the_sharded_pass_is_reported() {
    let (_, grams) = points(10, 2);
    let task = VectorTask::new(Loss::Hinge, vec![1.0; 10], 1, true);
    let params = OnlineParams {
        steps: OnlineSteps {
            shards: 2,
            ..OnlineSteps::default()
        },
        ..OnlineParams::default()
    };
    struct Stop;
    impl crate::run::Observer for Stop {
        fn should_stop(&self) -> bool {
            true
        }
    }
    let mut learner = OnlineLearner::new(&task, &grams, params).unwrap();
    assert_eq!(learner.epoch_observed(&Stop), Control::Stop);
    assert_eq!(learner.progressive_loss().1, 0);
    assert_eq!(learner.state().t, 0);
}

use super::*;
use crate::data::Matrix;
use crate::prox::RegSpec;
use crate::solver::online::engine::OnlineState;
use crate::solver::online::{OnlineParams, OnlineSteps};
use crate::task::vector::VectorTask;
use crate::task::Loss;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// A binary task on points in R^3 and the Gram matrices of two kernel groups on them:
/// linear and `(1 + x.y)^2`.
fn task(n: usize, seed: u64) -> (VectorTask, Vec<Gram>) {
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
    let y = x
        .iter()
        .map(|p| if p[0] + 0.5 * p[1] > 0.0 { 1.0 } else { -1.0 })
        .collect();
    (VectorTask::new(Loss::Hinge, y, 1, true), grams)
}

fn params(reg: RegSpec, lambda: f64, batch: usize) -> OnlineParams {
    OnlineParams {
        lambda,
        reg,
        steps: OnlineSteps {
            eta0: 0.7,
            epochs: 3,
            averaging: true,
            batch,
            ..OnlineSteps::default()
        },
        seed: 3,
        ..OnlineParams::default()
    }
}

/// The slow twin: an epoch of the sequential learner's own steps (each round's update made
/// on the spot, Gram rows added into the cached scores right away) where every example of a
/// batch takes its gradient at the parameters the batch started with.
fn reference_epoch<T: OnlineTask>(l: &mut OnlineLearner<'_, T>, b: usize) {
    let mut order = std::mem::take(&mut l.order);
    order.shuffle(&mut l.rng);
    for batch in order.chunks(b) {
        let frozen = l.state.clone();
        let mut grads: Vec<(usize, Gradient)> = Vec::new();
        for &i in batch {
            let now = std::mem::replace(&mut l.state, frozen.clone());
            let (mut g, mut scores) = (Gradient::default(), Vec::new());
            l.loss_grad_at(i, &mut g, &mut scores);
            l.state = now;
            grads.push((i, g));
        }
        for (i, g) in &mut grads {
            l.step(*i, g);
        }
    }
    l.order = order;
    l.epoch += 1;
}

fn states_close(a: &OnlineState, b: &OnlineState, tol: f64) {
    assert_eq!(a.t, b.t);
    let close = |u: f64, v: f64| (u - v).abs() <= tol * (1.0 + v.abs());
    for averaged in [false, true] {
        for (ga, gb) in a
            .kernel_coefs(averaged)
            .iter()
            .zip(&b.kernel_coefs(averaged))
        {
            for (u, v) in ga.iter().zip(gb) {
                assert!(close(*u, *v), "coefficients ({averaged}): {u} {v}");
            }
        }
        for (ga, gb) in a
            .explicit_values(averaged)
            .iter()
            .zip(&b.explicit_values(averaged))
        {
            for (u, v) in ga.iter().zip(gb) {
                assert!(close(*u, *v), "explicit ({averaged}): {u} {v}");
            }
        }
    }
    for (ga, gb) in a.kernel.iter().zip(&b.kernel) {
        assert!(close(ga.sqnorm(), gb.sqnorm()), "norm");
        for (u, v) in ga.image().iter().zip(gb.image()) {
            assert!(close(ga.scale() * u, gb.scale() * v), "scores {u} {v}");
        }
    }
}

/// Batched epochs (gradients in parallel, Gram rows held back and added per batch) are the
/// reference's, to the bit, for batches of 1 to 7 and the l2, squared group lasso and group
/// lasso regularizers; and, with a group lasso strong enough to zero groups during a batch
/// (the held-back rows then dropped), to rounding.
#[test]
fn batches_are_the_sequential_steps_with_the_gradients_of_the_batch_start() {
    let (task, grams) = task(29, 7);
    for (reg, lambda, exact) in [
        (RegSpec::L2, 0.05, true),
        (RegSpec::L21Sq, 0.05, true),
        (RegSpec::L21, 0.01, true),
        (RegSpec::L21, 0.4, false),
    ] {
        for b in [1, 2, 3, 7] {
            let p = params(reg.clone(), lambda, b);
            let mut fast = OnlineLearner::new(&task, &grams, p.clone()).unwrap();
            let mut slow = OnlineLearner::new(&task, &grams, p).unwrap();
            for _ in 0..3 {
                // Batch 1 through the batched pass itself (`epoch` runs it for b > 1 only).
                let mut order = std::mem::take(&mut fast.order);
                order.shuffle(&mut fast.rng);
                fast.order = order;
                assert_eq!(fast.batched_pass(&()), Control::Continue);
                reference_epoch(&mut slow, b);
            }
            if exact {
                assert!(fast.state == slow.state, "{reg} {lambda}, batch {b}");
            } else {
                states_close(&fast.state, &slow.state, 1e-12);
            }
            assert_eq!(fast.epochs_done(), 3);
            assert_eq!(fast.progressive_loss().1, 29);
        }
    }
}

/// A batch of 1 is the sequential learner, and a batch above 1 changes the run.
#[test]
fn a_batch_of_one_is_the_sequential_learner() {
    let (task, grams) = task(23, 2);
    let run = |b: usize, batched: bool| {
        let mut l = OnlineLearner::new(&task, &grams, params(RegSpec::L21Sq, 0.05, b)).unwrap();
        for _ in 0..3 {
            if batched {
                let mut order = std::mem::take(&mut l.order);
                order.shuffle(&mut l.rng);
                l.order = order;
                l.batched_pass(&());
            } else {
                l.epoch();
            }
        }
        l.into_state()
    };
    let seq = run(1, false);
    assert!(run(1, true) == seq);
    assert!(run(4, false) != seq);
}

/// The same seed and batch give the same state, to the bit, on 1, 2 and 3 threads.
#[test]
fn batches_give_the_same_state_on_any_number_of_threads() {
    let (task, grams) = task(40, 9);
    let on = |threads: usize, b: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                let l = OnlineLearner::new(&task, &grams, params(RegSpec::L21Sq, 0.05, b)).unwrap();
                l.run(&(), &mut |_, _| Control::Continue).unwrap().0
            })
    };
    for b in [2, 5] {
        let one = on(1, b);
        assert!(on(2, b) == one, "batch {b}, 2 threads");
        assert!(on(3, b) == one, "batch {b}, 3 threads");
    }
}

/// A stop asked before a batch ends the pass with `Stop`, not counted as an epoch.
#[test]
fn a_stop_inside_the_batched_pass_is_reported() {
    let (task, grams) = task(10, 2);
    struct Stop;
    impl crate::run::Observer for Stop {
        fn should_stop(&self) -> bool {
            true
        }
    }
    let mut learner = OnlineLearner::new(&task, &grams, params(RegSpec::L2, 0.1, 3)).unwrap();
    assert_eq!(learner.epoch_observed(&Stop), Control::Stop);
    assert_eq!(learner.progressive_loss().1, 0);
    assert_eq!(learner.state().t, 0);
    assert_eq!(learner.epochs_done(), 0);
}

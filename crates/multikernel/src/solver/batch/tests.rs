//! The batch objective against enumeration and finite differences, and L-BFGS against a slow
//! twin (gradient descent with backtracking) on a toy tagging task.

use super::*;
use crate::data::columns::{parse_columns, ColumnSentence};
use crate::task::structured::{explicit_layout, explicit_scores, StructLoss, StructuredTask};
use crate::task::tagging::{TagFeaturizer, TaggingTask, TemplateFile};
use rand::{Rng, SeedableRng};
use std::path::Path;

/// Short sentences (at most 5 tokens, 3 labels) so every label sequence can be enumerated.
fn sentences() -> Vec<ColumnSentence> {
    let mut text = String::new();
    let words = ["a", "b", "c", "d"];
    let mut state = 7u64;
    for _ in 0..12 {
        let n = 2 + (state % 4) as usize;
        for _ in 0..n {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let w = words[(state >> 40) as usize % 4];
            let noise = (state >> 20).is_multiple_of(7);
            let tag = match (w, noise) {
                (_, true) => "Z",
                ("a" | "b", _) => "X",
                _ => "Y",
            };
            text.push_str(&format!("{w} {tag}\n"));
        }
        text.push('\n');
    }
    parse_columns(text.as_bytes(), Path::new("toy"))
        .unwrap()
        .sentences
}

fn task_of(sents: &[ColumnSentence]) -> (TagFeaturizer, TaggingTask) {
    let t = TemplateFile::parse(b"U00:%x[0,0]\nU01:%x[-1,0]\nB\n", Path::new("t")).unwrap();
    let f = TagFeaturizer::fit(t, sents, 1).unwrap();
    let task = TaggingTask::new(&f, sents).unwrap();
    (f, task)
}

fn all_sequences(n: usize, l: usize) -> Vec<Vec<usize>> {
    (0..l.pow(n as u32))
        .map(|code| (0..n).map(|k| (code / l.pow(k as u32)) % l).collect())
        .collect()
}

/// The slow twin of the objective: log Z by summing exp s(y) over every label sequence,
/// hinge by maximizing over them; the l2 term written out.
fn enumerated(task: &TaggingTask, l: usize, loss: StructLoss, lambda: f64, w: &[f64]) -> f64 {
    let n = task.n_examples();
    let mut total = 0.0;
    let mut scores = Vec::new();
    for i in 0..n {
        explicit_scores(task, i, w, &mut scores).unwrap();
        let gold = task.gold(i).clone();
        let g = task.score(i, &scores, &gold);
        let ys = all_sequences(gold.len(), l);
        total += match loss {
            StructLoss::Crf => {
                let z: f64 = ys.iter().map(|y| task.score(i, &scores, y).exp()).sum();
                z.ln() - g
            }
            StructLoss::Hinge => {
                ys.iter()
                    .map(|y| task.score(i, &scores, y) + task.cost(i, y))
                    .fold(f64::NEG_INFINITY, f64::max)
                    - g
            }
        };
    }
    0.5 * lambda * w.iter().map(|v| v * v).sum::<f64>() + total / n as f64
}

#[test]
fn objective_matches_enumeration_and_finite_differences() {
    let sents = sentences();
    let (feat, task) = task_of(&sents);
    let l = feat.n_labels();
    assert_eq!(l, 3);
    let dim = explicit_layout(&task).total();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let lambda = 0.05;
    for _ in 0..3 {
        let w: Vec<f64> = (0..dim).map(|_| rng.gen_range(-1.0..1.0)).collect();
        for loss in [StructLoss::Crf, StructLoss::Hinge] {
            let f = objective(&task, loss, lambda, &w).unwrap();
            let twin = enumerated(&task, l, loss, lambda, &w);
            assert!(
                (f - twin).abs() < 1e-9 * twin.abs().max(1.0),
                "{loss}: {f} vs {twin}"
            );
        }
        // The CRF gradient against central differences, every coordinate.
        let mut g = vec![0.0; dim];
        let f0 = objective_grad(&task, StructLoss::Crf, lambda, &w, Some(&mut g)).unwrap();
        assert_eq!(f0, objective(&task, StructLoss::Crf, lambda, &w).unwrap());
        let h = 1e-5;
        for j in 0..dim {
            let (mut wp, mut wm) = (w.clone(), w.clone());
            wp[j] += h;
            wm[j] -= h;
            let fd = (objective(&task, StructLoss::Crf, lambda, &wp).unwrap()
                - objective(&task, StructLoss::Crf, lambda, &wm).unwrap())
                / (2.0 * h);
            assert!((fd - g[j]).abs() < 1e-6, "coordinate {j}: {fd} vs {}", g[j]);
        }
    }
    assert!(objective(&task, StructLoss::Crf, lambda, &[0.0; 3]).is_err());
}

/// L-BFGS reaches a point with a vanishing gradient, and the same objective as gradient
/// descent with backtracking run for many iterations; no random perturbation does better.
#[test]
#[ignore = "full tier: gradient descent to the minimum, 4 s"]
fn lbfgs_reaches_the_minimum_gradient_descent_finds() {
    let sents = sentences();
    let (_, task) = task_of(&sents);
    let dim = explicit_layout(&task).total();
    let lambda = 0.1;
    let params = LbfgsParams {
        lambda,
        tol_grad: 1e-9,
        tol_cost: 0.0,
        delta: 0.0,
        ..LbfgsParams::default()
    };
    let fit = fit_lbfgs(&task, StructLoss::Crf, &params).unwrap();
    assert!(fit.grad_norm < 1e-6, "{fit:?}");
    assert!(fit.iterations > 1 && fit.evaluations >= fit.iterations);
    // Slow twin: gradient descent, step halved until the Armijo condition holds.
    let mut w = vec![0.0; dim];
    let mut g = vec![0.0; dim];
    let mut f = objective_grad(&task, StructLoss::Crf, lambda, &w, Some(&mut g)).unwrap();
    let mut step = 1.0;
    for _ in 0..20_000 {
        let gg: f64 = g.iter().map(|v| v * v).sum();
        if gg < 1e-20 {
            break;
        }
        loop {
            let cand: Vec<f64> = w.iter().zip(&g).map(|(a, b)| a - step * b).collect();
            let fc = objective(&task, StructLoss::Crf, lambda, &cand).unwrap();
            if fc <= f - 0.5 * step * gg {
                w = cand;
                break;
            }
            step *= 0.5;
        }
        step *= 2.0;
        f = objective_grad(&task, StructLoss::Crf, lambda, &w, Some(&mut g)).unwrap();
    }
    assert!(
        (fit.objective - f).abs() < 1e-9 * f,
        "L-BFGS {} vs gradient descent {f}",
        fit.objective
    );
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    for _ in 0..20 {
        let p: Vec<f64> = fit
            .weights
            .iter()
            .map(|v| v + rng.gen_range(-0.01..0.01))
            .collect();
        assert!(objective(&task, StructLoss::Crf, lambda, &p).unwrap() > fit.objective);
    }
    // The hinge is not smooth: refused. Bad settings: refused.
    assert!(fit_lbfgs(&task, StructLoss::Hinge, &params).is_err());
    for bad in [
        LbfgsParams {
            lambda: 0.0,
            ..params.clone()
        },
        LbfgsParams {
            memory: 0,
            ..params.clone()
        },
        LbfgsParams {
            tol_grad: f64::NAN,
            ..params.clone()
        },
        LbfgsParams {
            delta: -1.0,
            ..params.clone()
        },
    ] {
        assert!(fit_lbfgs(&task, StructLoss::Crf, &bad).is_err());
    }
}

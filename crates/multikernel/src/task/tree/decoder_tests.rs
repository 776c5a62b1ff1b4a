//! Eisner and Chu-Liu-Edmonds against their slow twin: the best of every tree of short
//! sentences ([`all_trees`]), projective or not, with one root child or several.

use super::synthetic::{SyntheticTrees, TreeGenerator};
use super::*;
use crate::task::structured::StructuredTask;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn roots(t: &[usize]) -> usize {
    t.iter().filter(|&&h| h == 0).count()
}

/// The best score over the trees `keep` accepts.
fn best_by_enumeration(n: usize, arc: &[f64], keep: impl Fn(&[usize]) -> bool) -> f64 {
    all_trees(n)
        .unwrap()
        .iter()
        .filter(|t| keep(t))
        .map(|t| tree_score(arc, t))
        .fold(f64::NEG_INFINITY, f64::max)
}

/// Random scores: continuous, small integers (ties), or with forbidden (-inf) arcs.
fn random_scores(rng: &mut ChaCha8Rng, n: usize, kind: usize) -> Vec<f64> {
    let n1 = n + 1;
    (0..n1 * n1)
        .map(|_| match kind {
            0 => rng.gen_range(-3.0..3.0),
            1 => rng.gen_range(-2..=2) as f64,
            _ => {
                if rng.gen_bool(0.3) {
                    f64::NEG_INFINITY
                } else {
                    rng.gen_range(-3.0..3.0)
                }
            }
        })
        .collect()
}

fn check(decoder: &dyn TreeDecoder, n: usize, arc: &[f64], projective: bool, single: bool) {
    let got = decoder.decode(n, arc);
    assert!(is_tree(&got), "{decoder:?} n={n}: {got:?} is not a tree");
    if single {
        assert_eq!(roots(&got), 1, "{decoder:?}: {got:?}");
    }
    if projective {
        assert!(is_projective(&got), "{decoder:?}: {got:?}");
    }
    let want = best_by_enumeration(n, arc, |t| {
        (!single || roots(t) == 1) && (!projective || is_projective(t))
    });
    let score = tree_score(arc, &got);
    if want.is_finite() {
        assert!(
            (score - want).abs() < 1e-9,
            "{decoder:?} n={n}: {score} vs best {want}, {got:?}, {arc:?}"
        );
    } else {
        // Every allowed tree has a forbidden arc: any tree will do.
        assert!(score == want || !score.is_finite());
    }
}

#[test]
fn decoders_find_the_best_tree_of_every_short_sentence() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut cases = 0;
    for n in 1..=MAX_ENUMERATED_TOKENS {
        for rep in 0..120 {
            let arc = random_scores(&mut rng, n, rep % 3);
            for single in [true, false] {
                check(
                    &ChuLiuEdmonds {
                        single_root: single,
                    },
                    n,
                    &arc,
                    false,
                    single,
                );
                check(
                    &Eisner {
                        single_root: single,
                    },
                    n,
                    &arc,
                    true,
                    single,
                );
                cases += 2;
            }
        }
    }
    assert_eq!(cases, 5 * 120 * 4);
}

#[test]
fn projectivity_matches_the_descendant_definition() {
    let descends = |heads: &[usize], k: usize, h: usize| {
        let mut t = k;
        while t != 0 && t != h {
            t = heads[t - 1];
        }
        t == h
    };
    for n in 1..=MAX_ENUMERATED_TOKENS {
        for t in all_trees(n).unwrap() {
            let slow = t.iter().enumerate().all(|(k, &h)| {
                let d = k + 1;
                (h.min(d) + 1..h.max(d)).all(|b| descends(t, b, h))
            });
            assert_eq!(is_projective(t), slow, "{t:?}");
        }
    }
    assert!(!is_projective(&[3, 0, 2]));
    assert!(is_projective(&[2, 0, 2]));
}

/// Loss-augmented decoding through the tree task: Chu-Liu-Edmonds (several root children,
/// as enumeration allows) scores as high as enumeration on every synthetic sentence.
#[test]
fn loss_augmented_decoding_matches_enumeration() {
    let data: SyntheticTrees = TreeGenerator {
        train: 40,
        test: 0,
        ..TreeGenerator::default()
    }
    .generate(5);
    let f = ArcFeaturizer::fit(&ArcTemplate::ALL, &data.train);
    let slow = TreeTask::new(data.train.clone(), &f).unwrap();
    let fast = TreeTask::with_decoder(data.train.clone(), &f, ChuLiuEdmonds { single_root: false })
        .unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for i in 0..slow.n_examples() {
        let s: Vec<f64> = (0..slow.n_parts(i))
            .map(|_| rng.gen_range(-1.5..1.5))
            .collect();
        let a = slow.loss_augmented_decode(i, &s);
        let b = fast.loss_augmented_decode(i, &s);
        assert!((a.score - b.score).abs() < 1e-9, "sentence {i}");
        assert!((b.score - fast.score(i, &s, &b.output) - fast.cost(i, &b.output)).abs() < 1e-9);
    }
}

/// Long sentences: both give trees, Chu-Liu-Edmonds at least as good as Eisner, Eisner
/// projective, and when every token's best head already makes a tree, that tree.
#[test]
fn long_sentences() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for n in [30, 150] {
        for _ in 0..3 {
            let arc = random_scores(&mut rng, n, 0);
            let c = ChuLiuEdmonds::default().decode(n, &arc);
            let e = Eisner::default().decode(n, &arc);
            assert!(is_tree(&c) && is_tree(&e) && is_projective(&e));
            assert_eq!((roots(&c), roots(&e)), (1, 1));
            assert!(tree_score(&arc, &c) >= tree_score(&arc, &e) - 1e-9);
        }
        // A planted tree whose arcs dominate: both recover it (it is projective: a chain).
        let n1 = n + 1;
        let mut arc = random_scores(&mut rng, n, 0);
        for m in 1..=n {
            arc[(m - 1) * n1 + m] += 100.0;
        }
        let chain: Vec<usize> = (0..n).collect();
        assert_eq!(ChuLiuEdmonds::default().decode(n, &arc), chain);
        assert_eq!(Eisner::default().decode(n, &arc), chain);
    }
}

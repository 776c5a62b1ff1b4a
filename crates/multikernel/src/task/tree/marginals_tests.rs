//! The tree marginals against their slow twins: summing over every tree of short sentences
//! ([`EnumerationOf`]: single-root or not, projective or not), the CRF loss's gradient against
//! finite differences through the tree task, and on long sentences the marginals against
//! finite differences of `log Z` and the constraints every distribution over trees meets.

use super::marginals::{inside_outside, matrix_tree, matrix_tree_exact};
use super::synthetic::{SyntheticTrees, TreeGenerator};
use super::*;
use crate::task::structured::testing::check_example;
use crate::task::structured::{loss_grad, StructLoss, StructuredTask};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Random scores: continuous, small integers (ties), with forbidden (-inf) arcs, or wider
/// (+-5; the long-sentence test scales them up).
fn random_scores(rng: &mut ChaCha8Rng, n: usize, kind: usize) -> Vec<f64> {
    let n1 = n + 1;
    (0..n1 * n1)
        .map(|_| match kind {
            0 => rng.gen_range(-3.0..3.0),
            1 => rng.gen_range(-2..=2) as f64,
            2 => {
                if rng.gen_bool(0.2) {
                    f64::NEG_INFINITY
                } else {
                    rng.gen_range(-3.0..3.0)
                }
            }
            _ => rng.gen_range(-5.0..5.0),
        })
        .collect()
}

fn assert_same(got: Option<PartMarginals>, want: &PartMarginals, n: usize, what: &str) {
    assert_close(got, want, n, what, 1.0);
}

/// [`assert_same`] for scores of magnitude up to `scale`: `log Z` within `1e-10 (1 + |log
/// Z|)`, plus rounding of sums of `n` scores of that size.
fn assert_close(
    got: Option<PartMarginals>,
    want: &PartMarginals,
    n: usize,
    what: &str,
    scale: f64,
) {
    if !want.log_z.is_finite() {
        // Every tree of the kind has a forbidden arc.
        assert!(got.is_none(), "{what} n={n}: {got:?}");
        return;
    }
    let got = got.unwrap_or_else(|| panic!("{what} n={n}: no marginals, log Z {}", want.log_z));
    let tol = 1e-10 * (1.0 + want.log_z.abs()) + 1e-13 * scale * n as f64;
    assert!(
        (got.log_z - want.log_z).abs() <= tol,
        "{what} n={n}: log Z {} vs {}",
        got.log_z,
        want.log_z
    );
    let n1 = n + 1;
    for (r, (a, b)) in got.expected.iter().zip(&want.expected).enumerate() {
        assert!(
            (a - b).abs() < 1e-9,
            "{what} n={n}: arc {} -> {}: {a} vs {b}",
            r / n1,
            r % n1
        );
    }
}

#[test]
fn marginals_match_enumeration_of_every_short_sentence() {
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let mut cases = 0;
    for n in 1..=MAX_ENUMERATED_TOKENS {
        for rep in 0..60 {
            let arc = random_scores(&mut rng, n, rep % 4);
            for single_root in [true, false] {
                let all = EnumerationOf {
                    single_root,
                    projective: false,
                };
                let proj = EnumerationOf {
                    single_root,
                    projective: true,
                };
                let want = all.marginals(n, &arc).unwrap();
                assert_same(
                    matrix_tree(n, &arc, single_root),
                    &want,
                    n,
                    &format!("matrix-tree single={single_root}"),
                );
                assert_same(
                    matrix_tree_exact(n, &arc, single_root),
                    &want,
                    n,
                    &format!("elimination single={single_root}"),
                );
                let want = proj.marginals(n, &arc).unwrap();
                assert_same(
                    inside_outside(n, &arc, single_root),
                    &want,
                    n,
                    &format!("inside-outside single={single_root}"),
                );
                // The decoders answer through the trait.
                let cle = ChuLiuEdmonds { single_root };
                assert_eq!(cle.marginals(n, &arc), matrix_tree(n, &arc, single_root));
                let eis = Eisner { single_root };
                assert_eq!(eis.marginals(n, &arc), inside_outside(n, &arc, single_root));
                cases += 2;
            }
        }
    }
    assert_eq!(cases, 5 * 60 * 4);
    // The kinds counted: single-root trees are n^(n-1) (root r, then a forest on the rest
    // hanging from r), projective trees of n tokens with one root child C(3n-2, n-1)/(2n-1)
    // (Eisner's chart counts; 1, 2, 7, 30, 143).
    for n in 1..=MAX_ENUMERATED_TOKENS {
        let single = EnumerationOf {
            single_root: true,
            projective: false,
        };
        assert_eq!(single.trees(n).unwrap().len(), n.pow(n as u32 - 1));
        let proj = EnumerationOf {
            single_root: true,
            projective: true,
        };
        assert_eq!(
            proj.trees(n).unwrap().len(),
            [1, 2, 7, 30, 143][n - 1],
            "n = {n}"
        );
        // At zero scores log Z is the log of the number of trees.
        let zeros = vec![0.0; (n + 1) * (n + 1)];
        let z = matrix_tree(n, &zeros, true).unwrap().log_z;
        assert!((z - (n.pow(n as u32 - 1) as f64).ln()).abs() < 1e-12);
    }
}

/// Sentences of the synthetic task whose gold tree is of the kind.
fn sentences_of_kind(kind: EnumerationOf) -> Vec<TreeSentence> {
    let data: SyntheticTrees = TreeGenerator {
        train: 400,
        test: 0,
        ..TreeGenerator::default()
    }
    .generate(21);
    data.train
        .into_iter()
        .filter(|s| kind.trees(s.len()).unwrap().contains(&s.heads))
        .take(10)
        .collect()
}

/// The CRF loss and its gradient through the tree task with the fast decoders, against
/// enumeration of the single-root trees (projective ones for Eisner) and central finite
/// differences of the enumerated loss ([`check_example`]).
/// One check of an example: its index, arc scores and the trees of its kind.
type ExampleCheck<'a> = &'a dyn Fn(usize, &[f64], &[Vec<usize>]);

#[test]
fn crf_loss_and_gradient_through_the_decoders() {
    let mut rng = ChaCha8Rng::seed_from_u64(23);
    for projective in [false, true] {
        let kind = EnumerationOf {
            single_root: true,
            projective,
        };
        let sentences = sentences_of_kind(kind);
        assert_eq!(sentences.len(), 10, "projective = {projective}");
        let f = ArcFeaturizer::fit(&ArcTemplate::ALL, &sentences);
        let check = |task: ExampleCheck, rng: &mut ChaCha8Rng| {
            for (i, s) in sentences.iter().enumerate() {
                let n1 = s.len() + 1;
                let scores: Vec<f64> = (0..n1 * n1).map(|_| rng.gen_range(-2.0..2.0)).collect();
                task(i, &scores, &kind.trees(s.len()).unwrap());
            }
        };
        if projective {
            let t = TreeTask::with_decoder(sentences.clone(), &f, Eisner::default()).unwrap();
            check(&|i, s, ys| check_example(&t, i, s, ys), &mut rng);
        } else {
            let t =
                TreeTask::with_decoder(sentences.clone(), &f, ChuLiuEdmonds::default()).unwrap();
            check(&|i, s, ys| check_example(&t, i, s, ys), &mut rng);
            // The CRF loss is positive and its gradient sums to 0 over each token's heads.
            for i in 0..t.n_examples() {
                let s = vec![0.5; t.n_parts(i)];
                let mut g = vec![0.0; s.len()];
                let v = loss_grad(&t, StructLoss::Crf, i, &s, &mut g);
                assert!(v > 0.0);
                let n1 = t.heads()[i].len() + 1;
                for m in 1..n1 {
                    let col: f64 = (0..n1).map(|h| g[h * n1 + m]).sum();
                    assert!(col.abs() < 1e-12);
                }
            }
        }
    }
}

/// `d log Z / d a(h, m)` by central differences of `log Z` itself.
fn finite_difference(f: impl Fn(&[f64]) -> f64, arc: &[f64], r: usize) -> f64 {
    let h = 1e-5;
    let (mut up, mut down) = (arc.to_vec(), arc.to_vec());
    up[r] += h;
    down[r] -= h;
    (f(&up) - f(&down)) / (2.0 * h)
}

/// Long sentences, beyond enumeration: marginals are probabilities, each token has one head
/// in expectation, one root child, `log Z` lies between the best tree's score and that plus
/// `log` of the number of trees; marginals equal finite differences of `log Z`; scores of
/// several hundred (whose exponentials overflow) stay finite.
#[test]
fn long_sentences_are_safe_and_consistent() {
    let mut rng = ChaCha8Rng::seed_from_u64(29);
    for (n, kind) in [(12, 0), (40, 0), (40, 3), (150, 3), (150, 2), (150, 4)] {
        let mut arc = random_scores(&mut rng, n, kind.min(3));
        if kind == 4 {
            arc.iter_mut().for_each(|a| *a *= 5.0);
        }
        let n1 = n + 1;
        for (name, m, best) in [
            (
                "matrix-tree",
                matrix_tree(n, &arc, true).unwrap(),
                ChuLiuEdmonds::default().decode(n, &arc),
            ),
            (
                "inside-outside",
                inside_outside(n, &arc, true).unwrap(),
                Eisner::default().decode(n, &arc),
            ),
        ] {
            let best = tree_score(&arc, &best);
            assert!(m.log_z.is_finite(), "{name} n={n}");
            assert!(m.log_z >= best - 1e-9 * best.abs(), "{name} n={n}");
            let trees = (n as f64 - 1.0) * (n as f64 + 1.0).ln();
            assert!(m.log_z <= best + trees + 1e-9 * best.abs(), "{name} n={n}");
            assert!(m
                .expected
                .iter()
                .all(|&p| (-1e-9..=1.0 + 1e-9).contains(&p)));
            for t in 1..n1 {
                let col: f64 = (0..n1).map(|h| m.expected[h * n1 + t]).sum();
                assert!((col - 1.0).abs() < 1e-8, "{name} n={n} token {t}: {col}");
            }
            let root: f64 = m.expected[1..n1].iter().sum();
            assert!((root - 1.0).abs() < 1e-8, "{name} n={n}: {root}");
        }
        if kind == 0 {
            for _ in 0..6 {
                let (h, t) = (rng.gen_range(0..n1), rng.gen_range(1..n1));
                if h == t {
                    continue;
                }
                let r = h * n1 + t;
                let mt = |a: &[f64]| matrix_tree(n, a, true).unwrap().log_z;
                let io = |a: &[f64]| inside_outside(n, a, true).unwrap().log_z;
                let m = matrix_tree(n, &arc, true).unwrap().expected[r];
                assert!((finite_difference(mt, &arc, r) - m).abs() < 1e-6);
                let m = inside_outside(n, &arc, true).unwrap().expected[r];
                assert!((finite_difference(io, &arc, r) - m).abs() < 1e-6);
            }
        }
    }
    // A planted chain whose arcs dominate by 50 has nearly all the mass.
    let n = 100;
    let n1 = n + 1;
    let mut arc = random_scores(&mut rng, n, 0);
    for t in 1..=n {
        arc[(t - 1) * n1 + t] += 50.0;
    }
    for m in [
        matrix_tree(n, &arc, true).unwrap(),
        inside_outside(n, &arc, true).unwrap(),
    ] {
        for t in 1..=n {
            assert!(m.expected[(t - 1) * n1 + t] > 1.0 - 1e-12);
        }
    }
}

/// Scores scaled to 1e2, 1e3 and 1e4 (cycles outweighing every tree by thousands of nats,
/// far past what any floating-point determinant keeps): `log Z` and the marginals of
/// [`matrix_tree`] and of the elimination alone against enumeration, single-root or not.
#[test]
fn extreme_scores_match_enumeration() {
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    for n in 1..=MAX_ENUMERATED_TOKENS {
        for rep in 0..40 {
            let scale = [1e2, 1e3, 1e4][rep % 3];
            let mut arc = random_scores(&mut rng, n, rep % 4);
            arc.iter_mut().for_each(|a| *a *= scale);
            for single_root in [true, false] {
                let want = EnumerationOf {
                    single_root,
                    projective: false,
                }
                .marginals(n, &arc)
                .unwrap();
                let what = format!("scale {scale} single={single_root}");
                assert_close(matrix_tree(n, &arc, single_root), &want, n, &what, scale);
                let what = format!("elimination, {what}");
                assert_close(
                    matrix_tree_exact(n, &arc, single_root),
                    &want,
                    n,
                    &what,
                    scale,
                );
            }
        }
    }
}

/// Scores in which every token's best arcs form 2-cycles outweighing the best tree by
/// hundreds of nats, as CRF training on the Turkish Web Treebank reaches (17 tokens, arcs
/// of -70 to 200, the best arcs into the tokens 300 nats over the best tree): the LU loses
/// every digit there, [`matrix_tree`] still answers, and as the elimination does.
#[test]
fn dominant_cycles_get_an_answer() {
    let mut rng = ChaCha8Rng::seed_from_u64(37);
    for n in [2, 5, 17, 34] {
        let n1 = n + 1;
        let mut arc: Vec<f64> = (0..n1 * n1).map(|_| rng.gen_range(-70.0..50.0)).collect();
        for t in (1..n).step_by(2) {
            arc[t * n1 + t + 1] = rng.gen_range(150.0..200.0);
            arc[(t + 1) * n1 + t] = rng.gen_range(150.0..200.0);
        }
        for single_root in [true, false] {
            let fast = matrix_tree(n, &arc, single_root).unwrap();
            let exact = matrix_tree_exact(n, &arc, single_root).unwrap();
            assert_close(Some(fast), &exact, n, "dominant cycles", 200.0);
            assert_probabilities(n, &exact, single_root, "dominant cycles");
        }
    }
}

/// Marginals are probabilities, each token has one head and (`single_root`) the root one
/// child in expectation.
fn assert_probabilities(n: usize, m: &PartMarginals, single_root: bool, what: &str) {
    let n1 = n + 1;
    assert!(m.log_z.is_finite(), "{what} n={n}");
    assert!(
        m.expected.iter().all(|&p| (0.0..=1.0).contains(&p)),
        "{what} n={n}"
    );
    for t in 1..n1 {
        let col: f64 = (0..n1).map(|h| m.expected[h * n1 + t]).sum();
        assert!((col - 1.0).abs() < 1e-9, "{what} n={n} token {t}: {col}");
    }
    let root: f64 = m.expected[1..n1].iter().sum();
    assert!(
        !single_root || (root - 1.0).abs() < 1e-9,
        "{what} n={n}: {root}"
    );
}

/// Up to 300 tokens, where enumeration cannot go: with arcs only between neighbours every
/// tree is projective, so the matrix-tree theorem (LU and elimination) must give what
/// inside-outside (log space throughout) gives, at every score magnitude; and with every
/// arc allowed and moderate scores, where the LU is accurate, the elimination agrees with it.
#[test]
#[ignore = "full tier: inside-outside on long sentences, 5 s"]
fn long_sentences_match_inside_outside_and_the_lu() {
    let mut rng = ChaCha8Rng::seed_from_u64(41);
    for (n, scale) in [(60, 1.0), (120, 30.0), (300, 1.0), (300, 1e2), (300, 1e4)] {
        let n1 = n + 1;
        let mut arc = vec![f64::NEG_INFINITY; n1 * n1];
        for m in 1..n1 {
            arc[m] = scale * rng.gen_range(-3.0..3.0);
            arc[(m - 1) * n1 + m] = scale * rng.gen_range(-3.0..3.0);
            if m < n {
                arc[(m + 1) * n1 + m] = scale * rng.gen_range(-3.0..3.0);
            }
        }
        for single_root in [true, false] {
            let want = inside_outside(n, &arc, single_root).unwrap();
            let what = format!("neighbours, scale {scale} single={single_root}");
            assert_close(matrix_tree(n, &arc, single_root), &want, n, &what, scale);
            let what = format!("elimination, {what}");
            assert_close(
                matrix_tree_exact(n, &arc, single_root),
                &want,
                n,
                &what,
                scale,
            );
        }
    }
    for n in [40, 150, 300] {
        let arc = random_scores(&mut rng, n, n % 4);
        for single_root in [true, false] {
            let lu = matrix_tree(n, &arc, single_root).unwrap();
            let exact = matrix_tree_exact(n, &arc, single_root);
            assert_close(exact, &lu, n, &format!("LU single={single_root}"), 5.0);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    /// `log Z` and every marginal against enumeration, for random scores of random
    /// magnitude (10^-1 to 10^4), some arcs forbidden.
    #[test]
    fn log_partition_and_marginals_match_enumeration(
        n in 1usize..=MAX_ENUMERATED_TOKENS,
        raw in proptest::collection::vec(-1.0f64..1.0, 36),
        forbidden in proptest::collection::vec(proptest::bool::weighted(0.15), 36),
        magnitude in -1.0f64..4.0,
        single_root: bool,
    ) {
        let n1 = n + 1;
        let scale = 10f64.powf(magnitude);
        let arc: Vec<f64> = (0..n1 * n1)
            .map(|r| if forbidden[r] { f64::NEG_INFINITY } else { scale * raw[r] })
            .collect();
        let want = EnumerationOf { single_root, projective: false }.marginals(n, &arc).unwrap();
        assert_close(matrix_tree(n, &arc, single_root), &want, n, "matrix-tree", scale);
        assert_close(matrix_tree_exact(n, &arc, single_root), &want, n, "elimination", scale);
    }
}

/// A case the property above once found (n = 4, scores up to 139 apart, single root): the
/// LU's marginals passed their checks (each in [0, 1], one head per token in expectation)
/// while an arc of marginal 1 came out 0.996.
#[test]
fn matrix_tree_of_an_ill_conditioned_case_matches_enumeration() {
    // The scores' non-zero entries (row-major 5 x 5: head, then dependant), before scaling.
    let raw = [
        (1, -0.8276821751781445),
        (2, -0.12179697466892095),
        (3, -0.34324630520291155),
        (7, 0.37354637700297716),
        (9, 0.5467141082412924),
        (11, 0.37501126491058795),
        (13, 0.5991356042928802),
        (17, 0.50912906216385),
        (21, 0.08491162244967086),
    ];
    let (n, scale) = (4, 10f64.powf(2.366303586613523));
    let mut arc = vec![0.0; 25];
    for (r, v) in raw {
        arc[r] = scale * v;
    }
    let want = EnumerationOf {
        single_root: true,
        projective: false,
    }
    .marginals(n, &arc)
    .unwrap();
    assert_close(matrix_tree(n, &arc, true), &want, n, "matrix-tree", scale);
}

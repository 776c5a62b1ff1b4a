//! Every regularizer: prox vs brute force, optimality conditions, block path vs explicit path,
//! special cases that coincide, steps of Alg. 1, checks.

use super::brute::{check_against_brute, max_abs_diff, norm2, prox_objective, random_case, Case};
use super::kkt::{check_block, check_sparse_group, tol};
use crate::prox::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Random cases checked against the brute-force minimizer (few: it is slow) and many more
/// checked against the optimality conditions.
const BRUTE_CASES: usize = 25;
const KKT_CASES: usize = 3000;
const ROUNDS: usize = 6;

fn run(reg: &dyn Regularizer, seed: u64, allow_ungrouped: bool, kkt: impl Fn(&Case, &[f64])) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for it in 0..KKT_CASES {
        let case = random_case(&mut rng, allow_ungrouped);
        let z = if it < BRUTE_CASES {
            check_against_brute(reg, &case, ROUNDS, &mut rng)
        } else {
            let mut z = case.x.clone();
            reg.prox(&mut z, &case.groups, case.tau);
            z
        };
        assert!(
            z.iter().all(|v| v.is_finite()),
            "{reg:?}: non-finite output"
        );
        kkt(&case, &z);
        // A prox never increases the regularizer, and the block path agrees (Prop. 1).
        let (vx, vz) = (
            reg.value(&case.x, &case.groups),
            reg.value(&z, &case.groups),
        );
        assert!(
            vz <= vx * (1.0 + 1e-12) + 1e-300,
            "{reg:?}: Omega grew {vx} -> {vz}"
        );
        if let Some(block) = reg.as_block() {
            // L2Sq's value covers every coordinate, its block form only the grouped ones.
            let whole = format!("{reg:?}") == "L2Sq";
            if !whole || case.groups.is_partition(case.x.len()) {
                let mut y = case.x.clone();
                prox_blocks(block, &mut y, &case.groups, case.tau);
                assert!(
                    max_abs_diff(&y, &z) <= 1e-13 * norm2(&case.x),
                    "{reg:?}: block path {y:?} vs prox {z:?}"
                );
                let old = case.groups.norms(&case.x);
                let mut new = old.clone();
                block.prox_norms(&mut new, case.tau);
                for (o, n) in old.iter().zip(&new) {
                    assert!(*n >= 0.0 && *n <= *o, "{reg:?}: norm {o} -> {n}");
                }
                let v = block.value_norms(&old);
                assert!(
                    (v - vx).abs() <= 1e-12 * vx.abs() + 1e-300,
                    "{reg:?}: value_norms"
                );
            }
        }
    }
}

#[test]
fn l2sq_prox() {
    run(&L2Sq, 21, true, |c, z| {
        for (xi, zi) in c.x.iter().zip(z) {
            assert!((xi - zi - c.tau * zi).abs() <= tol(&c.x), "x - z != tau z");
        }
    });
}

#[test]
fn l1_prox() {
    run(&L1, 22, true, |c, z| {
        let g = Groups::singletons(c.x.len());
        check_block("l1", &c.x, z, &g, |_, _| c.tau);
    });
}

#[test]
fn group_lasso_prox() {
    run(&GroupLasso, 23, true, |c, z| {
        check_block("group lasso", &c.x, z, &c.groups, |_, _| c.tau);
    });
}

#[test]
fn squared_l21_prox() {
    run(&SquaredL21, 24, true, |c, z| {
        check_block("squared l21", &c.x, z, &c.groups, |_, b| {
            c.tau * b.iter().sum::<f64>()
        });
    });
}

#[test]
fn l2q_prox() {
    for (k, q) in [1.0, 1.2, 4.0 / 3.0, 1.75, 2.0, 3.0]
        .into_iter()
        .enumerate()
    {
        run(&L2q { q }, 25 + k as u64, true, |c, z| {
            check_block("l2q", &c.x, z, &c.groups, |m, b| {
                if q == 1.0 {
                    c.tau
                } else {
                    c.tau * b[m].powf(q - 1.0)
                }
            });
        });
    }
}

#[test]
fn elastic_net_prox() {
    for (k, sigma) in [0.0, 0.3, 0.5, 0.9, 1.0].into_iter().enumerate() {
        run(&ElasticNet { sigma }, 35 + k as u64, true, |c, z| {
            check_block("elastic", &c.x, z, &c.groups, |m, b| {
                c.tau * (sigma * b[m] + (1.0 - sigma) * b.iter().sum::<f64>())
            });
        });
    }
}

#[test]
fn sparse_group_lasso_prox() {
    for (k, sigma) in [0.0, 0.25, 0.5, 1.0].into_iter().enumerate() {
        run(&SparseGroupLasso { sigma }, 45 + k as u64, true, |c, z| {
            check_sparse_group(&c.x, z, &c.groups, c.tau, sigma);
        });
    }
}

/// Composite cases whose sequential prox is exact: group lasso then ridge (a 1-homogeneous
/// part before the ridge), l1 then group lasso.
#[test]
fn composite_exact_cases() {
    let gl_ridge = Composite::new(vec![(1.0, Box::new(GroupLasso)), (0.7, Box::new(L2Sq))]);
    run(&gl_ridge, 51, false, |c, z| {
        check_block("group lasso + ridge", &c.x, z, &c.groups, |m, b| {
            c.tau * (1.0 + 0.7 * b[m])
        });
    });
    let sgl = Composite::new(vec![(0.4, Box::new(L1)), (0.6, Box::new(GroupLasso))]);
    run(&sgl, 52, true, |c, z| {
        check_sparse_group(&c.x, z, &c.groups, c.tau, 0.4);
        let mut y = c.x.clone();
        SparseGroupLasso { sigma: 0.4 }.prox(&mut y, &c.groups, c.tau);
        assert_eq!(
            y, z,
            "composite l1 + group lasso differs from SparseGroupLasso"
        );
    });
}

/// The elastic net's Alg. 1 steps (ridge, then squared l2,1) are a splitting, not the exact
/// prox: the gap is second order in tau.
#[test]
fn elastic_steps_are_a_second_order_splitting() {
    let x = vec![3.0, -1.0, 2.0, 0.5, -2.5];
    let groups = Groups::contiguous(&[2, 1, 2]);
    let reg = ElasticNet { sigma: 0.5 };
    let steps = reg.steps();
    assert_eq!(steps.len(), 2);
    assert_eq!((steps[0].weight, steps[1].weight), (0.5, 0.5));
    let mut gaps = Vec::new();
    for tau in [1e-1, 1e-2, 1e-3] {
        let mut exact = x.clone();
        reg.prox(&mut exact, &groups, tau);
        let mut split = x.clone();
        for s in &steps {
            s.apply(&mut split, &groups, tau);
        }
        let gap = max_abs_diff(&exact, &split);
        // The exact prox has the lower objective.
        let fe = prox_objective(&reg, &exact, &x, &groups, tau);
        let fs = prox_objective(&reg, &split, &x, &groups, tau);
        assert!(
            fe <= fs,
            "exact prox objective {fe} above the splitting's {fs}"
        );
        gaps.push(gap);
    }
    assert!(gaps[0] > 1e-4, "splitting unexpectedly exact: {gaps:?}");
    assert!(
        gaps[1] < gaps[0] / 50.0 && gaps[2] < gaps[1] / 50.0,
        "not O(tau^2): {gaps:?}"
    );
}

/// Tree-structured overlapping groups (nested or disjoint): the group lasso prox by
/// group-wise steps, smaller groups first, is exact (Jenatton et al. 2011), and so is the
/// sparse group lasso on top of it.
#[test]
fn tree_structured_group_lasso_beats_brute_force() {
    let trees = [
        Groups::new(vec![
            vec![0, 1, 2, 3],
            vec![0, 1],
            vec![2],
            vec![4, 5],
            vec![5],
        ]),
        Groups::new(vec![
            vec![0, 1, 2],
            vec![1, 2],
            vec![2],
            vec![0, 1, 2, 3, 4],
        ]),
        Groups::new(vec![vec![3, 4], vec![0, 1, 2, 3, 4], vec![0], vec![1]]),
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(61);
    for it in 0..36 {
        let groups = trees[it % trees.len()].clone();
        assert!(groups.is_tree_structured() && !groups.is_disjoint(6));
        let n = groups.members.iter().flatten().max().map_or(0, |m| m + 1);
        let base = random_case(&mut rng, false);
        let x: Vec<f64> = (0..n)
            .map(|i| base.x.get(i).copied().unwrap_or(0.7))
            .collect();
        let case = Case {
            x,
            groups,
            tau: base.tau,
        };
        check_against_brute(&GroupLasso, &case, ROUNDS, &mut rng);
        check_against_brute(&SparseGroupLasso { sigma: 0.3 }, &case, ROUNDS, &mut rng);
    }
}

#[test]
fn special_cases_coincide() {
    let mut rng = ChaCha8Rng::seed_from_u64(71);
    for _ in 0..1000 {
        let c = random_case(&mut rng, false);
        let n = c.x.len();
        let prox = |r: &dyn Regularizer| {
            let mut z = c.x.clone();
            r.prox(&mut z, &c.groups, c.tau);
            z
        };
        let s = norm2(&c.x) * 1e-13;
        assert!(max_abs_diff(&prox(&L2q { q: 1.0 }), &prox(&GroupLasso)) <= s);
        assert!(max_abs_diff(&prox(&L2q { q: 2.0 }), &prox(&L2Sq)) <= s);
        assert!(max_abs_diff(&prox(&ElasticNet { sigma: 0.0 }), &prox(&SquaredL21)) <= s);
        assert!(max_abs_diff(&prox(&ElasticNet { sigma: 1.0 }), &prox(&L2Sq)) <= s);
        assert!(max_abs_diff(&prox(&SparseGroupLasso { sigma: 1.0 }), &prox(&L1)) <= s);
        assert!(max_abs_diff(&prox(&SparseGroupLasso { sigma: 0.0 }), &prox(&GroupLasso)) <= s);
        // Singleton groups: group lasso is l1, squared l2,1 is Alg. 2 on x.
        let single = Groups::singletons(n);
        let mut a = c.x.clone();
        GroupLasso.prox(&mut a, &single, c.tau);
        let mut b = c.x.clone();
        L1.prox(&mut b, &single, c.tau);
        assert!(max_abs_diff(&a, &b) <= s);
        let mut a = c.x.clone();
        SquaredL21.prox(&mut a, &single, c.tau);
        let mut b = c.x.clone();
        prox_squared_l1(&mut b, c.tau);
        assert!(max_abs_diff(&a, &b) <= s);
        // Values.
        let v = |r: &dyn Regularizer| r.value(&c.x, &c.groups);
        let b = c.groups.norms(&c.x);
        let sum: f64 = b.iter().sum();
        let eps = 1e-12 * (1.0 + sum * sum);
        assert!((v(&SquaredL21) - 0.5 * sum * sum).abs() <= eps);
        assert!((v(&L2q { q: 2.0 }) - v(&L2Sq)).abs() <= eps);
        assert!((v(&L2q { q: 1.0 }) - sum).abs() <= eps);
    }
}

#[test]
fn zero_and_identity_steps() {
    let x = vec![1.0, -2.0, 3.0];
    let g = Groups::contiguous(&[1, 2]);
    let regs: Vec<Box<dyn Regularizer>> = vec![
        Box::new(L2Sq),
        Box::new(L1),
        Box::new(GroupLasso),
        Box::new(SquaredL21),
        Box::new(L2q { q: 1.5 }),
        Box::new(ElasticNet { sigma: 0.5 }),
        Box::new(SparseGroupLasso { sigma: 0.5 }),
    ];
    for r in &regs {
        for tau in [0.0, -1.0, f64::NAN] {
            let mut z = x.clone();
            r.prox(&mut z, &g, tau);
            assert_eq!(z, x, "{r:?}: tau {tau} is not the identity");
        }
        let mut z = vec![0.0; 3];
        r.prox(&mut z, &g, 5.0);
        assert_eq!(z, vec![0.0; 3], "{r:?}: prox of 0 is not 0");
        let mut z = x.clone();
        r.prox(&mut z, &g, 1e300);
        assert!(norm2(&z) < 1e-200, "{r:?}: huge tau leaves {z:?}");
    }
}

#[test]
fn steps_flatten_with_weights() {
    let inner = Composite::new(vec![
        (0.5, Box::new(ElasticNet { sigma: 0.2 })),
        (2.0, Box::new(L1)),
    ]);
    let outer = Composite::new(vec![(3.0, Box::new(inner)), (1.0, Box::new(GroupLasso))]);
    let steps = outer.steps();
    let w: Vec<f64> = steps.iter().map(|s| s.weight).collect();
    let expect = [3.0 * 0.5 * 0.2, 3.0 * 0.5 * 0.8, 6.0, 1.0];
    assert_eq!(w.len(), 4);
    for (a, b) in w.iter().zip(expect) {
        assert!((a - b).abs() < 1e-15, "{w:?}");
    }
    let names: Vec<String> = steps.iter().map(|s| format!("{:?}", s.reg)).collect();
    assert_eq!(names, ["L2Sq", "SquaredL21", "L1", "GroupLasso"]);
    // Steps of a plain regularizer: itself, weight 1; value of a composite: weighted sum.
    assert_eq!(SquaredL21.steps().len(), 1);
    let x = [1.0, -2.0, 2.0];
    let g = Groups::contiguous(&[1, 2]);
    let v = outer.value(&x, &g);
    let b = [1.0, 8f64.sqrt()];
    let en = 0.2 / 2.0 * 9.0 + 0.8 / 2.0 * (b[0] + b[1]) * (b[0] + b[1]);
    let expect = 3.0 * (0.5 * en + 2.0 * 5.0) + (b[0] + b[1]);
    assert!((v - expect).abs() < 1e-12, "{v} vs {expect}");
}

#[test]
fn checks_reject_bad_parameters_and_groups() {
    let overlap = Groups::new(vec![vec![0, 1], vec![1, 2]]);
    let err = SquaredL21.check(&overlap, 3).unwrap_err().to_string();
    assert!(err.contains("coordinate 1") && err.contains("l21"), "{err}");
    assert!(ElasticNet { sigma: 0.5 }.check(&overlap, 3).is_err());
    assert!(GroupLasso.check(&overlap, 3).is_ok());
    assert!(L2q { q: 1.5 }.check(&overlap, 3).is_ok());
    let err = GroupLasso.check(&overlap, 2).unwrap_err().to_string();
    assert!(
        err.contains("coordinate 2") && err.contains("below 2"),
        "{err}"
    );
    let twice = Groups::new(vec![vec![0, 0]]);
    assert!(L1
        .check(&twice, 1)
        .unwrap_err()
        .to_string()
        .contains("twice"));
    assert!(L2q { q: 0.5 }.check(&Groups::singletons(2), 2).is_err());
    assert!(L2q { q: f64::NAN }
        .check(&Groups::singletons(2), 2)
        .is_err());
    assert!(ElasticNet { sigma: 1.5 }
        .check(&Groups::singletons(2), 2)
        .is_err());
    assert!(SparseGroupLasso { sigma: -0.1 }
        .check(&Groups::singletons(2), 2)
        .is_err());
    let bad = Composite::new(vec![(-1.0, Box::new(L1))]);
    assert!(bad.check(&Groups::singletons(2), 2).is_err());
    // Overlapping groups with a block-only regularizer: documented fallback, first owner.
    let mut z = vec![3.0, 4.0, 1.0];
    SquaredL21.prox(&mut z, &overlap, 0.5);
    let mut y = vec![3.0, 4.0, 1.0];
    SquaredL21.prox(&mut y, &overlap.first_owner(3), 0.5);
    assert_eq!(z, y);
}

#[test]
fn groups_helpers() {
    let g = Groups::contiguous(&[2, 0, 3]);
    assert_eq!(g.members, vec![vec![0, 1], vec![], vec![2, 3, 4]]);
    assert_eq!((g.len(), g.is_empty(), g.total_size()), (3, false, 5));
    assert!(g.is_partition(5) && !g.is_partition(6) && g.is_disjoint(6));
    let x = [3.0, 4.0, 1.0, 0.0, 0.0];
    assert_eq!(g.norms(&x), vec![5.0, 0.0, 1.0]);
    let o = Groups::new(vec![vec![0, 1, 2], vec![2, 3], vec![1]]);
    assert!(!o.is_disjoint(4) && !o.is_tree_structured());
    assert_eq!(
        o.first_owner(4).members,
        vec![vec![0, 1, 2], vec![3], vec![]]
    );
    assert_eq!(o.order_by_size(), vec![2, 1, 0]);
    assert!(!Groups::new(vec![vec![5]]).is_disjoint(3));
    let mut rng = ChaCha8Rng::seed_from_u64(81);
    let v: Vec<f64> = (0..5).map(|_| rng.r#gen::<f64>()).collect();
    let mut w = v.clone();
    g.scale_blocks(&mut w, &[2.0, 7.0, 0.5]);
    assert_eq!(
        w,
        vec![2.0 * v[0], 2.0 * v[1], 0.5 * v[2], 0.5 * v[3], 0.5 * v[4]]
    );
    assert_eq!(block_factors(&[2.0, 0.0], &[1.0, 0.0]), vec![0.5, 0.0]);
}

/// The brute-force twin has teeth: a regularizer whose "prox" is the elastic net's Alg. 1
/// splitting (not its exact prox) is caught, and so is a group lasso prox with a slightly
/// wrong threshold.
#[test]
fn brute_force_detects_wrong_proxes() {
    #[derive(Debug)]
    struct Split(ElasticNet);
    impl Regularizer for Split {
        fn value(&self, x: &[f64], g: &Groups) -> f64 {
            self.0.value(x, g)
        }
        fn prox(&self, x: &mut [f64], g: &Groups, tau: f64) {
            for s in self.0.steps() {
                s.apply(x, g, tau);
            }
        }
        fn steps(&self) -> Vec<ProxStep<'_>> {
            vec![ProxStep {
                weight: 1.0,
                reg: self,
            }]
        }
    }
    #[derive(Debug)]
    struct Off;
    impl Regularizer for Off {
        fn value(&self, x: &[f64], g: &Groups) -> f64 {
            GroupLasso.value(x, g)
        }
        fn prox(&self, x: &mut [f64], g: &Groups, tau: f64) {
            GroupLasso.prox(x, g, tau * (1.0 + 1e-4));
        }
        fn steps(&self) -> Vec<ProxStep<'_>> {
            vec![ProxStep {
                weight: 1.0,
                reg: self,
            }]
        }
    }
    let wrong: [&dyn Regularizer; 2] = [&Split(ElasticNet { sigma: 0.5 }), &Off];
    for reg in wrong {
        let mut rng = ChaCha8Rng::seed_from_u64(99);
        let caught = (0..10).any(|_| {
            let mut case = random_case(&mut rng, false);
            case.tau = 0.5 * norm2(&case.x).max(1e-3);
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                check_against_brute(reg, &case, ROUNDS, &mut rng.clone());
            }))
            .is_err()
        });
        assert!(caught, "{reg:?}: brute force never beat a wrong prox");
    }
}

use super::*;
use crate::features::SparseVector;
use crate::solver::cutting_plane::block_master::conic;
use crate::solver::cutting_plane::{qp, L2Master, MasterProblem};
use rand::{Rng, SeedableRng};

/// Random cuts over `groups` groups of `width` parameters each.
fn instance(seed: u64, groups: usize, width: usize, cuts: usize) -> (GroupLayout, Vec<Cut>) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let layout = GroupLayout::new(vec![width; groups]);
    let dim = groups * width;
    let cuts = (0..cuts)
        .map(|_| {
            let mut pairs = Vec::new();
            for j in 0..dim {
                if rng.gen_bool(0.6) {
                    pairs.push((j, rng.gen_range(-1.0..1.0)));
                }
            }
            Cut {
                a: SparseVector::from_pairs(pairs),
                b: rng.gen_range(0.1..1.0),
            }
        })
        .collect();
    (layout, cuts)
}

/// `1/2 (sum_j ||w_j||^q)^(2/q) + C max(0, max_r (b_r - <w, a_r>))`.
fn primal(layout: &GroupLayout, cuts: &[Cut], w: &[f64], c: f64, q: f64) -> f64 {
    let s: f64 = (0..layout.n_groups())
        .map(|g| {
            w[layout.range(g)]
                .iter()
                .map(|v| v * v)
                .sum::<f64>()
                .sqrt()
                .powf(q)
        })
        .sum();
    let worst = cuts.iter().map(|k| k.b - k.a.dot(w)).fold(0.0, f64::max);
    0.5 * s.powf(2.0 / q) + c * worst
}

/// The l2 dual's value with the Gram `sum_j mu_j Q^j` (the inner problem of MKL at fixed
/// template weights), by the independent SMO solver of `qp`.
fn l2_value_at(layout: &GroupLayout, cuts: &[Cut], mu: &[f64], c: f64) -> f64 {
    let r = cuts.len();
    let mut g = vec![0.0; r * r];
    for i in 0..r {
        for j in 0..r {
            g[i * r + j] = (0..layout.n_groups())
                .map(|grp| {
                    let range = layout.range(grp);
                    let restrict = |a: &SparseVector| {
                        SparseVector::from_pairs(
                            a.iter().filter(|(k, _)| range.contains(k)).collect(),
                        )
                    };
                    mu[grp] * restrict(&cuts[i].a).dot_sparse(&restrict(&cuts[j].a))
                })
                .sum();
        }
    }
    let b: Vec<f64> = cuts.iter().map(|k| k.b).collect();
    qp::solve(&g, &b, c, &[], 1e-12, 1_000_000).value
}

/// q = 1: the QCQP's value is the minimum over the template weights of the l2 dual value
/// (min-max of MKL), found here by a grid over the simplex of 2 or 3 templates.
#[test]
fn qcqp_value_equals_the_minimum_over_template_weights() {
    for seed in 0..6 {
        let groups = 2 + (seed as usize % 2);
        let (layout, cuts) = instance(seed, groups, 3, 3 + seed as usize);
        let c = 0.5 + seed as f64;
        let mut m = BlockNormMaster::new(1.0, layout.clone(), 1e-10, 500).unwrap();
        let sol = m.solve(&cuts, c, layout.total()).unwrap();
        let steps = 60;
        let mut best = f64::INFINITY;
        for i in 0..=steps {
            for j in 0..=(if groups == 3 { steps - i } else { 0 }) {
                let mut mu = vec![i as f64 / steps as f64];
                if groups == 3 {
                    mu.push(j as f64 / steps as f64);
                }
                let rest = 1.0 - mu.iter().sum::<f64>();
                mu.push(rest.max(0.0));
                best = best.min(l2_value_at(&layout, &cuts, &mu, c));
            }
        }
        // The grid's minimum is above the true minimum by at most the grid's resolution.
        assert!(
            sol.value <= best + 1e-7,
            "seed {seed}: {} > {best}",
            sol.value
        );
        assert!(
            sol.value >= best - 0.05 * best.abs() - 1e-6,
            "seed {seed}: {} << {best}",
            sol.value
        );
        let mu = m.mu();
        assert!((mu.iter().sum::<f64>() - 1.0).abs() < 1e-6);
        // The value at the QCQP's own template weights is the QCQP's value.
        let at_mu = l2_value_at(&layout, &cuts, mu, c);
        assert!(
            (at_mu - sol.value).abs() < 1e-5 * (1.0 + sol.value.abs()),
            "seed {seed}: {at_mu} vs {}",
            sol.value
        );
    }
}

/// Strong duality: the primal objective at the returned weights equals the dual value.
#[test]
fn primal_at_the_recovered_weights_equals_the_dual_value() {
    for q in [1.0, 4.0 / 3.0, 1.5, 2.0, 4.0] {
        for seed in 10..14 {
            let (layout, cuts) = instance(seed, 3, 4, 6);
            let c = 2.0;
            let mut m = BlockNormMaster::new(q, layout.clone(), 1e-12, 20_000).unwrap();
            let sol = m.solve(&cuts, c, layout.total()).unwrap();
            let p = primal(&layout, &cuts, &sol.w, c, q);
            assert!(
                (p - sol.value).abs() < 1e-5 * (1.0 + p.abs()),
                "q {q} seed {seed}: primal {p} vs dual {}",
                sol.value
            );
        }
    }
}

fn l2_w(cuts: &[Cut], c: f64, dim: usize) -> Vec<f64> {
    L2Master::new(1e-13, 1_000_000)
        .solve(cuts, c, dim)
        .unwrap()
        .w
}

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.iter()
        .zip(b)
        .all(|(x, y)| (x - y).abs() <= tol * (1.0 + x.abs()))
}

/// One template (q = 1) and q = 2 (any number of templates) are the plain l2 problem.
#[test]
fn one_template_and_q2_are_the_l2_structural_svm() {
    for seed in 20..24 {
        let (layout, cuts) = instance(seed, 1, 6, 5);
        let mut m = BlockNormMaster::new(1.0, layout.clone(), 1e-12, 500).unwrap();
        let w = m.solve(&cuts, 1.5, 6).unwrap().w;
        let l2 = l2_w(&cuts, 1.5, 6);
        let (pw, pl) = (
            primal(&layout, &cuts, &w, 1.5, 2.0),
            primal(&layout, &cuts, &l2, 1.5, 2.0),
        );
        assert!(
            close(&w, &l2, 1e-6),
            "one template, seed {seed}: {pw} vs {pl}"
        );
        let (layout, cuts) = instance(seed, 4, 3, 7);
        let mut m = BlockNormMaster::new(2.0, layout.clone(), 1e-13, 50_000).unwrap();
        let w = m.solve(&cuts, 1.5, 12).unwrap().w;
        assert!(close(&w, &l2_w(&cuts, 1.5, 12), 1e-5), "q = 2, seed {seed}");
    }
}

/// Cuts appended between solves (cached Grams) give what a fresh master gives; dropping
/// cuts keeps the caches of the others.
#[test]
fn appended_and_dropped_cuts_match_a_fresh_master() {
    for q in [1.0, 1.5, 4.0] {
        let (layout, cuts) = instance(31, 3, 3, 6);
        let dim = layout.total();
        let mut inc = BlockNormMaster::new(q, layout.clone(), 1e-12, 20_000).unwrap();
        for r in 1..=cuts.len() {
            inc.solve(&cuts[..r], 1.0, dim).unwrap();
        }
        let mut fresh = BlockNormMaster::new(q, layout.clone(), 1e-12, 20_000).unwrap();
        let a = inc.solve(&cuts, 1.0, dim).unwrap();
        let b = fresh.solve(&cuts, 1.0, dim).unwrap();
        assert!((a.value - b.value).abs() < 1e-7 * (1.0 + a.value.abs()));
        let keep = [true, false, true, true, false, true];
        inc.retain(&keep);
        let kept: Vec<Cut> = cuts
            .iter()
            .zip(keep)
            .filter(|(_, k)| *k)
            .map(|(c, _)| c.clone())
            .collect();
        let a = inc.solve(&kept, 1.0, dim).unwrap();
        let b = BlockNormMaster::new(q, layout.clone(), 1e-12, 20_000)
            .unwrap()
            .solve(&kept, 1.0, dim)
            .unwrap();
        assert!((a.value - b.value).abs() < 1e-7 * (1.0 + a.value.abs()));
    }
}

#[test]
fn capped_simplex_projection() {
    let mut x = vec![0.5, -1.0, 0.2];
    project_capped_simplex(&mut x, 1.0);
    assert_eq!(x, vec![0.5, 0.0, 0.2]);
    let mut x = vec![2.0, 1.0, -3.0];
    project_capped_simplex(&mut x, 1.0);
    assert!((x[0] - 1.0).abs() < 1e-15 && x[1] == 0.0 && x[2] == 0.0);
    let mut x = vec![0.8, 0.8];
    project_capped_simplex(&mut x, 1.0);
    assert!((x[0] - 0.5).abs() < 1e-15 && (x[1] - 0.5).abs() < 1e-15);
    assert!(BlockNormMaster::new(0.5, GroupLayout::new([1]), 1e-8, 10).is_err());
}

/// The warm-started saddle-point solver of `q = 1` against its slow twin, the conic program
/// solved from scratch by clarabel: random working sets grown cut by cut (each solve warm
/// started from the last), the same value to 1e-6 relative and the same template support.
#[test]
fn saddle_solver_matches_the_conic_program() {
    for seed in 40..52u64 {
        let groups = 2 + (seed as usize % 5);
        let width = 2 + (seed as usize % 3);
        let n_cuts = 6 + (seed as usize % 7);
        let (layout, mut cuts) = instance(seed, groups, width, n_cuts);
        // Some templates useless: scaled down, so that the optimum drops them.
        let dim = layout.total();
        for cut in cuts.iter_mut() {
            let pairs: Vec<(usize, f64)> = cut
                .a
                .iter()
                .map(|(j, v)| {
                    let g = j / width;
                    (j, if g % 3 == 2 { 0.05 * v } else { v })
                })
                .collect();
            cut.a = SparseVector::from_pairs(pairs);
        }
        let c = [0.3, 1.0, 10.0][seed as usize % 3];
        let mut m = BlockNormMaster::new(1.0, layout.clone(), 1e-10, 10_000).unwrap();
        let mut sol = None;
        for r in 1..=cuts.len() {
            sol = Some(m.solve(&cuts[..r], c, dim).unwrap());
        }
        let sol = sol.unwrap();
        let dense: Vec<Vec<f64>> = (0..groups).map(|g| m.grams.dense(g)).collect();
        let b: Vec<f64> = cuts.iter().map(|k| k.b).collect();
        let (alpha, mu) = conic::solve_conic(&dense, &b, c, 500).unwrap();
        let quad = |g: &[f64], a: &[f64]| -> f64 {
            let r = a.len();
            (0..r)
                .map(|i| (0..r).map(|j| a[i] * g[i * r + j] * a[j]).sum::<f64>())
                .sum()
        };
        let theta = dense
            .iter()
            .map(|g| 0.5 * quad(g, &alpha))
            .fold(0.0, f64::max);
        // The conic solution gives a lower bound D(alpha) and, at its template weights, an
        // upper bound J(mu) (its alpha is polished on the Gram at mu).
        let lin: f64 = b.iter().zip(&alpha).map(|(x, y)| x * y).sum();
        let conic_lower = lin - theta;
        let mixed: f64 = dense
            .iter()
            .zip(&mu)
            .map(|(g, m)| m * 0.5 * quad(g, &alpha))
            .sum();
        let conic_upper = lin - mixed;
        let scale = conic_upper.abs().max(1e-12);
        assert!(
            sol.value >= conic_lower - 1e-6 * scale && sol.value <= conic_upper + 1e-9 * scale,
            "seed {seed}: saddle {} outside the conic bounds [{conic_lower}, {conic_upper}]",
            sol.value
        );
        // The interior point's multipliers are less exact than its template weights: the
        // same value is the conic solution's J(mu) (its value at its own weights).
        assert!(
            (sol.value - conic_upper).abs() <= 1e-6 * scale,
            "seed {seed}: saddle {} vs conic [{conic_lower}, {conic_upper}]",
            sol.value
        );
        let p = primal(&layout, &cuts, &sol.w, c, 1.0);
        assert!(
            (p - sol.value).abs() <= 1e-6 * scale,
            "seed {seed}: primal {p} vs dual {}",
            sol.value
        );
        // The same support: weights clearly above 0 in one are above 0 in the other.
        for (g, (&a, &b)) in m.mu().iter().zip(&mu).enumerate() {
            assert!(
                (a > 1e-3) == (b > 1e-3) || (a - b).abs() < 1e-3,
                "seed {seed} template {g}: saddle {a} vs conic {b} ({:?} vs {mu:?})",
                m.mu()
            );
        }
    }
}

/// The margins and the regularizer a master hands the loop are `<a_r, w>` and `Omega(w)` of
/// its own `w`, computed in feature space here.
#[test]
fn margins_are_the_cuts_inner_products_with_w() {
    let (layout, cuts) = instance(61, 4, 3, 9);
    let dim = layout.total();
    let check = |sol: &MasterSolution, master: &dyn MasterProblem, what: &str| {
        let reg = sol.regularizer.expect("regularizer");
        let want = master.regularizer(&sol.w);
        assert!(
            (reg - want).abs() <= 1e-9 * (1.0 + want.abs()),
            "{what} regularizer: {reg} vs {want}"
        );
        let m = sol.margins.as_ref().expect("margins");
        assert_eq!(m.len(), cuts.len());
        for (r, (cut, got)) in cuts.iter().zip(m).enumerate() {
            let want = cut.a.dot(&sol.w);
            assert!(
                (got - want).abs() <= 1e-9 * (1.0 + want.abs()),
                "{what} cut {r}: {got} vs {want}"
            );
        }
    };
    for q in [1.0, 4.0 / 3.0, 2.0, 4.0] {
        let mut m = BlockNormMaster::new(q, layout.clone(), 1e-10, 10_000).unwrap();
        let sol = m.solve(&cuts, 1.5, dim).unwrap();
        check(&sol, &m, &format!("q = {q}"));
    }
    let mut l2 = L2Master::new(1e-12, 1_000_000);
    let sol = l2.solve(&cuts, 1.5, dim).unwrap();
    check(&sol, &l2, "l2 master");
}

/// The projection onto the positive part of the unit l_r ball: feasible, and no random
/// feasible point is closer (brute force); inside points stay.
#[test]
fn lr_ball_projection_is_the_closest_feasible_point() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    for r in [1.5, 2.0, 3.0] {
        for _ in 0..20 {
            let x: Vec<f64> = (0..4).map(|_| rng.gen_range(-0.5..1.5)).collect();
            let mut y = x.clone();
            saddle::project_onto_lr_ball(&mut y, r);
            let norm: f64 = y.iter().map(|v| v.powf(r)).sum();
            assert!(norm <= 1.0 + 1e-9 && y.iter().all(|v| *v >= 0.0), "{y:?}");
            let dist = |z: &[f64]| -> f64 { z.iter().zip(&x).map(|(a, b)| (a - b).powi(2)).sum() };
            for _ in 0..3000 {
                let mut z: Vec<f64> = (0..4).map(|_| rng.gen_range(0.0..1.0f64)).collect();
                let n: f64 = z.iter().map(|v| v.powf(r)).sum::<f64>().powf(1.0 / r);
                let scale = rng.gen_range(0.0..1.0f64).powf(0.2) / n.max(1e-12);
                z.iter_mut()
                    .for_each(|v| *v *= scale.min(1.0 / n.max(1e-12)));
                assert!(
                    dist(&y) <= dist(&z) + 1e-9,
                    "r {r}: {y:?} farther than {z:?} from {x:?}"
                );
            }
        }
        let mut inside = vec![0.1, 0.2, 0.0];
        saddle::project_onto_lr_ball(&mut inside, r);
        assert_eq!(inside, vec![0.1, 0.2, 0.0]);
    }
}

/// A master restored from a snapshot (read back from its JSON) after some solves and a
/// dropped cut, its Grams rebuilt by the next solve, then solves the next cuts exactly as the
/// master that was never stopped: the same multipliers, weights, values, margins and
/// template weights, to the bit (the checkpoints of the cutting-plane loop rest on this).
#[test]
fn a_restored_master_solves_on_to_the_same_bits() {
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let same = |a: &MasterSolution, b: &MasterSolution| {
        assert_eq!(bits(&a.w), bits(&b.w));
        assert_eq!(a.value.to_bits(), b.value.to_bits());
        assert_eq!(
            bits(a.margins.as_deref().unwrap()),
            bits(b.margins.as_deref().unwrap())
        );
        assert_eq!(
            a.regularizer.map(f64::to_bits),
            b.regularizer.map(f64::to_bits)
        );
    };
    let run = |fresh: &dyn Fn() -> Box<dyn MasterProblem>, cuts: &[Cut], dim: usize| {
        let keep = [true, true, false, true, true];
        let mut held: Vec<Cut> = Vec::new();
        let mut master = fresh();
        // Five cuts, the third dropped after the fifth solve; the snapshot is taken there.
        for c in &cuts[..5] {
            held.push(c.clone());
            master.outer_gap(0.5);
            master.solve(&held, 2.0, dim).unwrap();
        }
        master.retain(&keep);
        held = held
            .into_iter()
            .zip(keep)
            .filter(|(_, k)| *k)
            .map(|(c, _)| c)
            .collect();
        let json = serde_json::to_vec(&master.snapshot().unwrap()).unwrap();
        let mut restored = fresh();
        restored
            .restore(serde_json::from_slice(&json).unwrap())
            .unwrap();
        for (k, c) in cuts[5..].iter().enumerate() {
            held.push(c.clone());
            master.outer_gap(0.1 / (k + 1) as f64);
            restored.outer_gap(0.1 / (k + 1) as f64);
            let a = master.solve(&held, 2.0, dim).unwrap();
            let b = restored.solve(&held, 2.0, dim).unwrap();
            same(&a, &b);
            assert_eq!(bits(master.alpha()), bits(restored.alpha()));
            assert_eq!(master.snapshot(), restored.snapshot());
        }
    };
    for q in [1.0, 1.5, 2.0, 4.0] {
        let (layout, cuts) = instance(71, 3, 4, 9);
        let dim = layout.total();
        let fresh = || -> Box<dyn MasterProblem> {
            Box::new(
                BlockNormMaster::new(q, layout.clone(), 1e-6, 10_000)
                    .unwrap()
                    .with_abs_tol(1e-4)
                    .inexact(),
            )
        };
        run(&fresh, &cuts, dim);
    }
    let (layout, cuts) = instance(72, 1, 8, 9);
    run(
        &|| -> Box<dyn MasterProblem> { Box::new(L2Master::new(1e-10, 100_000)) },
        &cuts,
        layout.total(),
    );
}

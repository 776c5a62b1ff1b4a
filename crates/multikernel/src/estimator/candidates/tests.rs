use super::*;

fn cand(family: Family, label: &str) -> Candidate {
    Candidate {
        family,
        hinge: false,
        kernels: 0..1,
        p: 2.0,
        label: label.into(),
    }
}

fn scored(per_c: &[&[f64]]) -> Scores {
    Scores {
        scores: per_c
            .iter()
            .map(|f| f.iter().map(|&v| Some(v)).collect())
            .collect(),
        stopped: None,
    }
}

/// The tie rule on constructed fold scores: the learned combination is best by a little
/// (within its standard error), so the single kernel wins; far ahead, it wins itself.
#[test]
fn the_tie_rule_prefers_the_simpler_candidate() {
    let cands = [
        cand(Family::Single, "single a"),
        cand(Family::Uniform, "uniform"),
        cand(Family::Learned, "learned"),
    ];
    // Two Cs, five folds each. Learned best mean 0.85 (C index 1), se = 0.0158, times 1.5
    // for the folds' overlap: 0.0237.
    let learned: &[&[f64]] = &[
        &[0.70, 0.70, 0.70, 0.70, 0.70],
        &[0.80, 0.85, 0.90, 0.85, 0.85],
    ];
    let close = scored(&[&[0.84, 0.84, 0.84, 0.84, 0.84], &[0.5; 5]]);
    let uniform = scored(&[&[0.845; 5], &[0.845; 5]]);
    let scores = [close.clone(), uniform.clone(), scored(learned)];
    let (i, c, why) = one_se_choice(&cands, &scores, 5, 1, Goal::Maximize).unwrap();
    assert_eq!((i, c), (0, 0), "{why}");
    assert!(why.contains("within one standard error"), "{why}");
    // Brute force: the se is the sample standard deviation over sqrt(5).
    let v = [0.80, 0.85, 0.90, 0.85, 0.85];
    let m = v.iter().sum::<f64>() / 5.0;
    let sd = (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / 4.0).sqrt();
    assert!((mean_se(&v).1 - sd / 5f64.sqrt()).abs() < 1e-15);
    assert!((overlap_correction(5, 1) - 1.5).abs() < 1e-15);
    // 3 x 5 folds: variance 1/15 + 1/4 of the fold scores' against 1/15 uncorrected.
    let want = ((1.0 / 15.0 + 0.25) / (1.0 / 15.0_f64)).sqrt();
    assert!((overlap_correction(15, 3) - want).abs() < 1e-12);
    // The single kernel out of reach (0.82 < 0.85 - 0.0237): the uniform sum is next.
    let far = scored(&[&[0.82; 5], &[0.5; 5]]);
    let scores = [far.clone(), uniform, scored(learned)];
    let (i, _, _) = one_se_choice(&cands, &scores, 5, 1, Goal::Maximize).unwrap();
    assert_eq!(i, 1);
    // Both out of reach: the learned combination.
    let scores = [far, scored(&[&[0.80; 5], &[0.80; 5]]), scored(learned)];
    let (i, c, why) = one_se_choice(&cands, &scores, 5, 1, Goal::Maximize).unwrap();
    assert_eq!((i, c), (2, 1));
    assert!(why.contains("the best mean"), "{why}");
    // MSE: smaller is better, the same rule mirrored.
    let mse = [
        scored(&[&[1.01; 5]]),
        scored(&[&[2.0; 5]]),
        scored(&[&[0.9, 1.0, 1.1, 1.0, 1.0]]),
    ];
    let (i, _, _) = one_se_choice(&cands, &mse, 5, 1, Goal::Minimize).unwrap();
    assert_eq!(i, 0);
    // A candidate not scored on every fold does not compete.
    let mut partial = scored(&[&[0.99; 5]]);
    partial.scores[0][4] = None;
    let scores = [partial, scored(&[&[0.6; 5]]), scored(&[&[0.7; 5]])];
    let (i, _, _) = one_se_choice(&cands, &scores, 5, 1, Goal::Maximize).unwrap();
    assert_eq!(i, 2);
}

#[test]
fn a_learned_combination_goes_on_only_when_it_leads_the_simpler() {
    let cands = [
        cand(Family::Single, "single a"),
        cand(Family::Uniform, "uniform sum of 2"),
        cand(Family::Learned, "lp-mkl p=2"),
        cand(Family::Learned, "lp-mkl p=4/3"),
    ];
    let first = |a: f64, b: f64| scored(&[&[a, b, 0.0, 0.0, 0.0]]);
    // Maximize: p=2 ties the uniform sum's 0.91 (stops), p=4/3 leads (goes on).
    let mut out = vec![
        first(0.9, 0.92),
        first(0.9, 0.92),
        first(0.91, 0.91),
        first(0.92, 0.92),
    ];
    halve(&cands, &mut out, 2, 1000, Goal::Maximize);
    assert!(out[..2].iter().all(|s| s.stopped.is_none()));
    assert!(out[2].stopped.as_deref().unwrap().contains("not ahead"));
    assert!(out[3].stopped.is_none());
    // Minimize (MSE): the mirror image.
    let mut mse = vec![
        first(10.0, 12.0),
        first(11.0, 11.0),
        first(11.5, 10.5),
        first(10.0, 10.0),
    ];
    stop_learned_not_leading(&cands, &mut mse, 2, Goal::Minimize);
    assert!(mse[2].stopped.is_some() && mse[3].stopped.is_none());
    // A stopped simpler candidate does not count.
    let mut out = vec![
        first(0.9, 0.9),
        first(0.8, 0.8),
        first(0.85, 0.85),
        first(0.7, 0.7),
    ];
    out[0].stopped = Some("skipped".into());
    stop_learned_not_leading(&cands, &mut out, 2, Goal::Maximize);
    assert!(out[2].stopped.is_none() && out[3].stopped.is_some());
}

#[test]
fn clearly_beaten_candidates_stop_after_the_first_folds() {
    let mut out = vec![
        scored(&[&[0.9, 0.92, 0.0, 0.0, 0.0]]),
        scored(&[&[0.89, 0.91, 0.0, 0.0, 0.0]]),
        scored(&[&[0.7, 0.72, 0.0, 0.0, 0.0]]),
    ];
    let fresh = out.clone();
    stop_clearly_beaten(&mut out, 2, 1000, Goal::Maximize);
    assert!(out[0].stopped.is_none() && out[1].stopped.is_none());
    // 0.86 is 5 points below the leader's 0.91: beaten on 1,000 validation rows (the
    // margin is 3 points), not on 60, where the binomial standard error of 0.91 is 3.7
    // points (margin 7.4).
    let mut more = fresh;
    more.push(scored(&[&[0.85, 0.87, 0.0, 0.0, 0.0]]));
    let mut small = more.clone();
    stop_clearly_beaten(&mut more, 2, 1000, Goal::Maximize);
    assert!(more[3].stopped.is_some());
    stop_clearly_beaten(&mut small, 2, 60, Goal::Maximize);
    assert!(small[3].stopped.is_none(), "{:?}", small[3].stopped);
    assert!(small[2].stopped.is_some());
    let binomial = (0.91f64 * 0.09 / 60.0).sqrt();
    assert!((clear_margin(Goal::Maximize, 0.91, 0.01, 60) - 2.0 * binomial).abs() < 1e-12);
    assert!(out[2]
        .stopped
        .as_deref()
        .unwrap()
        .starts_with("stopped after 2 folds"));
}

/// Five folds of 60 rows, binary labels; kernel 0 is the labels' outer product plus
/// the identity (it separates the classes), kernel 1 the Gram matrix of random
/// features (noise). With halving the noise kernel stops after the first folds; without
/// it, both are scored on every fold and their fold scores match the halved run's.
#[test]
fn halving_stops_the_noise_kernel_only_when_it_applies() {
    use rand::{Rng, SeedableRng};
    let n = 60;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
    let y: Vec<usize> = (0..n).map(|i| i % 2).collect();
    let s: Vec<f64> = y.iter().map(|&c| if c == 1 { 1.0 } else { -1.0 }).collect();
    let z: Vec<f64> = (0..n * 3).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let square = |f: &dyn Fn(usize, usize) -> f64| {
        Matrix::from_vec(n, n, (0..n * n).map(|a| f(a / n, a % n)).collect())
    };
    let good = square(&|i, j| s[i] * s[j] + f64::from(u8::from(i == j)));
    let noise = square(&|i, j| (0..3).map(|c| z[i * 3 + c] * z[j * 3 + c]).sum());
    let y_all = Matrix::from_vec(n, 1, s.clone());
    let all = crate::estimator::fold_cuts::SelectionKernels::new(
        vec![KernelMatrix::Dense(good), KernelMatrix::Dense(noise)],
        &y_all,
    )
    .unwrap();
    let folds: Vec<Fold> = (0..5)
        .map(|f| {
            let va: Vec<usize> = (0..n).filter(|i| i % 5 == f).collect();
            let tr: Vec<usize> = (0..n).filter(|i| i % 5 != f).collect();
            Fold {
                kernels: FoldCuts::new(&all, tr.clone(), va.clone()),
                y: Matrix::from_vec(tr.len(), 1, tr.iter().map(|&i| s[i]).collect()),
                validation: Targets::Classes {
                    classes: vec!["a".into(), "b".into()],
                    y: va.iter().map(|&i| y[i]).collect(),
                },
                weights: None,
            }
        })
        .collect();
    let cands = candidates(&["good".into(), "noise".into()], &[false, false], true, &[]);
    assert_eq!(cands.len(), 3, "two singles and the uniform sum");
    let run = |halving: bool| {
        let problem = Problem {
            folds: &folds,
            c_grid: &[1.0, 10.0],
            task: TaskKind::Binary,
            bias: true,
            goal: Goal::Maximize,
            budget: None,
            halving,
            partition: folds.len(),
            deadline: None,
            start: std::time::Instant::now(),
        };
        let seen = std::sync::Mutex::new(Vec::new());
        let record = |p: &Progress| {
            seen.lock().unwrap().push((p.step, p.total, p.unit));
            crate::run::Control::Continue
        };
        let scores = score(&cands, &problem, &record).unwrap();
        (scores, seen.into_inner().unwrap())
    };
    let (halved, progress) = run(true);
    let (full, full_progress) = run(false);
    // The progress in fits: from 0 of all planned, in steps of the grid's 2 Cs, never
    // past the planned total, ending at the fits that ran (fewer when halving stopped
    // a candidate: the total shrinks).
    for (p, scores) in [(&progress, &halved), (&full_progress, &full)] {
        assert_eq!(p[0], (0, Some(30), StepUnit::Fit));
        assert!(p
            .iter()
            .all(|&(step, total, _)| step % 2 == 0 && step <= total.unwrap()));
        let ran: usize = scores
            .iter()
            .map(|s| s.scores.iter().flatten().flatten().count())
            .sum();
        let last = p.iter().max_by_key(|e| e.0).unwrap();
        assert_eq!(last.0 as usize, ran);
        assert_eq!(
            p.last().unwrap().1,
            Some(ran as u64),
            "the last total is what ran"
        );
    }
    assert!(
        progress.last().unwrap().0 < 30,
        "halving stopped the noise kernel"
    );
    assert!(halved[0].stopped.is_none());
    assert!(halved[1]
        .stopped
        .as_deref()
        .unwrap()
        .starts_with("stopped after 2 folds"));
    assert!(full.iter().all(|s| s.stopped.is_none()));
    assert!(full.iter().all(|s| s.means(5).iter().all(|m| m.is_some())));
    // The first folds' scores do not depend on halving.
    for (h, f) in halved.iter().zip(&full) {
        for (hc, fc) in h.scores.iter().zip(&f.scores) {
            assert_eq!(hc[..2], fc[..2]);
        }
    }
    assert!(!halving_applies(HALVING_MIN_ROWS) && halving_applies(HALVING_MIN_ROWS + 1));
}

/// Two informative kernels (one feature each, the label their sum's sign) and a noise
/// kernel, with 5 folds of 120 rows.
fn additive_folds(all: &crate::estimator::fold_cuts::SelectionKernels) -> Vec<Fold<'_>> {
    let (n, s) = additive_targets();
    (0..5)
        .map(|f| {
            let va: Vec<usize> = (0..n).filter(|i| i % 5 == f).collect();
            let tr: Vec<usize> = (0..n).filter(|i| i % 5 != f).collect();
            Fold {
                kernels: FoldCuts::new(all, tr.clone(), va.clone()),
                y: Matrix::from_vec(tr.len(), 1, tr.iter().map(|&i| s[i]).collect()),
                validation: Targets::Classes {
                    classes: vec!["a".into(), "b".into()],
                    y: va.iter().map(|&i| usize::from(s[i] > 0.0)).collect(),
                },
                weights: None,
            }
        })
        .collect()
}

fn additive_targets() -> (usize, Vec<f64>) {
    let n = 120;
    let (a, b) = additive_features(n);
    (n, (0..n).map(|i| (a[i] + b[i]).signum()).collect())
}

fn additive_features(n: usize) -> (Vec<f64>, Vec<f64>) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let a: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let b: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
    (a, b)
}

fn additive_kernels() -> crate::estimator::fold_cuts::SelectionKernels {
    use rand::{Rng, SeedableRng};
    let (n, s) = additive_targets();
    let (a, b) = additive_features(n);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
    let z: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let rbf = |x: &[f64]| {
        let d = (0..n * n)
            .map(|q| (-(x[q / n] - x[q % n]).powi(2) / 0.5).exp())
            .collect();
        KernelMatrix::Dense(Matrix::from_vec(n, n, d))
    };
    crate::estimator::fold_cuts::SelectionKernels::new(
        vec![rbf(&a), rbf(&b), rbf(&z)],
        &Matrix::from_vec(n, 1, s),
    )
    .unwrap()
}

#[test]
fn a_screened_combination_that_goes_on_is_scored_at_the_selection_s_tolerance() {
    let all = additive_kernels();
    let folds = additive_folds(&all);
    let names = ["a".to_string(), "b".into(), "noise".into()];
    let every = candidates(&names, &[false; 3], true, &[2.0]);
    // The noise kernel alone against the learned combination: it leads and goes on.
    let cands = vec![every[2].clone(), every[4].clone()];
    assert_eq!(cands[1].family, Family::Learned);
    let problem = Problem {
        folds: &folds,
        c_grid: &[0.1, 1.0, 10.0],
        task: TaskKind::Binary,
        bias: true,
        goal: Goal::Maximize,
        budget: None,
        halving: true,
        partition: folds.len(),
        deadline: None,
        start: std::time::Instant::now(),
    };
    let none = |_: &Progress| crate::run::Control::Continue;
    let scores = score(&cands, &problem, &none).unwrap();
    assert!(scores[1].stopped.is_none(), "{:?}", scores[1].stopped);
    for (f, fold) in folds.iter().enumerate() {
        let exact = c_path(&cands[1], fold, &problem, false, &none).unwrap();
        let screen = c_path(&cands[1], fold, &problem, true, &none).unwrap();
        for (j, &e) in exact.iter().enumerate() {
            assert_eq!(scores[1].scores[j][f], Some(e), "fold {f}, C {j}");
        }
        assert!(screen.iter().all(|v| v.is_finite()));
    }
    // Against a kernel that is the labels themselves it cannot lead: it stops after the
    // screen, and says so.
    let (n, y) = additive_targets();
    let label = (0..n * n)
        .map(|q| y[q / n] * y[q % n] + f64::from(u8::from(q / n == q % n)))
        .collect();
    let all = crate::estimator::fold_cuts::SelectionKernels::new(
        vec![
            KernelMatrix::Dense(Matrix::from_vec(n, n, label)),
            all.get(2).clone(),
        ],
        &Matrix::from_vec(n, 1, y),
    )
    .unwrap();
    let folds = additive_folds(&all);
    let problem = Problem {
        folds: &folds,
        ..problem
    };
    let cands = candidates(&names[1..], &[false; 2], true, &[2.0]);
    assert_eq!(cands[3].family, Family::Learned);
    let scores = score(&cands, &problem, &none).unwrap();
    let why = scores[3].stopped.as_deref().unwrap_or_else(|| {
        panic!(
            "{:?}",
            scores.iter().map(|s| s.means(5)).collect::<Vec<_>>()
        )
    });
    assert!(
        why.contains("screened at a relative tolerance of 1e-3"),
        "{why}"
    );
    assert!(scores[3]
        .scores
        .iter()
        .all(|c| c[FIRST_FOLDS..].iter().all(Option::is_none)));
}

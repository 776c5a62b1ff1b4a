use super::*;
use crate::run::StopFlag;
use std::sync::Mutex;

/// A deterministic toy score of (candidate, split) with ties and a clear optimum.
fn toy(c: &(u32, u32), s: &usize) -> f64 {
    let (a, b) = *c;
    // Peak at a = 2, flat in b except on split 1; quantized so ties happen.
    let v = -((a as f64 - 2.0).powi(2)) + 0.25 * ((b + *s as u32) % 3) as f64;
    (v * 4.0).round() / 4.0
}

fn grid() -> Vec<(u32, u32)> {
    (0..5).flat_map(|a| (0..4).map(move |b| (a, b))).collect()
}

/// The explicit double loop the harness replaces: candidates outer, splits inner, means
/// summed then divided, strict improvement so the first wins ties.
fn brute_force(grid: &[(u32, u32)], splits: &[usize], maximize: bool) -> (usize, Vec<f64>) {
    let mut means = Vec::new();
    let mut best: Option<(f64, usize)> = None;
    for (ci, c) in grid.iter().enumerate() {
        let mut total = 0.0;
        for s in splits {
            total += toy(c, s);
        }
        let v = total / splits.len() as f64;
        means.push(v);
        let better = match best {
            None => true,
            Some((b, _)) => {
                if maximize {
                    v > b
                } else {
                    v < b
                }
            }
        };
        if better {
            best = Some((v, ci));
        }
    }
    (best.unwrap().1, means)
}

#[test]
fn picks_what_the_double_loop_picks() {
    let g = grid();
    let splits = [0usize, 1, 2];
    for maximize in [true, false] {
        let search = Search::new(&g, &splits).goal(if maximize {
            Goal::Maximize
        } else {
            Goal::Minimize
        });
        let sel = search.run(|c, s| Ok(toy(c, s)), &()).unwrap();
        let (want, means) = brute_force(&g, &splits, maximize);
        assert_eq!(sel.status, RunStatus::Completed);
        assert_eq!(sel.evaluations, g.len() * splits.len());
        assert_eq!(sel.best().unwrap().candidate, want);
        assert_eq!(sel.entries.len(), g.len());
        for (ci, e) in sel.entries.iter().enumerate() {
            assert_eq!((e.candidate, e.point), (ci, 0));
            assert_eq!(e.mean.to_bits(), means[ci].to_bits());
            let scores: Vec<f64> = splits.iter().map(|s| toy(&g[ci], s)).collect();
            assert_eq!(e.scores, scores);
        }
    }
    // The toy has ties at the top: the first in grid order won them.
    let sel = Search::new(&g, &splits)
        .run(|c, s| Ok(toy(c, s)), &())
        .unwrap();
    let best = sel.best().unwrap();
    let tied: Vec<usize> = sel
        .entries
        .iter()
        .filter(|e| e.mean == best.mean)
        .map(|e| e.candidate)
        .collect();
    assert!(tied.len() > 1, "the toy should have ties: {tied:?}");
    assert_eq!(best.candidate, tied[0]);
    let last = Search::new(&g, &splits)
        .ties(Ties::Last)
        .run(|c, s| Ok(toy(c, s)), &())
        .unwrap();
    assert_eq!(last.best().unwrap().candidate, *tied.last().unwrap());
}

#[test]
fn rule_matches_its_definition() {
    let values = [1.0, 3.0, f64::NAN, 3.0 + 1e-13, 2.0, f64::INFINITY, 3.0];
    let rule = |goal, ties, tolerance| Rule {
        goal,
        ties,
        tolerance,
    };
    assert_eq!(
        rule(Goal::Maximize, Ties::First, 0.0).choose(values),
        Some(3)
    );
    assert_eq!(
        rule(Goal::Maximize, Ties::First, 1e-12).choose(values),
        Some(1)
    );
    assert_eq!(
        rule(Goal::Maximize, Ties::Last, 1e-12).choose(values),
        Some(6)
    );
    assert_eq!(
        rule(Goal::Maximize, Ties::Last, 0.0).choose(values),
        Some(3)
    );
    assert_eq!(
        rule(Goal::Minimize, Ties::First, 0.0).choose(values),
        Some(0)
    );
    let down = [2.0, 1.0, 1.0, 5.0];
    assert_eq!(rule(Goal::Minimize, Ties::First, 0.0).choose(down), Some(1));
    assert_eq!(rule(Goal::Minimize, Ties::Last, 0.0).choose(down), Some(2));
    // Non-finite values are never chosen, even first.
    assert_eq!(Rule::default().choose([f64::NAN, 0.5]), Some(1));
    assert_eq!(Rule::default().choose([f64::NAN, f64::INFINITY]), None);
    assert_eq!(Rule::default().choose([]), None);
}

#[test]
fn means_use_the_exact_arithmetic_asked_for() {
    // 0.1 + 0.2 + 0.3 summed then divided differs from the sum of thirds in the last bit.
    let s = [0.1, 0.2, 0.3];
    let a = Mean::Arithmetic.of(&s);
    let b = Mean::Shares.of(&s);
    assert_eq!(a.to_bits(), ((0.1 + 0.2 + 0.3) / 3.0f64).to_bits());
    assert_eq!(
        b.to_bits(),
        (0.1 / 3.0 + 0.2 / 3.0 + 0.3 / 3.0f64).to_bits()
    );
    assert_ne!(a.to_bits(), b.to_bits());
    let w = Mean::Weighted(vec![10.0, 20.0, 5.0]).of(&s);
    assert_eq!(
        w.to_bits(),
        ((0.1 * 10.0 + 0.2 * 20.0 + 0.3 * 5.0) / 35.0f64).to_bits()
    );
    // Through a search: the entries carry those means.
    let splits = [0usize, 1, 2];
    for mean in [
        Mean::Arithmetic,
        Mean::Shares,
        Mean::Weighted(vec![10.0, 20.0, 5.0]),
    ] {
        let sel = Search::new(&[()], &splits)
            .mean(mean.clone())
            .run(|_, &k| Ok(s[k]), &())
            .unwrap();
        assert_eq!(sel.mean(0).unwrap().to_bits(), mean.of(&s).to_bits());
    }
}

#[test]
fn same_selection_whatever_the_thread_count() {
    let g = grid();
    let splits = [0usize, 1, 2, 3];
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            // Scores with rounding that depends on the order of additions if the harness
            // summed in completion order.
            let sel = Search::new(&g, &splits)
                .run(
                    |c, s| Ok(toy(c, s) + 0.1 * (*s as f64) + 1e-17 * c.0 as f64),
                    &(),
                )
                .unwrap();
            let warm = Search::new(&g, &splits)
                .minimize()
                .run_warm(
                    |_| Ok(0.0),
                    |c, s, w: &mut f64| {
                        *w += toy(c, s);
                        Ok(*w)
                    },
                    &(),
                )
                .unwrap();
            (sel.best, sel.entries, warm.best, warm.entries)
        })
    };
    let one = run(1);
    for threads in [2, 3, 8] {
        let other = run(threads);
        assert_eq!(one.0, other.0);
        assert_eq!(one.2, other.2);
        for (a, b) in one.1.iter().zip(&other.1).chain(one.3.iter().zip(&other.3)) {
            assert_eq!(a.mean.to_bits(), b.mean.to_bits());
            assert_eq!(a.scores, b.scores);
        }
    }
}

#[test]
fn warm_state_is_passed_in_grid_order_within_each_split() {
    let lambdas = [100.0, 10.0, 1.0, 0.1];
    let splits = [0usize, 1, 2];
    // The state records the lambdas seen so far on its split.
    let log = Mutex::new(Vec::new());
    let sel = Search::new(&lambdas, &splits)
        .run_warm(
            |&s| Ok((s, Vec::<f64>::new())),
            |&l, &s, state: &mut (usize, Vec<f64>)| {
                assert_eq!(state.0, s, "a split's state stays on its split");
                let seen = state.1.clone();
                state.1.push(l);
                log.lock().unwrap().push((s, seen.clone()));
                Ok((seen.len() as f64, seen))
            },
            &(),
        )
        .unwrap();
    for (ci, _) in lambdas.iter().enumerate() {
        for s in 0..splits.len() {
            // Candidate ci saw exactly the candidates before it, in order.
            assert_eq!(sel.output(ci, s).unwrap(), &lambdas[..ci].to_vec());
        }
    }
    assert_eq!(log.lock().unwrap().len(), lambdas.len() * splits.len());
    // Scores 0, 1, 2, 3 on every split: the last is the largest.
    assert_eq!(sel.best().unwrap().candidate, 3);
    assert_eq!(sel.best_output(0).unwrap().len(), 3);
}

#[test]
fn path_evaluations_compete_point_by_point() {
    // Each candidate returns a path of 3 scores; the best is (candidate 1, point 2), with
    // (candidate 2, point 0) within the tolerance of it and later, so it does not win.
    let cands = [0usize, 1, 2];
    let splits = [0usize, 1];
    let path = |c: usize, s: usize| -> Vec<f64> {
        let base = [[0.1, 0.2, 0.3], [0.2, 0.4, 0.9], [0.9 + 1e-13, 0.5, 0.1]][c];
        base.iter().map(|v| v + 0.01 * s as f64).collect()
    };
    let sel = Search::new(&cands, &splits)
        .tolerance(1e-12)
        .mean(Mean::Shares)
        .run(|&c, &s| Ok(path(c, s)), &())
        .unwrap();
    assert_eq!(sel.entries.len(), 9);
    let b = sel.best().unwrap();
    assert_eq!((b.candidate, b.point), (1, 2));
    assert_eq!(b.scores, vec![path(1, 0)[2], path(1, 1)[2]]);
    assert_eq!(
        sel.entry(2, 1).unwrap().scores,
        vec![path(2, 0)[1], path(2, 1)[1]]
    );
    // Without the tolerance the later, slightly larger one wins.
    let sel = Search::new(&cands, &splits)
        .mean(Mean::Shares)
        .run(|&c, &s| Ok(path(c, s)), &())
        .unwrap();
    let b = sel.best().unwrap();
    assert_eq!((b.candidate, b.point), (2, 0));
    // A path of another length on another split is a shape error.
    let err = Search::new(&cands, &splits)
        .run(
            |&c, &s| Ok(vec![0.0; 2 + usize::from(c == 1 && s == 1)]),
            &(),
        )
        .unwrap_err();
    assert!(
        matches!(&err, Error::ShapeMismatch { what, expected: 2, found: 3 } if what.contains("candidate 1 on split 1")),
        "{err}"
    );
    let err = Search::new(&cands, &splits)
        .run(|_, _| Ok(Vec::new()), &())
        .unwrap_err();
    assert!(
        matches!(err, Error::ShapeMismatch { found: 0, .. }),
        "{err}"
    );
}

#[test]
fn best_where_chooses_within_a_group() {
    // Two learners searched together: candidates (learner, c).
    let g: Vec<(usize, f64)> = (0..2)
        .flat_map(|m| [1.0, 2.0, 3.0].map(|c| (m, c)))
        .collect();
    let sel = Search::new(&g, &[0usize])
        .run(|&(m, c), _| Ok(if m == 0 { c } else { -c }), &())
        .unwrap();
    assert_eq!(g[sel.best().unwrap().candidate], (0, 3.0));
    let b1 = sel.best_where(|e| g[e.candidate].0 == 1).unwrap();
    assert_eq!(g[b1.candidate], (1, 1.0));
    assert!(sel.best_where(|_| false).is_none());
}

#[test]
fn the_observer_stops_the_search_between_evaluations() {
    let g = grid();
    let splits = [0usize, 1, 2];
    // A flag already set: nothing runs.
    let flag = StopFlag::new();
    flag.stop();
    let ran = AtomicU64::new(0);
    let sel = Search::new(&g, &splits)
        .run(
            |c, s| {
                ran.fetch_add(1, Ordering::SeqCst);
                Ok(toy(c, s))
            },
            &flag,
        )
        .unwrap();
    assert_eq!(sel.status, RunStatus::Cancelled);
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert!(sel.entries.is_empty() && sel.best.is_none());
    // Stop after the 5th evaluation (a closure observer sees each one): on one thread the
    // warm search runs candidates in order, so exactly 5 ran and no later one started.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let steps = Mutex::new(Vec::new());
    let obs = |p: &Progress| {
        steps.lock().unwrap().push((p.step, p.total));
        if p.step >= 5 {
            Control::Stop
        } else {
            Control::Continue
        }
    };
    let sel = pool.install(|| {
        Search::new(&g, &splits)
            .run_warm(|_| Ok(()), |c, s, _: &mut ()| Ok(toy(c, s)), &obs)
            .unwrap()
    });
    assert_eq!(sel.status, RunStatus::Cancelled);
    assert_eq!(sel.evaluations, 5);
    let total = Some((g.len() * splits.len()) as u64);
    assert_eq!(
        *steps.lock().unwrap(),
        (1..=5).map(|k| (k, total)).collect::<Vec<_>>()
    );
    let ran: usize = sel.outputs.iter().flatten().filter(|o| o.is_some()).count();
    assert_eq!(ran, 5);
    // Five candidates on split 0 only: none is complete, so none is chosen.
    assert!(sel.entries.is_empty() && sel.best().is_none());
    // Split by split: stopping during the first split leaves the others unevaluated;
    // the candidates finished on every split are the ones reported.
    let sel = Search::new(&g, &[0usize])
        .run_split_by_split(|_| Ok(()), |_, c, s| Ok(toy(c, s)), &|p: &Progress| {
            if p.step >= 3 {
                Control::Stop
            } else {
                Control::Continue
            }
        })
        .unwrap();
    assert_eq!(sel.status, RunStatus::Cancelled);
    assert!(sel.evaluations >= 3 && sel.evaluations < g.len());
    assert_eq!(sel.entries.len(), sel.evaluations);
    let best = sel.best().unwrap();
    let chosen = Rule::default()
        .choose(sel.entries.iter().map(|e| e.mean))
        .unwrap();
    assert_eq!(best, &sel.entries[chosen]);
}

#[test]
fn an_evaluation_error_is_returned_as_it_is() {
    let g = grid();
    let splits = [0usize, 1];
    let failing = |c: &(u32, u32), s: &usize| -> Result<f64> {
        if *c == (3, 1) && *s == 1 {
            Err(Error::Memory {
                what: "a Gram matrix".into(),
                needed: 10,
                limit: 1,
            })
        } else {
            Ok(toy(c, s))
        }
    };
    let e = Search::new(&g, &splits).run(failing, &()).unwrap_err();
    assert!(matches!(e, Error::Memory { needed: 10, .. }), "{e}");
    let e = Search::new(&g, &splits)
        .run_warm(|_| Ok(()), |c, s, _: &mut ()| failing(c, s), &())
        .unwrap_err();
    assert!(matches!(e, Error::Memory { .. }), "{e}");
    let e = Search::new(&g, &splits)
        .run_split_by_split(|_| Ok(()), |_, c, s| failing(c, s), &())
        .unwrap_err();
    assert!(matches!(e, Error::Memory { .. }), "{e}");
    // Errors of the per-split state and context too.
    let e = Search::new(&g, &splits)
        .run_warm(
            |&s| {
                if s == 1 {
                    Err(Error::Numerical("init".into()))
                } else {
                    Ok(())
                }
            },
            |c, s, _: &mut ()| Ok(toy(c, s)),
            &(),
        )
        .unwrap_err();
    assert!(matches!(e, Error::Numerical(_)), "{e}");
    let e = Search::new(&g, &splits)
        .run_split_by_split(
            |_| Err::<(), _>(Error::data("no context")),
            |_, c, s| Ok(toy(c, s)),
            &(),
        )
        .unwrap_err();
    assert!(matches!(e, Error::Data(_)), "{e}");
}

#[test]
fn empty_grids_splits_and_bad_settings_are_refused() {
    let g = grid();
    let splits = [0usize, 1];
    let none: [(u32, u32); 0] = [];
    let e = Search::new(&none, &splits)
        .run(|c, s| Ok(toy(c, s)), &())
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidParameter { name, .. } if name == "candidates"),
        "{e}"
    );
    let e = Search::new(&g, &[] as &[usize])
        .run_warm(|_| Ok(()), |c, s, _: &mut ()| Ok(toy(c, s)), &())
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidParameter { name, .. } if name == "splits"),
        "{e}"
    );
    let e = Search::new(&g, &splits)
        .mean(Mean::Weighted(vec![1.0]))
        .run(|c, s| Ok(toy(c, s)), &())
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::ShapeMismatch {
                expected: 2,
                found: 1,
                ..
            }
        ),
        "{e}"
    );
    let e = Search::new(&g, &splits)
        .mean(Mean::Weighted(vec![1.0, 0.0]))
        .run(|c, s| Ok(toy(c, s)), &())
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidParameter { name, .. } if name == "weights"),
        "{e}"
    );
    let e = Search::new(&g, &splits)
        .tolerance(-1.0)
        .run_split_by_split(|_| Ok(()), |_, c, s| Ok(toy(c, s)), &())
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidParameter { name, .. } if name == "tolerance"),
        "{e}"
    );
}

#[test]
fn strategies_make_the_split_module_partitions() {
    let y: Vec<usize> = (0..30).map(|i| i % 3).collect();
    let s = SplitStrategy::KFold { folds: 4, seed: 2 }
        .splits(30, None)
        .unwrap();
    assert_eq!(s, Split::from_pairs(kfold(30, 4, 2)));
    let s = SplitStrategy::StratifiedKFold { folds: 3, seed: 5 }
        .splits(30, Some(&y))
        .unwrap();
    assert_eq!(s, Split::from_pairs(stratified_kfold(&y, 3, 5)));
    let targets = Targets::Classes {
        classes: vec!["a".into(), "b".into(), "c".into()],
        y: y.clone(),
    };
    assert_eq!(
        SplitStrategy::StratifiedKFold { folds: 3, seed: 5 }
            .splits_for(&targets)
            .unwrap(),
        s
    );
    let s = SplitStrategy::HeldOut {
        train_fraction: 0.7,
        seed: 1,
    }
    .splits(30, None)
    .unwrap();
    assert_eq!(s, vec![random_split(30, 0.7, 1).into()]);
    let s = SplitStrategy::StratifiedHeldOut {
        train_fraction: 0.7,
        seed: 1,
    }
    .splits_for(&targets)
    .unwrap();
    assert_eq!(s, vec![stratified_split(&y, 0.7, 1).into()]);
    let rows: Vec<usize> = (0..30).collect();
    let s = SplitStrategy::HeldOutParts {
        fraction: 0.2,
        parts: 5,
        seed: 3,
    }
    .splits(30, None)
    .unwrap();
    assert_eq!(s, Split::from_pairs(held_out_parts(&rows, 0.2, 5, 3)));
    let given = vec![Split {
        train: vec![0, 1],
        validation: vec![2],
    }];
    assert_eq!(
        SplitStrategy::Given(given.clone()).splits(3, None).unwrap(),
        given
    );
}

#[test]
fn repeated_kfolds_are_plain_kfolds_over_independent_partitions() {
    let y: Vec<usize> = (0..31).map(|i| i % 3).collect();
    let s = SplitStrategy::RepeatedKFold {
        folds: 4,
        repeats: 3,
        seed: 2,
    }
    .splits(31, None)
    .unwrap();
    let mut want = Split::from_pairs(kfold(31, 4, 2));
    want.extend(Split::from_pairs(kfold(31, 4, repeat_seed(2, 1))));
    want.extend(Split::from_pairs(kfold(31, 4, repeat_seed(2, 2))));
    assert_eq!(s, want);
    let strat = SplitStrategy::RepeatedStratifiedKFold {
        folds: 3,
        repeats: 2,
        seed: 5,
    };
    assert_eq!(strat.repeats(), 2);
    assert_eq!(SplitStrategy::KFold { folds: 3, seed: 5 }.repeats(), 1);
    let s = strat.splits(31, Some(&y)).unwrap();
    assert_eq!(s.len(), 6);
    // Each partition puts every row in exactly one validation part, and the two
    // partitions differ.
    for part in s.chunks(3) {
        let mut seen: Vec<usize> = part.iter().flat_map(|p| p.validation.clone()).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..31).collect::<Vec<_>>());
    }
    assert_ne!(s[..3], s[3..]);
    // The first partition is the plain stratified k-fold's.
    assert_eq!(s[..3], Split::from_pairs(stratified_kfold(&y, 3, 5))[..]);
    let e = SplitStrategy::RepeatedKFold {
        folds: 3,
        repeats: 0,
        seed: 0,
    }
    .splits(10, None)
    .unwrap_err();
    assert!(matches!(&e, Error::InvalidParameter { name, .. } if name == "repeats"));
}

#[test]
fn strategies_refuse_what_cannot_be_split() {
    let param = |r: Result<Vec<Split>>, want: &str| match r {
        Err(Error::InvalidParameter { name, .. }) => assert_eq!(name, want),
        other => panic!("expected a {want} error, got {other:?}"),
    };
    param(
        SplitStrategy::KFold { folds: 1, seed: 0 }.splits(10, None),
        "folds",
    );
    param(
        SplitStrategy::HeldOut {
            train_fraction: 1.0,
            seed: 0,
        }
        .splits(10, None),
        "train_fraction",
    );
    param(
        SplitStrategy::HeldOutParts {
            fraction: 0.0,
            parts: 2,
            seed: 0,
        }
        .splits(10, None),
        "fraction",
    );
    let data = |r: Result<Vec<Split>>| assert!(matches!(r, Err(Error::Data(_))), "{r:?}");
    data(SplitStrategy::StratifiedKFold { folds: 2, seed: 0 }.splits(10, None));
    data(SplitStrategy::KFold { folds: 2, seed: 0 }.splits(1, None));
    data(
        SplitStrategy::HeldOut {
            train_fraction: 0.5,
            seed: 0,
        }
        .splits(1, None),
    );
    data(SplitStrategy::Given(vec![]).splits(3, None));
    data(
        SplitStrategy::Given(vec![Split {
            train: vec![0],
            validation: vec![3],
        }])
        .splits(3, None),
    );
    data(
        SplitStrategy::Given(vec![Split {
            train: vec![0, 1],
            validation: vec![],
        }])
        .splits(3, None),
    );
    let r = SplitStrategy::KFold { folds: 2, seed: 0 }.splits(4, Some(&[0, 1]));
    assert!(
        matches!(
            r,
            Err(Error::ShapeMismatch {
                expected: 4,
                found: 2,
                ..
            })
        ),
        "{r:?}"
    );
}

//! The selection loops of `reproduce` (gomp glass and simulation, ocr, mirror descent Figures
//! 2-3, as of commit 3b69a82), each written out as it was and set against the harness call
//! that replaces it. The learners are stood in for by deterministic scores with ties,
//! near-ties and (where the loop filters them) non-finite values; state-dependent scores
//! check the warm-start order.

use super::*;
use std::cmp::Ordering as CmpOrdering;

/// A deterministic hash (splitmix64).
fn h(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// An accuracy-like score `k / 7` (many exact ties), sometimes nudged by less than
/// glass's tolerance 1e-12 (near-ties).
fn acc(key: u64) -> f64 {
    acc_of(key, 7)
}

/// [`acc`] with `levels + 1` values `k / levels`.
fn acc_of(key: u64, levels: u64) -> f64 {
    let v = h(key);
    let base = (v % (levels + 1)) as f64 / levels as f64;
    if v.is_multiple_of(5) {
        base + 3e-13
    } else {
        base
    }
}

/// Glass, GOMP: per lambda and fold one path of `m + 1` accuracies (lengths beyond a
/// fold's path reuse its last model), `a += acc / folds` per point, scan lambda outer and
/// path length inner, `a > best + 1e-12`.
#[test]
fn glass_gomp() {
    let lambdas: Vec<f64> = (0..7).map(|i| 10f64.powi(i - 5)).collect();
    let m = 4;
    let folds = [0u64, 1, 2];
    let mut tolerance_mattered = 0;
    for rep in 0..40u64 {
        // The path a fold's GOMP run reaches: sometimes shorter than m + 1.
        let path = |li: usize, f: u64| -> Vec<f64> {
            let key = rep * 100_000 + li as u64 * 1000 + f * 100;
            let len = 2 + (h(key) % (m as u64)) as usize;
            let preds: Vec<f64> = (0..len).map(|s| acc_of(key + s as u64, 2)).collect();
            (0..=m).map(|s| preds[s.min(preds.len() - 1)]).collect()
        };
        // The loop as it was.
        let mut best: Option<(f64, usize, usize)> = None;
        let mut table = Vec::new();
        for li in 0..lambdas.len() {
            let mut a = vec![0.0; m + 1];
            for &f in &folds {
                let p = path(li, f);
                for (s, a) in a.iter_mut().enumerate() {
                    *a += p[s] / folds.len() as f64;
                }
            }
            for (s, &v) in a.iter().enumerate() {
                table.push(v);
                if best.is_none_or(|b| v > b.0 + 1e-12) {
                    best = Some((v, li, s));
                }
            }
        }
        // The harness.
        let search = Search::new(&lambdas, &folds).mean(Mean::Shares);
        let eval = |l: &f64, &f: &u64| {
            let li = lambdas.iter().position(|x| x == l).unwrap();
            Ok(path(li, f))
        };
        let sel = search.clone().tolerance(1e-12).run(eval, &()).unwrap();
        let (_, li, s) = best.unwrap();
        let b = sel.best().unwrap();
        assert_eq!((b.candidate, b.point), (li, s));
        let means: Vec<u64> = sel.entries.iter().map(|e| e.mean.to_bits()).collect();
        assert_eq!(means, table.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        let strict = search.run(eval, &()).unwrap();
        if strict.best != sel.best {
            tolerance_mattered += 1;
        }
    }
    assert!(
        tolerance_mattered > 0,
        "no near-tie exercised the tolerance"
    );
}

/// Glass, lp-MKL per p: one accuracy per (lambda, fold), same mean and rule.
#[test]
fn glass_lp() {
    let lambdas: Vec<f64> = (0..9).map(|i| 10f64.powi(i - 3)).collect();
    let folds = [0u64, 1, 2];
    for p in 0..40u64 {
        let score = |li: usize, f: u64| acc_of(p * 10_000 + li as u64 * 10 + f, 2);
        let mut best: Option<(f64, usize)> = None;
        for li in 0..lambdas.len() {
            let mut a = 0.0;
            for &f in &folds {
                a += score(li, f) / folds.len() as f64;
            }
            if best.is_none_or(|b| a > b.0 + 1e-12) {
                best = Some((a, li));
            }
        }
        let idx: Vec<usize> = (0..lambdas.len()).collect();
        let sel = Search::new(&idx, &folds)
            .mean(Mean::Shares)
            .tolerance(1e-12)
            .run(|&li, &f| Ok(score(li, f)), &())
            .unwrap();
        assert_eq!(sel.best().unwrap().candidate, best.unwrap().1);
        assert_eq!(
            sel.best().unwrap().mean.to_bits(),
            best.unwrap().0.to_bits()
        );
    }
}

/// Simulation, GOMP: one validation set, one path of errors per lambda, `e < best`
/// (first wins), the chosen path kept.
#[test]
fn simulation_gomp() {
    let lambdas: Vec<usize> = (0..17).collect();
    let err = |li: usize, s: usize| 1.0 - acc(li as u64 * 100 + s as u64);
    let mut best: Option<(f64, usize, usize, String)> = None;
    for &li in &lambdas {
        let path = format!("path {li}");
        for s in 0..6 {
            let e = err(li, s);
            if best.as_ref().is_none_or(|b| e < b.0) {
                best = Some((e, li, s, path.clone()));
            }
        }
    }
    let sel = Search::new(&lambdas, &[()])
        .minimize()
        .run(
            |&li, _| {
                Ok((
                    (0..6).map(|s| err(li, s)).collect::<Vec<f64>>(),
                    format!("path {li}"),
                ))
            },
            &(),
        )
        .unwrap();
    let (_, li, s, path) = best.unwrap();
    let b = sel.best().unwrap();
    assert_eq!((b.candidate, b.point), (li, s));
    assert_eq!(sel.best_output(0), Some(&path));
}

/// Simulation, lp-MKL per p: lambdas in grid order on the validation set, each started
/// from the previous solution's floored weights, `e < best`.
#[test]
fn simulation_lp_warm() {
    let lambdas: Vec<f64> = (0..9).map(|i| 10f64.powi(i - 3)).collect();
    // A "solve" whose result depends on its warm start.
    let solve = |l: f64, warm: &Option<Vec<f64>>| -> (f64, Vec<f64>) {
        let w0 = warm.as_ref().map_or(0.0, |w| w[0]);
        let theta = vec![(l.ln() + 7.0 * w0).sin().abs(), 0.0];
        let e = ((theta[0] * 8.0).round() / 8.0 - 0.5).abs();
        (e, theta)
    };
    let floor = |t: &[f64]| -> Vec<f64> {
        let m = t.iter().cloned().fold(0.0, f64::max);
        t.iter().map(|v| v.max(1e-6 * m)).collect()
    };
    let mut best: Option<(f64, usize, Vec<f64>)> = None;
    let mut warm: Option<Vec<f64>> = None;
    for (li, &l) in lambdas.iter().enumerate() {
        let (e, theta) = solve(l, &warm);
        warm = Some(floor(&theta));
        if best.as_ref().is_none_or(|b| e < b.0) {
            best = Some((e, li, theta));
        }
    }
    let sel = Search::new(&lambdas, &[()])
        .minimize()
        .run_warm(
            |_| Ok(None),
            |&l, _, warm: &mut Option<Vec<f64>>| {
                let (e, theta) = solve(l, warm);
                *warm = Some(floor(&theta));
                Ok((e, theta))
            },
            &(),
        )
        .unwrap();
    let (_, li, theta) = best.unwrap();
    assert_eq!(sel.best().unwrap().candidate, li);
    assert_eq!(sel.best_output(0), Some(&theta));
}

/// Mirror descent's `select`: finite validation MSEs only, the lowest, ties to the
/// larger ridge.
fn mirror_select(fits: &[(f64, f64)]) -> Option<(f64, f64)> {
    fits.iter()
        .copied()
        .filter(|f| f.1.is_finite())
        .min_by(|a, b| a.1.total_cmp(&b.1).then(b.0.total_cmp(&a.0)))
}

/// Mirror descent Figures 2-3, Stoch and uniform: every ridge of the increasing grid
/// fitted in parallel, [`mirror_select`]. lp-MKL: sequential in grid order, the warm
/// start replaced only when some weight is positive, [`mirror_select`].
#[test]
fn mirror_descent_grids() {
    let grids: [&[f64]; 3] = [
        &[1e-6, 1e-4, 1e-2, 1.0, 1e2],
        &[1e-4, 1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3],
        &[1e-2],
    ];
    for (gi, lambdas) in grids.iter().enumerate() {
        for rep in 0..20u64 {
            let key = |li: usize| rep * 1000 + gi as u64 * 100 + li as u64;
            // Validation MSEs with ties, a NaN and an infinity now and then.
            let val = |li: usize| match h(key(li)) % 9 {
                0 => f64::NAN,
                1 => f64::INFINITY,
                v => (v % 3) as f64 / 4.0,
            };
            let fits: Vec<(f64, f64)> = lambdas
                .iter()
                .enumerate()
                .map(|(li, &l)| (l, val(li)))
                .collect();
            let want = mirror_select(&fits);
            let sel = Search::new(lambdas, &[()])
                .minimize()
                .ties(Ties::Last)
                .run(
                    |&l, _| Ok(val(lambdas.iter().position(|&x| x == l).unwrap())),
                    &(),
                )
                .unwrap();
            assert_eq!(sel.best().map(|b| lambdas[b.candidate]), want.map(|f| f.0));

            // lp-MKL: the solution depends on the warm start; all-zero weights keep the
            // previous warm start.
            let solve = |li: usize, warm: &Option<Vec<f64>>| -> (f64, Vec<f64>) {
                let w = warm.as_ref().map_or(0.5, |w| w[0]);
                let t = if h(key(li) ^ 77).is_multiple_of(4) {
                    0.0
                } else {
                    (w * 3.0 + li as f64) % 1.0
                };
                let v = if h(key(li) ^ 99).is_multiple_of(7) {
                    f64::NAN
                } else {
                    (t * 4.0).round() / 4.0
                };
                (v, vec![t])
            };
            let mut fits = Vec::new();
            let mut warm: Option<Vec<f64>> = None;
            for (li, &l) in lambdas.iter().enumerate() {
                let (v, theta) = solve(li, &warm);
                if theta.iter().any(|t| *t > 0.0) {
                    warm = Some(theta.iter().map(|t| t.max(1e-12)).collect());
                }
                fits.push((l, v));
            }
            let want = mirror_select(&fits);
            let idx: Vec<usize> = (0..lambdas.len()).collect();
            let sel = Search::new(&idx, &[()])
                .minimize()
                .ties(Ties::Last)
                .run_warm(
                    |_| Ok(None),
                    |&li, _, warm: &mut Option<Vec<f64>>| {
                        let (v, theta) = solve(li, warm);
                        if theta.iter().any(|t| *t > 0.0) {
                            *warm = Some(theta.iter().map(|t| t.max(1e-12)).collect());
                        }
                        Ok((v, lambdas[li]))
                    },
                    &(),
                )
                .unwrap();
            assert_eq!(sel.best().map(|b| lambdas[b.candidate]), want.map(|f| f.0));
            assert_eq!(
                sel.best().map(|b| b.mean.total_cmp(&want.unwrap().1)),
                want.map(|_| CmpOrdering::Equal)
            );
        }
    }
}

/// OCR: for each held-out part in turn, each row's kernel set built once and the
/// `C x eta0` grid (C outer) trained in parallel; accuracies pooled over the parts by
/// their characters; per row the first best (`>`). With the harness: the rows that share
/// a kernel set searched together, split by split, the context the kernel set, the mean
/// weighted by the parts' characters, and the best chosen per row.
#[test]
fn ocr_rows() {
    let c_grid = [0.3, 1.0, 3.0, 10.0, 100.0, 1000.0];
    let eta_grid = [0.3, 1.0, 3.0, 10.0, 30.0];
    // Rows sharing a kernel set (3 rows over "LQG"), their held-out parts' characters.
    let rows = [0u64, 1, 2];
    let chars = [921usize, 937, 905, 930, 924];
    let parts: Vec<usize> = (0..chars.len()).collect();
    let acc = |row: u64, part: usize, e: f64, c: f64| {
        let k = h(row * 7919 + part as u64 * 104_729 + (e * 10.0) as u64 * 13 + c as u64);
        (k % (chars[part] as u64 + 1)) as f64 / chars[part] as f64
    };
    // The loop as it was.
    let grid: Vec<(f64, f64)> = c_grid
        .iter()
        .flat_map(|&c| eta_grid.iter().map(move |&e| (e, c)))
        .collect();
    let mut tally = vec![vec![(0.0, 0usize); grid.len()]; rows.len()];
    for &p in &parts {
        for (ri, &r) in rows.iter().enumerate() {
            let accs: Vec<f64> = grid.iter().map(|&(e, c)| acc(r, p, e, c)).collect();
            for (t, a) in tally[ri].iter_mut().zip(&accs) {
                t.0 += a * chars[p] as f64;
                t.1 += chars[p];
            }
        }
    }
    let mut want = Vec::new();
    for tl in &tally {
        let results: Vec<(f64, f64, f64)> = grid
            .iter()
            .zip(tl)
            .map(|(&(e, c), &(right, n))| (e, c, right / n.max(1) as f64))
            .collect();
        let mut best = results[0];
        for &r in &results[1..] {
            if r.2 > best.2 {
                best = r;
            }
        }
        want.push((results, best));
    }
    // The harness: candidates (row, eta0, C), row outer, C, then eta0.
    let cands: Vec<(u64, f64, f64)> = rows
        .iter()
        .flat_map(|&r| grid.iter().map(move |&(e, c)| (r, e, c)))
        .collect();
    let built = std::sync::Mutex::new(Vec::new());
    let sel = Search::new(&cands, &parts)
        .mean(Mean::Weighted(chars.iter().map(|&n| n as f64).collect()))
        .run_split_by_split(
            |&p| {
                built.lock().unwrap().push(p);
                Ok(format!("kernel set of part {p}"))
            },
            |set: &String, &(r, e, c), &p| {
                assert_eq!(set, &format!("kernel set of part {p}"));
                Ok(acc(r, p, e, c))
            },
            &(),
        )
        .unwrap();
    assert_eq!(
        *built.lock().unwrap(),
        parts,
        "one context a part, in order"
    );
    for (ri, &r) in rows.iter().enumerate() {
        let b = sel.best_where(|e| cands[e.candidate].0 == r).unwrap();
        let (results, best) = &want[ri];
        assert_eq!(
            (cands[b.candidate].1, cands[b.candidate].2),
            (best.0, best.1)
        );
        assert_eq!(b.mean.to_bits(), best.2.to_bits());
        for (k, res) in results.iter().enumerate() {
            let e = &sel.entries[ri * grid.len() + k];
            assert_eq!(e.mean.to_bits(), res.2.to_bits());
        }
    }
}

//! Seeded train/validation/test splits and k-fold partitions of row indices.
//!
//! The experiments of the papers draw random splits and average over them: Afkanpour et al.
//! (2013), Sec. 5 and Table 1 (random training/validation/test sets, e.g. ionosphere
//! 140/36/175, sonar 83/21/104: [`three_way_split`]); Martins et al. (2011), Table 1 (C picked
//! by 5-fold cross-validation: [`kfold`] / [`stratified_kfold`]). [`held_out_parts`] cuts
//! disjoint held-out parts of a list of items (the OCR hyper-parameter selection).
//! `crate::select` runs a model selection over any of these splits.
//!
//! Every function is deterministic in its `seed` (a `ChaCha8Rng::seed_from_u64(seed)` drives
//! all shuffles) and returns index lists sorted ascending, so a subset keeps the file order
//! (learners that visit rows in random order shuffle with their own seed). The parts of a
//! split are disjoint and together cover `0..n` exactly once.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// `train_fraction` clamped into `[0, 1]` (NaN counts as 0).
fn clamp_fraction(f: f64) -> f64 {
    if f > 0.0 {
        f.min(1.0)
    } else {
        0.0
    }
}

/// How many of `count` items go to the training part: `round(fraction * count)`, but when
/// `0 < fraction < 1` and `count >= 2` at least one item goes to each part.
fn n_train_of(count: usize, fraction: f64) -> usize {
    let f = clamp_fraction(fraction);
    let mut t = ((f * count as f64).round() as usize).min(count);
    if f > 0.0 && f < 1.0 && count >= 2 {
        t = t.clamp(1, count - 1);
    }
    t
}

/// Row indices grouped by class, in increasing class order; classes without rows omitted.
fn by_class(y: &[usize]) -> Vec<Vec<usize>> {
    let n_classes = y.iter().max().map_or(0, |&m| m + 1);
    let mut groups = vec![Vec::new(); n_classes];
    for (i, &c) in y.iter().enumerate() {
        groups[c].push(i);
    }
    groups.retain(|g| !g.is_empty());
    groups
}

fn sorted(mut v: Vec<usize>) -> Vec<usize> {
    v.sort_unstable();
    v
}

/// Stratified train/test split of rows with class indices `y`: within every class,
/// `round(train_fraction * count)` randomly chosen rows go to training and the rest to test;
/// a class with at least 2 rows is present in both parts when `0 < train_fraction < 1`.
/// Returns `(train, test)`.
pub fn stratified_split(y: &[usize], train_fraction: f64, seed: u64) -> (Vec<usize>, Vec<usize>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut train, mut test) = (Vec::new(), Vec::new());
    for mut g in by_class(y) {
        g.shuffle(&mut rng);
        let t = n_train_of(g.len(), train_fraction);
        train.extend_from_slice(&g[..t]);
        test.extend_from_slice(&g[t..]);
    }
    (sorted(train), sorted(test))
}

/// Uniformly random train/test split of `0..n` with `round(train_fraction * n)` training
/// rows (at least one row in each part when `n >= 2` and `0 < train_fraction < 1`).
/// Returns `(train, test)`.
pub fn random_split(n: usize, train_fraction: f64, seed: u64) -> (Vec<usize>, Vec<usize>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut perm: Vec<usize> = (0..n).collect();
    perm.shuffle(&mut rng);
    let t = n_train_of(n, train_fraction);
    let test = perm.split_off(t);
    (sorted(perm), sorted(test))
}

/// Random split of `0..n` into `n_train` training, `n_val` validation and the remaining test
/// rows (Afkanpour et al. 2013, Table 1). Sizes larger than what is left are cut down:
/// `n_train` to `n`, then `n_val` to `n - n_train`. Returns `(train, validation, test)`.
pub fn three_way_split(
    n: usize,
    n_train: usize,
    n_val: usize,
    seed: u64,
) -> (Vec<usize>, Vec<usize>, Vec<usize>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut perm: Vec<usize> = (0..n).collect();
    perm.shuffle(&mut rng);
    let n_train = n_train.min(n);
    let n_val = n_val.min(n - n_train);
    let test = perm.split_off(n_train + n_val);
    let val = perm.split_off(n_train);
    (sorted(perm), sorted(val), sorted(test))
}

/// The number of folds actually used for `n` rows: `k` clamped into `2..=n`; 0 when `n < 2`
/// (no partition into two non-empty folds exists).
pub(crate) fn effective_folds(n: usize, k: usize) -> usize {
    if n < 2 {
        0
    } else {
        k.clamp(2, n)
    }
}

/// `(train, validation)` pairs from an assignment of every row to a fold.
fn folds_from(fold_of: &[usize], k: usize) -> Vec<(Vec<usize>, Vec<usize>)> {
    (0..k)
        .map(|f| {
            let (mut train, mut val) = (Vec::new(), Vec::new());
            for (i, &g) in fold_of.iter().enumerate() {
                if g == f {
                    val.push(i);
                } else {
                    train.push(i);
                }
            }
            (train, val)
        })
        .collect()
}

/// Random k-fold partition of `0..n`: fold sizes differ by at most one, every row is in
/// exactly one validation fold. `k` is clamped by `effective_folds` (so `k > n` gives
/// leave-one-out and `n < 2` gives no folds). Returns one `(train, validation)` pair a fold.
pub fn kfold(n: usize, k: usize, seed: u64) -> Vec<(Vec<usize>, Vec<usize>)> {
    let k = effective_folds(n, k);
    if k == 0 {
        return Vec::new();
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut perm: Vec<usize> = (0..n).collect();
    perm.shuffle(&mut rng);
    let mut fold_of = vec![0; n];
    for (pos, &i) in perm.iter().enumerate() {
        fold_of[i] = pos % k;
    }
    folds_from(&fold_of, k)
}

/// Stratified k-fold partition: the rows of each class are shuffled and dealt to the folds
/// in turn, the dealing continuing where the previous class stopped. So within every class
/// the fold counts differ by at most one, and so do the overall fold sizes. `k` is clamped
/// by `effective_folds`. Returns one `(train, validation)` pair a fold.
pub fn stratified_kfold(y: &[usize], k: usize, seed: u64) -> Vec<(Vec<usize>, Vec<usize>)> {
    let k = effective_folds(y.len(), k);
    if k == 0 {
        return Vec::new();
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut fold_of = vec![0; y.len()];
    let mut next = 0;
    for mut g in by_class(y) {
        g.shuffle(&mut rng);
        for i in g {
            fold_of[i] = next;
            next = (next + 1) % k;
        }
    }
    folds_from(&fold_of, k)
}

/// One validation split: the rows a candidate is trained on and the rows it is scored on
/// (what [`kfold`], [`stratified_kfold`] and the train/test splits return as pairs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Split {
    pub train: Vec<usize>,
    pub validation: Vec<usize>,
}

impl From<(Vec<usize>, Vec<usize>)> for Split {
    fn from((train, validation): (Vec<usize>, Vec<usize>)) -> Split {
        Split { train, validation }
    }
}

impl Split {
    /// `(train, validation)` pairs as splits, in the same order.
    pub fn from_pairs(pairs: Vec<(Vec<usize>, Vec<usize>)>) -> Vec<Split> {
        pairs.into_iter().map(Split::from).collect()
    }
}

/// Disjoint held-out parts of the items `ids` (row or word indices, any order): `ids` is
/// shuffled once with the seed, then part `p` holds positions
/// `round(n * fraction * p) .. round(n * fraction * (p + 1))` of the shuffled list and its
/// training part everything else. `fraction` is clamped into `[0, 1]` (NaN counts as 0) and
/// `parts` into `1..=round(1 / fraction)` (so the parts never overlap; 1 when `fraction` is 0). The first part is the same whatever
/// `parts` is. Returns one `(train, held-out)` pair of sorted ids a part.
pub fn held_out_parts(
    ids: &[usize],
    fraction: f64,
    parts: usize,
    seed: u64,
) -> Vec<(Vec<usize>, Vec<usize>)> {
    let fraction = clamp_fraction(fraction);
    let mut idx = ids.to_vec();
    idx.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    let n = idx.len() as f64;
    let max_parts = if fraction > 0.0 {
        ((1.0 / fraction).round() as usize).max(1)
    } else {
        1
    };
    (0..parts.clamp(1, max_parts))
        .map(|p| {
            let lo = ((n * fraction * p as f64).round() as usize).min(idx.len());
            let hi = ((n * fraction * (p + 1) as f64).round() as usize).min(idx.len());
            let val = idx[lo..hi].to_vec();
            let tr: Vec<usize> = idx[..lo].iter().chain(&idx[hi..]).copied().collect();
            (sorted(tr), sorted(val))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Checks that the parts are sorted, pairwise disjoint and cover `0..n` exactly.
    fn assert_partition(n: usize, parts: &[&[usize]]) {
        let mut seen = vec![0usize; n];
        for p in parts {
            assert!(
                p.windows(2).all(|w| w[0] < w[1]),
                "not sorted/unique: {p:?}"
            );
            for &i in *p {
                assert!(i < n, "index {i} out of range {n}");
                seen[i] += 1;
            }
        }
        assert!(seen.iter().all(|&c| c == 1), "not a partition: {seen:?}");
    }

    fn labels(counts: &[usize]) -> Vec<usize> {
        // Interleave the classes so class membership is not contiguous.
        let mut y = Vec::new();
        let mut left = counts.to_vec();
        while left.iter().any(|&c| c > 0) {
            for (c, l) in left.iter_mut().enumerate() {
                if *l > 0 {
                    y.push(c);
                    *l -= 1;
                }
            }
        }
        y
    }

    fn count(y: &[usize], idx: &[usize], c: usize) -> usize {
        idx.iter().filter(|&&i| y[i] == c).count()
    }

    #[test]
    fn stratified_split_partitions_and_keeps_proportions() {
        let counts = [97usize, 111, 2, 1, 10];
        let y = labels(&counts);
        for &f in &[0.5, 0.7, 0.25, 0.01, 0.99] {
            let (tr, te) = stratified_split(&y, f, 11);
            assert_partition(y.len(), &[&tr, &te]);
            for (c, &cnt) in counts.iter().enumerate() {
                // Brute-force expectation straight from the definition.
                let mut want = (f * cnt as f64).round() as usize;
                if cnt >= 2 {
                    want = want.max(1).min(cnt - 1);
                }
                assert_eq!(count(&y, &tr, c), want, "class {c} fraction {f}");
                assert_eq!(count(&y, &te, c), cnt - want);
            }
        }
    }

    #[test]
    fn stratified_split_extreme_fractions() {
        let y = labels(&[5, 3]);
        let (tr, te) = stratified_split(&y, 1.0, 0);
        assert_eq!((tr.len(), te.len()), (8, 0));
        let (tr, te) = stratified_split(&y, 0.0, 0);
        assert_eq!((tr.len(), te.len()), (0, 8));
        let (tr, te) = stratified_split(&y, f64::NAN, 0);
        assert_eq!((tr.len(), te.len()), (0, 8));
        let (tr, te) = stratified_split(&[], 0.5, 0);
        assert!(tr.is_empty() && te.is_empty());
    }

    #[test]
    fn splits_are_deterministic_by_seed() {
        let y = labels(&[60, 40]);
        assert_eq!(stratified_split(&y, 0.6, 3), stratified_split(&y, 0.6, 3));
        assert_ne!(stratified_split(&y, 0.6, 3), stratified_split(&y, 0.6, 4));
        assert_eq!(random_split(100, 0.6, 3), random_split(100, 0.6, 3));
        assert_ne!(random_split(100, 0.6, 3), random_split(100, 0.6, 4));
        assert_eq!(
            three_way_split(100, 50, 20, 9),
            three_way_split(100, 50, 20, 9)
        );
        assert_ne!(
            three_way_split(100, 50, 20, 9),
            three_way_split(100, 50, 20, 8)
        );
        assert_eq!(kfold(50, 5, 1), kfold(50, 5, 1));
        assert_ne!(kfold(50, 5, 1), kfold(50, 5, 2));
        assert_eq!(stratified_kfold(&y, 5, 1), stratified_kfold(&y, 5, 1));
        assert_ne!(stratified_kfold(&y, 5, 1), stratified_kfold(&y, 5, 2));
    }

    #[test]
    fn random_split_sizes_and_partition() {
        for &(n, f, want) in &[
            (10usize, 0.5, 5usize),
            (7, 0.3, 2),
            (2, 0.01, 1),
            (2, 0.99, 1),
            (1, 0.5, 1),
            (0, 0.5, 0),
        ] {
            let (tr, te) = random_split(n, f, 5);
            assert_partition(n, &[&tr, &te]);
            assert_eq!(tr.len(), want, "n {n} f {f}");
        }
    }

    #[test]
    fn random_split_is_roughly_uniform() {
        // Each row should land in training about train_fraction of the time.
        let n = 20;
        let mut hits = vec![0usize; n];
        for seed in 0..2000 {
            for i in random_split(n, 0.25, seed).0 {
                hits[i] += 1;
            }
        }
        for h in hits {
            assert!((400..600).contains(&h), "hits {h} far from 500");
        }
    }

    #[test]
    fn three_way_split_sizes() {
        let (tr, va, te) = three_way_split(351, 140, 36, 0);
        assert_eq!((tr.len(), va.len(), te.len()), (140, 36, 175));
        assert_partition(351, &[&tr, &va, &te]);
        let (tr, va, te) = three_way_split(10, 8, 5, 0);
        assert_eq!((tr.len(), va.len(), te.len()), (8, 2, 0));
        assert_partition(10, &[&tr, &va, &te]);
        let (tr, va, te) = three_way_split(3, 10, 10, 0);
        assert_eq!((tr.len(), va.len(), te.len()), (3, 0, 0));
    }

    fn check_folds(n: usize, k: usize, folds: &[(Vec<usize>, Vec<usize>)]) {
        assert_eq!(folds.len(), k);
        let vals: Vec<&[usize]> = folds.iter().map(|(_, v)| v.as_slice()).collect();
        assert_partition(n, &vals);
        for (tr, va) in folds {
            assert_partition(n, &[tr, va]);
            assert!(!va.is_empty());
        }
        let sizes: BTreeSet<usize> = folds.iter().map(|(_, v)| v.len()).collect();
        assert!(
            sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1,
            "{sizes:?}"
        );
    }

    #[test]
    fn kfold_partitions() {
        for &(n, k) in &[(10usize, 3usize), (100, 10), (7, 7), (5, 2)] {
            check_folds(n, k, &kfold(n, k, 42));
        }
        // Clamping: k > n is leave-one-out, k < 2 becomes 2, n < 2 has no folds.
        check_folds(4, 4, &kfold(4, 9, 0));
        check_folds(6, 2, &kfold(6, 0, 0));
        assert!(kfold(1, 5, 0).is_empty());
        assert!(kfold(0, 5, 0).is_empty());
    }

    #[test]
    fn stratified_kfold_balances_every_class() {
        let counts = [23usize, 7, 1, 40];
        let y = labels(&counts);
        let k = 5;
        let folds = stratified_kfold(&y, k, 7);
        check_folds(y.len(), k, &folds);
        for (c, &cnt) in counts.iter().enumerate() {
            let per: Vec<usize> = folds.iter().map(|(_, v)| count(&y, v, c)).collect();
            let (lo, hi) = (per.iter().min().unwrap(), per.iter().max().unwrap());
            assert!(hi - lo <= 1, "class {c}: {per:?}");
            assert_eq!(per.iter().sum::<usize>(), cnt);
        }
        assert!(stratified_kfold(&[0], 3, 0).is_empty());
    }
    #[test]
    fn split_from_pairs_keeps_order() {
        let folds = kfold(9, 3, 4);
        let splits = Split::from_pairs(folds.clone());
        assert_eq!(splits.len(), 3);
        for (s, (tr, va)) in splits.iter().zip(&folds) {
            assert_eq!((&s.train, &s.validation), (tr, va));
        }
    }

    #[test]
    fn held_out_parts_are_disjoint_and_cut_by_rounding() {
        // Arbitrary ids (not 0..n), as the words of one OCR fold.
        let ids: Vec<usize> = (0..23).map(|i| 3 * i + 1).collect();
        let parts = held_out_parts(&ids, 0.2, 5, 9);
        assert_eq!(parts.len(), 5);
        // Brute force: the same shuffle, cut at round(n f p).
        let mut perm = ids.clone();
        perm.shuffle(&mut ChaCha8Rng::seed_from_u64(9));
        let mut seen = Vec::new();
        for (p, (tr, va)) in parts.iter().enumerate() {
            let lo = (23.0 * 0.2 * p as f64).round() as usize;
            let hi = (23.0 * 0.2 * (p + 1) as f64).round() as usize;
            assert_eq!(va, &sorted(perm[lo..hi].to_vec()));
            let mut all: Vec<usize> = tr.iter().chain(va).copied().collect();
            all.sort_unstable();
            assert_eq!(all, ids);
            assert!(tr.windows(2).all(|w| w[0] < w[1]));
            seen.extend_from_slice(va);
        }
        seen.sort_unstable();
        assert_eq!(seen, ids, "five 20% parts cover every id once");
        // The first part does not depend on how many parts are asked for; at most 1/f parts.
        assert_eq!(held_out_parts(&ids, 0.2, 1, 9)[0], parts[0]);
        assert_eq!(held_out_parts(&ids, 0.2, 9, 9), parts);
        assert_eq!(held_out_parts(&ids, 0.2, 0, 9).len(), 1);
        // Out-of-range fractions are clamped, not a panic.
        assert_eq!(held_out_parts(&ids, 3.0, 2, 9)[0].1.len(), 23);
        assert!(held_out_parts(&ids, f64::NAN, 2, 9)[0].1.is_empty());
        assert!(held_out_parts(&[], 0.2, 5, 9)
            .iter()
            .all(|(t, v)| t.is_empty() && v.is_empty()));
    }
}

//! Arc-score matrices made safe for the decoders: every entry finite, forbidden arcs (`-inf`,
//! NaN) below any tree without them, so that differences and sums never produce NaN.

/// The spread of the finite scores: `1 + sum_m (max_h a(h,m) - min_h a(h,m))` over the used
/// entries of each column (`h != m`, `m >= 1`), and the smallest and largest finite entry.
/// Any two trees made of finite arcs differ by less than the spread.
pub(crate) fn spread(n: usize, arc: &[f64]) -> (f64, f64, f64) {
    let n1 = n + 1;
    let mut total = 1.0;
    let (mut lo_all, mut hi_all) = (f64::INFINITY, f64::NEG_INFINITY);
    for m in 1..n1 {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for h in (0..n1).filter(|&h| h != m) {
            let v = arc[h * n1 + m];
            if v.is_finite() {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
        if lo <= hi {
            total += hi - lo;
            lo_all = lo_all.min(lo);
            hi_all = hi_all.max(hi);
        }
    }
    if lo_all > hi_all {
        (lo_all, hi_all) = (0.0, 0.0);
    }
    (total, lo_all, hi_all)
}

/// A copy of `arc` with `+inf` replaced by the largest finite entry plus the spread (`D`),
/// and `-inf` and NaN by the smallest minus `4 (n + 1) D`: a tree with such an arc scores
/// below every tree without one, and all arithmetic on scores stays finite.
pub(crate) fn sanitized(n: usize, arc: &[f64]) -> Vec<f64> {
    if arc.iter().all(|v| v.is_finite()) {
        return arc.to_vec();
    }
    let (d, lo, hi) = spread(n, arc);
    let forbidden = lo - 4.0 * (n as f64 + 1.0) * d;
    arc.iter()
        .map(|&v| {
            if v.is_finite() {
                v
            } else if v == f64::INFINITY {
                hi + d
            } else {
                forbidden
            }
        })
        .collect()
}

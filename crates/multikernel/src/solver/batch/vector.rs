//! The vector work of L-BFGS over every weight ([`super::quasi_newton`]): dot products and
//! in-place updates of `dim`-long vectors, the minimizer's own share of a batch fit (40 % of
//! a tagger's fit on TWT when its dot products were one running sum: each addition waited
//! on the one before). A dot product here is cut into chunks of [`CHUNK`] entries, each
//! summed in four running sums (added at its end), the chunks' sums then added in order;
//! long vectors spread their chunks over the rayon pool. The cut depends on the length
//! alone, so the result is the same bits whatever the number of threads.

use rayon::prelude::*;

/// Entries of a chunk.
const CHUNK: usize = 1 << 13;

/// Vectors shorter than this stay on the calling thread.
const PARALLEL: usize = 1 << 16;

/// `sum_k f(k)` over `0..n` for a chunk's `f` given as the partial sums of the chunks
/// `[lo, hi)`, added in chunk order.
fn chunked(n: usize, part: impl Fn(usize, usize) -> f64 + Sync) -> f64 {
    let chunks = n.div_ceil(CHUNK);
    let at = |c: usize| part(c * CHUNK, ((c + 1) * CHUNK).min(n));
    if n >= PARALLEL {
        let sums: Vec<f64> = (0..chunks).into_par_iter().map(at).collect();
        sums.iter().fold(0.0, |s, v| s + v)
    } else {
        (0..chunks).map(at).fold(0.0, |s, v| s + v)
    }
}

/// `sum_k f(k)` for `k` in `lo..hi`, in four running sums.
#[inline]
fn lanes(lo: usize, hi: usize, f: impl Fn(usize) -> f64) -> f64 {
    let mut acc = [0.0; 4];
    let mut k = lo;
    while k + 4 <= hi {
        for (l, a) in acc.iter_mut().enumerate() {
            *a += f(k + l);
        }
        k += 4;
    }
    let mut tail = 0.0;
    while k < hi {
        tail += f(k);
        k += 1;
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// `a'b`.
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    chunked(a.len(), |lo, hi| lanes(lo, hi, |k| a[k] * b[k]))
}

/// `(a - b)'(c - e)`.
pub(crate) fn diff_dot(a: &[f64], b: &[f64], c: &[f64], e: &[f64]) -> f64 {
    let n = a.len();
    assert!(b.len() == n && c.len() == n && e.len() == n);
    chunked(n, |lo, hi| lanes(lo, hi, |k| (a[k] - b[k]) * (c[k] - e[k])))
}

/// `out[k] = f(k)` for every `k`, in parallel for long vectors (each entry on its own: the
/// same bits whatever the threads).
pub(crate) fn fill(out: &mut [f64], f: impl Fn(usize) -> f64 + Sync) {
    if out.len() >= PARALLEL {
        out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, o)| {
            for (i, v) in o.iter_mut().enumerate() {
                *v = f(c * CHUNK + i);
            }
        });
    } else {
        out.iter_mut().enumerate().for_each(|(k, v)| *v = f(k));
    }
}

/// `y += a x`.
pub(crate) fn axpy(y: &mut [f64], a: f64, x: &[f64]) {
    assert_eq!(y.len(), x.len());
    if y.len() >= PARALLEL {
        y.par_chunks_mut(CHUNK)
            .zip(x.par_chunks(CHUNK))
            .for_each(|(yc, xc)| yc.iter_mut().zip(xc).for_each(|(v, w)| *v += a * w));
    } else {
        y.iter_mut().zip(x).for_each(|(v, w)| *v += a * w);
    }
}

/// `y += a x`, then `y'z` of the updated `y`, in one pass over the chunks (each chunk
/// updated, then summed while it is in the cache): the bits of [`axpy`] then [`dot`].
pub(crate) fn axpy_dot(y: &mut [f64], a: f64, x: &[f64], z: &[f64]) -> f64 {
    let n = y.len();
    assert!(x.len() == n && z.len() == n);
    let part = |c: usize, yc: &mut [f64]| -> f64 {
        let lo = c * CHUNK;
        for (i, v) in yc.iter_mut().enumerate() {
            *v += a * x[lo + i];
        }
        lanes(0, yc.len(), |i| yc[i] * z[lo + i])
    };
    let sums: Vec<f64> = if n >= PARALLEL {
        y.par_chunks_mut(CHUNK)
            .enumerate()
            .map(|(c, yc)| part(c, yc))
            .collect()
    } else {
        y.chunks_mut(CHUNK)
            .enumerate()
            .map(|(c, yc)| part(c, yc))
            .collect()
    };
    sums.iter().fold(0.0, |s, v| s + v)
}

/// `y *= a`.
pub(crate) fn scale(y: &mut [f64], a: f64) {
    if y.len() >= PARALLEL {
        y.par_chunks_mut(CHUNK)
            .for_each(|c| c.iter_mut().for_each(|v| *v *= a));
    } else {
        y.iter_mut().for_each(|v| *v *= a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize, seed: f64) -> Vec<f64> {
        (0..n)
            .map(|k| ((k as f64) * seed).sin() * 1e3f64.powf(((k % 7) as f64) / 7.0))
            .collect()
    }

    /// Against the one running sum of the definition (to rounding), and the same bits on 1
    /// and on 2 threads, on both sides of the chunk and parallel thresholds.
    #[test]
    fn dot_products_are_the_definition_and_the_same_on_any_threads() {
        for n in [
            0,
            1,
            3,
            4,
            5,
            CHUNK - 1,
            CHUNK + 3,
            PARALLEL - 1,
            PARALLEL + 5,
            3 * PARALLEL + 7,
        ] {
            let (a, b, c, e) = (data(n, 0.37), data(n, 1.3), data(n, 0.11), data(n, 2.9));
            let naive: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            let size: f64 = a.iter().zip(&b).map(|(x, y)| (x * y).abs()).sum();
            assert!(
                (dot(&a, &b) - naive).abs() <= 1e-13 * size.max(1.0),
                "n {n}"
            );
            let naive_diff: f64 = (0..n).map(|k| (a[k] - b[k]) * (c[k] - e[k])).sum();
            let s2: f64 = (0..n).map(|k| ((a[k] - b[k]) * (c[k] - e[k])).abs()).sum();
            assert!((diff_dot(&a, &b, &c, &e) - naive_diff).abs() <= 1e-13 * s2.max(1.0));
            let on = |t: usize| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(t)
                    .build()
                    .unwrap()
                    .install(|| (dot(&a, &b).to_bits(), diff_dot(&a, &b, &c, &e).to_bits()))
            };
            assert_eq!(on(1), on(2), "n {n}");
            // The fused pass: the bits of the update, then the dot product.
            let mut fused = c.clone();
            let got = axpy_dot(&mut fused, -0.75, &a, &e);
            let mut apart = c.clone();
            axpy(&mut apart, -0.75, &a);
            assert_eq!(got.to_bits(), dot(&apart, &e).to_bits(), "n {n}");
            assert_eq!(fused, apart);
            let mut y = c.clone();
            axpy(&mut y, -0.75, &a);
            scale(&mut y, 3.0);
            let mut z = vec![0.0; n];
            fill(&mut z, |k| (c[k] + -0.75 * a[k]) * 3.0);
            assert_eq!(y, z);
        }
    }
}

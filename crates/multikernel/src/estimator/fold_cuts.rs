//! The selection's kernel matrices on one fold, cut from those on all its rows when a
//! candidate first needs them (`candidates::score`): the candidates stopped after the
//! first folds never have their kernels cut on the later folds, and each cut and its column
//! means are made once per fold, whatever number of candidates and Cs read them.

use crate::data::Matrix;
use crate::error::Result;
use crate::kernel::KernelMatrix;
use crate::solver::ridge::check_inputs;
use std::sync::OnceLock;

/// The dictionary's kernel matrices on the selection's rows, checked once (shapes, finite
/// values), and their uniform sum (the uniform candidate's one kernel: lp-MKL at p = inf
/// weighs every kernel by 1).
pub(crate) struct SelectionKernels {
    kernels: Vec<KernelMatrix>,
    sum: Option<KernelMatrix>,
}

impl SelectionKernels {
    /// Checks `kernels` against the targets `y` of all rows and adds their sum when there
    /// are several.
    pub(crate) fn new(kernels: Vec<KernelMatrix>, y: &Matrix) -> Result<SelectionKernels> {
        check_inputs(&kernels, y)?;
        let sum = (kernels.len() > 1).then(|| {
            let mut s = kernels[0].to_dense();
            for k in &kernels[1..] {
                match k {
                    KernelMatrix::Dense(d) => {
                        s.data.iter_mut().zip(&d.data).for_each(|(a, b)| *a += b);
                    }
                    KernelMatrix::Factor(_) => {
                        let d = k.to_dense();
                        s.data.iter_mut().zip(&d.data).for_each(|(a, b)| *a += b);
                    }
                }
            }
            KernelMatrix::Dense(s)
        });
        Ok(SelectionKernels { kernels, sum })
    }

    /// The dictionary's size (the sum not counted).
    pub(crate) fn len(&self) -> usize {
        self.kernels.len()
    }

    /// Kernel `m`; `m == len()` is the uniform sum.
    pub(crate) fn get(&self, m: usize) -> &KernelMatrix {
        match self.kernels.get(m) {
            Some(k) => k,
            None => self
                .sum
                .as_ref()
                .expect("the uniform sum is indexed only when there are several kernels"),
        }
    }
}

/// One fold's cuts of [`SelectionKernels`]: `train(m)` on the training rows, `test(m)` the
/// validation rows against the training rows, `m == len()` the uniform sum.
pub(crate) struct FoldCuts<'a> {
    all: &'a SelectionKernels,
    train_rows: Vec<usize>,
    validation_rows: Vec<usize>,
    cuts: Vec<OnceLock<(KernelMatrix, KernelMatrix)>>,
    means: Vec<OnceLock<Vec<f64>>>,
}

impl<'a> FoldCuts<'a> {
    pub(crate) fn new(
        all: &'a SelectionKernels,
        train_rows: Vec<usize>,
        validation_rows: Vec<usize>,
    ) -> FoldCuts<'a> {
        let slots = all.len() + usize::from(all.sum.is_some());
        FoldCuts {
            all,
            train_rows,
            validation_rows,
            cuts: (0..slots).map(|_| OnceLock::new()).collect(),
            means: (0..slots).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The index of the uniform sum.
    pub(crate) fn sum_index(&self) -> usize {
        self.all.len()
    }

    fn pair(&self, m: usize) -> &(KernelMatrix, KernelMatrix) {
        self.cuts[m].get_or_init(|| {
            let k = self.all.get(m);
            (
                cut(k, &self.train_rows, &self.train_rows),
                cut(k, &self.validation_rows, &self.train_rows),
            )
        })
    }

    /// Kernel `m` on the fold's training rows.
    pub(crate) fn train(&self, m: usize) -> &KernelMatrix {
        &self.pair(m).0
    }

    /// Kernel `m` between the validation rows and the training rows.
    pub(crate) fn test(&self, m: usize) -> &KernelMatrix {
        &self.pair(m).1
    }

    /// `(1/n) K_m 1` of [`FoldCuts::train`]`(m)`.
    pub(crate) fn col_means(&self, m: usize) -> &[f64] {
        self.means[m].get_or_init(|| self.train(m).col_means())
    }
}

/// Rows `rows` and columns `cols` of a kernel matrix (rows of a factor).
pub(crate) fn cut(k: &KernelMatrix, rows: &[usize], cols: &[usize]) -> KernelMatrix {
    match k {
        KernelMatrix::Factor(z) => KernelMatrix::Factor(z.select_rows(rows)),
        KernelMatrix::Dense(m) => {
            let mut out = Matrix::zeros(rows.len(), cols.len());
            for (a, &i) in rows.iter().enumerate() {
                let src = m.row(i);
                let dst = &mut out.data[a * cols.len()..(a + 1) * cols.len()];
                for (d, &j) in dst.iter_mut().zip(cols) {
                    *d = src[j];
                }
            }
            KernelMatrix::Dense(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_and_the_sum_match_cutting_by_hand() {
        let n = 6;
        let z = Matrix::from_vec(n, 2, (0..2 * n).map(|v| (v as f64 * 0.7).sin()).collect());
        let dense = KernelMatrix::Dense(KernelMatrix::Factor(z.clone()).to_dense());
        let ones = KernelMatrix::Dense(Matrix::from_vec(n, n, vec![1.0; n * n]));
        let y = Matrix::from_vec(n, 1, vec![1.0; n]);
        let all =
            SelectionKernels::new(vec![dense.clone(), KernelMatrix::Factor(z), ones], &y).unwrap();
        let (tr, va) = (vec![0, 2, 3, 5], vec![1, 4]);
        let fold = FoldCuts::new(&all, tr.clone(), va.clone());
        let s = fold.sum_index();
        assert_eq!(s, 3);
        for i in 0..tr.len() {
            for j in 0..tr.len() {
                let k = dense.to_dense().get(tr[i], tr[j]);
                let by_hand = 2.0 * k + 1.0;
                let got = fold.train(s).to_dense().get(i, j);
                assert!((got - by_hand).abs() < 1e-12, "{got} {by_hand}");
            }
        }
        assert_eq!(fold.test(0).to_dense().rows, va.len());
        let KernelMatrix::Factor(f) = fold.train(1) else {
            panic!("a factor is cut as a factor")
        };
        assert_eq!(f.rows, tr.len());
        let means = fold.col_means(0).to_vec();
        assert_eq!(means, fold.train(0).col_means());
    }

    #[test]
    fn a_non_finite_kernel_is_refused_once_on_all_rows() {
        let mut k = Matrix::from_vec(2, 2, vec![1.0, 0.0, 0.0, 1.0]);
        k.set(1, 1, f64::NAN);
        let y = Matrix::from_vec(2, 1, vec![1.0, -1.0]);
        assert!(SelectionKernels::new(vec![KernelMatrix::Dense(k)], &y).is_err());
    }
}

//! Cross-module tests: Gram entries vs naive evaluation loops, normalizations vs their
//! definitions, sparse vs dense, memory refusal, positive semi-definiteness.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::data::Matrix;
use crate::error::Error;
use crate::linalg::sq_dist;

fn random(n: usize, d: usize, seed: u64) -> Matrix {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Matrix::from_vec(n, d, (0..n * d).map(|_| rng.gen_range(-1.5..2.0)).collect())
}

fn spec(s: &str) -> KernelSpec {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn names(d: usize) -> Vec<String> {
    (0..d).map(|j| format!("x{j}")).collect()
}

/// The obviously-correct Gram: one `eval` per pair.
fn naive_gram(k: &FittedKernel, a: &Matrix, b: &Matrix) -> Matrix {
    let mut g = Matrix::zeros(a.rows, b.rows);
    for i in 0..a.rows {
        for j in 0..b.rows {
            g.set(i, j, k.eval(a.row(i), b.row(j)));
        }
    }
    g
}

fn assert_close(got: &Matrix, want: &Matrix, tol: f64, ctx: &str) {
    assert_eq!((got.rows, got.cols), (want.rows, want.cols), "{ctx}: shape");
    for i in 0..want.rows {
        for j in 0..want.cols {
            let (g, w) = (got.get(i, j), want.get(i, j));
            assert!(
                (g - w).abs() <= tol * (1.0 + w.abs()),
                "{ctx}: entry ({i},{j}) {g} vs naive {w}"
            );
        }
    }
}

/// Every kind, every normalization, with and without a feature restriction.
fn all_specs() -> Vec<String> {
    let kinds = [
        "linear",
        "poly:degree=3,offset=0.5",
        "poly:degree=2,offset=1",
        "rbf",
        "rbf:sigma2=2",
        "bspline",
        "bspline:zeros=0.5",
        "const",
        "product(linear*rbf:sigma2=3)",
        "product(bspline:h=2.5*poly:degree=2,offset=1)",
    ];
    let mut out = Vec::new();
    for k in kinds {
        for norm in ["", "norm=diag", "norm=trace", "norm=variance"] {
            for feat in ["", "features=2+0"] {
                let keys: Vec<&str> = [norm, feat].into_iter().filter(|s| !s.is_empty()).collect();
                let sep = if k.starts_with("product") || !k.contains(':') {
                    ":"
                } else {
                    ","
                };
                out.push(if keys.is_empty() {
                    k.to_string()
                } else {
                    format!("{k}{sep}{}", keys.join(","))
                });
            }
        }
    }
    out
}

#[test]
fn gram_entries_equal_naive_eval() {
    let x = random(40, 4, 1);
    let a = random(17, 4, 2);
    let b = random(23, 4, 3);
    let lim = MemoryLimit::default();
    for s in all_specs() {
        let k = FittedKernel::fit(&spec(&s), &x, &names(4), 7).unwrap();
        let g = k.gram(&a, &b, &lim).unwrap();
        assert_eq!(g.is_sparse(), k.is_sparse(), "{s}");
        assert_close(
            &g.to_dense(),
            &naive_gram(&k, &a, &b),
            1e-10,
            &format!("{s} gram"),
        );
        let gs = k.gram_sym(&a, &lim).unwrap();
        let naive = naive_gram(&k, &a, &a);
        assert_close(&gs.to_dense(), &naive, 1e-10, &format!("{s} gram_sym"));
        for i in 0..a.rows {
            let want = k.eval(a.row(i), a.row(i));
            assert!(
                (k.self_eval(a.row(i)) - want).abs() <= 1e-12 * (1.0 + want.abs()),
                "{s}"
            );
            assert!(
                (k.diag(&a)[i] - want).abs() <= 1e-12 * (1.0 + want.abs()),
                "{s}"
            );
            // gram_sym's diagonal is exact.
            assert_eq!(gs.get(i, i), k.diag(&a)[i], "{s}");
            // Symmetric.
            for j in 0..a.rows {
                assert_eq!(gs.get(i, j), gs.get(j, i), "{s}: symmetry ({i},{j})");
            }
        }
    }
}

#[test]
fn gram_with_many_blocks_equals_naive_eval() {
    // Enough rows for several row blocks per thread, and rows that are not a block multiple.
    let x = random(601, 5, 4);
    let lim = MemoryLimit::default();
    for s in [
        "rbf:norm=diag",
        "poly:degree=2,offset=1,norm=trace",
        "bspline:zeros=0.9",
    ] {
        let k = FittedKernel::fit(&spec(s), &x, &[], 1).unwrap();
        let naive = naive_gram(&k, &x, &x);
        assert_close(&k.gram_sym(&x, &lim).unwrap().to_dense(), &naive, 1e-10, s);
        let b = x.select_rows(&(0..300).collect::<Vec<_>>());
        let nb = naive_gram(&k, &x, &b);
        assert_close(&k.gram(&x, &b, &lim).unwrap().to_dense(), &nb, 1e-10, s);
    }
}

#[test]
fn normalizations_match_definitions() {
    let x = random(50, 3, 5);
    let lim = MemoryLimit::default();
    for kind in [
        "linear",
        "poly:degree=3,offset=1",
        "rbf",
        "product(linear*rbf:sigma2=1)",
    ] {
        // Unit diagonal.
        let with = |norm: &str| {
            let sep = if kind.contains(':') && !kind.starts_with("product") {
                ","
            } else {
                ":"
            };
            spec(&format!("{kind}{sep}norm={norm}"))
        };
        let k = FittedKernel::fit(&with("diag"), &x, &[], 0).unwrap();
        let g = k.gram_sym(&x, &lim).unwrap();
        for i in 0..x.rows {
            assert!((g.get(i, i) - 1.0).abs() < 1e-12, "{kind} diag");
        }
        // Unit mean diagonal on the training set.
        let k = FittedKernel::fit(&with("trace"), &x, &[], 0).unwrap();
        let g = naive_gram(&k, &x, &x);
        let mean_diag: f64 = (0..x.rows).map(|i| g.get(i, i)).sum::<f64>() / x.rows as f64;
        assert!((mean_diag - 1.0).abs() < 1e-12, "{kind} trace: {mean_diag}");
        // Unit feature-space variance on the training set, computed naively.
        let k = FittedKernel::fit(&with("variance"), &x, &[], 0).unwrap();
        let g = naive_gram(&k, &x, &x);
        let n = x.rows as f64;
        let tr: f64 = (0..x.rows).map(|i| g.get(i, i)).sum();
        let all: f64 = g.data.iter().sum();
        let var = tr / n - all / (n * n);
        assert!((var - 1.0).abs() < 1e-10, "{kind} variance: {var}");
        // The same factor applies to test points: normalized = raw * factor.
        let raw = FittedKernel::fit(&spec(kind), &x, &[], 0).unwrap();
        let t = random(5, 3, 6);
        let f = k.scale();
        for i in 0..5 {
            let (p, q) = (t.row(i), x.row(i));
            assert!((k.eval(p, q) - raw.eval(p, q) * f).abs() < 1e-12 * (1.0 + k.eval(p, q)));
        }
    }
    // Linear kernel: feature-space variance is the plain mean squared distance to the mean.
    let k = FittedKernel::fit(&spec("linear:norm=variance"), &x, &[], 0).unwrap();
    let mean: Vec<f64> = (0..3)
        .map(|j| x.col(j).iter().sum::<f64>() / 50.0)
        .collect();
    let var: f64 = (0..50).map(|i| sq_dist(x.row(i), &mean)).sum::<f64>() / 50.0;
    assert!((k.scale() - 1.0 / var).abs() < 1e-12 / var);
}

#[test]
fn variance_of_large_sets_is_estimated_from_a_sample() {
    // n above VARIANCE_MAX_POINTS: the estimate must be close to the exact value.
    let n = VARIANCE_MAX_POINTS + 500;
    let x = random(n, 2, 8);
    let k = FittedKernel::fit(&spec("rbf:sigma2=0.5,norm=variance"), &x, &[], 3).unwrap();
    let raw = FittedKernel::fit(&spec("rbf:sigma2=0.5"), &x, &[], 3).unwrap();
    let g = raw.gram_sym(&x, &MemoryLimit::default()).unwrap();
    let nf = n as f64;
    let exact = 1.0 - g.to_dense().data.iter().sum::<f64>() / (nf * nf);
    let est = 1.0 / k.scale();
    assert!(
        (est - exact).abs() < 0.01 * exact,
        "estimate {est} vs exact {exact}"
    );
}

#[test]
fn sparse_equals_dense_and_keeps_only_nonzeros() {
    let x = random(200, 1, 9);
    let lim = MemoryLimit::default();
    for s in [
        "bspline",
        "bspline:zeros=0.7,norm=variance",
        "product(bspline:h=0.3*rbf:sigma2=1)",
    ] {
        let k = FittedKernel::fit(&spec(s), &x, &[], 2).unwrap();
        assert!(k.is_sparse());
        let g = k.gram_sym(&x, &lim).unwrap();
        let Gram::Sparse(sp) = &g else {
            panic!("{s}: expected a sparse Gram")
        };
        let naive = naive_gram(&k, &x, &x);
        assert_close(&g.to_dense(), &naive, 1e-10, s);
        let naive_nnz = naive.data.iter().filter(|&&v| v != 0.0).count();
        assert_eq!(g.nnz(), naive_nnz, "{s}");
        assert!(sp.values.iter().all(|&v| v != 0.0));
        for i in 0..sp.rows {
            let (idx, _) = sp.row(i);
            assert!(idx.windows(2).all(|w| w[0] < w[1]), "{s}: sorted columns");
        }
        assert!(g.bytes() < naive.data.len() * 8, "{s}: sparse is smaller");
        let v: Vec<f64> = (0..200).map(|i| (i as f64).sin()).collect();
        for i in (0..200).step_by(17) {
            let want: f64 = (0..200).map(|j| naive.get(i, j) * v[j]).sum();
            assert!((g.row_dot(i, &v) - want).abs() < 1e-10 * (1.0 + want.abs()));
        }
    }
}

#[test]
fn bspline_default_h_gives_target_sparsity_on_training_gram() {
    let x = random(400, 2, 10);
    let k = FittedKernel::fit(&spec("bspline"), &x, &[], 0).unwrap();
    let g = k.gram_sym(&x, &MemoryLimit::default()).unwrap();
    let n = x.rows;
    let off_nonzero = g.nnz() - n; // the diagonal is 1
    let zero_frac = 1.0 - off_nonzero as f64 / (n * (n - 1)) as f64;
    assert!(
        (zero_frac - DEFAULT_BSPLINE_ZEROS).abs() < 0.005,
        "{zero_frac}"
    );
}

#[test]
fn median_heuristic_is_used_on_the_kernel_features() {
    let x = random(60, 4, 11);
    let k = FittedKernel::fit(&spec("rbf:features=1+3"), &x, &names(4), 5).unwrap();
    let mut d = Vec::new();
    for i in 0..60 {
        for j in i + 1..60 {
            let (a, b) = (x.row(i), x.row(j));
            d.push((a[1] - b[1]).powi(2) + (a[3] - b[3]).powi(2));
        }
    }
    d.sort_by(f64::total_cmp);
    let med = 0.5 * (d[d.len() / 2 - 1] + d[d.len() / 2]);
    let FittedKind::Rbf { sigma2 } = *k.kind() else {
        panic!("not rbf")
    };
    assert!((sigma2 - med / 2.0).abs() < 1e-12 * med);
    assert!(k.name.starts_with("rbf(sigma2="), "{}", k.name);
    assert!(k.name.ends_with("[f1:x1,f3:x3]"), "{}", k.name);
}

#[test]
fn memory_limit_refuses_before_allocating() {
    // 300,000 rows: a dense Gram would need 720 GB; refused at once.
    let x = Matrix::zeros(300_000, 1);
    let k = FittedKernel::fit(&spec("rbf:sigma2=1"), &x.select_rows(&[0, 1]), &[], 0).unwrap();
    let err = k.gram_sym(&x, &MemoryLimit::default()).unwrap_err();
    assert!(matches!(err, Error::Memory { .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("300000 x 300000") && msg.contains("raise the limit to"),
        "{msg}"
    );
    let err = k.gram(&x, &x, &MemoryLimit::gib(1.0)).unwrap_err();
    assert!(matches!(err, Error::Memory { .. }));
    // Sparse Grams: refused once the stored entries exceed the limit (all rows identical, so
    // every entry is non-zero).
    let x = Matrix::zeros(2000, 1);
    let k = FittedKernel::fit(&spec("bspline:h=1"), &x, &[], 0).unwrap();
    let err = k.gram_sym(&x, &MemoryLimit::gib(0.01)).unwrap_err();
    assert!(matches!(err, Error::Memory { .. }), "{err}");
    assert!(k.gram_sym(&x, &MemoryLimit::gib(1.0)).is_ok());
}

#[test]
fn grams_of_psd_kernels_are_psd() {
    let x = random(60, 3, 12);
    let x1 = random(60, 1, 13);
    let lim = MemoryLimit::default();
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    let cases = [
        ("linear", &x),
        ("poly:degree=3,offset=1,norm=diag", &x),
        ("rbf:norm=variance", &x),
        ("product(linear*rbf)", &x),
        ("const:norm=trace", &x),
        ("bspline", &x1),
        ("bspline:zeros=0.3,norm=variance", &x1),
    ];
    for (s, data) in cases {
        let k = FittedKernel::fit(&spec(s), data, &[], 0).unwrap();
        let g = k.gram_sym(data, &lim).unwrap();
        let scale: f64 = g.diagonal().iter().sum();
        for _ in 0..200 {
            let v: Vec<f64> = (0..data.rows).map(|_| rng.gen_range(-1.0..1.0)).collect();
            let q: f64 = (0..data.rows).map(|i| v[i] * g.row_dot(i, &v)).sum();
            let vv: f64 = v.iter().map(|a| a * a).sum();
            assert!(q >= -1e-9 * vv * scale, "{s}: v^T K v = {q}");
        }
        // A vector concentrated on a near-null direction: two equal rows, v = e_i - e_j.
        let mut rows: Vec<Vec<f64>> = (0..3).map(|i| data.row(i).to_vec()).collect();
        rows.push(data.row(0).to_vec());
        let d = Matrix::from_rows(&rows);
        let gd = k.gram_sym(&d, &lim).unwrap().to_dense();
        let q = gd.get(0, 0) + gd.get(3, 3) - 2.0 * gd.get(0, 3);
        assert!(q.abs() < 1e-9, "{s}: {q}");
    }
}

#[test]
fn fit_errors_and_names() {
    let x = random(10, 3, 15);
    let err = FittedKernel::fit(&spec("perfeature:linear"), &x, &[], 0).unwrap_err();
    assert!(err.to_string().contains("expand"), "{err}");
    let err = FittedKernel::fit(&spec("linear:features=3"), &x, &[], 0).unwrap_err();
    assert!(err.to_string().contains("feature 3"), "{err}");
    let err = FittedKernel::fit(&spec("linear"), &Matrix::zeros(0, 3), &[], 0).unwrap_err();
    assert!(err.to_string().contains("empty"), "{err}");
    let k = FittedKernel::fit(&spec("linear"), &x, &[], 0).unwrap();
    let err = k
        .gram(&random(2, 4, 0), &x, &MemoryLimit::default())
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::ShapeMismatch {
                expected: 3,
                found: 4,
                ..
            }
        ),
        "{err}"
    );

    let feat = vec!["age".to_string(), "bmi".to_string(), "bp".to_string()];
    let ks = fit_all(
        &[
            spec("perfeature:linear:norm=trace"),
            spec("poly"),
            spec("rbf:sigma2=3.25"),
        ],
        &x,
        &feat,
        0,
    )
    .unwrap();
    let got: Vec<&str> = ks.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(
        got,
        [
            "linear/trace[f0:age]",
            "linear/trace[f1:bmi]",
            "linear/trace[f2:bp]",
            "poly(degree=2,offset=1)",
            "rbf(sigma2=3.25)"
        ]
    );
    // A per-feature kernel reads only its column.
    let (mut a, b) = (x.row(0).to_vec(), x.row(1).to_vec());
    let before = ks[1].eval(&a, &b);
    a[0] += 10.0;
    assert_eq!(ks[1].eval(&a, &b), before);
    assert_ne!(ks[0].eval(&a, &b), ks[0].eval(x.row(0), &b));
}

#[test]
fn constant_feature_kernels_are_left_unscaled() {
    // A constant column has zero variance: the factor stays 1 instead of dividing by zero.
    let mut x = random(20, 2, 16);
    for i in 0..20 {
        x.set(i, 1, 3.0);
    }
    let ks = fit_all(&[spec("perfeature:rbf:norm=variance")], &x, &[], 0).unwrap();
    assert_eq!(ks[1].scale(), 1.0);
    assert!(ks[0].scale() != 1.0 && ks[0].scale().is_finite());
    let k = FittedKernel::fit(&spec("const:norm=variance"), &x, &[], 0).unwrap();
    assert_eq!(k.scale(), 1.0);
}

#[test]
fn fitted_kernel_serde_round_trip() {
    let x = random(30, 3, 17);
    for s in [
        "rbf:norm=variance",
        "bspline:features=1",
        "product(linear*poly):norm=diag",
    ] {
        let k = FittedKernel::fit(&spec(s), &x, &names(3), 0).unwrap();
        let json = serde_json::to_string(&k).unwrap();
        let back: FittedKernel = serde_json::from_str(&json).unwrap();
        assert_eq!(back, k);
        assert_eq!(back.eval(x.row(0), x.row(1)), k.eval(x.row(0), x.row(1)));
    }
}

#[test]
fn eval_matches_textbook_formulas() {
    let x = random(20, 3, 18);
    let (a, b) = (x.row(3), x.row(7));
    let dot: f64 = (0..3).map(|k| a[k] * b[k]).sum();
    let dist2: f64 = (0..3).map(|k| (a[k] - b[k]).powi(2)).sum();
    let fit = |s: &str| FittedKernel::fit(&spec(s), &x, &[], 0).unwrap();
    let close = |got: f64, want: f64, s: &str| {
        assert!(
            (got - want).abs() <= 1e-12 * (1.0 + want.abs()),
            "{s}: {got} vs {want}"
        )
    };
    close(fit("linear").eval(a, b), dot, "linear");
    close(
        fit("poly:degree=3,offset=0.5").eval(a, b),
        (dot + 0.5).powi(3),
        "poly",
    );
    close(
        fit("rbf:sigma2=1.7").eval(a, b),
        (-dist2 / 3.4).exp(),
        "rbf",
    );
    let h = 2.0 * dist2.sqrt();
    let s = format!("bspline:h={h}");
    close(fit(&s).eval(a, b), 0.5, "bspline");
    close(
        fit("bspline:h=0.01").eval(a, b),
        0.0,
        "bspline outside support",
    );
    close(fit("const").eval(a, b), 1.0, "const");
    close(
        fit("product(linear*rbf:sigma2=1.7)").eval(a, b),
        dot * (-dist2 / 3.4).exp(),
        "product",
    );
    let na: f64 = a.iter().map(|v| v * v).sum();
    let nb: f64 = b.iter().map(|v| v * v).sum();
    close(
        fit("linear:norm=diag").eval(a, b),
        dot / (na * nb).sqrt(),
        "linear diag",
    );
    let q = |u: f64| (u + 1.0).powi(2);
    close(
        fit("poly:norm=diag").eval(a, b),
        q(dot) / (q(na) * q(nb)).sqrt(),
        "poly diag",
    );
    // Feature restriction: only columns 0 and 2.
    let d02 = a[0] * b[0] + a[2] * b[2];
    close(
        fit("linear:features=0+2").eval(a, b),
        d02,
        "linear features",
    );
    // A zero row under unit-diagonal normalization gives 0, not NaN.
    let z = [0.0; 3];
    assert_eq!(fit("linear:norm=diag").eval(&z, b), 0.0);
    assert_eq!(fit("linear:norm=diag").self_eval(&z), 0.0);
}

/// Fitted kernels validate; a kernel read from a broken model file (a feature index out of
/// range, a non-positive width or factor, an empty product) is refused, not evaluated.
#[test]
fn validate_refuses_kernels_that_cannot_be_evaluated() {
    let x = random(20, 3, 31);
    let names = vec!["a".to_string(), "b".to_string(), "c".to_string()];
    let ks = fit_all(
        &[
            spec("perfeature:rbf:norm=variance"),
            spec("poly:degree=3,norm=diag"),
            spec("product(linear*bspline):norm=trace"),
            spec("const"),
        ],
        &x,
        &names,
        0,
    )
    .unwrap();
    for k in &ks {
        k.validate().unwrap();
    }
    // The fields are private: through the JSON of a model file.
    let mangled = |k: &FittedKernel, f: &dyn Fn(&mut serde_json::Value)| {
        let mut v = serde_json::to_value(k).unwrap();
        f(&mut v);
        let k: FittedKernel = serde_json::from_value(v).unwrap();
        k.validate().unwrap_err()
    };
    let e = mangled(&ks[0], &|v| v["features"] = serde_json::json!([3]));
    assert!(e.to_string().contains("feature 3"), "{e}");
    mangled(&ks[0], &|v| v["features"] = serde_json::json!([]));
    mangled(&ks[0], &|v| {
        v["kind"]["Rbf"]["sigma2"] = serde_json::json!(0.0)
    });
    mangled(&ks[0], &|v| v["scale"] = serde_json::json!(-1.0));
    mangled(&ks[1], &|v| v["n_features"] = serde_json::json!(1));
    mangled(&ks[3], &|v| {
        v["kind"]["Poly"]["degree"] = serde_json::json!(0)
    });
    mangled(&ks[4], &|v| v["kind"]["Product"] = serde_json::json!([]));
    mangled(&ks[4], &|v| {
        v["kind"]["Product"][1]["BSpline"]["h"] = serde_json::json!(-2.0)
    });
}

// ------------------------------------------------ Nystrom and polynomial sketch (issue 17)

/// Approximated kernels used in the checks below: Nystrom and sketch, under normalizations,
/// on column subsets, in a product.
const APPROX_SPECS: [&str; 6] = [
    "rbf:norm=trace,approx=nystrom,dim=12",
    "product(linear*rbf):norm=variance,features=0+2,approx=nystrom,dim=9",
    "poly:degree=2,offset=1,norm=diag,approx=nystrom,dim=30",
    "poly:degree=2,offset=1,norm=diag,approx=sketch,dim=40",
    "poly:degree=3,offset=0.5,features=1+2,approx=sketch,dim=16",
    "poly:degree=1,offset=0,norm=trace,approx=sketch,dim=7",
];

/// An approximated kernel is the kernel of its map everywhere: its symmetric and cross Gram
/// matrices, pairwise values and diagonal agree with `Z Z^T` (to 1e-12 relative).
#[test]
fn nystrom_and_sketch_kernels_are_their_maps() {
    let x = random(25, 3, 41);
    let y = random(7, 3, 42);
    let lim = MemoryLimit::default();
    for s in APPROX_SPECS {
        let k = FittedKernel::fit(&spec(s), &x, &[], 5).unwrap();
        let map = k.feature_map().unwrap();
        let (zx, zy) = (map.map_rows(&x), map.map_rows(&y));
        let sym = k.gram_sym(&x, &lim).unwrap();
        let cross = k.gram(&y, &x, &lim).unwrap();
        let diag = k.diag(&x);
        let tol = |v: f64| 1e-12 * (1.0 + v.abs());
        for (i, &di) in diag.iter().enumerate() {
            for j in 0..x.rows {
                let want = crate::linalg::dot(zx.row(i), zx.row(j));
                assert!((sym.get(i, j) - want).abs() < tol(want), "{s} ({i}, {j})");
                assert!(
                    (k.eval(x.row(i), x.row(j)) - want).abs() < tol(want),
                    "{s} ({i}, {j})"
                );
            }
            let want = crate::linalg::sq_norm(zx.row(i));
            assert!((di - want).abs() < tol(want), "{s} diag {i}");
            assert!((k.self_eval(x.row(i)) - want).abs() < tol(want), "{s} {i}");
        }
        for i in 0..y.rows {
            for j in 0..x.rows {
                let want = crate::linalg::dot(zy.row(i), zx.row(j));
                assert!((cross.get(i, j) - want).abs() < tol(want), "{s} ({i}, {j})");
            }
        }
        if s.contains("norm=diag") {
            assert!(
                diag.iter().all(|d| (d - 1.0).abs() < 1e-12),
                "{s}: {diag:?}"
            );
        }
        // The same seed and spec: the same kernel and map; the name says the map.
        let again = FittedKernel::fit(&spec(s), &x, &[], 5).unwrap();
        assert_eq!(again, k);
        assert_eq!(again.feature_map(), Some(map));
        let method = k.approx().unwrap().method.as_str();
        assert!(k.name.contains(&format!("~{method}")), "{}", k.name);
    }
}

/// A model file (JSON) round trip keeps the approximated kernel and its map bit for bit:
/// the Nystrom landmarks and projection are stored, the sketch is redrawn from its seed.
/// A kernel written before the new fields existed (no `basis`) still loads.
#[test]
fn approx_kernels_survive_json_round_trips_bit_for_bit() {
    let x = random(30, 3, 43);
    let y = random(9, 3, 44);
    for s in APPROX_SPECS {
        let k = FittedKernel::fit(&spec(s), &x, &[], 6).unwrap();
        let text = serde_json::to_string(&k).unwrap();
        let back: FittedKernel = serde_json::from_str(&text).unwrap();
        back.validate().unwrap();
        assert_eq!(back, k, "{s}");
        let (z0, z1) = (
            k.feature_map().unwrap().map_rows(&y),
            back.feature_map().unwrap().map_rows(&y),
        );
        let bits = |m: &Matrix| m.data.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&z0), bits(&z1), "{s}");
        assert_eq!(text.contains("\"basis\""), s.contains("nystrom"), "{s}");
    }
    let rff = FittedKernel::fit(&spec("rbf:approx=rff,dim=8"), &x, &[], 6).unwrap();
    let old = serde_json::to_string(&rff).unwrap();
    assert!(!old.contains("basis"));
    let back: FittedKernel = serde_json::from_str(&old).unwrap();
    back.validate().unwrap();
    assert_eq!(back, rff);
}

/// A mangled approximation in a model file is an error from `validate`, never a panic:
/// missing or misshapen Nystrom landmarks / projection, a basis on a random map, a method on
/// a kernel it does not fit, out-of-range dimensions and degrees.
#[test]
fn mangled_approx_fields_are_refused() {
    use serde_json::{json, Value};
    let x = random(20, 3, 45);
    let nys = FittedKernel::fit(&spec("rbf:approx=nystrom,dim=6"), &x, &[], 1).unwrap();
    let sk = FittedKernel::fit(&spec("poly:approx=sketch,dim=6"), &x, &[], 1).unwrap();
    let to_value = |k: &FittedKernel| serde_json::to_value(k).unwrap();
    type Edit = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&FittedKernel, &str, Edit)> = vec![
        (
            &nys,
            "without its landmarks",
            Box::new(|v| {
                v["approx"].as_object_mut().unwrap().remove("basis");
            }),
        ),
        (
            &nys,
            "landmarks of shape",
            Box::new(|v| v["approx"]["basis"]["landmarks"]["rows"] = json!(5)),
        ),
        (
            &nys,
            "landmarks of shape",
            Box::new(|v| v["approx"]["basis"]["landmarks"]["cols"] = json!(2)),
        ),
        (
            &nys,
            "landmarks of shape",
            Box::new(|v| {
                v["approx"]["basis"]["landmarks"]["data"]
                    .as_array_mut()
                    .unwrap()
                    .pop();
            }),
        ),
        (
            &nys,
            "projection of shape",
            Box::new(|v| v["approx"]["basis"]["projection_t"]["cols"] = json!(0)),
        ),
        (
            &nys,
            "projection of shape",
            Box::new(|v| v["approx"]["basis"]["projection_t"]["cols"] = json!(7)),
        ),
        (
            &nys,
            "projection of shape",
            Box::new(|v| v["approx"]["basis"]["projection_t"]["rows"] = json!(usize::MAX)),
        ),
        (
            &nys,
            "projection of shape",
            Box::new(|v| {
                v["approx"]["basis"]["projection_t"]["data"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!(1.0));
            }),
        ),
        (
            &nys,
            "does not fit",
            Box::new(|v| v["approx"]["dim"] = json!(0)),
        ),
        (
            &nys,
            "does not fit",
            Box::new(|v| v["approx"]["dim"] = json!(5000)),
        ),
        (
            &nys,
            "does not fit",
            Box::new(|v| v["kind"] = json!({"BSpline": {"h": 1.0}})),
        ),
        (
            &nys,
            "does not fit",
            Box::new(|v| v["approx"]["method"] = json!("Sketch")),
        ),
        (
            &nys,
            "has Nystrom landmarks",
            Box::new(|v| v["approx"]["method"] = json!("Rff")),
        ),
        (
            &sk,
            "does not fit",
            Box::new(|v| v["kind"] = json!({"Rbf": {"sigma2": 1.0}})),
        ),
        (
            &sk,
            "does not fit",
            Box::new(|v| v["kind"] = json!({"Poly": {"degree": 11, "offset": 1.0}})),
        ),
        (
            &sk,
            "does not fit",
            Box::new(|v| v["approx"]["dim"] = json!(0)),
        ),
        (
            &sk,
            "has Nystrom landmarks",
            Box::new(|v| {
                v["approx"]["basis"] = json!({
                    "landmarks": {"rows": 1, "cols": 3, "data": [0.0, 0.0, 0.0]},
                    "projection_t": {"rows": 1, "cols": 1, "data": [1.0]}
                });
            }),
        ),
    ];
    for (i, (k, needle, edit)) in cases.iter().enumerate() {
        let mut v = to_value(k);
        edit(&mut v);
        let back: FittedKernel = serde_json::from_value(v).unwrap();
        let e = back.validate().unwrap_err().to_string();
        assert!(e.contains(needle), "case {i}: {e}");
    }
    // A non-finite value cannot be written as JSON: reading it fails.
    let mut text = serde_json::to_string(&nys).unwrap();
    let at = text.find("\"projection_t\":{\"rows\":6,\"cols\":").unwrap();
    let start = text[at..].find("\"data\":[").unwrap() + at + 8;
    text.insert_str(start, "1e999,");
    assert!(serde_json::from_str::<FittedKernel>(&text).is_err());
}

/// Fitting refuses what cannot be mapped: a Nystrom map of a kernel that is zero on the
/// landmarks (rank 0), a kernel that overflows on them.
#[test]
fn nystrom_fit_errors() {
    let zeros = Matrix::zeros(10, 3);
    let e = FittedKernel::fit(&spec("linear:approx=nystrom,dim=4"), &zeros, &[], 0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("rank 0"), "{e}");
    let huge = Matrix::from_vec(4, 2, vec![1e120; 8]);
    let e = FittedKernel::fit(
        &spec("poly:degree=3,offset=1,approx=nystrom,dim=4"),
        &huge,
        &[],
        0,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("non-finite"), "{e}");
}

/// The SPEC keys `approx=nystrom` and `approx=sketch`: accepted where they apply, the text
/// round-trips, clear refusals elsewhere.
#[test]
fn nystrom_and_sketch_keys_parse_and_refuse() {
    for text in [
        "rbf:approx=nystrom,dim=64",
        "linear:norm=diag,approx=nystrom,dim=8",
        "product(linear*rbf:sigma2=2):approx=nystrom,dim=16",
        "perfeature:rbf:norm=trace,approx=nystrom,dim=32",
        "const:approx=nystrom,dim=1",
        "poly:degree=2,offset=1,approx=sketch,dim=2048",
        "poly:degree=10,offset=0,norm=variance,features=0+3,approx=sketch,dim=1",
    ] {
        let s = spec(text);
        assert_eq!(s.to_string(), text);
        assert_eq!(spec(&s.to_string()), s, "{text}");
    }
    let s = spec("poly:approx=sketch");
    assert_eq!(
        s.approx,
        Some(Approx {
            method: ApproxMethod::Sketch,
            dim: super::feature_map::DEFAULT_APPROX_DIM
        })
    );
    for (text, needle) in [
        ("bspline:approx=nystrom", "any kernel but bspline"),
        ("product(linear*bspline:h=1):approx=nystrom", "but bspline"),
        ("rbf:approx=nystrom,dim=4097", "1..=4096"),
        ("rbf:approx=nystrom,dim=0", "landmarks"),
        ("rbf:approx=sketch", "poly only"),
        ("linear:approx=sketch,dim=8", "poly only"),
        ("product(poly*linear):approx=sketch", "poly only"),
        ("poly:degree=11,approx=sketch", "1..=10"),
        ("poly:approx=sketch,dim=1048577", "1..=1048576"),
        ("poly:approx=tensorsketch", "accepted: rff, nystrom, sketch"),
        ("poly:dim=8", "give approx= too"),
    ] {
        let e = text.parse::<KernelSpec>().unwrap_err().to_string();
        assert!(e.contains(needle), "{text}: {e}");
    }
    // Specs built in code are checked by validate, and by fit.
    let mut s = spec("poly:degree=3");
    s.approx = Some(Approx {
        method: ApproxMethod::Nystrom,
        dim: 0,
    });
    assert!(s.validate().is_err());
    s.kind = KernelKind::Rbf {
        sigma2: None,
        scale: None,
    };
    s.approx = Some(Approx {
        method: ApproxMethod::Sketch,
        dim: 4,
    });
    assert!(FittedKernel::fit(&s, &random(5, 2, 1), &[], 0).is_err());
}

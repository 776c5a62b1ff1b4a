//! RegSpec: parsing, display round trip, errors, building, kernel weights.

use crate::prox::*;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[test]
fn parses_every_form() {
    let cases: Vec<(&str, RegSpec)> = vec![
        ("l2", RegSpec::L2),
        ("l1", RegSpec::L1),
        ("l21", RegSpec::L21),
        ("l21sq", RegSpec::L21Sq),
        (" L21SQ ", RegSpec::L21Sq),
        ("l2q:q=1.3333", RegSpec::L2q { q: 1.3333 }),
        ("l2q:q=4/3", RegSpec::L2q { q: 4.0 / 3.0 }),
        ("l2q:1.5", RegSpec::L2q { q: 1.5 }),
        ("l2q: q = 2", RegSpec::L2q { q: 2.0 }),
        ("elastic:sigma=0.5", RegSpec::Elastic { sigma: 0.5 }),
        ("elastic:sigma=1", RegSpec::Elastic { sigma: 1.0 }),
        (
            "sparse-group:sigma=0.25",
            RegSpec::SparseGroup { sigma: 0.25 },
        ),
        (
            "sparse-group:sigma=1/4",
            RegSpec::SparseGroup { sigma: 0.25 },
        ),
    ];
    for (text, spec) in cases {
        let parsed: RegSpec = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(parsed, spec, "{text}");
        let shown = spec.to_string();
        assert_eq!(shown.parse::<RegSpec>().ok(), Some(spec), "{shown}");
    }
    assert_eq!(
        RegSpec::L2q { q: 4.0 / 3.0 }.to_string(),
        "l2q:q=1.3333333333333333"
    );
    assert_eq!(
        RegSpec::SparseGroup { sigma: 0.5 }.to_string(),
        "sparse-group:sigma=0.5"
    );
}

#[test]
fn errors_name_what_is_accepted() {
    let expect = [
        ("l3", "regularizer = l3: unknown regularizer"),
        ("", "unknown regularizer"),
        ("l2q", "needs its parameter"),
        ("l2q:", "needs its parameter"),
        ("l2q:q=", "needs its parameter"),
        ("l2q:p=2", "no parameter 'p'"),
        ("l2q:q=abc", "not a number"),
        ("l2q:q=1/0", "not a number"),
        ("l2q:q=inf", "not a number"),
        ("l2q:q=0.5", ">= 1"),
        ("l2:q=2", "takes no parameter"),
        ("elastic", "needs its parameter"),
        ("elastic:sigma=1.5", "[0, 1]"),
        ("sparse-group:sigma=-0.1", "[0, 1]"),
        ("sparse-group:q=0.5", "no parameter 'q'"),
    ];
    for (text, needle) in expect {
        let err = text.parse::<RegSpec>().expect_err(text);
        assert!(
            matches!(&err, crate::Error::InvalidParameter { name, .. } if name == "regularizer"),
            "{text}: {err:?}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains(needle),
            "'{text}': message '{msg}' lacks '{needle}'"
        );
    }
    let msg = "mkl".parse::<RegSpec>().unwrap_err().to_string();
    for name in [
        "l2",
        "l1",
        "l21",
        "l21sq",
        "l2q:q=",
        "elastic:sigma=",
        "sparse-group:sigma=",
    ] {
        assert!(msg.contains(name), "'{msg}' does not list {name}");
    }
}

proptest! {
    #[test]
    fn display_round_trips(q in 1.0f64..20.0, sigma in 0.0f64..=1.0, k in 0usize..7) {
        let spec = match k {
            0 => RegSpec::L2,
            1 => RegSpec::L1,
            2 => RegSpec::L21,
            3 => RegSpec::L21Sq,
            4 => RegSpec::L2q { q },
            5 => RegSpec::Elastic { sigma },
            _ => RegSpec::SparseGroup { sigma },
        };
        let back: RegSpec = spec.to_string().parse().unwrap();
        prop_assert_eq!(&back, &spec);
        let json = serde_json::to_string(&spec).unwrap();
        // serde_json without its float_roundtrip feature may be off by one ulp.
        let from_json: RegSpec = serde_json::from_str(&json).unwrap();
        let back_text: RegSpec = from_json.to_string().parse().unwrap();
        prop_assert_eq!(&back_text, &from_json);
        let param = |s: &RegSpec| match *s {
            RegSpec::L2q { q } => q,
            RegSpec::Elastic { sigma } | RegSpec::SparseGroup { sigma } => sigma,
            _ => 0.0,
        };
        prop_assert_eq!(from_json.name(), spec.name());
        prop_assert!((param(&from_json) - param(&spec)).abs() <= 4.0 * f64::EPSILON * param(&spec).abs());
    }
}

#[test]
fn build_and_block_flags() {
    let x = [3.0, -4.0, 1.0];
    let g = Groups::contiguous(&[2, 1]);
    let specs = [
        (RegSpec::L2, true, 13.0),
        (RegSpec::L1, false, 8.0),
        (RegSpec::L21, true, 6.0),
        (RegSpec::L21Sq, true, 18.0),
        (RegSpec::L2q { q: 2.0 }, true, 13.0),
        (
            RegSpec::Elastic { sigma: 0.5 },
            true,
            0.25 * 26.0 + 0.25 * 36.0,
        ),
        (
            RegSpec::SparseGroup { sigma: 0.5 },
            false,
            0.5 * 8.0 + 0.5 * 6.0,
        ),
    ];
    for (spec, block, value) in specs {
        assert_eq!(spec.is_block(), block, "{spec}");
        assert_eq!(spec.build_block().is_some(), block, "{spec}");
        let reg = spec.build();
        assert_eq!(reg.as_block().is_some(), block, "{spec}");
        assert!(
            (reg.value(&x, &g) - value).abs() < 1e-12,
            "{spec}: {}",
            reg.value(&x, &g)
        );
        if let Some(b) = spec.build_block() {
            assert!(
                (b.value_norms(&g.norms(&x)) - value).abs() < 1e-12,
                "{spec}"
            );
        }
        assert!(spec.validate().is_ok());
    }
    assert!(RegSpec::L2q { q: 0.9 }.validate().is_err());
    assert!(RegSpec::Elastic { sigma: f64::NAN }.validate().is_err());
}

#[test]
fn kernel_weights_follow_the_block_norm() {
    let b = [4.0, 1.0, 0.0, 9.0];
    let close = |a: &[f64], e: &[f64]| a.iter().zip(e).all(|(u, v)| (u - v).abs() < 1e-15);
    let sparse = [4.0 / 14.0, 1.0 / 14.0, 0.0, 9.0 / 14.0];
    assert!(close(&RegSpec::L21Sq.kernel_weights(&b), &sparse));
    assert!(close(&RegSpec::L21.kernel_weights(&b), &sparse));
    assert!(close(
        &RegSpec::Elastic { sigma: 0.0 }.kernel_weights(&b),
        &sparse
    ));
    assert!(close(&RegSpec::L2.kernel_weights(&b), &[0.25; 4]));
    assert!(close(
        &RegSpec::Elastic { sigma: 1.0 }.kernel_weights(&b),
        &[0.25; 4]
    ));
    // q = 3/2: beta ∝ sqrt(b) = (2, 1, 0, 3) / 6.
    let w = RegSpec::L2q { q: 1.5 }.kernel_weights(&b);
    assert!(close(&w, &[2.0 / 6.0, 1.0 / 6.0, 0.0, 3.0 / 6.0]), "{w:?}");
    assert!(close(
        &RegSpec::L2q { q: 2.0 }.kernel_weights(&b),
        &[0.25; 4]
    ));
    // q = 3 (no lp-MKL): beta ∝ 1/b over the non-zero norms.
    let w = RegSpec::L2q { q: 3.0 }.kernel_weights(&b);
    let t = 0.25 + 1.0 + 1.0 / 9.0;
    assert!(close(&w, &[0.25 / t, 1.0 / t, 0.0, 1.0 / 9.0 / t]), "{w:?}");
    // All zero -> all zero; empty -> empty.
    assert_eq!(RegSpec::L21Sq.kernel_weights(&[0.0, 0.0]), vec![0.0, 0.0]);
    assert_eq!(
        RegSpec::Elastic { sigma: 0.3 }.kernel_weights(&[0.0; 3]),
        vec![0.0; 3]
    );
    assert!(RegSpec::L2.kernel_weights(&[]).is_empty());
}

/// The weights beta ∝ b^(2-q), rescaled to ||beta||_p = 1 with p = q/(2-q), minimize
/// sum_m b_m^2 / beta_m over Delta_p, and the minimum is ||b||_q^2 (martins2011 eq. 6 and the
/// sentence after it): checked against random points of Delta_p.
#[test]
fn kernel_weights_solve_the_lp_mkl_inner_problem() {
    let mut rng = ChaCha8Rng::seed_from_u64(91);
    for _ in 0..200 {
        let q: f64 = rng.gen_range(1.05..1.95);
        let p = q / (2.0 - q);
        let b: Vec<f64> = (0..4).map(|_| rng.gen_range(0.1..5.0)).collect();
        let w = RegSpec::L2q { q }.kernel_weights(&b);
        assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let pn = w.iter().map(|v| v.powf(p)).sum::<f64>().powf(1.0 / p);
        let beta: Vec<f64> = w.iter().map(|v| v / pn).collect();
        let obj = |be: &[f64]| b.iter().zip(be).map(|(x, y)| x * x / y).sum::<f64>();
        let ours = obj(&beta);
        let norm_q = b.iter().map(|v| v.powf(q)).sum::<f64>().powf(1.0 / q);
        assert!(
            (ours - norm_q * norm_q).abs() < 1e-9 * ours,
            "{ours} vs {}",
            norm_q * norm_q
        );
        for _ in 0..200 {
            let r: Vec<f64> = (0..4).map(|_| rng.gen_range(0.01..1.0)).collect();
            let rn = r.iter().map(|v| v.powf(p)).sum::<f64>().powf(1.0 / p);
            let other: Vec<f64> = r.iter().map(|v| v / rn).collect();
            assert!(obj(&other) >= ours * (1.0 - 1e-12));
        }
    }
}

/// Elastic net: beta_m = b_m / (sigma b_m + (1-sigma) sum b) realizes the variational form
/// sigma sum b^2 + (1-sigma)(sum b)^2 = min_{eta in simplex} sum_m b_m^2 (sigma + (1-sigma)/eta_m).
#[test]
fn elastic_kernel_weights_realize_the_variational_form() {
    let mut rng = ChaCha8Rng::seed_from_u64(92);
    for _ in 0..200 {
        let sigma: f64 = rng.gen_range(0.0..0.99);
        let b: Vec<f64> = (0..4).map(|_| rng.gen_range(0.1..5.0)).collect();
        let sum: f64 = b.iter().sum();
        let target = sigma * b.iter().map(|v| v * v).sum::<f64>() + (1.0 - sigma) * sum * sum;
        let obj = |eta: &[f64]| {
            b.iter()
                .zip(eta)
                .map(|(x, e)| x * x * (sigma + (1.0 - sigma) / e))
                .sum::<f64>()
        };
        let eta: Vec<f64> = b.iter().map(|v| v / sum).collect();
        assert!((obj(&eta) - target).abs() < 1e-10 * target);
        for _ in 0..100 {
            let r: Vec<f64> = (0..4).map(|_| rng.gen_range(0.01..1.0)).collect();
            let rs: f64 = r.iter().sum();
            let other: Vec<f64> = r.iter().map(|v| v / rs).collect();
            assert!(obj(&other) >= target * (1.0 - 1e-12));
        }
        // Effective kernel weights 1 / (sigma + (1-sigma)/eta_m), normalized.
        let raw: Vec<f64> = eta
            .iter()
            .map(|e| 1.0 / (sigma + (1.0 - sigma) / e))
            .collect();
        let rs: f64 = raw.iter().sum();
        let w = RegSpec::Elastic { sigma }.kernel_weights(&b);
        for (a, e) in w.iter().zip(&raw) {
            assert!((a - e / rs).abs() < 1e-12);
        }
    }
}

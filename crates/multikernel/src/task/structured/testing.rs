//! Slow, obviously-correct twins of a structured task's inference and losses, by enumerating
//! every output of small examples (used by the tests of each task).

use super::{loss_grad, StructLoss, StructuredTask};

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

/// `s(y)` by its definition `<Phi(x_i, y), scores>`.
fn def_score<T: StructuredTask>(t: &T, i: usize, s: &[f64], y: &T::Output) -> f64 {
    t.joint_feature(i, y).dot(s)
}

/// The loss of example `i` by enumerating `outputs` (every output of the example).
pub(crate) fn brute_loss<T: StructuredTask>(
    t: &T,
    loss: StructLoss,
    i: usize,
    s: &[f64],
    outputs: &[T::Output],
) -> f64 {
    let gold = def_score(t, i, s, t.gold(i));
    let vals: Vec<f64> = outputs
        .iter()
        .map(|y| match loss {
            StructLoss::Hinge => def_score(t, i, s, y) + t.cost(i, y),
            StructLoss::Crf => def_score(t, i, s, y),
        })
        .collect();
    let m = vals.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let top = match loss {
        StructLoss::Hinge => m,
        StructLoss::Crf => m + vals.iter().map(|v| (v - m).exp()).sum::<f64>().ln(),
    };
    top - gold
}

/// Checks, on example `i` with part scores `s`, every inference routine and both losses of
/// the task against enumeration of `outputs`, and the loss gradients against central finite
/// differences of the enumerated losses (random scores avoid the hinge's kinks almost
/// surely).
pub(crate) fn check_example<T: StructuredTask>(t: &T, i: usize, s: &[f64], outputs: &[T::Output]) {
    assert_eq!(s.len(), t.n_parts(i));
    assert!(outputs.contains(t.gold(i)), "the gold output is enumerated");
    assert_eq!(t.cost(i, t.gold(i)), 0.0);
    let by_score = |y: &T::Output| def_score(t, i, s, y);
    let best = outputs
        .iter()
        .map(by_score)
        .fold(f64::NEG_INFINITY, f64::max);
    for y in outputs {
        assert!(close(t.score(i, s, y), by_score(y), 1e-12));
        let m = t.metric(i, y);
        assert!(m.correct <= m.total);
        assert_eq!(m.correct == m.total, y == t.gold(i));
    }
    let d = t.decode(i, s);
    assert!(outputs.contains(&d));
    assert!(close(by_score(&d), best, 1e-12), "decode");
    let aug = t.loss_augmented_decode(i, s);
    let best_aug = outputs
        .iter()
        .map(|y| by_score(y) + t.cost(i, y))
        .fold(f64::NEG_INFINITY, f64::max);
    assert!(close(aug.score, best_aug, 1e-12), "augmented score");
    assert!(close(
        by_score(&aug.output) + t.cost(i, &aug.output),
        best_aug,
        1e-12
    ));
    assert_eq!(aug.feature, t.joint_feature(i, &aug.output));
    if let Some(m) = t.marginals(i, s) {
        let log_z = brute_loss(t, StructLoss::Crf, i, s, outputs) + by_score(t.gold(i));
        assert!(close(m.log_z, log_z, 1e-10), "log Z {} vs {log_z}", m.log_z);
        let mut expected = vec![0.0; s.len()];
        for y in outputs {
            let p = (by_score(y) - log_z).exp();
            t.joint_feature(i, y).add_scaled_to(&mut expected, p);
        }
        for (a, b) in m.expected.iter().zip(&expected) {
            assert!((a - b).abs() < 1e-9, "marginal {a} vs {b}");
        }
    }
    let losses: &[StructLoss] = if t.marginals(i, s).is_some() {
        &[StructLoss::Hinge, StructLoss::Crf]
    } else {
        &[StructLoss::Hinge]
    };
    for &loss in losses {
        let mut g = vec![f64::NAN; s.len()];
        let v = loss_grad(t, loss, i, s, &mut g);
        let want = brute_loss(t, loss, i, s, outputs);
        assert!(close(v, want, 1e-10), "{loss}: {v} vs {want}");
        let h = 1e-6;
        for k in 0..s.len() {
            let (mut up, mut um) = (s.to_vec(), s.to_vec());
            up[k] += h;
            um[k] -= h;
            let fd = (brute_loss(t, loss, i, &up, outputs) - brute_loss(t, loss, i, &um, outputs))
                / (2.0 * h);
            assert!(
                (fd - g[k]).abs() < 1e-5,
                "{loss} part {k}: {fd} vs {}",
                g[k]
            );
        }
    }
}

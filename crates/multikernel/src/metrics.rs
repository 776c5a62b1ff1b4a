//! Evaluation metrics: accuracy, mean squared error, error rate.

/// Fraction of positions where `pred == truth` (NaN for empty input).
pub fn accuracy<T: PartialEq>(pred: &[T], truth: &[T]) -> f64 {
    assert_eq!(pred.len(), truth.len(), "accuracy: length mismatch");
    if pred.is_empty() {
        return f64::NAN;
    }
    pred.iter().zip(truth).filter(|(a, b)| a == b).count() as f64 / pred.len() as f64
}

/// Mean squared error (NaN for empty input).
pub fn mse(pred: &[f64], truth: &[f64]) -> f64 {
    assert_eq!(pred.len(), truth.len(), "mse: length mismatch");
    if pred.is_empty() {
        return f64::NAN;
    }
    pred.iter()
        .zip(truth)
        .map(|(a, b)| (a - b) * (a - b))
        .sum::<f64>()
        / pred.len() as f64
}

/// Index of the largest value (first on ties); 0 for an empty slice.
pub(crate) fn argmax(v: &[f64]) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = i;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_on_known_values() {
        assert_eq!(accuracy(&[1, 2, 3, 4], &[1, 2, 0, 4]), 0.75);
        assert!((mse(&[1.0, 2.0], &[0.0, 4.0]) - 2.5).abs() < 1e-15);
        assert_eq!(argmax(&[0.1, 3.0, 3.0, -1.0]), 1);
        assert!(accuracy::<u8>(&[], &[]).is_nan());
    }
}

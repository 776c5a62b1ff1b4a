//! Scoring and predicting rows that come in chunks ([`ScoreAccumulator`],
//! [`Model::score_stream`], [`Model::predict_stream`]): a table larger than memory read by a
//! [`ModelStream`] is scored one chunk at a time with the result of the whole-table
//! computation ([`Model::score_with`], which is one chunk of the same accumulator).
//!
//! Accuracy is the count of correct rows over the count of rows. The mean squared error is
//! the sum of squared errors, added row by row in the file's order (the order of the
//! whole-table sum), over the count. Both are the whole table's to the last bit whenever
//! each row's prediction is: so for kernels with explicit maps (`approx=rff`, `nystrom`,
//! `sketch`, linear groups), whose scores are computed row by row. Kernels evaluated
//! against support points compute Gram blocks by faer's matrix product, whose rounding
//! depends on the shape of the block (chosen from the number of rows and of threads, so
//! already not fixed for a whole table): their values may differ in the last bits between
//! chunk sizes (within 1e-12 relative in `tests/it/stream_score.rs`); a class flips only at
//! a tie to that precision.

use super::{Model, Score};
use crate::data::{MatrixRef, ModelStream, Targets};
use crate::error::{Error, Result};
use crate::kernel::MemoryLimit;
use crate::task::TaskKind;

/// The test metric of a vector model accumulated over chunks of labelled rows: accuracy
/// (classes) or mean squared error (regression).
#[derive(Debug, Clone)]
pub struct ScoreAccumulator<'m> {
    model: &'m Model,
    /// Rows predicted right (classes).
    correct: usize,
    /// Sum of squared errors in row order (regression).
    sse: f64,
    /// Rows scored.
    n: usize,
}

impl<'m> ScoreAccumulator<'m> {
    /// No rows scored yet.
    pub(crate) fn new(model: &'m Model) -> ScoreAccumulator<'m> {
        ScoreAccumulator {
            model,
            correct: 0,
            sse: 0.0,
            n: 0,
        }
    }

    /// Predicts the rows `x` and adds their agreement with `targets` (one per row; class
    /// targets in the model's classes). Refused as [`Model::score_with`] refuses them: a
    /// sequence or precomputed-kernel model, rows of another width, targets of another
    /// count, classes or kind. On an error nothing is added.
    pub(crate) fn push(
        &mut self,
        x: MatrixRef<'_>,
        targets: &Targets,
        limit: &MemoryLimit,
    ) -> Result<()> {
        if targets.len() != x.rows() {
            return Err(Error::shape(
                "targets (one per row)",
                x.rows(),
                targets.len(),
            ));
        }
        let pred = self.model.predict_with(x, limit)?;
        match (&pred, targets) {
            (Targets::Classes { y: p, .. }, Targets::Classes { y, classes }) => {
                if classes[..] != self.model.classes()[..] {
                    return Err(Error::data(format!(
                        "the targets' classes ({}) are not the model's ({})",
                        classes.join(", "),
                        self.model.classes().join(", ")
                    )));
                }
                self.correct += p.iter().zip(y).filter(|(a, b)| a == b).count();
            }
            (Targets::Real(p), Targets::Real(y)) => {
                self.sse = p
                    .iter()
                    .zip(y)
                    .map(|(a, b)| (a - b) * (a - b))
                    .fold(self.sse, |s, e| s + e);
            }
            _ => {
                return Err(Error::data(
                    "the targets do not fit the model's task (class labels against values)",
                ))
            }
        }
        self.n += x.rows();
        Ok(())
    }

    /// The metric over every row pushed: `accuracy` (a fraction) or `mse`; NaN without rows.
    pub(crate) fn finish(&self) -> Score {
        let n = self.n as f64;
        let (metric, value) = if self.model.vector_task() == Some(TaskKind::Regression) {
            ("mse", self.sse / n)
        } else {
            ("accuracy", self.correct as f64 / n)
        };
        Score {
            metric,
            value,
            n: self.n,
        }
    }
}

impl Model {
    /// [`Model::score_with`] over every row of `stream`, read `chunk_rows` at a time: the
    /// same score as the whole table read at once gives (module docs). An error of the
    /// stream (a malformed row: file and line) or of a chunk stops it; a file without a
    /// target column is an error naming it.
    pub fn score_stream(
        &self,
        stream: &mut ModelStream,
        chunk_rows: usize,
        limit: &MemoryLimit,
    ) -> Result<Score> {
        let mut acc = ScoreAccumulator::new(self);
        while let Some(chunk) = stream.next_chunk(chunk_rows)? {
            let Some(targets) = &chunk.targets else {
                return Err(Error::data(format!(
                    "{}: no target column; scoring needs the targets",
                    stream.origin().display()
                )));
            };
            acc.push(chunk.x.view(), targets, limit)?;
        }
        Ok(acc.finish())
    }

    /// [`Model::predict_with`] over every row of `stream`, read `chunk_rows` at a time:
    /// `each` receives the predictions of each chunk in order (the same as the whole
    /// table's, row for row). Returns the number of rows; an error of the stream, of a
    /// chunk or of `each` stops it.
    pub fn predict_stream(
        &self,
        stream: &mut ModelStream,
        chunk_rows: usize,
        limit: &MemoryLimit,
        mut each: impl FnMut(Targets) -> Result<()>,
    ) -> Result<usize> {
        let mut n = 0;
        while let Some(chunk) = stream.next_chunk(chunk_rows)? {
            each(self.predict_with(chunk.x.view(), limit)?)?;
            n += chunk.len();
        }
        Ok(n)
    }
}

//! Scores of a tagger: token accuracy, and for chunk labels (IOB1, IOB2, IOE, BIOES: `O` or
//! a prefix `B-`, `I-`, `E-`, `S-` and a type) chunk precision, recall and F1 as conlleval
//! computes them: a chunk counts as correct when its type and both ends match.
//!
//! Chunk boundaries follow conlleval's `startOfChunk` / `endOfChunk` with the `E` and `S`
//! rules of the Python package seqeval (which reproduces conlleval on IOB files and also
//! reads BIOES); each sentence ends as if followed by `O`. The peer script
//! `benches/peers/seqeval/` checks these counts against seqeval.

use std::ops::Add;

/// Whether every label is `O` or `X-TYPE` with `X` in `B I E S` (a non-empty type): the
/// labels chunk F1 is defined for.
pub fn is_chunk_scheme<S: AsRef<str>>(labels: &[S]) -> bool {
    !labels.is_empty()
        && labels.iter().all(|l| {
            let l = l.as_ref();
            l == "O"
                || (l.len() > 2
                    && matches!(&l[..2], "B-" | "I-" | "E-" | "S-")
                    && l.is_char_boundary(2))
        })
}

/// The tag (`B`, `I`, `E`, `S`, `O`, or a label's first character) and the type of a label.
fn split(label: &str) -> (char, &str) {
    if label == "O" {
        return ('O', "");
    }
    match label.split_once('-') {
        Some((t, ty)) if t.chars().count() == 1 => (t.chars().next().unwrap_or('O'), ty),
        _ => (label.chars().next().unwrap_or('O'), ""),
    }
}

fn end_of_chunk(prev: char, tag: char, prev_type: &str, ty: &str) -> bool {
    matches!(prev, 'E' | 'S')
        || matches!((prev, tag), ('B' | 'I', 'B' | 'S' | 'O'))
        || (prev != 'O' && prev != '.' && prev_type != ty)
}

fn start_of_chunk(prev: char, tag: char, prev_type: &str, ty: &str) -> bool {
    matches!(tag, 'B' | 'S')
        || matches!((prev, tag), ('E' | 'S' | 'O', 'E' | 'I'))
        || (tag != 'O' && tag != '.' && prev_type != ty)
}

/// The chunks of a label sequence: `(type, start, end)` (end exclusive).
pub fn chunks<S: AsRef<str>>(labels: &[S]) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    let (mut prev, mut prev_type) = ('O', "");
    let mut begin: Option<usize> = None;
    for (i, l) in labels
        .iter()
        .map(AsRef::as_ref)
        .chain(std::iter::once("O"))
        .enumerate()
    {
        let (tag, ty) = split(l);
        if let Some(b) = begin {
            if end_of_chunk(prev, tag, prev_type, ty) {
                out.push((prev_type.to_string(), b, i));
                begin = None;
            }
        }
        if start_of_chunk(prev, tag, prev_type, ty) {
            begin = Some(i);
        }
        prev = tag;
        prev_type = ty;
    }
    out
}

/// Chunks found, chunks in the gold labels, and chunks correct.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChunkCounts {
    pub predicted: usize,
    pub gold: usize,
    pub correct: usize,
}

impl ChunkCounts {
    pub fn precision(&self) -> f64 {
        ratio(self.correct, self.predicted)
    }
    pub fn recall(&self) -> f64 {
        ratio(self.correct, self.gold)
    }
    /// The harmonic mean of precision and recall (0 when both are 0).
    pub fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

impl Add for ChunkCounts {
    type Output = ChunkCounts;
    fn add(self, o: ChunkCounts) -> ChunkCounts {
        ChunkCounts {
            predicted: self.predicted + o.predicted,
            gold: self.gold + o.gold,
            correct: self.correct + o.correct,
        }
    }
}

/// Chunk counts of one sentence.
pub fn chunk_counts<S: AsRef<str>, T: AsRef<str>>(gold: &[S], predicted: &[T]) -> ChunkCounts {
    let g = chunks(gold);
    let p = chunks(predicted);
    let correct = p.iter().filter(|c| g.contains(c)).count();
    ChunkCounts {
        predicted: p.len(),
        gold: g.len(),
        correct,
    }
}

/// Token accuracy and chunk counts over sentences.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TagScores {
    pub tokens: usize,
    pub correct: usize,
    pub chunks: ChunkCounts,
}

impl TagScores {
    /// Scores predicted label sequences against gold ones (same lengths).
    pub fn of<S: AsRef<str>, T: AsRef<str>>(gold: &[Vec<S>], predicted: &[Vec<T>]) -> TagScores {
        let mut out = TagScores::default();
        for (g, p) in gold.iter().zip(predicted) {
            out.tokens += g.len();
            out.correct += g
                .iter()
                .zip(p)
                .filter(|(a, b)| a.as_ref() == b.as_ref())
                .count();
            out.chunks = out.chunks + chunk_counts(g, p);
        }
        out
    }

    /// Fraction of tokens labelled right.
    pub fn accuracy(&self) -> f64 {
        ratio(self.correct, self.tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_follow_conlleval() {
        let c = chunks(&["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "I-ORG"]);
        assert_eq!(
            c,
            vec![
                ("PER".into(), 0, 2),
                ("LOC".into(), 3, 4),
                ("LOC".into(), 4, 5),
                ("ORG".into(), 5, 6)
            ]
        );
        // IOB1: I- starts a chunk after O or another type; B- splits two same-type chunks.
        let c = chunks(&["I-NP", "I-NP", "B-NP", "O", "I-VP"]);
        assert_eq!(
            c,
            vec![
                ("NP".into(), 0, 2),
                ("NP".into(), 2, 3),
                ("VP".into(), 4, 5)
            ]
        );
        // BIOES.
        let c = chunks(&["S-A", "B-A", "E-A", "B-B", "I-B", "E-B", "S-B"]);
        assert_eq!(
            c,
            vec![
                ("A".into(), 0, 1),
                ("A".into(), 1, 3),
                ("B".into(), 3, 6),
                ("B".into(), 6, 7)
            ]
        );
    }

    #[test]
    fn counts_and_f1() {
        let gold = vec![vec!["B-PER", "I-PER", "O", "B-LOC"]];
        let pred = vec![vec!["B-PER", "O", "O", "B-LOC"]];
        let s = TagScores::of(&gold, &pred);
        assert_eq!(s.tokens, 4);
        assert_eq!(s.correct, 3);
        assert_eq!(
            s.chunks,
            ChunkCounts {
                predicted: 2,
                gold: 2,
                correct: 1
            }
        );
        assert!((s.chunks.f1() - 0.5).abs() < 1e-12);
        assert_eq!(ChunkCounts::default().f1(), 0.0);
        assert!(is_chunk_scheme(&["O", "B-NP", "I-NP", "S-X", "E-Y"]));
        assert!(!is_chunk_scheme(&["NOUN", "VERB"]));
        assert!(!is_chunk_scheme(&["B-"]));
        assert!(!is_chunk_scheme::<&str>(&[]));
    }

    /// The chunk F1 of random sequences against a direct reading of the rules: a chunk is
    /// a maximal run that starts where `start_of_chunk` holds and ends where `end_of_chunk`
    /// holds; every label in a run after its first continues it.
    #[test]
    fn perfect_predictions_score_one() {
        let labels = ["O", "B-A", "I-A", "B-B", "I-B", "E-A", "S-B"];
        let mut state = 7u64;
        for _ in 0..200 {
            let n = 1 + (state % 9) as usize;
            let seq: Vec<&str> = (0..n)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    labels[(state >> 33) as usize % labels.len()]
                })
                .collect();
            let c = chunk_counts(&seq, &seq);
            assert_eq!(c.correct, c.gold);
            assert_eq!(c.predicted, c.gold);
            // Chunks never overlap and lie inside the sentence.
            let ch = chunks(&seq);
            for w in ch.windows(2) {
                assert!(w[0].2 <= w[1].1);
            }
            assert!(ch.iter().all(|c| c.1 < c.2 && c.2 <= n));
        }
    }
}

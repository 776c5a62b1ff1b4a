//! Scores of a tagger: token accuracy, and for chunk labels (IOB1, IOB2, IOE, BIOES: `O` or
//! a prefix `B-`, `I-`, `E-`, `S-` and a type, or a bare `B`, `I`, `E`, `S`) chunk precision,
//! recall and F1 as conlleval computes them: a chunk counts as correct when its type and both
//! ends match.
//!
//! A label is split as conlleval splits it (at its first `-`: the tag before, the type after);
//! a label without `-` is a tag of the empty type, so bare `B`/`I`/`O` labels (base-NP
//! chunking, word segmentation) make chunks of the empty type, as in conlleval. Labels are
//! bytes: any ASCII-compatible encoding is scored the same way.
//!
//! Chunk boundaries follow conlleval's `startOfChunk` / `endOfChunk` with the `E` and `S`
//! rules of the Python package seqeval (which reproduces conlleval on IOB files and also
//! reads BIOES); each sentence ends as if followed by `O`. The peer script
//! `benches/peers/seqeval/` checks these counts against seqeval, and
//! `benches/peers/conlleval/` the bare-label ones against a port of conlleval.

use std::ops::Add;

/// Whether every label is `O`, a bare `B`, `I`, `E` or `S` (a chunk of the empty type), or
/// `X-TYPE` with `X` in `B I E S` (a non-empty type): the labels chunk F1 is defined for.
pub fn is_chunk_scheme<S: AsRef<[u8]>>(labels: &[S]) -> bool {
    !labels.is_empty()
        && labels.iter().all(|l| {
            let l = l.as_ref();
            matches!(l, b"O" | b"B" | b"I" | b"E" | b"S")
                || (l.len() > 2 && matches!(&l[..2], b"B-" | b"I-" | b"E-" | b"S-"))
        })
}

/// The tag (`B`, `I`, `E`, `S`, `O`, or a label's first byte) and the type of a label, as
/// conlleval reads them: split at the first `-` when one byte precedes it; otherwise the
/// whole label is the tag, of the empty type.
fn split(label: &[u8]) -> (u8, &[u8]) {
    if label == b"O" {
        return (b'O', b"");
    }
    match label.iter().position(|&b| b == b'-') {
        Some(1) => (label[0], &label[2..]),
        _ => (label.first().copied().unwrap_or(b'O'), b""),
    }
}

fn end_of_chunk(prev: u8, tag: u8, prev_type: &[u8], ty: &[u8]) -> bool {
    matches!(prev, b'E' | b'S')
        || matches!((prev, tag), (b'B' | b'I', b'B' | b'S' | b'O'))
        || (prev != b'O' && prev != b'.' && prev_type != ty)
}

fn start_of_chunk(prev: u8, tag: u8, prev_type: &[u8], ty: &[u8]) -> bool {
    matches!(tag, b'B' | b'S')
        || matches!((prev, tag), (b'E' | b'S' | b'O', b'E' | b'I'))
        || (tag != b'O' && tag != b'.' && prev_type != ty)
}

/// The chunks of a label sequence: `(type, start, end)` (end exclusive).
pub(crate) fn chunks<S: AsRef<[u8]>>(labels: &[S]) -> Vec<(Vec<u8>, usize, usize)> {
    let mut out = Vec::new();
    let (mut prev, mut prev_type): (u8, &[u8]) = (b'O', b"");
    let mut begin: Option<usize> = None;
    for (i, l) in labels
        .iter()
        .map(AsRef::as_ref)
        .chain(std::iter::once(&b"O"[..]))
        .enumerate()
    {
        let (tag, ty) = split(l);
        if let Some(b) = begin {
            if end_of_chunk(prev, tag, prev_type, ty) {
                out.push((prev_type.to_vec(), b, i));
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
    pub(crate) fn precision(&self) -> f64 {
        ratio(self.correct, self.predicted)
    }
    pub(crate) fn recall(&self) -> f64 {
        ratio(self.correct, self.gold)
    }
    /// The harmonic mean of precision and recall (0 when both are 0).
    pub(crate) fn f1(&self) -> f64 {
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
pub(crate) fn chunk_counts<S: AsRef<[u8]>, T: AsRef<[u8]>>(
    gold: &[S],
    predicted: &[T],
) -> ChunkCounts {
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
    pub(crate) fn of<S: AsRef<[u8]>, T: AsRef<[u8]>>(
        gold: &[Vec<S>],
        predicted: &[Vec<T>],
    ) -> TagScores {
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
                (b"PER".to_vec(), 0, 2),
                (b"LOC".to_vec(), 3, 4),
                (b"LOC".to_vec(), 4, 5),
                (b"ORG".to_vec(), 5, 6)
            ]
        );
        // IOB1: I- starts a chunk after O or another type; B- splits two same-type chunks.
        let c = chunks(&["I-NP", "I-NP", "B-NP", "O", "I-VP"]);
        assert_eq!(
            c,
            vec![
                (b"NP".to_vec(), 0, 2),
                (b"NP".to_vec(), 2, 3),
                (b"VP".to_vec(), 4, 5)
            ]
        );
        // BIOES.
        let c = chunks(&["S-A", "B-A", "E-A", "B-B", "I-B", "E-B", "S-B"]);
        assert_eq!(
            c,
            vec![
                (b"A".to_vec(), 0, 1),
                (b"A".to_vec(), 1, 3),
                (b"B".to_vec(), 3, 6),
                (b"B".to_vec(), 6, 7)
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

    #[test]
    fn bare_labels_are_chunks_of_the_empty_type() {
        assert!(is_chunk_scheme(&["B", "I", "O"]));
        assert!(is_chunk_scheme(&["B", "I", "E", "S"]));
        assert!(is_chunk_scheme(&["B", "I-NP", "O"]));
        assert!(!is_chunk_scheme(&["B", "NOUN"]));
        assert!(!is_chunk_scheme(&["BI", "O"]));
        assert_eq!(
            chunks(&["B", "I", "O", "I", "B", "B", "I"]),
            vec![
                (Vec::new(), 0, 2),
                (Vec::new(), 3, 4),
                (Vec::new(), 4, 5),
                (Vec::new(), 5, 7)
            ]
        );
        // Labels are bytes: a type in any encoding (here EUC-JP) is compared as bytes.
        let euc: [&[u8]; 3] = [b"B-\xb0\xec", b"I-\xb0\xec", b"O"];
        assert_eq!(chunks(&euc), vec![(b"\xb0\xec".to_vec(), 0, 2)]);
    }

    /// conlleval's own counting, token by token (its `inCorrect` state machine, as in
    /// conlleval.pl): a correct chunk starts in both sequences at the same token with the
    /// same type and ends in both at the same token.
    fn conlleval_counts(gold: &[&str], pred: &[&str]) -> ChunkCounts {
        let mut c = ChunkCounts::default();
        let (mut lg, mut lgt, mut lp, mut lpt): (u8, &[u8], u8, &[u8]) = (b'O', b"", b'O', b"");
        let mut in_correct = false;
        for (g, p) in gold.iter().zip(pred).chain(std::iter::once((&"O", &"O"))) {
            let (g, gt) = split(g.as_bytes());
            let (p, pt) = split(p.as_bytes());
            let (eg, ep) = (end_of_chunk(lg, g, lgt, gt), end_of_chunk(lp, p, lpt, pt));
            let (sg, sp) = (
                start_of_chunk(lg, g, lgt, gt),
                start_of_chunk(lp, p, lpt, pt),
            );
            if in_correct {
                if eg && ep && lpt == lgt {
                    in_correct = false;
                    c.correct += 1;
                } else if eg != ep || gt != pt {
                    in_correct = false;
                }
            }
            if sg && sp && gt == pt {
                in_correct = true;
            }
            c.gold += usize::from(sg);
            c.predicted += usize::from(sp);
            (lg, lgt, lp, lpt) = (g, gt, p, pt);
        }
        c
    }

    #[test]
    fn chunk_counts_match_conllevals_token_by_token_counting() {
        for labels in [
            &["O", "B", "I"][..],
            &["O", "B-A", "I-A", "B-B", "I-B"][..],
            &["O", "B", "I", "B-A", "I-A"][..],
        ] {
            let mut state = 11u64;
            let mut next = |k: usize| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (state >> 33) as usize % k
            };
            for _ in 0..2000 {
                let n = 1 + next(8);
                let g: Vec<&str> = (0..n).map(|_| labels[next(labels.len())]).collect();
                let p: Vec<&str> = (0..n).map(|_| labels[next(labels.len())]).collect();
                assert_eq!(
                    chunk_counts(&g, &p),
                    conlleval_counts(&g, &p),
                    "{g:?} {p:?}"
                );
            }
        }
    }
}

//! Attachment scores as dependency parsers report them (CoNLL-X `eval.pl` without
//! punctuation): UAS (right head), LAS (right head and relation), and, for treebanks whose
//! tokens are inflectional groups, UAS without the `ig` arcs (docs/parsing-tagging-facts.md:
//! they attach a token to the next one and are nearly free).

use super::ParseSentence;
use serde::Serialize;

/// The relation of the arcs inside a word of the Turkish treebanks.
pub(crate) const IG_RELATION: &str = "ig";

/// Counts over non-punctuation tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct AttachmentCounts {
    /// Non-punctuation tokens.
    pub tokens: usize,
    /// ... with the right head.
    pub head: usize,
    /// ... with the right head and relation.
    pub labeled: usize,
    /// Non-punctuation tokens whose gold relation is not `ig`.
    pub no_ig_tokens: usize,
    /// ... with the right head.
    pub no_ig_head: usize,
}

impl std::ops::AddAssign for AttachmentCounts {
    fn add_assign(&mut self, o: Self) {
        self.tokens += o.tokens;
        self.head += o.head;
        self.labeled += o.labeled;
        self.no_ig_tokens += o.no_ig_tokens;
        self.no_ig_head += o.no_ig_head;
    }
}

/// Percentages.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AttachmentScores {
    pub uas: f64,
    /// `None` when relations were not predicted or the data has none.
    pub las: Option<f64>,
    /// `None` when the data has no `ig` arc.
    pub uas_no_ig: Option<f64>,
    pub tokens: usize,
}

impl AttachmentCounts {
    /// Counts of one sentence: gold heads and relations from `gold` (which must have heads),
    /// predicted heads, and predicted relations if any.
    pub fn of(gold: &ParseSentence, heads: &[usize], deprels: Option<&[String]>) -> Self {
        let mut c = AttachmentCounts::default();
        let Some(gold_heads) = gold.heads.as_deref() else {
            return c;
        };
        let gold_rel = gold.deprels.as_deref();
        for k in 0..gold.tokens.len().min(heads.len()) {
            if gold.tokens[k].is_punctuation() {
                continue;
            }
            let head_ok = gold_heads[k] == heads[k];
            c.tokens += 1;
            c.head += usize::from(head_ok);
            let rel_ok = match (gold_rel, deprels) {
                (Some(g), Some(p)) => g[k] == p[k],
                _ => false,
            };
            c.labeled += usize::from(head_ok && rel_ok);
            if gold_rel.is_none_or(|g| g[k] != IG_RELATION) {
                c.no_ig_tokens += 1;
                c.no_ig_head += usize::from(head_ok);
            }
        }
        c
    }

    /// Percentages; LAS only when `labeled` (relations were predicted) and UAS without `ig`
    /// only when some gold arc was `ig`.
    pub fn scores(&self, labeled: bool) -> AttachmentScores {
        let pct = |a: usize, b: usize| {
            if b == 0 {
                0.0
            } else {
                100.0 * a as f64 / b as f64
            }
        };
        AttachmentScores {
            uas: pct(self.head, self.tokens),
            las: labeled.then(|| pct(self.labeled, self.tokens)),
            uas_no_ig: (self.no_ig_tokens < self.tokens)
                .then(|| pct(self.no_ig_head, self.no_ig_tokens)),
            tokens: self.tokens,
        }
    }
}

/// Counts over sentences: `heads[i]` (and `rels[i]`, when relations were predicted) against
/// `gold[i]`.
pub fn score_parses(
    gold: &[ParseSentence],
    heads: &[Vec<usize>],
    rels: Option<&[Vec<String>]>,
) -> AttachmentCounts {
    let mut c = AttachmentCounts::default();
    for (i, (g, h)) in gold.iter().zip(heads).enumerate() {
        c += AttachmentCounts::of(g, h, rels.map(|r| r[i].as_slice()));
    }
    c
}

#[cfg(test)]
mod tests {
    use super::super::ParseToken;
    use super::*;

    #[test]
    fn punctuation_and_ig_arcs_are_counted_apart() {
        let tok = |upos: &str| ParseToken {
            upos: upos.into(),
            ..ParseToken::default()
        };
        let gold = ParseSentence {
            tokens: vec![tok("NOUN"), tok("VERB"), tok("PUNCT"), tok("NOUN")],
            heads: Some(vec![2, 0, 2, 2]),
            deprels: Some(vec!["ig".into(), "root".into(), "p".into(), "obj".into()]),
        };
        let rel: Vec<String> = ["ig", "root", "p", "subj"].map(String::from).to_vec();
        let c = AttachmentCounts::of(&gold, &[2, 0, 1, 3], Some(&rel));
        assert_eq!(
            c,
            AttachmentCounts {
                tokens: 3,
                head: 2,
                labeled: 2,
                no_ig_tokens: 2,
                no_ig_head: 1
            }
        );
        let s = c.scores(true);
        assert!((s.uas - 200.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.uas_no_ig, Some(50.0));
        assert_eq!(c.scores(false).las, None);
        let mut total = c;
        total += c;
        assert_eq!(total.tokens, 6);
    }
}

//! Seeded synthetic treebanks whose gold trees come from a known weight vector over some of
//! the arc templates, so that template selection has a right answer.
//!
//! Words are drawn uniformly from a vocabulary `w0, w1, ...`; the tag of word `wj` is
//! `t(j mod n_tags)`. The true model scores arc `h -> m` by the templates in
//! [`TreeGenerator::used`] (by default the tag pair and the direction-distance template),
//! with weights drawn once from a standard normal; each gold tree is the best tree under that
//! model ([`Enumeration`]). The word templates are not used by the truth.

use super::{ArcTemplate, Enumeration, TreeDecoder, TreeSentence};
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, StandardNormal};
use std::collections::HashMap;

/// Settings of the generator.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TreeGenerator {
    /// Training and test sentences.
    pub train: usize,
    pub test: usize,
    /// Sentence lengths, drawn uniformly from `min_len..=max_len` (at most 5 for
    /// `Enumeration`).
    pub min_len: usize,
    pub max_len: usize,
    pub n_words: usize,
    pub n_tags: usize,
    /// The templates the true model uses.
    pub used: Vec<ArcTemplate>,
}

impl Default for TreeGenerator {
    fn default() -> Self {
        TreeGenerator {
            train: 1000,
            test: 200,
            min_len: 2,
            max_len: 5,
            n_words: 50,
            n_tags: 4,
            used: vec![ArcTemplate::HeadModTag, ArcTemplate::DirDist],
        }
    }
}

/// A generated treebank.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SyntheticTrees {
    pub train: Vec<TreeSentence>,
    pub test: Vec<TreeSentence>,
    /// The templates of the true model.
    pub used: Vec<ArcTemplate>,
}

impl TreeGenerator {
    /// Draws the true weights and the sentences (seeded).
    pub(crate) fn generate(&self, seed: u64) -> SyntheticTrees {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let min_len = self.min_len.clamp(1, Enumeration.max_tokens());
        let max_len = self.max_len.clamp(min_len, Enumeration.max_tokens());
        let n_words = self.n_words.max(1);
        let n_tags = self.n_tags.max(1);
        // True weights, drawn lazily per feature string in a fixed order of first use.
        let mut weights: Vec<HashMap<String, f64>> = vec![HashMap::new(); self.used.len()];
        let mut sentence = |rng: &mut rand_chacha::ChaCha8Rng| {
            let n = rng.gen_range(min_len..=max_len);
            let ids: Vec<usize> = (0..n).map(|_| rng.gen_range(0..n_words)).collect();
            let mut s = TreeSentence {
                words: ids.iter().map(|j| format!("w{j}")).collect(),
                tags: ids.iter().map(|j| format!("t{}", j % n_tags)).collect(),
                heads: vec![0; n],
            };
            let n1 = n + 1;
            let mut arc = vec![0.0; n1 * n1];
            for h in 0..=n {
                for m in 1..=n {
                    if h == m {
                        continue;
                    }
                    arc[h * n1 + m] = self
                        .used
                        .iter()
                        .zip(weights.iter_mut())
                        .map(|(t, w)| {
                            *w.entry(t.feature(&s, h, m))
                                .or_insert_with(|| StandardNormal.sample(rng))
                        })
                        .sum();
                }
            }
            s.heads = Enumeration.decode(n, &arc);
            s
        };
        let train = (0..self.train).map(|_| sentence(&mut rng)).collect();
        let test = (0..self.test).map(|_| sentence(&mut rng)).collect();
        SyntheticTrees {
            train,
            test,
            used: self.used.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_trees_within_bounds() {
        let g = TreeGenerator {
            train: 50,
            test: 10,
            ..TreeGenerator::default()
        };
        let a = g.generate(1);
        assert_eq!(a, g.generate(1));
        assert_ne!(a.train, g.generate(2).train);
        assert_eq!((a.train.len(), a.test.len()), (50, 10));
        for s in a.train.iter().chain(&a.test) {
            assert!((2..=5).contains(&s.len()));
            s.check().unwrap();
        }
        // Not every gold tree is the same shape (the truth depends on tags and distances).
        let shapes: std::collections::HashSet<&Vec<usize>> = a
            .train
            .iter()
            .filter(|s| s.len() == 4)
            .map(|s| &s.heads)
            .collect();
        assert!(shapes.len() > 3, "{shapes:?}");
    }
}

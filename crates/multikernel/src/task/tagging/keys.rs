//! The keys of the feature dicts a tagger was trained on, stored with the templates generated
//! from them ([`super::TemplateFile::keys`]). Finding them in the training tokens
//! ([`FeatureKeys::fit`]), their templates and the column sentences of tokens are
//! [`super::dicts`].

use serde::{Deserialize, Serialize};

/// The keys of the training tokens, in order of first appearance, with their kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeatureKeys {
    pub names: Vec<String>,
    /// Per key: real-valued (numbers and booleans) rather than string indicators.
    pub real: Vec<bool>,
}

impl FeatureKeys {
    /// The value of key `j`'s feature in a cell: none for an empty cell, the number for a
    /// real-valued key, 1 for a string indicator.
    pub(crate) fn value(&self, j: usize, cell: &[u8]) -> Option<f64> {
        if cell.is_empty() {
            None
        } else if self.real.get(j).copied().unwrap_or(false) {
            std::str::from_utf8(cell).ok()?.parse().ok()
        } else {
            Some(1.0)
        }
    }

    /// Checks keys read from a model file against its unigram templates.
    pub(crate) fn validate(&self, n_unigrams: usize) -> std::result::Result<(), String> {
        if self.names.len() != self.real.len() || self.names.len() != n_unigrams {
            return Err(format!(
                "the tagger has {} feature keys and {} kinds for {n_unigrams} unigram templates",
                self.names.len(),
                self.real.len()
            ));
        }
        Ok(())
    }
}

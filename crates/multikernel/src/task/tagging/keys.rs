//! The keys of the feature dicts a tagger was trained on, stored with the templates generated
//! from them ([`super::TemplateFile::keys`]). Finding them in the training tokens
//! ([`FeatureKeys::fit`]), their templates and the column sentences of tokens are
//! [`super::dicts`].

use serde::{Deserialize, Serialize};

/// The keys of the training tokens, in order of first appearance, with their kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeatureKeys {
    pub names: Vec<String>,
    /// Per key: whether its first value in training was the key's own attribute (a number
    /// or a boolean) rather than a string (which only chose the form of its template).
    pub real: Vec<bool>,
}

impl FeatureKeys {
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

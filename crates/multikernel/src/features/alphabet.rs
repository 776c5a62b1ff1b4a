//! String -> index alphabets for feature templates and label sets.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// A bijection between strings and `0..len()`, in order of first appearance. It grows while
/// training ([`Alphabet::intern`]) and is frozen afterwards ([`Alphabet::freeze`]): a frozen
/// alphabet maps unknown strings to `None` instead of adding them (a feature never seen in
/// training has no weight). Serialized as its names in index order (and the frozen flag).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "AlphabetRepr", into = "AlphabetRepr")]
pub(crate) struct Alphabet {
    names: Vec<String>,
    index: HashMap<String, usize>,
    frozen: bool,
}

#[derive(Serialize, Deserialize)]
struct AlphabetRepr {
    names: Vec<String>,
    #[serde(default)]
    frozen: bool,
}

impl TryFrom<AlphabetRepr> for Alphabet {
    type Error = String;
    fn try_from(r: AlphabetRepr) -> Result<Alphabet, String> {
        let mut a = Alphabet::from_names(r.names).map_err(|n| format!("name '{n}' repeated"))?;
        a.frozen = r.frozen;
        Ok(a)
    }
}

impl From<Alphabet> for AlphabetRepr {
    fn from(a: Alphabet) -> AlphabetRepr {
        AlphabetRepr {
            names: a.names,
            frozen: a.frozen,
        }
    }
}

impl Alphabet {
    /// An empty, growing alphabet.
    pub(crate) fn new() -> Alphabet {
        Alphabet::default()
    }

    /// An alphabet of `names` in that order (growing); `Err(name)` for a repeated name.
    pub(crate) fn from_names<S: Into<String>>(
        names: impl IntoIterator<Item = S>,
    ) -> Result<Alphabet, String> {
        let mut a = Alphabet::new();
        for n in names {
            let n = n.into();
            if a.index.contains_key(&n) {
                return Err(n);
            }
            a.intern(&n);
        }
        Ok(a)
    }

    /// The index of `name`, adding it when the alphabet is growing; `None` when frozen and
    /// `name` is unknown.
    pub(crate) fn intern(&mut self, name: &str) -> Option<usize> {
        if let Some(&i) = self.index.get(name) {
            return Some(i);
        }
        if self.frozen {
            return None;
        }
        let i = self.names.len();
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), i);
        Some(i)
    }

    /// The index of `name` without adding it.
    #[cfg(test)]
    pub(crate) fn get(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// The name of index `i`.
    #[cfg(test)]
    pub(crate) fn name(&self, i: usize) -> Option<&str> {
        self.names.get(i).map(String::as_str)
    }

    /// All names in index order.
    #[cfg(test)]
    pub(crate) fn names(&self) -> &[String] {
        &self.names
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }

    /// Stops growing: [`Alphabet::intern`] then only looks names up.
    pub(crate) fn freeze(&mut self) {
        self.frozen = true;
    }

    #[cfg(test)]
    pub(crate) fn is_frozen(&self) -> bool {
        self.frozen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_then_freezes_and_round_trips() {
        let mut a = Alphabet::new();
        assert_eq!(a.intern("b"), Some(0));
        assert_eq!(a.intern("a"), Some(1));
        assert_eq!(a.intern("b"), Some(0));
        assert_eq!(a.len(), 2);
        a.freeze();
        assert_eq!(a.intern("c"), None);
        assert_eq!(a.len(), 2);
        assert_eq!(a.get("a"), Some(1));
        assert_eq!(a.name(0), Some("b"));
        let text = serde_json::to_string(&a).unwrap();
        assert_eq!(text, r#"{"names":["b","a"],"frozen":true}"#);
        let back: Alphabet = serde_json::from_str(&text).unwrap();
        assert_eq!(back, a);
        assert_eq!(back.get("a"), Some(1));
        assert!(back.is_frozen());
        assert!(serde_json::from_str::<Alphabet>(r#"{"names":["x","x"]}"#).is_err());
        assert_eq!(Alphabet::from_names(["x", "y", "x"]), Err("x".to_string()));
    }
}

//! Tokens given as feature dicts (the input of sklearn-crfsuite and python-crfsuite) as the
//! column sentences and templates of the template tagger: one column and one unigram
//! template per key, so each key is one feature group (martins2011 Sec. 4.1 with templates
//! as groups; mao-tsang Sec. 3), plus the label-pair template `B`.
//!
//! Each (key, value) pair of a token is an attribute with a value, named as python-crfsuite
//! names it (`SequenceTagger::state_features`):
//! - a string value `v` of key `k` is the attribute `k:v` with value 1 (the expansion
//!   `U<j>:k=v` of the template `U<j>:k%x[0,j]`, as when the cell is `=v`);
//! - a number `x` is the attribute `k` with value `x` (the expansion `U<j>:k`);
//! - `true` is the attribute `k` with value 1, `false` none (python-crfsuite's value 0);
//! - [`FeatureValue::Attribute`] names the attribute in full: `k:rest` (python-crfsuite's
//!   nested dicts and lists, the same attribute as the string `rest`), `k` (the same as a
//!   number), or any other name (a token given as strings, `k=v`);
//! - a key missing from a token gives no attribute there (its cell is empty); a key may hold
//!   several attributes in one token (a list value), and strings in one token and numbers
//!   in another (two attributes).
//!
//! A cell holds its attributes as `(suffix, value)` entries ([`encode_entry`]), the suffix
//! being what follows the template's text in the expansion: empty for the attribute `k`,
//! `=rest` for `k:rest`, `\x1f` and the name for any other name. At prediction, keys and
//! attributes not seen in training are ignored, as unseen template expansions are.

use super::keys::FeatureKeys;
use super::templates::{Template, TemplateFile};
use crate::data::columns::ColumnSentence;
use crate::error::{Error, Result};
use crate::kernel::MemoryLimit;
use std::collections::{HashMap, HashSet};

/// One feature's value in a token's dict.
#[derive(Debug, Clone, PartialEq)]
pub enum FeatureValue {
    Text(String),
    Bool(bool),
    Number(f64),
    /// An attribute of the key named in full, with its value: python-crfsuite's flattened
    /// nested values (`{"a": {"b": 2.0}}` is the key `a` with `Attribute("a:b", 2.0)`,
    /// `{"a": ["x"]}` the key `a` with `Attribute("a:x", 1.0)`) and tokens given as strings
    /// (`"w=the"` is the key `w` with `Attribute("w=the", 1.0)`).
    Attribute(String, f64),
}

/// Marks a suffix that holds an attribute's whole name (neither `k` nor `k:rest`).
const NAMED: u8 = 0x1f;

impl FeatureValue {
    /// The attribute of key `key` as a cell entry: the suffix of its expansion and its
    /// value; none for `false`.
    fn entry(&self, key: &str) -> Option<(Vec<u8>, f64)> {
        match self {
            FeatureValue::Text(v) => Some((format!("={v}").into_bytes(), 1.0)),
            FeatureValue::Bool(b) => b.then(|| (Vec::new(), 1.0)),
            FeatureValue::Number(x) => Some((Vec::new(), *x)),
            FeatureValue::Attribute(name, x) => {
                let suffix = if name == key {
                    Vec::new()
                } else if let Some(rest) = name.strip_prefix(key).and_then(|r| r.strip_prefix(':'))
                {
                    format!("={rest}").into_bytes()
                } else {
                    let mut s = vec![NAMED];
                    s.extend_from_slice(name.as_bytes());
                    s
                };
                Some((suffix, *x))
            }
        }
    }

    /// Whether the key's attribute is the key itself (a number or a boolean).
    fn is_real(&self, key: &str) -> bool {
        self.entry(key).is_none_or(|(suffix, _)| suffix.is_empty())
    }
}

/// The name python-crfsuite gives the attribute of key `key` whose expansion suffix is
/// `suffix` ([`FeatureValue::entry`]).
pub(crate) fn attribute_name(key: &str, suffix: &[u8]) -> String {
    match suffix.split_first() {
        None => key.to_string(),
        Some((b'=', rest)) => format!("{key}:{}", String::from_utf8_lossy(rest)),
        Some((&NAMED, name)) => String::from_utf8_lossy(name).into_owned(),
        Some(_) => format!("{key}{}", String::from_utf8_lossy(suffix)),
    }
}

/// Appends one `(suffix, value)` entry to a feature-dict cell: the suffix's length (4 bytes,
/// little-endian), the suffix, the value (8 bytes, little-endian).
fn encode_entry(cell: &mut Vec<u8>, suffix: &[u8], value: f64) {
    let len = u32::try_from(suffix.len()).expect("an attribute name under 4 GiB");
    cell.extend_from_slice(&len.to_le_bytes());
    cell.extend_from_slice(suffix);
    cell.extend_from_slice(&value.to_le_bytes());
}

/// The `(suffix, value)` entries of a feature-dict cell ([`encode_entry`]).
pub(crate) fn cell_entries(cell: &[u8]) -> impl Iterator<Item = (&[u8], f64)> {
    let mut rest = cell;
    std::iter::from_fn(move || {
        let (len, tail) = rest.split_first_chunk::<4>()?;
        let len = u32::from_le_bytes(*len) as usize;
        if tail.len() < len + 8 {
            return None;
        }
        let (suffix, tail) = tail.split_at(len);
        let (value, tail) = tail.split_first_chunk::<8>()?;
        rest = tail;
        Some((suffix, f64::from_le_bytes(*value)))
    })
}

/// A token: its features, as (key, value) pairs; pairs that name the same attribute add
/// their values.
pub(crate) type TokenFeatures = Vec<(String, FeatureValue)>;

// The type is in `keys.rs` (the templates store it); here, what it has to do with dicts.
impl FeatureKeys {
    /// The keys of `sentences`, each marked real-valued when its first value is the key's
    /// own attribute (a number or a boolean); an error for a value that is not finite, or
    /// no key at all.
    pub fn fit(sentences: &[Vec<TokenFeatures>]) -> Result<FeatureKeys> {
        FeatureKeys::collect(sentences)?.nonempty()
    }

    /// The keys of `sentences` (as [`FeatureKeys::fit`]), none at all allowed: those of a
    /// part of the training sentences, merged with the others' by [`FeatureKeys::merge`].
    pub(crate) fn collect(sentences: &[Vec<TokenFeatures>]) -> Result<FeatureKeys> {
        let mut keys = FeatureKeys {
            names: Vec::new(),
            real: Vec::new(),
        };
        let mut index: HashSet<&str> = HashSet::new();
        for (i, s) in sentences.iter().enumerate() {
            for (t, token) in s.iter().enumerate() {
                for (k, v) in token {
                    check_finite(i, t, k, v)?;
                    if index.insert(k.as_str()) {
                        keys.names.push(k.clone());
                        keys.real.push(v.is_real(k));
                    }
                }
            }
        }
        Ok(keys)
    }

    /// The keys of two parts' sentences, `later`'s after this one's: the keys of both in
    /// order of first appearance, as [`FeatureKeys::collect`] finds them in the parts'
    /// sentences one after the other.
    pub(crate) fn merge(mut self, later: FeatureKeys) -> FeatureKeys {
        let seen: HashSet<String> = self.names.iter().cloned().collect();
        for (name, real) in later.names.into_iter().zip(later.real) {
            if !seen.contains(&name) {
                self.names.push(name);
                self.real.push(real);
            }
        }
        self
    }

    /// These keys, or an error for none.
    pub(crate) fn nonempty(self) -> Result<FeatureKeys> {
        if self.names.is_empty() {
            return Err(Error::data(
                "no features: every token of the training sentences is an empty dict",
            ));
        }
        Ok(self)
    }

    /// One unigram template per key (`U<j>:k%x[0,j]` for strings, `U<j>:k` for numbers and
    /// booleans; a `%` in a key is written `_pct_` in the template's text, which only names
    /// it) and the label-pair template `B`.
    pub(crate) fn templates(&self) -> TemplateFile {
        let mut templates: Vec<Template> = self
            .names
            .iter()
            .zip(&self.real)
            .enumerate()
            .map(|(j, (name, &real))| {
                let shown = name.replace('%', "_pct_");
                let text = if real {
                    format!("U{j}:{shown}")
                } else {
                    format!("U{j}:{shown}%x[0,{j}]")
                };
                Template::parse(&text).expect("a generated template parses")
            })
            .collect();
        templates.push(Template::parse("B").expect("B parses"));
        let n = templates.len();
        TemplateFile {
            templates,
            lines: vec![0; n],
            origin: "<feature dicts>".into(),
            keys: Some(self.clone()),
        }
    }

    /// The column sentences of `sentences`: one column per key, its attributes in the
    /// token as `(suffix, value)` entries ([`cell_entries`]; empty for `false` or a missing
    /// key), then the label when `labels` are given. An error for a value that is not
    /// finite.
    pub fn columns(
        &self,
        sentences: &[Vec<TokenFeatures>],
        labels: Option<&[Vec<String>]>,
    ) -> Result<Vec<ColumnSentence>> {
        let index: HashMap<&str, usize> = self
            .names
            .iter()
            .enumerate()
            .map(|(j, n)| (n.as_str(), j))
            .collect();
        let width = self.names.len() + usize::from(labels.is_some());
        // One cell per key and token: a key per value (`{"word=the": 1}`) would hold as many
        // cells as the vocabulary per token; refused before they are allocated.
        let tokens: usize = sentences.iter().map(Vec::len).sum();
        MemoryLimit::default().check(
            tokens
                .saturating_mul(width)
                .saturating_mul(std::mem::size_of::<Vec<u8>>()),
            &format!(
                "the cells of {tokens} tokens x {} feature keys (each key is a feature group: \
                 give a group's values under one key, {{\"word\": \"the\"}} or \"word=the\", \
                 not one key per value)",
                self.names.len()
            ),
        )?;
        sentences
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let tokens = s
                    .iter()
                    .enumerate()
                    .map(|(t, token)| {
                        let mut entries: Vec<Vec<(Vec<u8>, f64)>> = vec![Vec::new(); width];
                        for (k, v) in token {
                            check_finite(i, t, k, v)?;
                            let Some(&j) = index.get(k.as_str()) else {
                                continue;
                            };
                            let Some((suffix, x)) = v.entry(k) else {
                                continue;
                            };
                            match entries[j].iter_mut().find(|(s, _)| *s == suffix) {
                                Some(e) => e.1 += x,
                                None => entries[j].push((suffix, x)),
                            }
                        }
                        let mut cells: Vec<Vec<u8>> = entries
                            .iter()
                            .map(|e| {
                                let mut cell = Vec::new();
                                for (suffix, x) in e {
                                    encode_entry(&mut cell, suffix, *x);
                                }
                                cell
                            })
                            .collect();
                        if let Some(l) = labels {
                            cells[width - 1] = l[i][t].clone().into_bytes();
                        }
                        Ok(cells)
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(ColumnSentence { tokens, line: i })
            })
            .collect()
    }
}

fn check_finite(i: usize, t: usize, k: &str, v: &FeatureValue) -> Result<()> {
    match v {
        FeatureValue::Number(x) if !x.is_finite() => Err(Error::data(format!(
            "sentence {i}, token {t}: feature '{k}' is {x}; numbers must be finite"
        ))),
        FeatureValue::Attribute(name, x) if !x.is_finite() => Err(Error::data(format!(
            "sentence {i}, token {t}: feature '{name}' (key '{k}') is {x}; numbers must be \
             finite"
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok(pairs: &[(&str, FeatureValue)]) -> TokenFeatures {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    /// A cell's entries as (attribute name, value).
    fn named(key: &str, cell: &[u8]) -> Vec<(String, f64)> {
        cell_entries(cell)
            .map(|(s, x)| (attribute_name(key, s), x))
            .collect()
    }

    #[test]
    fn keys_become_one_column_and_one_template_each() {
        use FeatureValue::*;
        let x = vec![vec![
            tok(&[
                ("w", Text("a".into())),
                ("bias", Number(1.0)),
                ("up", Bool(true)),
            ]),
            tok(&[
                ("w", Text("".into())),
                ("up", Bool(false)),
                ("len", Number(2.5)),
            ]),
        ]];
        let keys = FeatureKeys::fit(&x).unwrap();
        assert_eq!(keys.names, ["w", "bias", "up", "len"]);
        assert_eq!(keys.real, [false, true, true, true]);
        let t = keys.templates();
        let texts: Vec<&str> = t.templates.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(texts, ["U0:w%x[0,0]", "U1:bias", "U2:up", "U3:len", "B"]);
        let y = vec![vec!["A".to_string(), "B".to_string()]];
        let cols = keys.columns(&x, Some(&y)).unwrap();
        let cell = |t: usize, j: usize| cols[0].tokens[t][j].clone();
        // A string is the attribute `w:a` (suffix `=a`), a number or true the key itself.
        assert_eq!(
            cell_entries(&cell(0, 0)).collect::<Vec<_>>(),
            [(&b"=a"[..], 1.0)]
        );
        assert_eq!(named("w", &cell(0, 0)), [("w:a".to_string(), 1.0)]);
        assert_eq!(named("bias", &cell(0, 1)), [("bias".to_string(), 1.0)]);
        assert_eq!(named("up", &cell(0, 2)), [("up".to_string(), 1.0)]);
        assert!(cell(0, 3).is_empty());
        assert_eq!(cell(0, 4), b"A");
        // An empty string is still a feature (`w:`); false and missing keys are none.
        assert_eq!(named("w", &cell(1, 0)), [("w:".to_string(), 1.0)]);
        assert!(cell(1, 1).is_empty() && cell(1, 2).is_empty());
        assert_eq!(named("len", &cell(1, 3)), [("len".to_string(), 2.5)]);
    }

    /// python-crfsuite's flattened values: nested names under the key, several attributes of
    /// one key in a token, a string token's own name; the same attribute given twice adds up.
    #[test]
    fn attributes_are_named_as_python_crfsuite_names_them() {
        use FeatureValue::*;
        let x = vec![vec![tok(&[
            ("a", Attribute("a:b".into(), 2.5)),
            ("a", Attribute("a:x".into(), 1.0)),
            ("a", Text("x".into())),
            ("w", Attribute("w=the".into(), 1.0)),
            ("bias", Attribute("bias".into(), 1.0)),
            ("n", Attribute("n:m:o".into(), -1.0)),
        ])]];
        let keys = FeatureKeys::fit(&x).unwrap();
        assert_eq!(keys.names, ["a", "w", "bias", "n"]);
        assert_eq!(keys.real, [false, false, true, false]);
        let cols = keys.columns(&x, None).unwrap();
        let cells = &cols[0].tokens[0];
        assert_eq!(
            named("a", &cells[0]),
            [("a:b".to_string(), 2.5), ("a:x".to_string(), 2.0)]
        );
        assert_eq!(named("w", &cells[1]), [("w=the".to_string(), 1.0)]);
        assert_eq!(named("bias", &cells[2]), [("bias".to_string(), 1.0)]);
        assert_eq!(named("n", &cells[3]), [("n:m:o".to_string(), -1.0)]);
        // `Text(v)` and `Attribute("k:v", 1)` are one attribute, with one expansion suffix.
        assert_eq!(
            Text("v".into()).entry("k"),
            Attribute("k:v".into(), 1.0).entry("k")
        );
        // A key may hold strings in one token and numbers in another: two attributes.
        let mixed = vec![
            vec![tok(&[("w", Text("a".into()))])],
            vec![tok(&[("w", Number(3.0))])],
        ];
        let keys = FeatureKeys::fit(&mixed).unwrap();
        let cols = keys.columns(&mixed, None).unwrap();
        assert_eq!(named("w", &cols[1].tokens[0][0]), [("w".to_string(), 3.0)]);
    }

    #[test]
    fn non_finite_values_and_empty_tokens_are_named() {
        use FeatureValue::*;
        let x = vec![vec![tok(&[("w", Number(f64::NAN))])]];
        let e = FeatureKeys::fit(&x).unwrap_err().to_string();
        assert!(
            e.contains("finite") && e.contains("sentence 0, token 0"),
            "{e}"
        );
        let x = vec![vec![tok(&[("w", Attribute("w:b".into(), f64::INFINITY))])]];
        let e = FeatureKeys::fit(&x).unwrap_err().to_string();
        assert!(e.contains("finite") && e.contains("'w:b'"), "{e}");
        let e = FeatureKeys::fit(&[vec![tok(&[])]]).unwrap_err().to_string();
        assert!(e.contains("no features"), "{e}");
        // A key per value: cells for every key in every token, refused before allocation.
        let many: Vec<Vec<TokenFeatures>> = vec![(0..200_000)
            .map(|t| tok(&[(format!("w={t}").as_str(), Bool(true))]))
            .collect()];
        let keys = FeatureKeys::fit(&many).unwrap();
        let e = keys.columns(&many, None).unwrap_err().to_string();
        assert!(e.contains("200000 tokens x 200000 feature keys"), "{e}");
        // Unknown keys are ignored.
        let keys = FeatureKeys::fit(&[vec![tok(&[("w", Text("a".into()))])]]).unwrap();
        let c = keys
            .columns(&[vec![tok(&[("zz", Bool(true))])]], None)
            .unwrap();
        assert_eq!(c[0].tokens[0], vec![Vec::<u8>::new()]);
    }
}

//! Tokens given as feature dicts (the input of sklearn-crfsuite and python-crfsuite) as the
//! column sentences and templates of the template tagger: one column and one unigram
//! template per key, so each key is one feature group (martins2011 Sec. 4.1 with templates
//! as groups; mao-tsang Sec. 3), plus the label-pair template `B`.
//!
//! - a string value `v` of key `k` is the indicator feature `k=v` (the template
//!   `U<j>:k%x[0,j]` over the cell `=v`);
//! - a number `x` is one real-valued feature `k` with value `x` (the template `U<j>:k`, its
//!   value read from the cell);
//! - `true` is the feature `k` with value 1, `false` no feature (python-crfsuite's value 0);
//! - a key missing from a token gives no feature there (its cell is empty).
//!
//! A key holds strings, or numbers and booleans, in every token of the training sentences
//! (an error names the sentence, the token and the key otherwise). At prediction, keys not
//! seen in training are ignored, as unseen template expansions are.

use super::keys::FeatureKeys;
use super::templates::{Template, TemplateFile};
use crate::data::columns::ColumnSentence;
use crate::error::{Error, Result};
use std::collections::HashMap;

/// One feature's value in a token's dict.
#[derive(Debug, Clone, PartialEq)]
pub enum FeatureValue {
    Text(String),
    Bool(bool),
    Number(f64),
}

impl FeatureValue {
    fn is_real(&self) -> bool {
        !matches!(self, FeatureValue::Text(_))
    }

    fn kind(&self) -> &'static str {
        match self {
            FeatureValue::Text(_) => "a string",
            FeatureValue::Bool(_) => "a boolean",
            FeatureValue::Number(_) => "a number",
        }
    }
}

/// A token: its features, as (key, value) pairs (a later pair of the same key wins).
pub(crate) type TokenFeatures = Vec<(String, FeatureValue)>;

// The type is in `keys.rs` (the templates store it); here, what it has to do with dicts.
impl FeatureKeys {
    /// The keys of `sentences`; an error for a key holding strings in one token and numbers
    /// or booleans in another, a value that is not finite, or no key at all.
    pub fn fit(sentences: &[Vec<TokenFeatures>]) -> Result<FeatureKeys> {
        let mut names: Vec<String> = Vec::new();
        let mut real: Vec<bool> = Vec::new();
        let mut first: Vec<(usize, usize, &'static str)> = Vec::new();
        let mut index: HashMap<&str, usize> = HashMap::new();
        for (i, s) in sentences.iter().enumerate() {
            for (t, token) in s.iter().enumerate() {
                for (k, v) in token {
                    check_finite(i, t, k, v)?;
                    match index.get(k.as_str()) {
                        Some(&j) if real[j] != v.is_real() => {
                            let (fi, ft, fk) = first[j];
                            return Err(Error::data(format!(
                                "sentence {i}, token {t}: feature '{k}' is {} but was {fk} at \
                                 sentence {fi}, token {ft}; a key holds strings, or numbers \
                                 and booleans, in every token",
                                v.kind()
                            )));
                        }
                        Some(_) => {}
                        None => {
                            index.insert(k.as_str(), names.len());
                            names.push(k.clone());
                            real.push(v.is_real());
                            first.push((i, t, v.kind()));
                        }
                    }
                }
            }
        }
        if names.is_empty() {
            return Err(Error::data(
                "no features: every token of the training sentences is an empty dict",
            ));
        }
        Ok(FeatureKeys { names, real })
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

    /// The column sentences of `sentences`: one column per key (`=v` for a string, the
    /// number's shortest exact text, `1` for `true`, empty for `false` or a missing key),
    /// then the label when `labels` are given. An error for a key of the other kind than in
    /// training or a value that is not finite.
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
        sentences
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let tokens = s
                    .iter()
                    .enumerate()
                    .map(|(t, token)| {
                        let mut cells: Vec<Vec<u8>> = vec![Vec::new(); width];
                        for (k, v) in token {
                            check_finite(i, t, k, v)?;
                            let Some(&j) = index.get(k.as_str()) else {
                                continue;
                            };
                            if self.real[j] != v.is_real() {
                                return Err(Error::data(format!(
                                    "sentence {i}, token {t}: feature '{k}' is {} but held {} \
                                     in training",
                                    v.kind(),
                                    if self.real[j] {
                                        "numbers or booleans"
                                    } else {
                                        "strings"
                                    }
                                )));
                            }
                            cells[j] = match v {
                                FeatureValue::Text(s) => format!("={s}").into_bytes(),
                                FeatureValue::Number(x) => format!("{x}").into_bytes(),
                                FeatureValue::Bool(true) => b"1".to_vec(),
                                FeatureValue::Bool(false) => Vec::new(),
                            };
                        }
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
        let cell = |t: usize, j: usize| String::from_utf8(cols[0].tokens[t][j].clone()).unwrap();
        assert_eq!(
            (cell(0, 0), cell(0, 1), cell(0, 2), cell(0, 3), cell(0, 4)),
            ("=a".into(), "1".into(), "1".into(), "".into(), "A".into())
        );
        // An empty string is still a feature (`w=`); false and missing keys are none.
        assert_eq!(
            (cell(1, 0), cell(1, 1), cell(1, 2)),
            ("=".into(), "".into(), "".into())
        );
        assert_eq!(keys.value(0, b"=a"), Some(1.0));
        assert_eq!(keys.value(3, b"2.5"), Some(2.5));
        assert_eq!(keys.value(1, b""), None);
    }

    #[test]
    fn mixed_kinds_and_non_finite_values_are_named() {
        use FeatureValue::*;
        let x = vec![
            vec![tok(&[("w", Text("a".into()))])],
            vec![tok(&[("w", Number(1.0))])],
        ];
        let e = FeatureKeys::fit(&x).unwrap_err().to_string();
        assert!(
            e.contains("sentence 1, token 0") && e.contains("'w'"),
            "{e}"
        );
        let x = vec![vec![tok(&[("w", Number(f64::NAN))])]];
        let e = FeatureKeys::fit(&x).unwrap_err().to_string();
        assert!(e.contains("finite"), "{e}");
        let e = FeatureKeys::fit(&[vec![tok(&[])]]).unwrap_err().to_string();
        assert!(e.contains("no features"), "{e}");
        let keys = FeatureKeys::fit(&[vec![tok(&[("w", Text("a".into()))])]]).unwrap();
        let e = keys
            .columns(&[vec![tok(&[("w", Bool(true))])]], None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("held strings"), "{e}");
        // Unknown keys are ignored.
        let c = keys
            .columns(&[vec![tok(&[("zz", Bool(true))])]], None)
            .unwrap();
        assert_eq!(c[0].tokens[0], vec![Vec::<u8>::new()]);
    }
}

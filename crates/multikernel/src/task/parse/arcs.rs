//! Arc features from templates: every arc `h -> d` of a sentence gets one sparse binary
//! feature vector with one block per template (one group each, martins2011 Sec. 4.2).
//!
//! Features are indexed once per sentence before training ([`ArcFeaturizer::sentence_rows`]):
//! 1. every token attribute a template reads is coded as a small integer
//!    ([`AttributeCodes`]: one string alphabet per attribute, grown on the training
//!    sentences);
//! 2. a feature is the template's number and the codes of its atoms, hashed to 64 bits
//!    ([`feature_key`], a fixed mixing function, so model files do not depend on the
//!    standard library's hasher);
//! 3. one alphabet per template maps keys seen in training to the template's feature
//!    indices. [`Support`] says which arcs grow it: the gold arcs only (MSTParser's feature
//!    set, and the default) or every arc of the training sentences.
//!
//! Keys are exact up to 64-bit collisions (about `k^2 / 2^65` for `k` keys of a template:
//! below `1e-7` for a million keys), so the alphabet behaves like a string alphabet without
//! building a string per arc.

use super::templates::{distance_bin, Anchor, Atom, Attribute, TemplateSet};
use super::ParseSentence;
use crate::error::{Error, Result};
use crate::features::{GroupLayout, SparseRows};
use crate::task::online::{ExplicitGroup, GroupRole};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Code of every attribute of the artificial root token.
pub(crate) const ROOT: u32 = 0;
/// Code of a position before the sentence.
pub(crate) const BEFORE: u32 = 1;
/// Code of a position after the sentence.
pub(crate) const AFTER: u32 = 2;
/// Code of a value never seen in training.
pub(crate) const UNKNOWN: u32 = 3;
/// The first code of a real value.
const FIRST_VALUE: u32 = 4;

/// Which arcs of the training sentences define the features.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Support {
    /// Features of the gold arcs only (MSTParser): a small parameter vector; features seen
    /// only on wrong arcs are dropped.
    #[default]
    Gold,
    /// Features of every arc of every training sentence.
    All,
}

/// A hasher for keys that are already hashes (it keeps the 64 bits as they are).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, k: u64) {
        self.0 = k;
    }
}

type KeyMap = HashMap<u64, u32, BuildHasherDefault<KeyHasher>>;

/// The splitmix64 finalizer: a fixed bijective mix of 64 bits.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The key of a feature: template `t` with atom values `values`, hashed in order.
#[inline]
pub(crate) fn feature_key(t: usize, values: &[u32]) -> u64 {
    let mut h = mix(0x9e37_79b9_7f4a_7c15 ^ t as u64);
    for &v in values {
        h = mix(h ^ u64::from(v).wrapping_add(0x632b_e59b_d9b4_e019));
    }
    h
}

/// One string alphabet per attribute: value -> code (real values from 4; 0-3 are [`ROOT`],
/// [`BEFORE`], [`AFTER`], [`UNKNOWN`]).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(from = "Vec<Vec<String>>", into = "Vec<Vec<String>>")]
pub(crate) struct AttributeCodes {
    values: Vec<HashMap<String, u32>>,
}

impl From<Vec<Vec<String>>> for AttributeCodes {
    fn from(names: Vec<Vec<String>>) -> Self {
        AttributeCodes {
            values: names
                .into_iter()
                .map(|v| {
                    v.into_iter()
                        .enumerate()
                        .map(|(k, s)| (s, FIRST_VALUE + k as u32))
                        .collect()
                })
                .collect(),
        }
    }
}

impl From<AttributeCodes> for Vec<Vec<String>> {
    fn from(c: AttributeCodes) -> Self {
        c.values
            .into_iter()
            .map(|m| {
                let mut v: Vec<(String, u32)> = m.into_iter().collect();
                v.sort_by_key(|&(_, k)| k);
                v.into_iter().map(|(s, _)| s).collect()
            })
            .collect()
    }
}

/// The value of attribute `a` of a token.
fn attribute_value<'s>(
    a: &Attribute,
    s: &'s ParseSentence,
    k: usize,
    buf: &'s mut String,
) -> &'s str {
    let t = &s.tokens[k];
    match a {
        Attribute::Form => &t.form,
        Attribute::Lower => {
            *buf = t.form.to_lowercase();
            buf
        }
        Attribute::Lemma => &t.lemma,
        Attribute::Upos => &t.upos,
        Attribute::Xpos => &t.xpos,
        Attribute::Feats => &t.feats,
        Attribute::Feat(name) => t
            .feats
            .split('|')
            .find_map(|kv| {
                kv.split_once('=')
                    .filter(|(k, _)| k == name)
                    .map(|(_, v)| v)
            })
            .unwrap_or("_"),
        Attribute::Prefix(n) => {
            *buf = t.form.to_lowercase().chars().take(*n as usize).collect();
            buf
        }
        Attribute::Suffix(n) => {
            let lower: Vec<char> = t.form.to_lowercase().chars().collect();
            *buf = lower[lower.len().saturating_sub(*n as usize)..]
                .iter()
                .collect();
            buf
        }
        Attribute::Space => {
            if t.space_after {
                "y"
            } else {
                "n"
            }
        }
    }
}

/// A sentence's attribute codes: row `k` (token `k`, 0 = root) holds one code per attribute.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CodedSentence {
    n: usize,
    n_attr: usize,
    codes: Vec<u32>,
}

impl CodedSentence {
    /// The code of attribute `a` at position `k` (may lie outside `0..=n`).
    #[inline]
    fn code(&self, k: isize, a: usize) -> u32 {
        if k < 0 {
            BEFORE
        } else if k as usize > self.n {
            AFTER
        } else {
            self.codes[k as usize * self.n_attr + a]
        }
    }
}

impl AttributeCodes {
    /// Codes of every attribute of `s`'s tokens, growing the alphabets with values not yet
    /// known (training).
    pub(crate) fn code_growing(&mut self, set: &TemplateSet, s: &ParseSentence) -> CodedSentence {
        self.values.resize_with(set.attributes.len(), HashMap::new);
        let values = &mut self.values;
        code_tokens(set, s, |a, v| {
            let map = &mut values[a];
            match map.get(v) {
                Some(&c) => c,
                None => {
                    let c = FIRST_VALUE + map.len() as u32;
                    map.insert(v.to_string(), c);
                    c
                }
            }
        })
    }

    /// Codes of `s` with the alphabets as they are: values never seen get [`UNKNOWN`].
    pub(crate) fn code_frozen(&self, set: &TemplateSet, s: &ParseSentence) -> CodedSentence {
        code_tokens(set, s, |a, v| {
            self.values
                .get(a)
                .and_then(|m| m.get(v).copied())
                .unwrap_or(UNKNOWN)
        })
    }
}

/// Codes of every attribute of `s`'s tokens, `code(attribute, value)` for each.
fn code_tokens(
    set: &TemplateSet,
    s: &ParseSentence,
    mut code: impl FnMut(usize, &str) -> u32,
) -> CodedSentence {
    let n_attr = set.attributes.len();
    let n = s.tokens.len();
    let mut codes = vec![ROOT; (n + 1) * n_attr];
    let mut buf = String::new();
    for k in 0..n {
        for (a, attr) in set.attributes.iter().enumerate() {
            let v = attribute_value(attr, s, k, &mut buf);
            codes[(k + 1) * n_attr + a] = code(a, v);
        }
    }
    CodedSentence { n, n_attr, codes }
}

/// Calls `f(key)` for every feature of template `t` on arc `h -> d` (several for a template
/// with in-between tokens, none when the arc has no token in between).
#[inline]
fn for_each_key(
    set: &TemplateSet,
    t: usize,
    c: &CodedSentence,
    h: usize,
    d: usize,
    mut f: impl FnMut(u64),
) {
    let tpl = &set.templates[t];
    let mut values = [0u32; super::templates::MAX_ATOMS];
    let n = tpl.atoms.len();
    let fill = |values: &mut [u32], b: usize| {
        for (v, atom) in values.iter_mut().zip(&tpl.atoms) {
            *v = match atom {
                Atom::Direction => u32::from(d > h),
                Atom::Distance => distance_bin(h.abs_diff(d)),
                Atom::Token { anchor, attr } => {
                    let k = match anchor {
                        Anchor::Head(o) => h as isize + *o as isize,
                        Anchor::Dep(o) => d as isize + *o as isize,
                        Anchor::Between => b as isize,
                    };
                    c.code(k, *attr)
                }
            };
        }
    };
    if tpl.between {
        for b in h.min(d) + 1..h.max(d) {
            fill(&mut values[..n], b);
            f(feature_key(t, &values[..n]));
        }
    } else {
        fill(&mut values[..n], 0);
        f(feature_key(t, &values[..n]));
    }
}

/// Adds the keys of sentence `i` (`s`, coded `c`) not yet in `index` to `keys`, template by
/// template in order of first appearance: its gold arcs' ([`Support::Gold`]) or all its
/// arcs'.
fn grow_keys(
    templates: &TemplateSet,
    support: Support,
    c: &CodedSentence,
    s: &ParseSentence,
    i: usize,
    index: &mut [KeyMap],
    keys: &mut [Vec<u64>],
) -> Result<()> {
    let nt = templates.templates.len();
    let n = s.tokens.len();
    let mut add = |t: usize, h: usize, d: usize| {
        for_each_key(templates, t, c, h, d, |k| {
            index[t].entry(k).or_insert_with(|| {
                keys[t].push(k);
                (keys[t].len() - 1) as u32
            });
        })
    };
    match support {
        Support::Gold => {
            let heads = s
                .heads
                .as_ref()
                .ok_or_else(|| Error::data(format!("training sentence {i} has no gold heads")))?;
            for (m, &h) in heads.iter().enumerate() {
                for t in 0..nt {
                    add(t, h, m + 1);
                }
            }
        }
        Support::All => {
            for h in 0..=n {
                for d in 1..=n {
                    if h != d {
                        for t in 0..nt {
                            add(t, h, d);
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// How a featurizer is stored (model files): the template file's text, the attribute
/// alphabets and the keys of each template in index order.
#[derive(Serialize, Deserialize)]
struct FeaturizerRepr {
    templates: String,
    support: Support,
    attributes: AttributeCodes,
    keys: Vec<Vec<u64>>,
}

impl TryFrom<FeaturizerRepr> for ArcFeaturizer {
    type Error = String;
    fn try_from(r: FeaturizerRepr) -> std::result::Result<Self, String> {
        let set = TemplateSet::parse(&r.templates, std::path::Path::new("templates"))
            .map_err(|e| e.to_string())?;
        ArcFeaturizer::from_parts(set, r.support, r.attributes, r.keys)
    }
}

impl From<ArcFeaturizer> for FeaturizerRepr {
    fn from(f: ArcFeaturizer) -> Self {
        FeaturizerRepr {
            templates: f.templates.to_text(),
            support: f.support,
            attributes: f.codes,
            keys: f.keys,
        }
    }
}

/// The arc featurizer of a template set: attribute codes and one key alphabet per template,
/// grown on training sentences ([`ArcFeaturizer::fit`]) and frozen afterwards. Serialized as
/// the template text, the attribute alphabets and the keys (the lookup tables are rebuilt).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "FeaturizerRepr", into = "FeaturizerRepr")]
pub struct ArcFeaturizer {
    pub templates: TemplateSet,
    pub support: Support,
    codes: AttributeCodes,
    /// Per template, the keys in index order.
    keys: Vec<Vec<u64>>,
    index: Vec<KeyMap>,
    layout: GroupLayout,
}

impl ArcFeaturizer {
    /// Grows the attribute codes and the key alphabets on `train` (gold heads required for
    /// [`Support::Gold`]); keys in order of first appearance, sentence by sentence.
    pub fn fit(templates: TemplateSet, support: Support, train: &[ParseSentence]) -> Result<Self> {
        let nt = templates.templates.len();
        let mut codes = AttributeCodes::default();
        let mut keys: Vec<Vec<u64>> = vec![Vec::new(); nt];
        let mut index: Vec<KeyMap> = vec![KeyMap::default(); nt];
        for (i, s) in train.iter().enumerate() {
            let c = codes.code_growing(&templates, s);
            grow_keys(&templates, support, &c, s, i, &mut index, &mut keys)?;
        }
        Ok(ArcFeaturizer::assemble(
            templates, support, codes, keys, index,
        ))
    }

    /// The attribute values of `train` under `templates`, each attribute's in order of
    /// first appearance (a part of the training sentences: [`ArcFeaturizer::merge_values`]
    /// merges the parts' in their order into the alphabets [`ArcFeaturizer::fit`] grows).
    pub(crate) fn values_of(templates: &TemplateSet, train: &[ParseSentence]) -> Vec<Vec<String>> {
        let mut codes = AttributeCodes::default();
        codes
            .values
            .resize_with(templates.attributes.len(), HashMap::new);
        for s in train {
            codes.code_growing(templates, s);
        }
        codes.into()
    }

    /// `later`'s values appended to `values`' where not there already, attribute by
    /// attribute (the values of two parts, in their order).
    pub(crate) fn merge_values(values: &mut Vec<Vec<String>>, later: Vec<Vec<String>>) {
        if values.len() < later.len() {
            values.resize_with(later.len(), Vec::new);
        }
        for (v, l) in values.iter_mut().zip(later) {
            let seen: std::collections::HashSet<String> = v.iter().cloned().collect();
            v.extend(l.into_iter().filter(|x| !seen.contains(x)));
        }
    }

    /// The feature keys of `train` (a part of the training sentences) under the alphabets
    /// of all parts' `values`: per template, in order of first appearance (merged in the
    /// parts' order by [`ArcFeaturizer::merge_keys`]).
    pub(crate) fn keys_of(
        templates: &TemplateSet,
        support: Support,
        values: &[Vec<String>],
        train: &[ParseSentence],
    ) -> Result<Vec<Vec<u64>>> {
        let nt = templates.templates.len();
        let codes = AttributeCodes::from(values.to_vec());
        let mut keys: Vec<Vec<u64>> = vec![Vec::new(); nt];
        let mut index: Vec<KeyMap> = vec![KeyMap::default(); nt];
        for (i, s) in train.iter().enumerate() {
            let c = codes.code_frozen(templates, s);
            grow_keys(templates, support, &c, s, i, &mut index, &mut keys)?;
        }
        Ok(keys)
    }

    /// `later`'s keys appended to `keys`' where not there already, template by template.
    pub(crate) fn merge_keys(keys: &mut Vec<Vec<u64>>, later: Vec<Vec<u64>>) {
        if keys.len() < later.len() {
            keys.resize_with(later.len(), Vec::new);
        }
        for (k, l) in keys.iter_mut().zip(later) {
            let seen: std::collections::HashSet<u64> = k.iter().copied().collect();
            k.extend(l.into_iter().filter(|x| !seen.contains(x)));
        }
    }

    /// The featurizer of all the parts from their merged values and keys (the one
    /// [`ArcFeaturizer::fit`] grows on all the sentences in order).
    pub(crate) fn of_parts(
        templates: TemplateSet,
        support: Support,
        values: Vec<Vec<String>>,
        keys: Vec<Vec<u64>>,
    ) -> Result<Self> {
        ArcFeaturizer::from_parts(templates, support, AttributeCodes::from(values), keys)
            .map_err(|e| Error::data(format!("the parts' features: {e}")))
    }

    /// The featurizer from consistent parts (the key lists and their lookup tables agree).
    fn assemble(
        templates: TemplateSet,
        support: Support,
        codes: AttributeCodes,
        keys: Vec<Vec<u64>>,
        index: Vec<KeyMap>,
    ) -> Self {
        let layout = GroupLayout::new(keys.iter().map(Vec::len));
        ArcFeaturizer {
            templates,
            support,
            codes,
            keys,
            index,
            layout,
        }
    }

    /// A featurizer from its stored parts (a model file); checks that they agree.
    pub(crate) fn from_parts(
        templates: TemplateSet,
        support: Support,
        codes: AttributeCodes,
        keys: Vec<Vec<u64>>,
    ) -> std::result::Result<Self, String> {
        if keys.len() != templates.templates.len() {
            return Err(format!(
                "{} key lists for {} templates",
                keys.len(),
                templates.templates.len()
            ));
        }
        if codes.values.len() > templates.attributes.len() {
            return Err(format!(
                "{} attribute alphabets for {} attributes",
                codes.values.len(),
                templates.attributes.len()
            ));
        }
        let mut index = Vec::with_capacity(keys.len());
        for (t, ks) in keys.iter().enumerate() {
            let mut m = KeyMap::default();
            for (j, &k) in ks.iter().enumerate() {
                if m.insert(k, j as u32).is_some() {
                    return Err(format!("template {t} repeats a feature key"));
                }
            }
            index.push(m);
        }
        Ok(ArcFeaturizer::assemble(
            templates, support, codes, keys, index,
        ))
    }

    /// The attribute alphabets (stored in model files).
    #[cfg(test)]
    pub(crate) fn codes(&self) -> &AttributeCodes {
        &self.codes
    }

    /// Per template, its feature keys in index order (stored in model files).
    #[cfg(test)]
    pub(crate) fn keys(&self) -> &[Vec<u64>] {
        &self.keys
    }

    /// One group per template.
    pub(crate) fn layout(&self) -> &GroupLayout {
        &self.layout
    }

    /// One regularized group per template, named by its text.
    pub(crate) fn groups(&self) -> Vec<ExplicitGroup> {
        self.templates
            .templates
            .iter()
            .zip(&self.keys)
            .map(|(t, k)| ExplicitGroup {
                name: t.name.clone(),
                len: k.len(),
                role: GroupRole::Regularized,
            })
            .collect()
    }

    /// Codes a sentence with the frozen alphabets.
    pub(crate) fn code(&self, s: &ParseSentence) -> CodedSentence {
        self.codes.code_frozen(&self.templates, s)
    }

    /// Appends the features of arc `h -> d` (global indices, sorted, a count per feature) to
    /// `out`.
    pub(crate) fn arc_features(
        &self,
        c: &CodedSentence,
        h: usize,
        d: usize,
        out: &mut Vec<(usize, f64)>,
    ) {
        for t in 0..self.keys.len() {
            let start = out.len();
            let offset = self.layout.range(t).start;
            let index = &self.index[t];
            for_each_key(&self.templates, t, c, h, d, |k| {
                if let Some(&j) = index.get(&k) {
                    out.push((offset + j as usize, 1.0));
                }
            });
            if out.len() - start > 1 {
                // In-between templates: sort and merge repeats into counts.
                let block = &mut out[start..];
                block.sort_unstable_by_key(|&(j, _)| j);
                let mut w = start;
                for r in start..out.len() {
                    if w > start && out[w - 1].0 == out[r].0 {
                        out[w - 1].1 += 1.0;
                    } else {
                        out[w] = out[r];
                        w += 1;
                    }
                }
                out.truncate(w);
            }
        }
    }

    /// The features of every part of `s`'s arc matrix: `(n + 1)^2` rows, part `h * (n + 1) +
    /// d`; rows with `d = 0` or `h = d` are empty.
    pub(crate) fn sentence_rows(&self, s: &ParseSentence) -> SparseRows {
        let c = self.code(s);
        let n1 = s.tokens.len() + 1;
        let mut rows = SparseRows::new();
        let mut buf = Vec::new();
        for h in 0..n1 {
            for d in 0..n1 {
                buf.clear();
                if d != 0 && d != h {
                    self.arc_features(&c, h, d, &mut buf);
                }
                rows.push_entries(&buf);
            }
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ParseSentence, ParseToken};
    use super::*;
    use std::path::Path;

    fn tok(form: &str, upos: &str, space: bool) -> ParseToken {
        ParseToken {
            form: form.into(),
            lemma: form.to_lowercase(),
            upos: upos.into(),
            xpos: upos.into(),
            feats: format!("Case={form}|Num=Sg"),
            space_after: space,
        }
    }

    fn sentence() -> ParseSentence {
        ParseSentence {
            tokens: vec![
                tok("A", "X", false),
                tok("b", "Y", true),
                tok("C", "X", true),
            ],
            heads: Some(vec![2, 0, 2]),
            deprels: None,
        }
    }

    /// The string of a feature, built the obvious way: the slow twin of the key path.
    fn feature_strings(
        set: &TemplateSet,
        s: &ParseSentence,
        t: usize,
        h: usize,
        d: usize,
    ) -> Vec<String> {
        let value = |k: isize, a: &Attribute| -> String {
            if k < 0 {
                "<s>".into()
            } else if k as usize > s.tokens.len() {
                "</s>".into()
            } else if k == 0 {
                "<root>".into()
            } else {
                let mut buf = String::new();
                attribute_value(a, s, k as usize - 1, &mut buf).to_string()
            }
        };
        let tpl = &set.templates[t];
        let one = |b: usize| -> String {
            tpl.atoms
                .iter()
                .map(|a| match a {
                    Atom::Direction => {
                        if d > h {
                            "R".into()
                        } else {
                            "L".into()
                        }
                    }
                    Atom::Distance => distance_bin(h.abs_diff(d)).to_string(),
                    Atom::Token { anchor, attr } => {
                        let k = match anchor {
                            Anchor::Head(o) => h as isize + *o as isize,
                            Anchor::Dep(o) => d as isize + *o as isize,
                            Anchor::Between => b as isize,
                        };
                        value(k, &set.attributes[*attr])
                    }
                })
                .collect::<Vec<String>>()
                .join("\u{1}")
        };
        if tpl.between {
            (h.min(d) + 1..h.max(d)).map(one).collect()
        } else {
            vec![one(0)]
        }
    }

    /// Two arcs share a feature of a template exactly when their feature strings agree
    /// (keys are equal iff strings are equal, on every pair of arcs of two sentences).
    #[test]
    fn keys_agree_with_feature_strings() {
        let set = TemplateSet::default_set();
        let s1 = sentence();
        let mut s2 = sentence();
        s2.tokens[1].form = "A".into();
        s2.tokens.push(tok("b", "Y", false));
        s2.heads = Some(vec![0, 1, 2, 3]);
        let mut codes = AttributeCodes::default();
        let c1 = codes.code_growing(&set, &s1);
        let c2 = codes.code_growing(&set, &s2);
        let arcs = |n: usize| {
            (0..=n).flat_map(move |h| (1..=n).filter(move |&d| d != h).map(move |d| (h, d)))
        };
        let mut compared = 0;
        for t in 0..set.templates.len() {
            for (s, c) in [(&s1, &c1), (&s2, &c2)] {
                for (h, d) in arcs(s.tokens.len()) {
                    let mut keys = Vec::new();
                    for_each_key(&set, t, c, h, d, |k| keys.push(k));
                    let strings = feature_strings(&set, s, t, h, d);
                    assert_eq!(keys.len(), strings.len());
                    for (s_b, c_b) in [(&s1, &c1), (&s2, &c2)] {
                        for (h2, d2) in arcs(s_b.tokens.len()) {
                            let mut keys2 = Vec::new();
                            for_each_key(&set, t, c_b, h2, d2, |k| keys2.push(k));
                            let strings2 = feature_strings(&set, s_b, t, h2, d2);
                            for (k, st) in keys.iter().zip(&strings) {
                                for (k2, st2) in keys2.iter().zip(&strings2) {
                                    assert_eq!(k == k2, st == st2, "template {t}: {st:?} {st2:?}");
                                    compared += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(compared > 10_000);
    }

    #[test]
    fn gold_support_indexes_gold_arcs_and_drops_the_rest() {
        let set = TemplateSet::parse(
            "h.form d.form\nh.upos b.upos d.upos\nbias\n",
            Path::new("t"),
        )
        .unwrap();
        let s = sentence();
        let f = ArcFeaturizer::fit(set.clone(), Support::Gold, std::slice::from_ref(&s)).unwrap();
        // Gold arcs 2->1, 0->2, 2->3: three word pairs, one in-between tag triple (0->2), a bias.
        assert_eq!(f.layout().len_of(0), 3);
        assert_eq!(f.layout().len_of(1), 1);
        assert_eq!(f.layout().len_of(2), 1);
        let rows = f.sentence_rows(&s);
        assert_eq!(rows.n_rows(), 16);
        assert_eq!(rows.row(2 * 4 + 1).len(), 2); // 2 -> 1: pair + bias
        assert_eq!(rows.row(4 + 3).len(), 1); // 1 -> 3: bias only
        assert!(rows.row(0).is_empty() && rows.row(5).is_empty());
        let all = ArcFeaturizer::fit(set, Support::All, std::slice::from_ref(&s)).unwrap();
        assert_eq!(all.layout().len_of(0), 9);
        // 0 -> 3 and 3 -> 1 have one token in between, 1 -> 3 and 3 -> 1 share the tag X..X.
        let rows = all.sentence_rows(&s);
        assert_eq!(rows.row(3 * 4 + 1).len(), 3);
        let back = ArcFeaturizer::from_parts(
            all.templates.clone(),
            all.support,
            all.codes().clone(),
            all.keys().to_vec(),
        )
        .unwrap();
        assert_eq!(back.sentence_rows(&s), rows);
        let json = serde_json::to_string(all.codes()).unwrap();
        let codes: AttributeCodes = serde_json::from_str(&json).unwrap();
        assert_eq!(&codes, all.codes());
    }

    #[test]
    fn in_between_features_count_repeats() {
        let set = TemplateSet::parse("h.upos b.upos d.upos", Path::new("t")).unwrap();
        let mut s = sentence();
        s.tokens = vec![
            tok("a", "X", true),
            tok("b", "Y", true),
            tok("c", "Y", true),
            tok("d", "X", true),
        ];
        s.heads = Some(vec![0, 1, 1, 1]);
        let f = ArcFeaturizer::fit(set, Support::All, std::slice::from_ref(&s)).unwrap();
        let c = f.code(&s);
        let mut out = Vec::new();
        f.arc_features(&c, 1, 4, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].1, 2.0);
    }
}

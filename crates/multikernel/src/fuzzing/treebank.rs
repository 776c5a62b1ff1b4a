//! The parsing inputs: CoNLL-U treebanks and arc template files.

use crate::data::conllu::{parse_conllu, write_sentence, Heads};
use crate::task::parse::{ArcFeaturizer, ParseSentence, Support, TemplateSet};
use std::path::Path;

/// CoNLL-U bytes: parse with heads required and optional; a parsed treebank writes back to
/// text that parses to the same tokens; with heads, its sentences are trees the featurizer
/// indexes without trouble.
pub fn conllu(data: &[u8]) {
    let path = Path::new("fuzz.conllu");
    let _ = parse_conllu(data, path, Heads::Optional);
    let Ok(sentences) = parse_conllu(data, path, Heads::Required) else {
        return;
    };
    let mut out = String::new();
    for s in &sentences {
        let heads = s.heads().expect("required heads are present");
        assert!(
            crate::task::tree::is_tree(&heads),
            "{heads:?} is not a tree"
        );
        write_sentence(s, &heads, Some(&s.deprels()), &mut out);
    }
    let again = parse_conllu(out.as_bytes(), path, Heads::Required).expect("written text parses");
    assert_eq!(again.len(), sentences.len());
    for (a, b) in again.iter().zip(&sentences) {
        assert_eq!(a.tokens, b.tokens);
    }
    let parse: Vec<ParseSentence> = sentences.iter().take(4).map(ParseSentence::from).collect();
    if parse.iter().all(|s| s.len() <= 40) {
        let f = ArcFeaturizer::fit(TemplateSet::default_set(), Support::Gold, &parse)
            .expect("sentences with heads index");
        for s in &parse {
            let rows = f.sentence_rows(s);
            assert_eq!(rows.n_rows(), (s.len() + 1) * (s.len() + 1));
        }
    }
}

/// Template files: parse; a parsed set prints as a file that parses back to an equal set.
pub fn arc_templates(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(set) = TemplateSet::parse(text, Path::new("fuzz.templates")) {
        let printed = set.to_text();
        let again = TemplateSet::parse(&printed, Path::new("printed"))
            .unwrap_or_else(|e| panic!("printed set does not parse: {e}\n{printed}"));
        assert_eq!(again, set);
    }
}

/// The messages of a parser trained over parts of its sentences (attribute values, feature
/// keys, a featurizer, gold arcs: `estimator::parser::parts`): what reads writes back to
/// bytes that read to the same value; values and keys merge with themselves and build a
/// featurizer or an error; a featurizer starts the loop's point; gold arcs merge, never a
/// panic.
pub fn parser_parts(data: &[u8]) {
    use crate::estimator::parser::parts::{ParseFeaturizer, PartArcKeys, PartArcs, PartValues};
    use crate::estimator::parts::PointReplica;
    if let Ok(v) = PartValues::from_bytes(data) {
        let bytes = v.to_bytes().expect("values serialize");
        assert_eq!(
            PartValues::from_bytes(&bytes).expect("their own bytes read"),
            v
        );
        let merged = v.clone().merge(v.clone());
        let keys = PartArcKeys::from_bytes(br#"{"arcs":[],"labels":[]}"#).expect("no keys");
        if let Ok(f) = ParseFeaturizer::of_parts(None, false, merged, keys) {
            let back = ParseFeaturizer::from_bytes(&f.to_bytes().expect("serializes"))
                .expect("a built featurizer reads");
            assert_eq!(back, f);
        }
    }
    if let Ok(k) = PartArcKeys::from_bytes(data) {
        let bytes = k.to_bytes().expect("keys serialize");
        assert_eq!(
            PartArcKeys::from_bytes(&bytes).expect("their own bytes read"),
            k
        );
        let _ = k.clone().merge(k);
    }
    if let Ok(f) = ParseFeaturizer::from_bytes(data) {
        let r = PointReplica::new(&f.layout(), 0.1, None).expect("a replica of all weights");
        assert_eq!(r.at().len(), f.dim());
        let bytes = f.to_bytes().expect("a featurizer serializes");
        assert_eq!(ParseFeaturizer::from_bytes(&bytes).expect("reads back"), f);
    }
    if let Ok(a) = PartArcs::from_bytes(data) {
        let bytes = a.to_bytes().expect("arcs serialize");
        assert_eq!(
            PartArcs::from_bytes(&bytes).expect("their own bytes read"),
            a
        );
        let _ = a.clone().merge(a);
    }
}

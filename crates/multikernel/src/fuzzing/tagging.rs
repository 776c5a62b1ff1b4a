//! Column files and CRF++ template files.

use crate::data::columns::{parse_columns, write_columns, write_with_predictions, ColumnSentence};
use crate::task::tagging::{TagFeaturizer, TaggingTask, TemplateFile};
use std::path::Path;

/// Column text: a parsed file writes back to the same sentences, and a tagging task over
/// its first sentences (labels in the last column, the first column as the only template)
/// builds and decodes without panicking.
pub fn columns(data: &[u8]) {
    let Ok(d) = parse_columns(data, Path::new("fuzz.txt")) else {
        return;
    };
    assert!(d.sentences.iter().all(|s| !s.is_empty()));
    assert!(d
        .sentences
        .iter()
        .flat_map(|s| &s.tokens)
        .all(|t| t.len() == d.n_columns && t.iter().all(|c| !c.is_empty())));
    let mut out = Vec::new();
    write_columns(&mut out, &d.sentences).expect("writing to memory");
    let again = parse_columns(&out, Path::new("written")).expect("written columns parse");
    assert_eq!(again.n_columns, d.n_columns);
    assert_eq!(again.sentences.len(), d.sentences.len());
    for (a, b) in again.sentences.iter().zip(&d.sentences) {
        assert_eq!(a.tokens, b.tokens);
    }
    let pred: Vec<Vec<Vec<u8>>> = d
        .sentences
        .iter()
        .map(|s| s.tokens.iter().map(|t| t[0].clone()).collect())
        .collect();
    let mut out = Vec::new();
    write_with_predictions(&mut out, &d.sentences, &pred).expect("lengths match");
    // The written columns are the input's bytes: reading them back gives the same tokens
    // with the prediction as one more column.
    let back = parse_columns(&out, Path::new("predicted")).expect("predicted columns parse");
    for (a, b) in back.sentences.iter().zip(&d.sentences) {
        for (ta, tb) in a.tokens.iter().zip(&b.tokens) {
            assert_eq!(&ta[..tb.len()], &tb[..]);
            assert_eq!(ta[tb.len()], tb[0]);
        }
    }
    let train: Vec<_> = d.sentences.iter().take(8).cloned().collect();
    let tpl = TemplateFile::parse(b"U0:%x[0,0]/%x[-1,0]\nB\n", Path::new("t")).expect("valid");
    if let Ok(f) = TagFeaturizer::fit(tpl, &train, 1) {
        let task = TaggingTask::new(&f, &train).expect("training sentences index");
        // Labels in any encoding round-trip through the model file's JSON.
        let json = serde_json::to_string(&f).expect("a featurizer serializes");
        let back: TagFeaturizer = serde_json::from_str(&json).expect("and reads back");
        assert_eq!(back, f);
        assert_eq!(
            crate::task::structured::StructuredTask::n_examples(&task),
            train.len()
        );
    }
}

/// CRF++ template text: a parsed file prints back to itself, every template expands on a
/// short sentence (rows outside it read boundary tokens) without panicking, and small files
/// (bigram templates with macros included) train a featurizer whose chain task is consistent.
pub fn crf_templates(data: &[u8]) {
    let Ok(f) = TemplateFile::parse(data, Path::new("fuzz.templates")) else {
        return;
    };
    let printed = f.to_text();
    let again = TemplateFile::parse(printed.as_bytes(), Path::new("printed"))
        .unwrap_or_else(|e| panic!("printed templates do not parse: {e}\n{printed}"));
    assert_eq!(again.templates, f.templates);
    let width = f
        .templates
        .iter()
        .map(|t| t.columns_needed())
        .max()
        .unwrap_or(0)
        .min(64);
    if f.check_columns(width).is_ok() {
        let tokens: Vec<Vec<Vec<u8>>> = (0..3)
            .map(|i| {
                (0..width)
                    .map(|c| format!("t{i}c{c}").into_bytes())
                    .collect()
            })
            .collect();
        let mut buf = Vec::new();
        for t in &f.templates {
            for pos in 0..3 {
                t.expand(3, pos, |i, c| &tokens[i][c], &mut buf);
                assert!(buf.starts_with(b"U") || buf.starts_with(b"B"));
            }
        }
        if width <= 8 && f.templates.len() <= 16 {
            train_with(f, width.max(1));
        }
    }
}

/// Templates of any kind (bigram templates with macros included) index a tiny training set
/// and give a chain task whose parts, decoding and marginals are consistent.
fn train_with(f: TemplateFile, width: usize) {
    use crate::task::structured::StructuredTask;
    let sentences: Vec<ColumnSentence> = [3usize, 1, 4]
        .iter()
        .enumerate()
        .map(|(k, &n)| ColumnSentence {
            tokens: (0..n)
                .map(|i| {
                    let mut t: Vec<Vec<u8>> = (0..width)
                        .map(|c| format!("w{}c{c}", (i + k) % 3).into_bytes())
                        .collect();
                    t.push(if (i + k) % 2 == 0 {
                        b"A".to_vec()
                    } else {
                        b"B".to_vec()
                    });
                    t
                })
                .collect(),
            line: 1 + 10 * k,
        })
        .collect();
    let feat = TagFeaturizer::fit(f, &sentences, 1).expect("templates that fit the columns train");
    let json = serde_json::to_string(&feat).expect("a featurizer serializes");
    let back: TagFeaturizer = serde_json::from_str(&json).expect("and reads back");
    assert_eq!(back, feat);
    assert!(feat.validate().is_ok());
    let task = TaggingTask::new(&feat, &sentences).expect("training sentences index");
    let l = feat.n_labels();
    for (i, s) in sentences.iter().enumerate() {
        let n = s.len();
        let plain = if feat.has_bigram() { l * l } else { 0 };
        let pairs = if feat.has_bigram_macros() {
            (n - 1) * l * l
        } else {
            0
        };
        assert_eq!(task.n_parts(i), plain + pairs + n * l);
        let scores: Vec<f64> = (0..task.n_parts(i)).map(|k| (k % 7) as f64 * 0.3).collect();
        let y = task.decode(i, &scores);
        assert_eq!(y.len(), n);
        assert!(task
            .joint_feature(i, &y)
            .iter()
            .all(|(k, _)| k < task.n_parts(i)));
        let m = task.marginals(i, &scores).expect("a chain has marginals");
        assert_eq!(m.expected.len(), task.n_parts(i));
        for k in 0..n {
            let row = &m.expected[plain + pairs + k * l..plain + pairs + (k + 1) * l];
            assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        }
    }
}

/// The messages of a tagger trained over parts of its sentences (expansion counts, feature
/// keys, a featurizer: `estimator::tagger::parts`): what reads writes back to itself,
/// counts merge and build a featurizer (or an error), and a featurizer starts the loop's
/// point, never a panic.
pub fn tagger_parts(data: &[u8]) {
    use crate::estimator::parts::{LoopStep, PointReplica};
    use crate::estimator::tagger::parts::{PartFeaturizer, PartKeys, TagCounts};
    if let Ok(c) = TagCounts::from_bytes(data) {
        let bytes = c.to_bytes().expect("counts serialize");
        assert_eq!(
            TagCounts::from_bytes(&bytes).expect("their own bytes read"),
            c
        );
        if let Ok(f) = c.clone().merge(c).and_then(|m| m.part_featurizer(1)) {
            let bytes = f.to_bytes().expect("a featurizer serializes");
            let back = PartFeaturizer::from_bytes(&bytes).expect("a built featurizer reads");
            assert_eq!(back, f);
            let mut r =
                PointReplica::new(&f.layout(), 0.5, None).expect("a replica of all weights");
            assert!(
                r.apply(LoopStep::default()).is_err(),
                "a step without multipliers"
            );
            assert_eq!(r.at().len(), f.dim());
        }
    }
    if let Ok(k) = PartKeys::from_bytes(data) {
        let bytes = k.to_bytes().expect("keys serialize");
        assert_eq!(
            PartKeys::from_bytes(&bytes).expect("their own bytes read"),
            k
        );
        let _ = k.clone().merge(k);
    }
    if let Ok(f) = PartFeaturizer::from_bytes(data) {
        let r = PointReplica::new(&f.layout(), 0.1, None).expect("a replica of all weights");
        assert_eq!(r.at().len(), f.dim());
    }
}

use super::*;
use crate::data::columns::parse_columns;
use crate::params::ScaledVec;
use crate::task::online::{Gradient, OnlineTask};
use crate::task::structured::testing::check_example;
use crate::task::structured::{explicit_feature, explicit_scores, loss_grad, StructuredOnline};
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::path::Path;

const DATA: &str = "He PRP B-NP\nreckons VBZ B-VP\nthe DT B-NP\n\nHe VBZ B-VP\nthe DT O\n";

fn sentences() -> Vec<ColumnSentence> {
    parse_columns(DATA.as_bytes(), Path::new("d"))
        .unwrap()
        .sentences
}

fn featurizer(templates: &str) -> TagFeaturizer {
    let t = TemplateFile::parse(templates.as_bytes(), Path::new("tpl")).unwrap();
    TagFeaturizer::fit(t, &sentences(), 1).unwrap()
}

const TEMPLATES: &str = "U00:%x[0,0]\nU01:%x[-1,0]/%x[0,1]\nU02:%x[1,1]\nB\n";

/// CRF++ bigram templates with macros beside the plain one.
const MACRO_TEMPLATES: &str = "U00:%x[0,0]\nB\nB01:%x[0,1]\nB02:%x[-1,0]/%x[0,0]\n";

fn all_sequences(n: usize, l: usize) -> Vec<Vec<usize>> {
    (0..l.pow(n as u32))
        .map(|code| (0..n).map(|k| (code / l.pow(k as u32)) % l).collect())
        .collect()
}

/// Decoders, marginals and both losses against enumeration, with and without the bigram
/// template; gradients against finite differences (task::structured::testing).
#[test]
fn tagging_task_matches_enumeration() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    for tpl in [
        TEMPLATES,
        "U00:%x[0,0]\nU02:%x[1,1]\n",
        MACRO_TEMPLATES,
        "U00:%x[0,0]\nB01:%x[0,1]\n",
    ] {
        let f = featurizer(tpl);
        let t = TaggingTask::new(&f, &sentences()).unwrap();
        assert_eq!(f.labels, [&b"B-NP"[..], b"B-VP", b"O"]);
        for _ in 0..20 {
            for i in 0..2 {
                let s: Vec<f64> = (0..t.n_parts(i))
                    .map(|_| rng.gen_range(-1.5..1.5))
                    .collect();
                let n = t.gold(i).len();
                check_example(&t, i, &s, &all_sequences(n, 3));
            }
        }
    }
}

/// The featurizer against a naive twin: every part's feature vector (mapped to parameter
/// space) holds, for each template, the index of its expansion string with the part's label,
/// found through a string dictionary built independently.
#[test]
fn conjoined_parts_hold_the_template_expansions() {
    let f = featurizer(TEMPLATES);
    let t = TaggingTask::new(&f, &sentences()).unwrap();
    let sents = sentences();
    // The naive dictionary: (template, expansion string) -> index in order of first sight
    // per template, then sorted like the featurizer (by key) to compare sets per template.
    let unigrams: Vec<&Template> = f.templates.unigrams().collect();
    let mut dict: Vec<HashMap<Vec<u8>, ()>> = vec![HashMap::new(); unigrams.len()];
    let mut buf = Vec::new();
    for s in &sents {
        for pos in 0..s.len() {
            for (u, tp) in unigrams.iter().enumerate() {
                tp.expand(s.len(), pos, |i, c| &s.tokens[i][c], &mut buf);
                dict[u].insert(buf.clone(), ());
            }
        }
    }
    assert_eq!(
        f.features_per_template(),
        dict.iter().map(HashMap::len).collect::<Vec<_>>()
    );
    let layout = f.layout();
    let l = f.n_labels();
    assert_eq!(layout.n_groups(), 4);
    assert_eq!(layout.len_of(0), l * l);
    for (i, s) in sents.iter().enumerate() {
        let nt = l * l;
        for pos in 0..s.len() {
            for y in 0..l {
                let part = nt + pos * l + y;
                let phi = explicit_feature(&t, i, &SparseVector::unit(part, 1.0));
                assert_eq!(phi.len(), unigrams.len(), "one feature per template");
                for (u, (j, v)) in phi.iter().enumerate() {
                    assert_eq!(v, 1.0);
                    let (g, k) = layout.locate(j).unwrap();
                    assert_eq!(g, f.unigram_group(u));
                    assert_eq!(k % l, y, "the label slot");
                }
            }
        }
        // A label-pair part is its own parameter in group 0.
        let phi = explicit_feature(&t, i, &SparseVector::unit(l + 2, 2.0));
        assert_eq!(phi.entries(), &[(l + 2, 2.0)]);
    }
    // Part scores from dense weights agree with the mapped feature vectors.
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let w: Vec<f64> = (0..layout.total())
        .map(|_| rng.gen_range(-1.0..1.0))
        .collect();
    for i in 0..2 {
        let mut s = Vec::new();
        explicit_scores(&t, i, &w, &mut s).unwrap();
        assert_eq!(s.len(), t.n_parts(i));
        for (r, &v) in s.iter().enumerate() {
            let phi = explicit_feature(&t, i, &SparseVector::unit(r, 1.0));
            assert!((phi.dot(&w) - v).abs() < 1e-12);
        }
    }
}

/// The online adapter's scores and parameter gradient agree with the part-space loss mapped
/// through the explicit features (the chain rule), for both losses.
#[test]
fn adapter_maps_gradients_through_conjoined_parts() {
    let f = featurizer(TEMPLATES);
    let t = TaggingTask::new(&f, &sentences()).unwrap();
    let layout = f.layout();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let blocks: Vec<ScaledVec> = (0..layout.n_groups())
        .map(|g| {
            let mut b = ScaledVec::zeros(layout.len_of(g), false);
            for k in 0..b.len() {
                b.add(k, rng.gen_range(-1.0..1.0));
            }
            b.scale_by(0.5);
            b
        })
        .collect();
    let w: Vec<f64> = (0..layout.n_groups())
        .flat_map(|g| {
            (0..layout.len_of(g))
                .map(|k| blocks[g].get(k))
                .collect::<Vec<_>>()
        })
        .collect();
    for loss in [StructLoss::Hinge, StructLoss::Crf] {
        let a = StructuredOnline::new(&t, loss).unwrap();
        for i in 0..2 {
            let mut g = Gradient {
                scores: Vec::new(),
                explicit: Vec::new(),
                ..Default::default()
            };
            let v = a.loss_grad(i, &[], &blocks, &mut g);
            let mut s = Vec::new();
            explicit_scores(&t, i, &w, &mut s).unwrap();
            let mut pg = vec![0.0; s.len()];
            let want = loss_grad(&t, loss, i, &s, &mut pg);
            assert!((v - want).abs() < 1e-10, "{loss}: {v} vs {want}");
            let mapped = explicit_feature(
                &t,
                i,
                &SparseVector::from_pairs(pg.iter().copied().enumerate().collect()),
            );
            let mut dense = vec![0.0; layout.total()];
            for &(grp, k, d) in &g.explicit {
                dense[layout.global(grp, k)] += d;
            }
            for (j, d) in dense.iter().enumerate() {
                assert!((d - mapped.get(j)).abs() < 1e-10, "{loss} parameter {j}");
            }
        }
    }
}

#[test]
fn bad_input_is_refused_clearly() {
    let t = TemplateFile::parse(b"U00:%x[0,2]\n", Path::new("tpl")).unwrap();
    let e = TagFeaturizer::fit(t, &sentences(), 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("tpl:1") && e.contains("column 2"), "{e}");
    let f = featurizer(TEMPLATES);
    let other = parse_columns(b"He PRP I-NP\n", Path::new("x"))
        .unwrap()
        .sentences;
    let e = TaggingTask::new(&f, &other).unwrap_err().to_string();
    assert!(e.contains("not seen in training"), "{e}");
    let one = parse_columns(b"He NP\nshe NP\n", Path::new("x"))
        .unwrap()
        .sentences;
    let t = TemplateFile::parse(b"U00:%x[0,0]\n", Path::new("tpl")).unwrap();
    let e = TagFeaturizer::fit(t, &one, 1).unwrap_err().to_string();
    assert!(e.contains("at least 2 labels"), "{e}");
    assert!(f.validate().is_ok());
    let short = parse_columns(b"He\n", Path::new("x")).unwrap().sentences;
    assert!(f.check_sentences(&short).is_err());
}

#[test]
fn min_count_drops_rare_expansions_and_keys_are_stable() {
    let t = TemplateFile::parse(b"U00:%x[0,0]\n", Path::new("tpl")).unwrap();
    let f = TagFeaturizer::fit(t, &sentences(), 2).unwrap();
    // Only "He" and "the" occur twice.
    assert_eq!(f.features_per_template(), [2]);
    // Pinned (computed by an independent Python twin of FNV-1a + splitmix64) so that saved
    // models keep reading the same features.
    assert_eq!(expansion_key(b"U00:He"), 0x3253_c7b1_721a_37ec);
    assert_eq!(expansion_key(b""), 0xf52a_15e9_a9b5_e89b);
    assert_ne!(expansion_key(b"U00:a"), expansion_key(b"U01:a"));
}

/// A count cutoff that empties some templates names them ([`TagFeaturizer::empty_templates`]);
/// one that empties every template with observations is refused before any training, with
/// the largest count that keeps something.
#[test]
fn min_count_that_empties_templates_is_named_or_refused() {
    let tpl = "U00:%x[0,0]\nU01:%x[0,1]\nU02:%x[-1,0]/%x[1,0]\nB01:%x[0,1]\nB\n";
    let parse = || TemplateFile::parse(tpl.as_bytes(), Path::new("tpl")).unwrap();
    let f = TagFeaturizer::fit(parse(), &sentences(), 2).unwrap();
    let empty: Vec<&str> = f
        .empty_templates()
        .iter()
        .map(|t| t.text.as_str())
        .collect();
    assert_eq!(empty, ["U02:%x[-1,0]/%x[1,0]"]);
    assert!(featurizer(tpl).empty_templates().is_empty());
    // "He", "the", "VBZ" and "DT" are seen twice, nothing three times.
    let e = TagFeaturizer::fit(parse(), &sentences(), 3).unwrap_err();
    assert_eq!(
        e.to_string(),
        "min_count = 3: at most 2, the count of the most frequent template expansion in \
         training: 3 keeps no expansion of any template (U00:%x[0,0], U01:%x[0,1], \
         U02:%x[-1,0]/%x[1,0], B01:%x[0,1]), and the model would not read the tokens"
    );
    // Only the label pair: nothing to empty, nothing refused.
    let b = TemplateFile::parse(b"B\n", Path::new("tpl")).unwrap();
    assert!(TagFeaturizer::fit(b, &sentences(), 3).is_ok());
}

/// Labels are bytes: a UTF-8 label is stored as a JSON string (as model files written
/// before had it, so they still load), another one as an array of its bytes; both read back
/// unchanged, and the features of an EUC-JP file are those of its bytes.
#[test]
fn labels_in_any_encoding_round_trip_through_json() {
    let euc = b"\xc5\xec PRP \xcc\xbe\xbb\xec\nb VBZ O\n\nc DT \xcc\xbe\xbb\xec\n";
    let d = parse_columns(euc, Path::new("e")).unwrap().sentences;
    let t = TemplateFile::parse(b"U00:%x[0,0]\nB\n", Path::new("tpl")).unwrap();
    let f = TagFeaturizer::fit(t, &d, 1).unwrap();
    assert_eq!(f.labels, [&b"O"[..], b"\xcc\xbe\xbb\xec"]);
    let json = serde_json::to_string(&f).unwrap();
    assert!(
        json.contains(r#""labels":["O",[204,190,187,236]]"#),
        "{json}"
    );
    let back: TagFeaturizer = serde_json::from_str(&json).unwrap();
    assert_eq!(back, f);
    assert_eq!(back.rows(&d[0]), f.rows(&d[0]));
    // An older model file's labels: strings.
    let old = json.replace(r#"[204,190,187,236]"#, r#""NOUN""#);
    let back: TagFeaturizer = serde_json::from_str(&old).unwrap();
    assert_eq!(back.labels, [&b"O"[..], b"NOUN"]);
}

/// Bigram templates with macros (CRF++'s `B01:%x[0,1]`): the task's parts, mapped to
/// parameters, hold at each token `i >= 1` the expansion of each such template with the label
/// pair, found through a string dictionary built independently; the model's decoder and
/// marginals (weights read directly, position-dependent label pairs) equal enumerating every
/// label sequence with `s(y) = <w, Phi(x, y)>`.
#[test]
fn bigram_templates_with_macros_match_enumeration() {
    let f = featurizer(MACRO_TEMPLATES);
    let sents = sentences();
    let t = TaggingTask::new(&f, &sents).unwrap();
    let l = f.n_labels();
    assert!(f.has_bigram() && f.has_bigram_macros());
    // Groups: B, U00, B01, B02.
    let groups = f.groups();
    assert_eq!(groups.len(), 4);
    assert_eq!(groups[2].name, "B01:%x[0,1]");
    let bigrams: Vec<&Template> = f.templates.bigram_macros().collect();
    let mut dict: Vec<Vec<Vec<u8>>> = vec![Vec::new(); bigrams.len()];
    let mut buf = Vec::new();
    for s in &sents {
        for pos in 1..s.len() {
            for (b, tp) in bigrams.iter().enumerate() {
                tp.expand(s.len(), pos, |i, c| &s.tokens[i][c], &mut buf);
                if !dict[b].contains(&buf) {
                    dict[b].push(buf.clone());
                }
            }
        }
    }
    for (b, g) in groups[2..].iter().enumerate() {
        assert_eq!(g.len, dict[b].len() * l * l, "{}", g.name);
    }
    // Each pair part at token i, label pair (a, c): one feature per template, in its group,
    // at (expansion) * L^2 + a L + c; the same expansion string gives the same index.
    let layout = f.layout();
    let mut seen: HashMap<(usize, Vec<u8>), usize> = HashMap::new();
    for (i, s) in sents.iter().enumerate() {
        let nt = l * l;
        for pos in 1..s.len() {
            for pair in 0..l * l {
                let part = nt + (pos - 1) * l * l + pair;
                let phi = explicit_feature(&t, i, &SparseVector::unit(part, 1.0));
                assert_eq!(phi.len(), bigrams.len());
                for (b, tp) in bigrams.iter().enumerate() {
                    tp.expand(s.len(), pos, |k, c| &s.tokens[k][c], &mut buf);
                    let (g, k) = phi
                        .iter()
                        .map(|(j, _)| layout.locate(j).unwrap())
                        .find(|(g, _)| *g == 2 + b)
                        .unwrap();
                    assert_eq!(g, 2 + b);
                    assert_eq!(k % (l * l), pair);
                    let e = *seen.entry((b, buf.clone())).or_insert(k / (l * l));
                    assert_eq!(e, k / (l * l));
                }
            }
        }
    }
    // The model path against enumeration of <w, Phi(x, y)>.
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
    let w: Vec<f64> = (0..layout.total())
        .map(|_| rng.gen_range(-1.5..1.5))
        .collect();
    let trans = f.positional_transitions(&sents[0], Some(&w[..l * l]), &w);
    assert_eq!(trans.len(), (sents[0].len() - 1) * l * l);
    for (i, s) in sents.iter().enumerate() {
        let all = all_sequences(s.len(), l);
        let score = |y: &Vec<usize>| explicit_feature(&t, i, &t.joint_feature(i, y)).dot(&w);
        let scores: Vec<f64> = all.iter().map(score).collect();
        let best = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let mut ps = Vec::new();
        explicit_scores(&t, i, &w, &mut ps).unwrap();
        let d = t.decode(i, &ps);
        assert!((score(&d) - best).abs() < 1e-12);
        let z: f64 = scores.iter().map(|v| (v - best).exp()).sum();
        let m = t.marginals(i, &ps).unwrap();
        assert!((m.log_z - (best + z.ln())).abs() < 1e-12);
        let _ = s;
    }
}

use super::*;
use crate::data::conllu::select_folds;
use crate::estimator::spec::{Learner, LearnerKind, LossKind};
use crate::estimator::spec::{LearnerSpec, Task};
use crate::estimator::Settings;
use crate::estimator::{fit, Fitted};
use crate::run::Observer;
use crate::task::parse::TemplateSet;

/// [`training_data`], then [`fit`]: a parser as the Python package trains one.
fn fit_dependency_parser(
    train: &Treebank,
    templates: Option<(&str, &str)>,
    projective: bool,
    spec: &LearnerSpec,
    observer: &dyn Observer,
) -> Result<Fitted> {
    fit(
        &training_data(train, templates, projective)?,
        spec,
        observer,
    )
}

const TWT: &str = "../../data/treebank/tr-web.conllu.gz";

/// The first `n` sentences of TWT fold `fold` as CoNLL-U text.
fn twt_text(fold: usize, n: usize) -> String {
    let all = read_conllu(Path::new(TWT), Heads::Required).unwrap();
    let mut text = String::new();
    for s in select_folds(&all, &[fold]).iter().take(n) {
        write_sentence(s, &s.heads().unwrap(), Some(&s.deprels()), &mut text);
    }
    text
}

fn spec(kind: LearnerKind, settings: Settings) -> LearnerSpec {
    settings
        .structured_spec(Task::Parsing, kind, 1.0, 3)
        .unwrap()
}

fn online(epochs: usize) -> LearnerSpec {
    spec(
        LearnerKind::Online,
        Settings::new().with("epochs", epochs.to_string()),
    )
}

#[test]
fn the_model_is_the_command_lines() {
    // The command line's route: the file's sentences as ParseData (estimator::source).
    let text = twt_text(0, 40);
    let tb = Treebank::parse(&text, "train", Heads::Required).unwrap();
    for (s, projective) in [
        (online(2), false),
        (online(1), true),
        (
            spec(LearnerKind::Mtl, Settings::new().with("max_iter", "5")),
            false,
        ),
    ] {
        let ours = fit_dependency_parser(&tb, None, projective, &s, &()).unwrap();
        let conllu = parse_conllu(text.as_bytes(), Path::new("t"), Heads::Required).unwrap();
        let mut data = ParseData::new(conllu.iter().map(ParseSentence::from).collect());
        if projective {
            data.trees = TreeKind::Projective;
        }
        let cli = fit(&data, &s, &()).unwrap();
        assert_eq!(
            ours.model.to_bytes().unwrap(),
            cli.model.to_bytes().unwrap()
        );
        let p = DependencyParser::new(ours.model).unwrap();
        assert_eq!(p.projective(), projective);
        assert_eq!(p.templates().len(), p.template_weights().len());
        assert_eq!(
            p.templates(),
            TemplateSet::default_set()
                .templates
                .iter()
                .map(|t| t.name.clone())
                .collect::<Vec<_>>()
        );
        assert!(p.labeled() && p.classes().contains(&"root".to_string()));
        let back = DependencyParser::from_bytes(&p.to_bytes().unwrap()).unwrap();
        assert_eq!(back.parse(&tb).unwrap(), p.parse(&tb).unwrap());
    }
}

#[test]
fn blocks_parse_as_the_text_does() {
    let text = twt_text(0, 30);
    let tb = Treebank::parse(&text, "t", Heads::Required).unwrap();
    let blocks: Vec<String> = text.split_inclusive("\n\n").map(String::from).collect();
    assert_eq!(blocks.len(), 30);
    let bl = Treebank::from_blocks(&blocks, Heads::Required).unwrap();
    let p = DependencyParser::new(
        fit_dependency_parser(&tb, None, false, &online(1), &())
            .unwrap()
            .model,
    )
    .unwrap();
    let q = DependencyParser::new(
        fit_dependency_parser(&bl, None, false, &online(1), &())
            .unwrap()
            .model,
    )
    .unwrap();
    assert_eq!(p.to_bytes().unwrap(), q.to_bytes().unwrap());
    let parses = p.parse(&tb).unwrap();
    assert_eq!(q.parse(&bl).unwrap(), parses);
    assert_eq!(
        bl.to_blocks(&parses).unwrap().concat(),
        p.to_text(&tb).unwrap()
    );
    let two = vec![blocks[0].clone() + &blocks[1]];
    let e = Treebank::from_blocks(&two, Heads::Required).unwrap_err();
    assert!(e.to_string().contains("X[0] holds 2 sentences"), "{e}");
}

/// UAS and LAS counted by hand: tokens that are not PUNCT, right head (and relation).
fn hand_scores(tb: &Treebank, parses: &[Parse]) -> (f64, f64) {
    let (mut n, mut head, mut both) = (0, 0, 0);
    for (s, p) in tb.sentences().iter().zip(parses) {
        for (k, t) in s.tokens.iter().enumerate() {
            if t.upos == "PUNCT" {
                continue;
            }
            n += 1;
            if t.head == Some(p.heads[k]) {
                head += 1;
                if p.deprels.as_ref().unwrap()[k] == t.deprel {
                    both += 1;
                }
            }
        }
    }
    (
        100.0 * head as f64 / n as f64,
        100.0 * both as f64 / n as f64,
    )
}

#[test]
fn scores_are_hand_counts_and_projective_trees_do_not_cross() {
    let train = Treebank::parse(&twt_text(0, 40), "train", Heads::Required).unwrap();
    let test = Treebank::parse(&twt_text(9, 30), "test", Heads::Required).unwrap();
    for projective in [false, true] {
        let fitted = fit_dependency_parser(&train, None, projective, &online(1), &()).unwrap();
        let p = DependencyParser::new(fitted.model).unwrap();
        let parses = p.parse(&test).unwrap();
        let s = p.score(&test).unwrap();
        let (uas, las) = hand_scores(&test, &parses);
        assert!((s.uas - uas).abs() < 1e-9 && (s.las.unwrap() - las).abs() < 1e-9);
        assert!(uas > 30.0, "UAS {uas}");
        for parse in &parses {
            // Every token reaches the root; projective: no two arcs cross.
            let h = &parse.heads;
            for k in 1..=h.len() {
                let mut v = k;
                for _ in 0..=h.len() {
                    if v != 0 {
                        v = h[v - 1];
                    }
                }
                assert_eq!(v, 0, "token {k} does not reach the root");
            }
            if projective {
                let arcs: Vec<(usize, usize)> = (1..=h.len())
                    .map(|d| (h[d - 1].min(d), h[d - 1].max(d)))
                    .collect();
                for &(a, b) in &arcs {
                    for &(c, d) in &arcs {
                        assert!(!(a < c && c < b && b < d), "arcs {a}-{b} and {c}-{d} cross");
                    }
                }
            }
        }
    }
}

const SMALL: &str = "# sent_id = s1\n# text = ab c\n1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_\n\
1\ta\ta\tNOUN\tNN\t_\t3\tnsubj\t_\tSpaceAfter=No\n2\tb\tb\tADJ\tJJ\t_\t1\tamod\t_\t_\n\
2.1\tz\t_\t_\t_\t_\t_\t_\t_\t_\n3\tc\tc\tVERB\tVB\t_\t0\troot\t_\t_\n\n";

#[test]
fn written_back_with_comments_and_ranges() {
    let tb = Treebank::parse(SMALL, "s", Heads::Required).unwrap();
    let p = DependencyParser::new(
        fit_dependency_parser(&tb, None, false, &online(5), &())
            .unwrap()
            .model,
    )
    .unwrap();
    let raw = SMALL
        .lines()
        .map(|l| {
            let mut c: Vec<&str> = l.split('\t').collect();
            if c.len() == 10 && !c[0].contains(['-', '.']) {
                c[6] = "_";
                c[7] = "_";
            }
            c.join("\t") + "\n"
        })
        .collect::<String>();
    let input = Treebank::parse(&raw, "raw", Heads::Optional).unwrap();
    let parses = p.parse(&input).unwrap();
    let out = input.to_text(&parses).unwrap();
    // Everything but HEAD and DEPREL of the token lines is as it was.
    for (a, b) in out.lines().zip(raw.lines()) {
        let (ca, cb): (Vec<&str>, Vec<&str>) = (a.split('\t').collect(), b.split('\t').collect());
        assert_eq!(ca.len(), cb.len());
        for c in 0..ca.len() {
            if !(c == 6 || c == 7) || cb[0].contains(['-', '.']) {
                assert_eq!(ca[c], cb[c], "{a}");
            }
        }
    }
    assert_eq!(out.lines().count(), raw.lines().count());
    assert!(out.starts_with("# sent_id = s1\n# text = ab c\n1-2\tab"));
    // The training sentence itself is learned.
    assert_eq!(p.to_text(&tb).unwrap(), SMALL);
    assert!(p.score(&input).is_err());
}

#[test]
fn a_missing_upos_names_the_sentence_and_the_token() {
    let tb = Treebank::parse(SMALL, "s", Heads::Required).unwrap();
    let p = DependencyParser::new(
        fit_dependency_parser(&tb, None, false, &online(1), &())
            .unwrap()
            .model,
    )
    .unwrap();
    let no_upos = SMALL.replace("\tADJ\t", "\t_\t");
    let bad = Treebank::parse(
        &(SMALL.to_string() + &no_upos),
        "in.conllu",
        Heads::Required,
    )
    .unwrap();
    let e = p.parse(&bad).unwrap_err().to_string();
    assert!(
        e.starts_with("in.conllu:13: sentence 2, token 2 ('b') has no UPOS (_)"),
        "{e}"
    );
    assert!(
        e.contains("the arc templates read it ('h.form h.upos')"),
        "{e}"
    );
    let e = fit_dependency_parser(&bad, None, false, &online(1), &())
        .unwrap_err()
        .to_string();
    assert!(e.contains("sentence 2, token 2"), "{e}");
    let blocks = vec![SMALL.to_string(), no_upos.clone()];
    let bl = Treebank::from_blocks(&blocks, Heads::Required).unwrap();
    let e = p.parse(&bl).unwrap_err().to_string();
    assert!(e.starts_with("X[1]:5: sentence 2, token 2"), "{e}");
    // Arc templates without UPOS: the relation labeler's still read it.
    let forms = "d.form\nh.form d.form dir\n";
    let ok = Treebank::parse(&no_upos, "s", Heads::Required).unwrap();
    let e = fit_dependency_parser(&ok, Some((forms, "forms")), false, &online(1), &())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the relation labeler's templates read it ('d.upos')"),
        "{e}"
    );
}

#[test]
fn settings_are_the_registrys() {
    let parsing = |s: Settings, kind, c| s.structured_spec(Task::Parsing, kind, c, 0);
    let s = Settings::new().with("q", "2");
    let e = parsing(s, LearnerKind::Online, 1.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("q is a setting of the mtl learner"), "{e}");
    let e = parsing(Settings::new(), LearnerKind::Gomp, 1.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("learners of a parser"), "{e}");
    let squared = Settings::new().with("loss", "squared");
    assert!(parsing(squared, LearnerKind::Online, 1.0).is_err());
    let crf = Settings::new()
        .with("loss", "crf")
        .with("eta0", "0.3")
        .with("epochs", "1")
        .with("regularizer", "l21sq");
    let spec = parsing(crf, LearnerKind::Online, 2.0).unwrap();
    let Learner::Online(o) = &spec.learner else {
        panic!()
    };
    assert_eq!((o.steps.epochs, o.steps.eta0), (1, 0.3));
    assert_eq!(o.loss, Some(LossKind::Logistic));
    let tb = Treebank::parse(SMALL, "s", Heads::Required).unwrap();
    assert!(fit_dependency_parser(&tb, None, false, &spec, &()).is_ok());
    let e = parsing(
        Settings::new().with("epochs", "0"),
        LearnerKind::Online,
        1.0,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("epochs"), "{e}");
    let e = fit_dependency_parser(
        &tb,
        Some(("h.nope\n", "<templates>")),
        false,
        &online(1),
        &(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("<templates>:1:"), "{e}");
}

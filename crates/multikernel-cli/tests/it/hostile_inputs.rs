//! Inputs a careless or hostile user gives (issue 46, "the weak list"): each is refused with
//! a non-zero exit, a message naming the file, the line and what was expected, before any
//! output is written (an output file already there keeps its bytes), or gives finite output.
//! `benches/hostile/weak.sh` replays the same cases on a built binary.

use std::path::{Path, PathBuf};

use crate::common::*;

fn repo(p: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(p)
        .to_str()
        .unwrap()
        .to_string()
}

/// The shipped EUC-JP tagging columns (3 columns: form, a class, the label).
fn ja() -> String {
    repo("data/tagging/ja-pos.euc-jp.txt")
}

struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Dir {
        Dir(tempfile::tempdir().unwrap())
    }

    fn path(&self, name: &str) -> String {
        self.0.path().join(name).to_str().unwrap().to_string()
    }

    fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> String {
        let p = self.path(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    /// An output file that is already there: it must keep these bytes after a refusal.
    fn old_output(&self, name: &str) -> String {
        self.write(name, b"an older file\n")
    }
}

fn unchanged(path: &str) {
    assert_eq!(
        std::fs::read(path).unwrap(),
        b"an older file\n",
        "{path} was overwritten"
    );
}

/// Two unigram templates and the label pair, for the 3-column Japanese file.
const TEMPLATES: &str = "U00:%x[0,0]\nU01:%x[0,1]\nB\n";

/// Trains a CRF tagger on the Japanese columns (2 epochs, a second) and returns its path.
fn tagger(d: &Dir) -> String {
    let tpl = d.write("T", TEMPLATES);
    let model = d.path("tagger.model");
    let ja = ja();
    let mut a = columns_train_args(&ja);
    a.extend(["--templates", &tpl, "--loss", "crf", "--epochs", "2"]);
    a.extend(["--out", &model]);
    ok(&a);
    model
}

/// Item 1: a file with CR line ends (an old Mac file) is named as such at its line, for
/// the column reader (not "needs at least 2 labels") and the table and treebank readers.
#[test]
fn cr_line_ends_are_named() {
    let d = Dir::new();
    let tpl = d.write("T", TEMPLATES);
    let cr = d.write(
        "cr.txt",
        std::fs::read(ja())
            .unwrap()
            .iter()
            .map(|&b| if b == b'\n' { b'\r' } else { b })
            .collect::<Vec<u8>>(),
    );
    let out = d.old_output("m");
    let mut a = columns_train_args(&cr);
    a.extend(["--templates", &tpl, "--epochs", "2", "--out", &out]);
    assert_clean_error(
        &run(&a),
        &[
            &format!("{cr}:1: a carriage return (CR) inside the line"),
            "CR alone",
        ],
    );
    unchanged(&out);
    let csv = d.write("cr.csv", "a,b,label\r1,2,x\r3,4,y\r");
    assert_clean_error(
        &run(&["train", "--data", &csv, "--C", "1", "--out", &out]),
        &[&format!("{csv}:1: a carriage return")],
    );
    let tb = d.write("cr.conllu", sentence(3, None).replace('\n', "\r"));
    assert_clean_error(
        &run(&["train", "--task", "parsing", "--data", &tb, "--out", &out]),
        &[&format!("{tb}:1: a carriage return")],
    );
    unchanged(&out);
}

/// Items 2 and 3: a file with too few columns, a treebank or a table given to a tagger,
/// and a checkpoint given as a model, are named with what was expected.
#[test]
fn a_tagger_names_the_file_it_cannot_read() {
    let d = Dir::new();
    let model = tagger(&d);
    let one: String = String::from_utf8_lossy(&std::fs::read(ja()).unwrap())
        .lines()
        .map(|l| format!("{}\n", l.split(' ').next().unwrap_or("")))
        .collect();
    let one = d.write("one.txt", one);
    let out = d.old_output("pred.txt");
    let predict = |data: &str| run(&["predict", "--model", &model, "--data", data, "--out", &out]);
    assert_clean_error(
        &predict(&one),
        &[&format!(
            "{one}:1: 1 column; the tagger model reads 2 observation columns"
        )],
    );
    let e = run(&["eval", "--model", &model, "--data", &one]);
    assert_clean_error(
        &e,
        &[&format!(
            "{one}:1: 1 column; evaluation needs the model's 2 observation columns and the label"
        )],
    );
    let tb = repo("data/treebank/tr-web.conllu.gz");
    assert_clean_error(
        &predict(&tb),
        &[
            &format!("{tb}:2: expected 4 columns"),
            "the file looks like a CoNLL-U treebank; a template tagger reads CRF++ columns",
        ],
    );
    let sonar = data("sonar.csv");
    let sonar = sonar.to_str().unwrap();
    assert_clean_error(
        &predict(sonar),
        &[
            &format!("{sonar}:1: 1 column"),
            "the file looks like a CSV table",
        ],
    );
    unchanged(&out);
    // A checkpoint given as the model.
    let tpl = d.write("T", TEMPLATES);
    let ck = d.path("run.ckpt");
    let ja = ja();
    let mut a = columns_train_args(&ja);
    let m3 = d.path("m3");
    a.extend(["--templates", &tpl, "--loss", "crf", "--epochs", "3"]);
    a.extend(["--out", &m3, "--checkpoint", &ck]);
    ok(&a);
    assert_clean_error(
        &run(&["predict", "--model", &ck, "--data", &ja, "--out", &out]),
        &[
            &format!("model {ck}: not a multikernel model"),
            "the file is a multikernel checkpoint",
            "give the model file train wrote to --out",
        ],
    );
    unchanged(&out);
}

/// Item 4: `--min-count` that empties every template is refused before training with the
/// largest useful count; one that empties some is a warning naming them.
#[test]
fn min_count_that_prunes_templates_is_said() {
    let d = Dir::new();
    let tpl = d.write("T", "U00:%x[0,1]\nU01:%x[-1,0]/%x[0,0]/%x[1,0]\nB\n");
    let out = d.old_output("m");
    let ja = ja();
    let with = |count: &str| {
        let mut a = columns_train_args(&ja);
        a.extend(["--templates", &tpl, "--epochs", "2", "--min-count", count]);
        a.extend(["--out", &out]);
        run(&a)
    };
    assert_clean_error(
        &with("1000"),
        &[
            "--min-count 1000: expected at most 120",
            "keeps no expansion of any template (U00:%x[0,1], U01:%x[-1,0]/%x[0,0]/%x[1,0])",
        ],
    );
    unchanged(&out);
    let o = with("30");
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(
            "warning: min_count 30 kept no expansion of 1 of the 2 templates with \
             observations (U01:%x[-1,0]/%x[0,0]/%x[1,0])"
        ),
        "{err}"
    );
}

/// A sentence of `n` tokens (token 1 on the root, the others on token 1), with the line
/// `extra` before token `before`.
fn sentence(n: usize, extra: Option<(&str, usize)>) -> String {
    let mut t = String::from("# sent_id = 1\n");
    for k in 1..=n {
        if let Some((line, before)) = extra {
            if before == k {
                t.push_str(line);
            }
        }
        let head = if k == 1 { 0 } else { 1 };
        t.push_str(&format!("{k}\tw{k}\tw\tNOUN\tNN\t_\t{head}\tdep\t_\t_\n"));
    }
    t.push('\n');
    t
}

/// Item 5: gold trees with two roots and multi-word ranges outside the sentence are
/// refused by the CoNLL-U reader with file, line, sentence and what was expected.
#[test]
fn treebank_roots_and_ranges_are_checked() {
    let d = Dir::new();
    let out = d.old_output("p.model");
    let train = |path: &str| {
        run(&[
            "train", "--task", "parsing", "--data", path, "--epochs", "1", "--lambda", "1e-3",
            "--out", &out,
        ])
    };
    let two = sentence(3, None).replace("3\tw3\tw\tNOUN\tNN\t_\t1", "3\tw3\tw\tNOUN\tNN\t_\t0");
    let two = d.write("two.conllu", two);
    assert_clean_error(
        &train(&two),
        &[&format!(
            "{two}:4: the sentence of lines 1-4 has 2 tokens on the root (HEAD 0: tokens 1, 3): \
             expected exactly one"
        )],
    );
    for (name, range, before, line, want) in [
        ("r21.conllu", "2-1", 2, 3, "'2-1' is empty or reversed"),
        (
            "r69.conllu",
            "6-9",
            6,
            7,
            "'6-9' goes past the end of the sentence of lines 1-9, which has 7 tokens",
        ),
    ] {
        let row = format!("{range}\tww\t_\t_\t_\t_\t_\t_\t_\t_\n");
        let p = d.write(name, sentence(7, Some((&row, before))));
        assert_clean_error(
            &train(&p),
            &[&format!("{p}:{line}: the multi-word token range {want}")],
        );
    }
    unchanged(&out);
}

/// Items 6 and 7: a checkpoint header edited to another crate version or another step is
/// refused as the `--resume` help says (the step before it is announced); a checkpoint
/// every 0 steps is refused.
#[test]
fn edited_checkpoint_headers_and_zero_steps_are_refused() {
    let d = Dir::new();
    let tpl = d.write("T", TEMPLATES);
    let ja = ja();
    let ck = d.path("run.ckpt");
    let args = |extra: &[&str]| -> Vec<String> {
        let mut a = columns_train_args(&ja);
        a.extend(["--templates", &tpl, "--loss", "crf", "--epochs", "3"]);
        a.extend_from_slice(extra);
        a.iter().map(|s| s.to_string()).collect()
    };
    let run_s = |a: Vec<String>| bin().args(a).output().unwrap();
    let first = d.path("m1");
    assert!(run_s(args(&["--out", &first, "--checkpoint", &ck]))
        .status
        .success());
    let good = std::fs::read_to_string(&ck).unwrap();
    assert!(good.contains("\"step\":2,"), "{good}");
    let out = d.old_output("m2");
    let version = format!("\"crate_version\":\"{}\"", env!("CARGO_PKG_VERSION"));
    let edited = d.write(
        "v.ckpt",
        good.replacen(&version, "\"crate_version\":\"9.9.9\"", 1),
    );
    let o = run_s(args(&["--out", &out, "--resume", &edited]));
    assert_clean_error(
        &o,
        &[&format!(
            "{edited}:1: this checkpoint was written by multikernel 9.9.9, this is multikernel {}",
            env!("CARGO_PKG_VERSION")
        )],
    );
    let edited = d.write("s.ckpt", good.replacen("\"step\":2,", "\"step\":99,", 1));
    let o = run_s(args(&["--out", &out, "--resume", &edited]));
    assert_clean_error(
        &o,
        &[&format!(
            "{edited}:1: the header says step 99, but the saved state is after step 2"
        )],
    );
    assert!(
        !text(&o).1.contains("resuming after step"),
        "{}",
        text(&o).1
    );
    unchanged(&out);
    // The checkpoint as written resumes, and says so.
    let o = run_s(args(&["--out", &d.path("m3"), "--resume", &ck]));
    assert!(
        text(&o).1.contains("resuming after step 2 of the run"),
        "{}",
        text(&o).1
    );
    let ck0 = d.path("zero.ckpt");
    let o = run_s(args(&[
        "--out",
        &out,
        "--checkpoint",
        &ck0,
        "--checkpoint-every",
        "0",
    ]));
    assert_clean_error(&o, &["--checkpoint-every", "0 is not in 1.."]);
    assert!(!Path::new(&ck0).exists());
    unchanged(&out);
}

/// Items 8 and 10: a class `NaN` and a regression target of 1e300 are refused naming the
/// file, the line and the field.
#[test]
fn nan_classes_and_huge_targets_are_refused_where_they_are() {
    let d = Dir::new();
    let out = d.old_output("m");
    let glass = std::fs::read_to_string(data("glass.csv")).unwrap();
    let mut lines: Vec<String> = glass.lines().take(21).map(String::from).collect();
    let last = lines.pop().unwrap();
    lines.push(format!("{},NaN", last.rsplit_once(',').unwrap().0));
    let g = d.write("g.csv", lines.join("\n") + "\n");
    assert_clean_error(
        &run(&[
            "train",
            "--task",
            "multiclass",
            "--data",
            &g,
            "--C",
            "1",
            "--out",
            &out,
        ]),
        &[&format!(
            "{g}:21: field 10 (the target) 'NaN' is not a class label"
        )],
    );
    let boston = std::fs::read_to_string(data("boston-housing.csv")).unwrap();
    for big in ["1e300", "-1e300"] {
        let mut lines: Vec<String> = boston.lines().take(31).map(String::from).collect();
        let last = lines.pop().unwrap();
        lines.push(format!("{},{big}", last.rsplit_once(',').unwrap().0));
        let b = d.write("b.csv", lines.join("\n") + "\n");
        for extra in [&["--C", "1"][..], &[], &["--stream"]] {
            let mut a = vec!["train", "--task", "regression", "--data", &b, "--out", &out];
            a.extend_from_slice(extra);
            assert_clean_error(
                &run(&a),
                &[&format!(
                    "{b}:31: field 14 (the target) '{big}' is too large for a regression target"
                )],
            );
        }
    }
    unchanged(&out);
}

/// Item 9: a tagger whose weights are +-1e308 is refused (its scores overflow to infinity);
/// one whose weights are near 1e300 prints finite probabilities that sum to one.
#[test]
fn huge_weights_give_finite_probabilities_or_a_refusal() {
    let d = Dir::new();
    let model = tagger(&d);
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&model).unwrap()).unwrap();
    let with_weights = |name: &str, f: &dyn Fn(usize) -> f64| {
        let mut m = json.clone();
        let w = m["model"]["weights"].as_array_mut().unwrap();
        for (k, x) in w.iter_mut().enumerate() {
            *x = serde_json::json!(f(k));
        }
        d.write(name, serde_json::to_vec(&m).unwrap())
    };
    let ja = ja();
    let out = d.old_output("pred.txt");
    let big = with_weights("big.model", &|k| if k % 2 == 0 { 1e308 } else { -1e308 });
    assert_clean_error(
        &run(&[
            "predict", "--model", &big, "--data", &ja, "-v2", "--out", &out,
        ]),
        &[
            &format!("{ja}: the sentence at line 1: a score of the model is"),
            "not a finite number",
        ],
    );
    unchanged(&out);
    let near = with_weights("near.model", &|k| 1e300 * [1.0, -0.5, 0.25][k % 3]);
    let o = run(&["predict", "--model", &near, "--data", &ja, "-v2"]);
    let (printed, err) = text(&o);
    assert!(o.status.success(), "{err}");
    // `# P(sentence)`, then each token's 3 columns, its best `label/P` and every label's.
    let prob = |p: &str| {
        let v: f64 = p.parse().unwrap();
        assert!(v.is_finite() && (0.0..=1.0 + 1e-9).contains(&v), "{p}");
        v
    };
    let mut tokens = 0;
    for line in printed.lines().filter(|l| !l.is_empty()) {
        if let Some(p) = line.strip_prefix("# ") {
            prob(p);
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let probs: Vec<f64> = fields[3..]
            .iter()
            .map(|f| prob(f.rsplit_once('/').unwrap().1))
            .collect();
        assert_eq!(probs.len(), 1 + 4, "{line}");
        assert!(
            (probs[1..].iter().sum::<f64>() - 1.0).abs() < 1e-6,
            "{line}"
        );
        tokens += 1;
    }
    assert_eq!(tokens, 350);
}

//! Column files as CRF++ and conlleval users write them (issue 29): columns in a legacy
//! encoding (the shipped EUC-JP file) train and predict with the predicted columns
//! byte-identical to the input's; `--marginals` / `-v1` / `-v2` in `crf_test`'s layout for
//! CRF-loss taggers and refused for hinge ones; bare `B`/`I`/`O` labels scored as conlleval
//! scores them; `convert --encoding`.

use crate::common::*;

fn last_line(out: &str) -> (String, f64) {
    let (k, v) = out.lines().last().unwrap().split_once(' ').unwrap();
    (k.to_string(), v.parse().unwrap())
}

fn lines(bytes: &[u8]) -> Vec<&[u8]> {
    let b = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    b.split(|&c| c == b'\n').collect()
}

fn train(data: &str, tpl: &str, loss: &str, out: &str) -> String {
    ok(&[
        "train",
        "--select",
        "none",
        "--task",
        "sequence",
        "--templates",
        tpl,
        "--data",
        data,
        "--loss",
        loss,
        "--epochs",
        "5",
        "--out",
        out,
    ])
}

#[test]
fn euc_jp_columns_train_and_predict_byte_for_byte_with_marginals() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let data = repo("data/tagging/ja-pos.euc-jp.txt");
    let input = std::fs::read(&data).unwrap();
    assert!(
        std::str::from_utf8(&input).is_err(),
        "the file is EUC-JP, not UTF-8"
    );
    std::fs::write(p("tpl"), "U00:%x[0,0]\nU01:%x[-1,0]\nU02:%x[0,1]\nB\n").unwrap();
    train(&data, &p("tpl"), "crf", &p("m"));
    // The model file stores the EUC-JP labels as bytes and reads back.
    let model = std::fs::read_to_string(p("m")).unwrap();
    // 名詞 in EUC-JP: cc be bb ec.
    assert!(model.contains("[204,190,187,236]"), "labels as bytes");
    let out = ok(&["eval", "--model", &p("m"), "--data", &data]);
    assert_eq!(last_line(&out), ("accuracy".into(), 100.0), "{out}");
    ok(&[
        "predict",
        "--model",
        &p("m"),
        "--data",
        &data,
        "--out",
        &p("pred"),
    ]);
    let pred = std::fs::read(p("pred")).unwrap();
    // Each predicted line: the input's columns, byte for byte (tab-separated), then the
    // predicted label, which is the gold one here.
    let (li, lp) = (lines(&input), lines(&pred));
    assert_eq!(li.len(), lp.len());
    for (i, o) in li.iter().zip(&lp) {
        let cols: Vec<&[u8]> = i.split(|&c| c == b' ').collect();
        if i.is_empty() {
            assert!(o.is_empty());
            continue;
        }
        let mut want = cols.join(&b'\t');
        want.push(b'\t');
        want.extend_from_slice(cols[2]);
        assert_eq!(*o, &want[..]);
    }
    // The predicted file is a column file again: score reads it (gold, predicted).
    let scored = ok(&["score", "--data", &p("pred")]);
    assert_eq!(last_line(&scored), ("accuracy".into(), 100.0));

    // -v2: '# P(sentence)', then columns, best/P, every label's label/P.
    let v2 = run(&["predict", "--model", &p("m"), "--data", &data, "-v2"]);
    assert!(v2.status.success());
    let v1 = run(&[
        "predict",
        "--model",
        &p("m"),
        "--data",
        &data,
        "--marginals",
    ]);
    assert!(v1.status.success());
    let (l2, l1) = (lines(&v2.stdout), lines(&v1.stdout));
    assert_eq!(l1.len(), l2.len());
    let prob = |f: &[u8]| -> f64 {
        let k = f.iter().rposition(|&c| c == b'/').unwrap();
        std::str::from_utf8(&f[k + 1..]).unwrap().parse().unwrap()
    };
    let mut sentences = 0;
    for (a, b) in l1.iter().zip(&l2) {
        if a.starts_with(b"# ") {
            assert_eq!(a, b);
            let p: f64 = std::str::from_utf8(&a[2..]).unwrap().parse().unwrap();
            assert!(p > 0.0 && p <= 1.0 + 1e-12);
            sentences += 1;
            continue;
        }
        if a.is_empty() {
            continue;
        }
        // crf_test's layout: the input's 3 columns, the predicted label/P (-v1), then
        // every label/P (-v2).
        let f1: Vec<&[u8]> = a.split(|&c| c == b'\t').collect();
        let f2: Vec<&[u8]> = b.split(|&c| c == b'\t').collect();
        assert_eq!(f1.len(), 3 + 1);
        assert_eq!(f2.len(), 3 + 1 + 4, "4 labels");
        assert_eq!(f1, f2[..4]);
        let all: Vec<f64> = f2[4..].iter().map(|f| prob(f)).collect();
        assert!((all.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        let best = prob(f1[3]);
        // The predicted label is the gold one here (the tagger fits its training file).
        assert_eq!(
            &f1[3][..f1[3].iter().rposition(|&c| c == b'/').unwrap()],
            f1[2]
        );
        assert!(all.contains(&best));
        assert!(all.iter().all(|&q| q <= best));
    }
    assert_eq!(sentences, 60);

    // A hinge-loss tagger has no probabilities: refused, no output file.
    train(&data, &p("tpl"), "hinge", &p("h"));
    assert_clean_error(
        &run(&[
            "predict",
            "--model",
            &p("h"),
            "--data",
            &data,
            "-v1",
            "--out",
            &p("x"),
        ]),
        &["CRF loss"],
    );
    assert!(!dir.path().join("x").exists());
    assert_clean_error(
        &run(&["predict", "--model", &p("m"), "--data", &data, "-v3"]),
        &["3"],
    );
}

/// conlleval's counting, token by token (its `inCorrect` state machine), for B/I/O labels
/// with or without a type: returns (gold, found, correct).
fn conlleval(pairs: &[(String, String)]) -> (usize, usize, usize) {
    fn split(l: &str) -> (&str, &str) {
        match l.split_once('-') {
            Some((t, ty)) => (t, ty),
            None => (l, ""),
        }
    }
    fn end(p: &str, t: &str, pt: &str, tt: &str) -> bool {
        matches!((p, t), ("B", "B") | ("B", "O") | ("I", "B") | ("I", "O"))
            || (p != "O" && pt != tt)
    }
    fn start(p: &str, t: &str, pt: &str, tt: &str) -> bool {
        t == "B" || (p == "O" && t == "I") || (t != "O" && pt != tt)
    }
    let (mut g, mut f, mut c) = (0, 0, 0);
    let (mut lg, mut lgt, mut lp, mut lpt) = ("O", "", "O", "");
    let mut in_correct = false;
    for (a, b) in pairs {
        let (gt, gty) = split(a);
        let (pt, pty) = split(b);
        let (eg, ep) = (end(lg, gt, lgt, gty), end(lp, pt, lpt, pty));
        if in_correct {
            if eg && ep && lpt == lgt {
                in_correct = false;
                c += 1;
            } else if eg != ep || gty != pty {
                in_correct = false;
            }
        }
        let (sg, sp) = (start(lg, gt, lgt, gty), start(lp, pt, lpt, pty));
        if sg && sp && gty == pty {
            in_correct = true;
        }
        g += usize::from(sg);
        f += usize::from(sp);
        (lg, lgt, lp, lpt) = (gt, gty, pt, pty);
    }
    (g, f, c)
}

/// Base-NP chunks with bare labels (B/I/O, no type), from the shipped EUC-JP file: a noun
/// starts a chunk (`B`), the particle after it continues it (`I`), the rest is `O`. eval
/// prints `f1` last, equal to conlleval's on the predictions.
#[test]
fn bare_bio_labels_are_scored_as_conlleval_scores_them() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    // A fixed file: conlleval (the PyPI port, `benches/peers/conlleval/`) reports 4 phrases,
    // found 5, correct 3: precision 60.00, recall 75.00, FB1 66.67.
    std::fs::write(
        p("fixed"),
        "a B B\nb I O\nc O I\nd B B\n\ne I I\nf I I\ng B B\nh O O\n",
    )
    .unwrap();
    let out = ok(&["score", "--data", &p("fixed")]);
    assert!(
        out.contains(
            "chunks_gold 4\nchunks_found 5\nchunks_correct 3\nprecision 60.00\nrecall 75.00\n"
        ),
        "{out}"
    );
    assert_eq!(last_line(&out), ("f1".into(), 66.67));

    let input = std::fs::read(repo("data/tagging/ja-pos.euc-jp.txt")).unwrap();
    let noun = b"\xcc\xbe\xbb\xec";
    let mut text = Vec::new();
    let mut prev_noun = false;
    let mut k = 0usize;
    for l in lines(&input) {
        if l.is_empty() {
            text.push(b'\n');
            prev_noun = false;
            continue;
        }
        let cols: Vec<&[u8]> = l.split(|&c| c == b' ').collect();
        let is_noun = cols[2] == noun;
        // Every seventh noun is left out of a chunk, so that the tagger errs somewhere.
        k += usize::from(is_noun);
        let label: &[u8] = if is_noun && !k.is_multiple_of(7) {
            b"B"
        } else if prev_noun && !k.is_multiple_of(7) {
            b"I"
        } else {
            b"O"
        };
        prev_noun = is_noun;
        text.extend_from_slice(&cols[..2].join(&b' '));
        text.push(b' ');
        text.extend_from_slice(label);
        text.push(b'\n');
    }
    std::fs::write(p("bio"), &text).unwrap();
    std::fs::write(p("tpl"), "U00:%x[0,1]\nU01:%x[-1,1]\nB\n").unwrap();
    train(&p("bio"), &p("tpl"), "crf", &p("m"));
    let out = ok(&["eval", "--model", &p("m"), "--data", &p("bio")]);
    let (key, f1) = last_line(&out);
    assert_eq!(key, "f1", "{out}");
    ok(&[
        "predict",
        "--model",
        &p("m"),
        "--data",
        &p("bio"),
        "--out",
        &p("pred"),
    ]);
    let pred = std::fs::read(p("pred")).unwrap();
    let mut pairs = Vec::new();
    for l in lines(&pred) {
        let cols: Vec<&[u8]> = l.split(|&c| c == b'\t').collect();
        if l.is_empty() {
            pairs.push(("O".to_string(), "O".to_string()));
        } else {
            let s = |c: &[u8]| String::from_utf8(c.to_vec()).unwrap();
            pairs.push((s(cols[2]), s(cols[3])));
        }
    }
    pairs.push(("O".to_string(), "O".to_string()));
    let (g, f, c) = conlleval(&pairs);
    // Some chunk is missed or made up, so that precision and recall are not both 100.
    assert!(g > 50 && (c < g || c < f), "{g} {f} {c}");
    let (pr, rc) = (c as f64 / f as f64, c as f64 / g as f64);
    let want = 100.0 * 2.0 * pr * rc / (pr + rc);
    assert!(
        (f1 - want).abs() < 0.005 + 1e-9,
        "eval {f1}, conlleval {want}"
    );
    assert!(out.contains(&format!(
        "chunks_gold {g}\nchunks_found {f}\nchunks_correct {c}\n"
    )));
}

#[test]
fn convert_writes_an_ascii_compatible_encoding_and_refuses_others() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let tb = repo("data/treebank/tr-web.conllu.gz");
    let conv = |data: &str, folds: Option<&str>, enc: &str, out: &str| {
        let mut args = vec!["convert", "--data", data, "--encoding", enc, "--out", out];
        if let Some(f) = folds {
            args.extend(["--folds", f]);
        }
        run(&args)
    };
    assert!(conv(&tb, Some("9"), "utf-8", &p("u9")).status.success());
    // Fold 9 has 'SENİ', whose lowercased column is 'seni' + U+0307 (combining dot above),
    // which windows-1254 has no byte for: an error naming the sentence and the character.
    assert_clean_error(
        &conv(&tb, Some("9"), "windows-1254", &p("t9")),
        &["tr-web.conllu.gz:", "windows-1254", "U+0307"],
    );
    assert!(!dir.path().join("t9").exists());
    // A treebank of Turkish letters windows-1254 has.
    std::fs::write(
        p("tr.conllu"),
        "# text = Öğretmen ağacı gördü.\n\
         1\tÖğretmen\töğretmen\tNOUN\tNN\t_\t3\tnsubj\t_\t_\n\
         2\tağacı\tağaç\tNOUN\tNN\t_\t3\tobj\t_\t_\n\
         3\tgördü\tgör\tVERB\tVB\t_\t0\troot\t_\tSpaceAfter=No\n\
         4\t.\t.\tPUNCT\t.\t_\t3\tp\t_\t_\n\n\
         1\tŞimdi\tşimdi\tADV\tRB\t_\t2\tadvmod\t_\t_\n\
         2\tışık\tışık\tNOUN\tNN\t_\t0\troot\t_\t_\n\n",
    )
    .unwrap();
    let tr = p("tr.conllu");
    assert!(conv(&tr, None, "utf-8", &p("u")).status.success());
    assert!(conv(&tr, None, "windows-1254", &p("t")).status.success());
    let (u, t) = (
        std::fs::read(p("u")).unwrap(),
        std::fs::read(p("t")).unwrap(),
    );
    assert!(
        std::str::from_utf8(&t).is_err(),
        "Turkish letters in windows-1254"
    );
    // The same text, in each encoding: decoding windows-1254 (ISO-8859-9's superset) gives
    // the UTF-8 file back.
    let decoded: String = t
        .iter()
        .map(|&b| match b {
            0xd0 => 'Ğ',
            0xdd => 'İ',
            0xde => 'Ş',
            0xf0 => 'ğ',
            0xfd => 'ı',
            0xfe => 'ş',
            b if !(0x80..0xa0).contains(&b) => char::from(b),
            _ => '\u{fffd}',
        })
        .collect();
    assert_eq!(decoded.as_bytes(), &u[..]);
    let conv = |enc: &str, out: &str| conv(&tr, None, enc, out);
    // EUC-JP has no 'ş': an error naming the sentence; no file.
    assert_clean_error(&conv("euc-jp", &p("e")), &["tr.conllu:", "EUC-JP"]);
    assert!(!dir.path().join("e").exists());
    for bad in ["utf-16", "UTF-16BE", "utf-32"] {
        assert_clean_error(&conv(bad, &p("x")), &["not ASCII-compatible"]);
    }
    assert_clean_error(&conv("klingon", &p("x")), &["unknown encoding"]);
    // A UTF-16 column file is refused with the line and what to do.
    let mut utf16 = vec![0xff, 0xfe];
    for c in "a B\n".encode_utf16() {
        utf16.extend_from_slice(&c.to_le_bytes());
    }
    std::fs::write(p("w16"), utf16).unwrap();
    std::fs::write(p("tpl"), "U00:%x[0,0]\n").unwrap();
    assert_clean_error(
        &run(&[
            "train",
            "--select",
            "none",
            "--task",
            "sequence",
            "--templates",
            &p("tpl"),
            "--data",
            &p("w16"),
            "--out",
            &p("m"),
        ]),
        &["w16:1", "UTF-16"],
    );
}

/// CRF++ bigram templates with macros (`B01:%x[0,1]`) train with either loss, predict, and
/// give marginals summing to 1 per token; the model file round-trips through eval.
#[test]
fn bigram_templates_with_macros_train_and_predict() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let data = repo("data/tagging/ja-pos.euc-jp.txt");
    std::fs::write(
        p("tpl"),
        "U00:%x[0,0]\nB\nB01:%x[0,1]\nB02:%x[-1,1]/%x[0,1]\n",
    )
    .unwrap();
    for loss in ["crf", "hinge"] {
        train(&data, &p("tpl"), loss, &p(loss));
        let out = ok(&["eval", "--model", &p(loss), "--data", &data]);
        let (k, acc) = last_line(&out);
        assert_eq!(k, "accuracy");
        assert!(acc > 90.0, "{out}");
    }
    let inspect = ok(&["inspect", "--model", &p("crf")]);
    assert!(inspect.contains("B01:%x[0,1]"), "{inspect}");
    let v2 = run(&["predict", "--model", &p("crf"), "--data", &data, "-v2"]);
    assert!(v2.status.success());
    let mut tokens = 0;
    for l in lines(&v2.stdout) {
        if l.is_empty() || l.starts_with(b"# ") {
            continue;
        }
        let f: Vec<&[u8]> = l.split(|&c| c == b'\t').collect();
        let sum: f64 = f[4..]
            .iter()
            .map(|x| {
                let k = x.iter().rposition(|&c| c == b'/').unwrap();
                std::str::from_utf8(&x[k + 1..])
                    .unwrap()
                    .parse::<f64>()
                    .unwrap()
            })
            .sum();
        assert!((sum - 1.0).abs() < 1e-9, "{sum}");
        tokens += 1;
    }
    assert_eq!(tokens, 350);
}

//! The table readers on the shipped UCI tables and on malformed files written to disk.

use multikernel::data::split::stratified_split;
use multikernel::data::standardize::Standardizer;
use multikernel::data::{read_csv, read_libsvm, read_table, Dataset, Format, TargetKind, Targets};
use multikernel::error::Error;
use std::io::Write;
use std::path::{Path, PathBuf};

fn uci(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/uci")
        .join(name)
}

fn class_counts(ds: &Dataset) -> Vec<(String, usize)> {
    match &ds.targets {
        Targets::Classes { classes, y } => classes
            .iter()
            .enumerate()
            .map(|(c, name)| (name.clone(), y.iter().filter(|&&v| v == c).count()))
            .collect(),
        Targets::Real(_) => panic!("expected classes"),
    }
}

fn counts(v: &[(&str, usize)]) -> Vec<(String, usize)> {
    v.iter().map(|(s, c)| (s.to_string(), *c)).collect()
}

/// File, rows, features, and the classes in index order with their sizes.
type Expected = (&'static str, usize, usize, &'static [(&'static str, usize)]);

#[test]
fn shipped_uci_classification_tables() {
    let cases: &[Expected] = &[
        ("sonar.csv", 208, 60, &[("M", 111), ("R", 97)]),
        ("ionosphere.csv", 351, 34, &[("bad", 126), ("good", 225)]),
        (
            "breast-cancer.csv",
            683,
            9,
            &[("benign", 444), ("malignant", 239)],
        ),
        ("pima-diabetes.csv", 768, 8, &[("neg", 500), ("pos", 268)]),
        (
            "glass.csv",
            214,
            9,
            &[
                ("1", 70),
                ("2", 76),
                ("3", 17),
                ("5", 13),
                ("6", 9),
                ("7", 29),
            ],
        ),
    ];
    for (file, rows, cols, want) in cases {
        let ds = read_table(&uci(file), None, TargetKind::Classes, None, None).unwrap();
        assert_eq!((ds.len(), ds.n_features()), (*rows, *cols), "{file}");
        assert_eq!(ds.feature_names.len(), *cols, "{file}");
        assert_ne!(ds.feature_names[0], "x1", "{file}: header not used");
        assert_eq!(class_counts(&ds), counts(want), "{file}");
        assert!(ds.x.data.iter().all(|v| v.is_finite()));
    }
}

#[test]
fn shipped_boston_is_real() {
    let ds = read_csv(&uci("boston-housing.csv"), TargetKind::Real, None).unwrap();
    assert_eq!((ds.len(), ds.n_features()), (506, 13));
    assert_eq!(ds.feature_names[0], "crim");
    let Targets::Real(y) = &ds.targets else {
        panic!("expected real targets")
    };
    assert_eq!(y[0], 24.0);
    let mean = y.iter().sum::<f64>() / y.len() as f64;
    assert!((mean - 22.5328).abs() < 1e-3, "mean medv {mean}");
    assert!(y.iter().all(|v| (5.0..=50.0).contains(v)));
    assert_eq!(ds.x.get(0, 0), 0.00632);
}

#[test]
fn ionosphere_constant_column_standardizes_finitely() {
    let ds = read_csv(&uci("ionosphere.csv"), TargetKind::Classes, None).unwrap();
    assert!(
        ds.x.col(1).iter().all(|&v| v == 0.0),
        "second column is constant"
    );
    let s = Standardizer::fit(&ds.x);
    assert_eq!(s.scale[1], 1.0);
    let z = s.apply(&ds.x);
    assert!(z.data.iter().all(|v| v.is_finite()));
}

#[test]
fn test_split_keeps_training_classes() {
    let ds = read_csv(&uci("glass.csv"), TargetKind::Classes, None).unwrap();
    let Targets::Classes { classes, y } = &ds.targets else {
        panic!()
    };
    let (tr, te) = stratified_split(y, 0.7, 1);
    let (train, test) = (ds.select(&tr), ds.select(&te));
    assert_eq!(train.len() + test.len(), 214);
    // Every class (even glass's 9-row class 6) is present in both parts.
    for part in [&train, &test] {
        assert!(class_counts(part).iter().all(|(_, c)| *c > 0));
    }
    // Re-reading the file with the training classes gives the same indices.
    let again = read_csv(&uci("glass.csv"), TargetKind::Classes, Some(classes)).unwrap();
    assert_eq!(again.targets, ds.targets);
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

#[test]
fn gzip_is_transparent() {
    let dir = tempfile::tempdir().unwrap();
    let csv = b"a,b,label\n1,2,x\n3,4,y\n";
    let plain = read_csv(&write(dir.path(), "p.csv", csv), TargetKind::Classes, None).unwrap();
    let gz = write(dir.path(), "p.csv.gz", &gzip(csv));
    assert_eq!(Format::from_path(&gz), Some(Format::Csv));
    assert_eq!(
        read_table(&gz, None, TargetKind::Classes, None, None).unwrap(),
        plain
    );

    let svm = b"+1 1:1 3:2\n-1 2:5\n";
    let gz = write(dir.path(), "p.svm.gz", &gzip(svm));
    let ds = read_table(&gz, None, TargetKind::Classes, None, None).unwrap();
    let direct = read_libsvm(
        &write(dir.path(), "q.libsvm", svm),
        TargetKind::Classes,
        None,
        None,
    )
    .unwrap();
    assert_eq!(ds, direct);
    assert_eq!((ds.len(), ds.n_features()), (2, 3));

    // A truncated gzip stream is an I/O error naming the file.
    let mut bad = gzip(svm);
    bad.truncate(bad.len() / 2);
    let p = write(dir.path(), "bad.svm.gz", &bad);
    let e = read_table(&p, None, TargetKind::Classes, None, None).unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e}");
    assert!(e.to_string().contains("bad.svm.gz"));
}

#[test]
fn format_dispatch_and_sniffing() {
    let dir = tempfile::tempdir().unwrap();
    let svm = write(dir.path(), "train.txt", b"1 1:1\n0 2:1\n");
    let ds = read_table(&svm, None, TargetKind::Classes, None, None).unwrap();
    assert_eq!(ds.n_features(), 2);
    // An explicit format wins over the name.
    let csv = write(dir.path(), "t.svm", b"a,label\n1,x\n");
    assert_eq!(
        read_table(&csv, Some(Format::Csv), TargetKind::Classes, None, None)
            .unwrap()
            .len(),
        1
    );
    let unknown = write(dir.path(), "mystery.dat", b"hello\n");
    let e = read_table(&unknown, None, TargetKind::Classes, None, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("mystery.dat") && e.contains("csv or libsvm"),
        "{e}"
    );
}

#[test]
fn file_errors_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.csv");
    let e = read_csv(&missing, TargetKind::Classes, None).unwrap_err();
    assert!(matches!(e, Error::Io { .. }));
    assert!(e.to_string().contains("missing.csv"));

    let cases: &[(&str, &[u8], &str)] = &[
        ("empty.csv", b"", "empty.csv:1: no data rows"),
        ("header.csv", b"a,b,label\n", "header.csv:1: no data rows"),
        (
            "ragged.csv",
            b"a,b,label\n1,2,x\n1,2\n",
            "ragged.csv:3: expected 3 fields, found 2",
        ),
        (
            "word.csv",
            b"a,b,label\n1,2,x\n1,abc,y\n",
            "word.csv:3: field 2 'abc' is not a number",
        ),
        (
            "nan.csv",
            b"a,b,label\nnan,2,x\n",
            "nan.csv:2: field 1 'nan' is not a finite number",
        ),
        (
            "inf.csv",
            b"a,b,label\n1,inf,x\n",
            "inf.csv:2: field 2 'inf' is not a finite number",
        ),
        (
            "pair.svm",
            b"+1 1:1\n-1 1=1\n",
            "pair.svm:2: '1=1' is not index:value",
        ),
        (
            "zero.svm",
            b"+1 0:1\n",
            "zero.svm:1: '0:1': feature indices start at 1",
        ),
        (
            "order.svm",
            b"+1 2:1 1:1\n",
            "order.svm:1: '1:1': feature index 1 after 2",
        ),
        ("empty.svm", b"\n", "empty.svm:1: no data rows"),
    ];
    for (name, bytes, want) in cases {
        let p = write(dir.path(), name, bytes);
        let e = read_table(&p, None, TargetKind::Classes, None, None).unwrap_err();
        assert!(matches!(e, Error::Parse { .. }), "{name}: {e}");
        assert!(
            e.to_string().contains(want),
            "{name}: got '{e}', want '{want}'"
        );
    }

    // Beyond the model's feature count; unseen label; 61 columns where 60 are expected.
    let p = write(dir.path(), "wide.svm", b"+1 1:1\n-1 35:1\n");
    let e = read_table(&p, None, TargetKind::Classes, None, Some(34))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("wide.svm:2:") && e.contains("index 35 is beyond the 34"),
        "{e}"
    );
    let train = vec!["M".to_string(), "R".to_string()];
    let p = write(dir.path(), "unseen.csv", b"a,label\n1,M\n2,Q\n");
    let e = read_table(&p, None, TargetKind::Classes, Some(&train), Some(1))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unseen.csv:3:") && e.contains("'Q' was not seen in training"),
        "{e}"
    );
    let mut sonar_like = (1..=60).map(|j| format!("V{j},")).collect::<String>() + "label\n";
    sonar_like += &"0.5,".repeat(60);
    sonar_like += "M\n";
    sonar_like += &"0.5,".repeat(59);
    sonar_like += "R\n";
    let p = write(dir.path(), "short.csv", sonar_like.as_bytes());
    let e = read_csv(&p, TargetKind::Classes, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("short.csv:3: expected 61 fields, found 60"),
        "{e}"
    );
}

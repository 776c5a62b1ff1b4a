//! The streaming table reader (`data::stream`, issue 17) against the in-memory readers: the
//! same rows, targets and line numbers in any chunk size, plain or gzip, CSV or libsvm; the
//! statistics of one scan equal `Standardizer::fit` on the whole table; malformed files give
//! the same messages.

use flate2::write::GzEncoder;
use multikernel::data::standardize::{Standardizer, TargetScaler};
use multikernel::data::stream::{scan, TableStream};
use multikernel::data::{read_table, Dataset, Format, Matrix, TargetKind, Targets};
use std::io::Write;
use std::path::{Path, PathBuf};

fn uci(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/uci")
        .join(name)
}

/// The shipped tables and their target kinds.
const TABLES: &[(&str, TargetKind)] = &[
    ("boston-housing.csv", TargetKind::Real),
    ("breast-cancer.csv", TargetKind::Classes),
    ("glass.csv", TargetKind::Classes),
    ("ionosphere.csv", TargetKind::Classes),
    ("pima-diabetes.csv", TargetKind::Classes),
    ("sonar.csv", TargetKind::Classes),
];

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// The line numbers of the data rows of a CSV text: non-blank lines after the first.
fn csv_data_lines(text: &str) -> Vec<usize> {
    let mut nos = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, _)| i + 1);
    nos.next();
    nos.collect()
}

/// Everything a stream yields in chunks of `chunk` rows, its targets mapped to `classes`.
fn drain(
    path: &Path,
    kind: TargetKind,
    n_features: Option<usize>,
    classes: Option<&[String]>,
    chunk: usize,
) -> (Matrix, Targets, Vec<usize>, Vec<String>) {
    let mut s = TableStream::open(path, None, kind, n_features).unwrap();
    let names = s.feature_names().to_vec();
    let mut x = Matrix::zeros(0, s.n_features());
    let (mut y, mut lines) = (Vec::new(), Vec::new());
    let mut labels = Vec::new();
    while let Some(c) = s.next_chunk(chunk).unwrap() {
        assert!(c.len() <= chunk && !c.is_empty());
        assert_eq!((c.targets.len(), c.lines.len()), (c.len(), c.len()));
        x.data.extend_from_slice(&c.x.data);
        x.rows += c.len();
        match s.targets(&c, classes).unwrap() {
            Targets::Real(v) => y.extend(v.into_iter().map(Err)),
            Targets::Classes { y: v, .. } => y.extend(v.into_iter().map(Ok)),
        }
        lines.extend(c.lines);
        labels.extend(c.targets);
    }
    assert!(s.next_chunk(chunk).unwrap().is_none(), "stays at the end");
    let targets = match (kind, classes) {
        (TargetKind::Real, _) => Targets::Real(y.into_iter().map(|v| v.unwrap_err()).collect()),
        (TargetKind::Classes, Some(c)) => Targets::Classes {
            classes: c.to_vec(),
            y: y.into_iter().map(|v| v.unwrap()).collect(),
        },
        (TargetKind::Classes, None) => unreachable!("the tests pass the classes"),
    };
    (x, targets, lines, names)
}

fn classes_of(ds: &Dataset) -> Option<Vec<String>> {
    match &ds.targets {
        Targets::Classes { classes, .. } => Some(classes.clone()),
        Targets::Real(_) => None,
    }
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs())
}

/// Checks the stream and the scan of `path` against the in-memory reader.
fn check_file(path: &Path, kind: TargetKind, lines: &[usize]) {
    let ds = read_table(path, None, kind, None, None).unwrap();
    let classes = classes_of(&ds);
    for chunk in [1, 7, 1000] {
        let (x, targets, got_lines, names) = drain(path, kind, None, classes.as_deref(), chunk);
        assert_eq!(x, ds.x, "{} chunk {chunk}", path.display());
        assert_eq!(targets, ds.targets, "{} chunk {chunk}", path.display());
        assert_eq!(got_lines, lines, "{} chunk {chunk}", path.display());
        assert_eq!(names, ds.feature_names);
    }
    for chunk in [1, 7, 1000] {
        let sum = scan(path, None, kind, chunk).unwrap();
        assert_eq!(sum.rows, ds.len());
        assert_eq!(sum.feature_names, ds.feature_names);
        assert_eq!(sum.n_features(), ds.n_features());
        assert_eq!(sum.classes, classes);
        let fit = Standardizer::fit(&ds.x);
        for j in 0..ds.n_features() {
            assert!(
                close(sum.standardizer.mean[j], fit.mean[j], 1e-12)
                    && close(sum.standardizer.scale[j], fit.scale[j], 1e-12),
                "{} chunk {chunk} column {j}: {} {} vs {} {}",
                path.display(),
                sum.standardizer.mean[j],
                sum.standardizer.scale[j],
                fit.mean[j],
                fit.scale[j]
            );
        }
        if chunk == 1000 {
            // One chunk: the very bits of `fit`.
            assert_eq!(sum.standardizer, fit);
        }
        match &ds.targets {
            Targets::Real(y) => {
                let want = TargetScaler::fit(y);
                let got = sum.target_scaler.clone().unwrap();
                assert!(close(got.mean, want.mean, 1e-12) && close(got.scale, want.scale, 1e-12));
            }
            Targets::Classes { .. } => assert!(sum.target_scaler.is_none()),
        }
    }
}

#[test]
fn shipped_csv_tables_plain_and_gzip() {
    let dir = tempfile::tempdir().unwrap();
    for &(name, kind) in TABLES {
        let path = uci(name);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines = csv_data_lines(&text);
        check_file(&path, kind, &lines);
        let gz = dir.path().join(format!("{name}.gz"));
        std::fs::write(&gz, gzip(text.as_bytes())).unwrap();
        check_file(&gz, kind, &lines);
    }
}

/// A CSV data set written as libsvm (zeros left out, a comment, a qid, blank lines).
fn to_libsvm(ds: &Dataset) -> (String, Vec<usize>) {
    let mut text = String::from("# written from a CSV table\n");
    let mut lines = Vec::new();
    for i in 0..ds.len() {
        if i % 50 == 7 {
            text.push('\n');
        }
        let label = match &ds.targets {
            Targets::Classes { classes, y } => classes[y[i]].clone(),
            Targets::Real(y) => format!("{}", y[i]),
        };
        text.push_str(&label);
        if i % 3 == 0 {
            text.push_str(" qid:1");
        }
        for (j, v) in ds.x.row(i).iter().enumerate() {
            if *v != 0.0 {
                text.push_str(&format!(" {}:{v}", j + 1));
            }
        }
        if i % 10 == 0 {
            text.push_str(" # row");
        }
        text.push('\n');
        lines.push(text.lines().count());
    }
    (text, lines)
}

#[test]
fn libsvm_files_plain_and_gzip() {
    let dir = tempfile::tempdir().unwrap();
    for &(name, kind) in &[TABLES[0], TABLES[3]] {
        let ds = read_table(&uci(name), None, kind, None, None).unwrap();
        let (text, lines) = to_libsvm(&ds);
        let path = dir.path().join(name.replace(".csv", ".svm"));
        std::fs::write(&path, &text).unwrap();
        check_file(&path, kind, &lines);
        let gz = dir.path().join(name.replace(".csv", ".libsvm.gz"));
        std::fs::write(&gz, gzip(text.as_bytes())).unwrap();
        check_file(&gz, kind, &lines);
        // A given feature count pads the rows, as in memory.
        let d = ds.n_features() + 3;
        let want = read_table(&path, None, kind, None, Some(d)).unwrap();
        let (x, ..) = drain(&path, kind, Some(d), classes_of(&ds).as_deref(), 7);
        assert_eq!(x, want.x);
    }
}

/// Several passes give the same rows; a pass may stop in the middle.
#[test]
fn rewind_reads_again() {
    let path = uci("glass.csv");
    let mut s = TableStream::open(&path, None, TargetKind::Classes, None).unwrap();
    let first = s.next_chunk(10).unwrap().unwrap();
    s.next_chunk(10).unwrap();
    s.rewind().unwrap();
    assert_eq!(s.rows_read(), 0);
    assert_eq!(s.next_chunk(10).unwrap().unwrap(), first);
    while s.next_chunk(64).unwrap().is_some() {}
    assert_eq!(s.rows_read(), 214);
    s.rewind().unwrap();
    assert_eq!(s.next_chunk(10).unwrap().unwrap(), first);
    let sum = multikernel::data::stream::summarize(&mut s, 33).unwrap();
    assert_eq!(sum.rows, 214);
    assert_eq!(sum.format, Format::Csv);
}

/// The message of the in-memory reader and of the stream, in every chunk size and in the
/// scan, for `bytes` written to `name` (plain and gzip).
fn same_error(dir: &Path, name: &str, bytes: &[u8], kind: TargetKind) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let want = read_table(&path, None, kind, None, None)
        .unwrap_err()
        .to_string();
    for chunk in [1, 7, 1000] {
        let got = TableStream::open(&path, None, kind, None).and_then(|mut s| {
            while s.next_chunk(chunk)?.is_some() {}
            Ok(())
        });
        assert_eq!(got.unwrap_err().to_string(), want, "{name} chunk {chunk}");
        let got = scan(&path, None, kind, chunk).unwrap_err().to_string();
        assert_eq!(got, want, "{name} scan chunk {chunk}");
    }
    let gz = dir.join(format!("{name}.gz"));
    std::fs::write(&gz, gzip(bytes)).unwrap();
    let want_gz = read_table(&gz, None, kind, None, None)
        .unwrap_err()
        .to_string();
    let got = scan(&gz, None, kind, 5).unwrap_err().to_string();
    assert_eq!(got, want_gz, "{name}.gz");
    want
}

#[test]
fn malformed_files_give_the_in_memory_messages() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: &[(&str, &[u8], TargetKind, &str)] = &[
        (
            "fields.csv",
            b"a,b,label\n1,2,x\n1,x\n",
            TargetKind::Classes,
            ":3: expected 3 fields, found 2",
        ),
        (
            "word.csv",
            b"a,b,label\n1,abc,x\n",
            TargetKind::Classes,
            ":2: field 2 'abc' is not a number",
        ),
        (
            "nan.csv",
            b"a,b,label\nNaN,1,x\n",
            TargetKind::Classes,
            ":2: field 1 'NaN' is not a finite number",
        ),
        (
            "inf.csv",
            b"a,b,y\n1,2,3\n1,-inf,4\n",
            TargetKind::Real,
            ":3: field 2 '-inf' is not a finite number",
        ),
        (
            "target.csv",
            b"a,b,y\n1,2,3\n1,2,high\n",
            TargetKind::Real,
            ":3: field 3 (the target) 'high'",
        ),
        (
            "empty-label.csv",
            b"a,b,label\n1,2,\n",
            TargetKind::Classes,
            ":2: field 3 (the target) is empty",
        ),
        (
            "quote.csv",
            b"a,b,label\n1,2,x\n1,2,\"x\n",
            TargetKind::Classes,
            ":3: field 3 has an unterminated quote",
        ),
        (
            "utf8.csv",
            b"a,label\n1,x\n\xFF,y\n",
            TargetKind::Classes,
            ":3: the line is not valid UTF-8",
        ),
        (
            "utf8-head.csv",
            b"\n\xFF,y\n",
            TargetKind::Classes,
            ":2: the line is not valid UTF-8",
        ),
        (
            "empty.csv",
            b"",
            TargetKind::Classes,
            ":1: no data rows (the file is empty)",
        ),
        (
            "blank.csv",
            b"\n \n",
            TargetKind::Classes,
            ":2: no data rows (the file is empty)",
        ),
        (
            "header.csv",
            b"a,b,label\n\n",
            TargetKind::Classes,
            ":2: no data rows",
        ),
        (
            "one-column.csv",
            b"label\n1\n",
            TargetKind::Classes,
            ":1: found 1 column",
        ),
        (
            "order.svm",
            b"+1 1:1\n-1 3:1 2:1\n",
            TargetKind::Classes,
            ":2: '2:1': feature index 2 after 3",
        ),
        (
            "zero.svm",
            b"+1 0:1\n",
            TargetKind::Classes,
            ":1: '0:1': feature indices start at 1",
        ),
        (
            "token.svm",
            b"+1 1:1\n-1 1-2\n",
            TargetKind::Classes,
            ":2: '1-2' is not index:value",
        ),
        (
            "value.svm",
            b"+1 1:1\n\n-1 2:Infinity\n",
            TargetKind::Classes,
            ":3: the value of feature 2 'Infinity'",
        ),
        (
            "label.svm",
            b"1 1:1\nabc 1:1\n",
            TargetKind::Real,
            ":2: the label 'abc' is not a number",
        ),
        (
            "nolabel.svm",
            b"1 1:1\n2:1 3:1\n",
            TargetKind::Classes,
            ":2: '2:1' is not a label",
        ),
        (
            "utf8.svm",
            b"1 1:1\n\xC3\x28 1:1\n",
            TargetKind::Classes,
            ":2: the line is not valid UTF-8",
        ),
        ("empty.svm", b"", TargetKind::Classes, ":1: no data rows"),
        (
            "comments.svm",
            b"# only\n\n",
            TargetKind::Classes,
            ":2: no data rows",
        ),
        (
            "bom-only.csv",
            b"\xEF\xBB\xBF",
            TargetKind::Classes,
            ":1: no data rows (the file is empty)",
        ),
    ];
    for (name, bytes, kind, want) in cases {
        let msg = same_error(d, name, bytes, *kind);
        assert!(
            msg.contains(&format!("{name}{want}")),
            "{name}: '{msg}' lacks '{want}'"
        );
    }
    // A stray huge index: the same memory error (no 2 GiB allocation).
    let msg = same_error(d, "huge.svm", b"1 1:1 268435456:1\n", TargetKind::Classes);
    assert!(msg.contains("268435456") && msg.contains("line 1"), "{msg}");
    // No format from the name or the content.
    let msg = same_error(d, "noformat", b"# x\nhello world\n", TargetKind::Classes);
    assert!(msg.contains("cannot tell the data format"), "{msg}");
}

/// A bad row deep in a large file is reported at its line, after 3000 good rows have been
/// streamed.
#[test]
fn bad_row_deep_in_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("u,v,w,label\n");
    let mut svm = String::new();
    for i in 1..=5000 {
        let row = if i == 3000 {
            "0.5,oops,1,b".to_string()
        } else {
            format!("{},{},{},{}", i, i % 7, 0.25 * i as f64, ["a", "b"][i % 2])
        };
        csv.push_str(&row);
        csv.push('\n');
        svm.push_str(&if i == 3001 {
            "+1 1:2 4:1 2:5".to_string()
        } else {
            format!("{} 1:{} 4:{}", ["-1", "+1"][i % 2], i, i % 5)
        });
        svm.push('\n');
    }
    let msg = same_error(dir.path(), "deep.csv", csv.as_bytes(), TargetKind::Classes);
    assert!(
        msg.ends_with("deep.csv:3001: field 2 'oops' is not a number"),
        "{msg}"
    );
    let msg = same_error(dir.path(), "deep.svm", svm.as_bytes(), TargetKind::Classes);
    assert!(
        msg.ends_with("deep.svm:3001: '2:5': feature index 2 after 4, indices must increase"),
        "{msg}"
    );
    // The rows before it come out in order, then the error.
    let path = dir.path().join("deep.csv");
    let mut s = TableStream::open(&path, None, TargetKind::Classes, None).unwrap();
    let mut rows = 0;
    let err = loop {
        match s.next_chunk(256) {
            Ok(Some(c)) => {
                assert_eq!(c.lines[0], rows + 2);
                rows += c.len();
            }
            Ok(None) => panic!("the bad row was not reported"),
            Err(e) => break e,
        }
    };
    assert_eq!(rows, 2816, "the chunks before the one holding line 3001");
    assert!(err.to_string().contains("deep.csv:3001:"), "{err}");
    // After an error the stream refuses to go on, until rewound.
    assert!(s.next_chunk(1).is_err());
    s.rewind().unwrap();
    assert_eq!(s.next_chunk(3).unwrap().unwrap().lines, vec![2, 3, 4]);
}

/// The format from the name, given, or sniffed from the first data line.
#[test]
fn formats_from_names_and_content() {
    let dir = tempfile::tempdir().unwrap();
    let svm = dir.path().join("data");
    std::fs::write(&svm, "\n# c\n+1 1:0.5 3:2\n-1 2:1\n").unwrap();
    let s = TableStream::open(&svm, None, TargetKind::Classes, None).unwrap();
    assert_eq!((s.format(), s.n_features()), (Format::Libsvm, 3));
    let csv = dir.path().join("table");
    std::fs::write(&csv, "\n# c,d,label\n1,2,x\n").unwrap();
    let mut s = TableStream::open(&csv, None, TargetKind::Classes, None).unwrap();
    assert_eq!(s.format(), Format::Csv);
    assert_eq!(s.feature_names(), ["# c", "d"]);
    let c = s.next_chunk(5).unwrap().unwrap();
    assert_eq!(
        (c.x.data.as_slice(), c.lines.as_slice()),
        (&[1.0, 2.0][..], &[3][..])
    );
    let s = TableStream::open(&csv, Some(Format::Csv), TargetKind::Classes, Some(2)).unwrap();
    assert_eq!(s.n_features(), 2);
    let e = TableStream::open(&csv, Some(Format::Csv), TargetKind::Classes, Some(3)).unwrap_err();
    assert!(
        e.to_string()
            .contains("table:2: 2 feature columns, expected 3"),
        "{e}"
    );
    let e = TableStream::open(
        &dir.path().join("missing.csv"),
        None,
        TargetKind::Classes,
        None,
    )
    .unwrap_err();
    assert!(e.to_string().contains("missing.csv"), "{e}");
}

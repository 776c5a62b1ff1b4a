//! Helpers shared by the end-to-end tests of the `multikernel` binary.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// The binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_multikernel"))
}

/// A path of the repository as text (shipped data, templates).
pub fn repo(p: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(p)
        .to_str()
        .unwrap()
        .to_string()
}

/// A shipped UCI table.
pub fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../data/uci/{name}"))
}

pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("binary runs")
}

/// Standard output and standard error as text.
pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

/// The start of `train` for a tagger on the CRF++ columns `train` (no selection); the caller
/// adds the templates, the learner, its settings and `--out`.
pub fn columns_train_args(train: &str) -> Vec<&str> {
    vec![
        "train", "--select", "none", "--task", "sequence", "--format", "columns", "--data", train,
    ]
}

/// Runs and asserts success; returns standard output.
pub fn ok(args: &[&str]) -> String {
    let o = run(args);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{args:?}\nstdout {out}\nstderr {err}");
    out
}

/// Fails with a message containing every `needle`, a non-zero exit code (1 for our errors, 2
/// for clap's usage errors), and no panic.
pub fn assert_clean_error(o: &Output, needles: &[&str]) {
    let (out, err) = text(o);
    assert!(
        matches!(o.status.code(), Some(1) | Some(2)),
        "stdout {out}\nstderr {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    for n in needles {
        assert!(err.contains(n), "expected '{n}' in: {err}");
    }
}

/// Writes generated ringnorm rows (`multikernel generate`, 20 features and a label) and
/// returns the path.
pub fn ringnorm(dir: &std::path::Path, name: &str, n: usize, seed: u64) -> String {
    let p = dir.join(name).to_str().unwrap().to_string();
    let (n, seed) = (n.to_string(), seed.to_string());
    ok(&[
        "generate", "ringnorm", "--n", &n, "--seed", &seed, "--out", &p,
    ]);
    p
}

/// Copies of the ringnorm file `good` (at least 4,001 rows) with line 4,001 (the header is
/// line 1) replaced by a malformed row: a word in a number's place, a ragged row, a NaN.
/// Returns each file's name, path, and a piece of the message it must give.
pub fn bad_rows_at_line_4001(
    dir: &std::path::Path,
    good: &str,
) -> Vec<(&'static str, String, &'static str)> {
    let text = std::fs::read_to_string(good).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() > 4001, "{good}: too few rows");
    [
        (
            "word.csv",
            "1,2,oops,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,1",
            "oops",
        ),
        ("ragged.csv", "1,2,3", "expected 21 fields"),
        (
            "nan.csv",
            "1,2,NaN,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,1",
            "NaN",
        ),
    ]
    .into_iter()
    .map(|(name, bad_row, needle)| {
        let mut t = lines[..4000].join("\n");
        t.push('\n');
        t.push_str(bad_row);
        t.push('\n');
        t.push_str(&lines[4001..].join("\n"));
        t.push('\n');
        let path = dir.join(name);
        std::fs::write(&path, t).unwrap();
        (name, path.to_str().unwrap().to_string(), needle)
    })
    .collect()
}

/// Names in `dir` that look like temporary files of an atomic write.
pub fn temp_files(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.contains(".tmp") || n.starts_with('.'))
        .collect()
}

/// The columns file of issue 46's label-pair finding with `labels` labels (250 there: the
/// bytes `benches/hostile/memory.sh` writes): 400 tokens in sentences of 20, token `t` the
/// line `w{t % 37} f{t % 11} L{t % labels}` (the label zero-padded to 3 digits). Written
/// to `dir` with its templates (`U00:%x[0,0]` and the bigram template with macros
/// `B01:%x[0,1]`); returns the two paths.
pub fn label_pair_files(dir: &std::path::Path, labels: usize) -> (String, String) {
    let mut text = String::new();
    for t in 0..400 {
        text.push_str(&format!("w{} f{} L{:03}\n", t % 37, t % 11, t % labels));
        if t % 20 == 19 {
            text.push('\n');
        }
    }
    let data = dir.join(format!("label-pairs-{labels}.txt"));
    let tpl = dir.join("label-pairs.tpl");
    std::fs::write(&data, text).unwrap();
    std::fs::write(&tpl, "U00:%x[0,0]\nB01:%x[0,1]\n").unwrap();
    (
        data.to_str().unwrap().to_string(),
        tpl.to_str().unwrap().to_string(),
    )
}

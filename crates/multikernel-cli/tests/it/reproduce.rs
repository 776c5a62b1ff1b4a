//! `multikernel reproduce`: the flags are the library's options
//! (`multikernel_experiments::options`, with its `clap` feature), their defaults are the
//! options' `Default`, bad values fail by flag before any data is read and leave no JSON
//! file, and a small `reproduce uci` run prints the table and writes the rows, the tables
//! and the splits that the library's own run of the same options gives.

use clap::Parser;
use multikernel_experiments::options::{
    GompOptions, MirrorDescentOptions, MtlOptions, OcrOptions, ParsingOptions, Reproduction,
    UciOptions, WrappersOptions,
};
use std::path::PathBuf;

use crate::common::*;

/// `reproduce`'s subcommands as the CLI mounts them.
#[derive(Parser)]
struct Reproduce {
    #[command(subcommand)]
    r: Reproduction,
}

fn parse(args: &[&str]) -> Reproduction {
    let line = std::iter::once("reproduce").chain(args.iter().copied());
    Reproduce::try_parse_from(line).expect("the line parses").r
}

#[test]
fn the_defaults_of_the_flags_are_the_defaults_of_the_options() {
    let cases = [
        ("uci", Reproduction::Uci(UciOptions::default())),
        ("ocr", Reproduction::Ocr(OcrOptions::default())),
        ("gomp", Reproduction::Gomp(GompOptions::default())),
        (
            "mirror-descent",
            Reproduction::MirrorDescent(MirrorDescentOptions::default()),
        ),
        ("parsing", Reproduction::Parsing(ParsingOptions::default())),
        ("mtl", Reproduction::Mtl(MtlOptions::default())),
        (
            "wrappers",
            Reproduction::Wrappers(WrappersOptions::default()),
        ),
    ];
    for (name, default) in cases {
        assert_eq!(parse(&[name]), default, "reproduce {name}");
    }
    // A flag given reaches its field.
    let Reproduction::Mtl(m) = parse(&["mtl", "--spom-eta0", "0.5,2", "--json", "r.json"]) else {
        panic!("not mtl")
    };
    assert_eq!(m.spom_eta0, [0.5, 2.0]);
    assert_eq!(m.output.json, Some(PathBuf::from("r.json")));
}

/// Bad values fail by their flag even with a data directory that does not exist (the
/// options are checked first), exit 1, and write no JSON.
#[test]
fn bad_options_fail_by_flag_before_reading_data() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("rows.json");
    let json = json.to_str().unwrap();
    let missing = dir.path().join("missing");
    let missing = missing.to_str().unwrap();
    let cases: [(&[&str], &str); 9] = [
        (
            &["wrappers", "--first-epochs", "0"],
            "--first-epochs 0: expected at least 1",
        ),
        (
            &["mtl", "--data-dir", missing, "--eps=-1"],
            "--eps -1: expected a positive number",
        ),
        (
            &["mtl", "--data-dir", missing, "--max-iter", "0"],
            "--max-iter 0: expected at least 1",
        ),
        (
            &["mtl", "--data-dir", missing, "--spom-eta0=0.1,-2"],
            "--spom-eta0 -2",
        ),
        (
            &["parsing", "--data-dir", missing, "--support", "some"],
            "--support some: expected gold or all",
        ),
        (
            &["parsing", "--data-dir", missing, "--datasets", "web,imdb"],
            "--datasets imdb",
        ),
        (
            &["mirror-descent", "--data-dir", missing, "--figures", "4"],
            "--figures 4: expected 1, 2 or 3",
        ),
        (
            &[
                "mirror-descent",
                "--data-dir",
                missing,
                "--memory-limit-gb",
                "0",
            ],
            "--memory-limit-gb 0",
        ),
        (
            &["uci", "--data-dir", missing, "--methods", "linear,bogus"],
            "--methods bogus",
        ),
    ];
    for (args, needle) in cases {
        let mut line = vec!["reproduce"];
        line.extend_from_slice(args);
        line.extend(["--json", json]);
        let o = run(&line);
        assert_eq!(o.status.code(), Some(1), "{line:?}");
        assert_clean_error(&o, &[needle]);
        assert!(
            !std::path::Path::new(json).exists(),
            "{line:?} wrote {json}"
        );
    }
    // A missing data directory is then named.
    let o = run(&[
        "reproduce",
        "uci",
        "--data-dir",
        missing,
        "--datasets",
        "sonar",
    ]);
    assert_clean_error(&o, &["missing"]);
}

/// The rows without their timing fields.
fn rows(json: &serde_json::Value) -> Vec<serde_json::Value> {
    let mut rows = json["rows"].as_array().expect("rows").clone();
    for r in &mut rows {
        let r = r.as_object_mut().unwrap();
        r.retain(|k, _| !k.ends_with("seconds") && !k.ends_with("_s"));
    }
    rows
}

#[test]
fn a_small_uci_run_prints_writes_and_equals_the_library_run() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("uci.json");
    let out_dir = dir.path().join("out");
    let data_dir = data("");
    let args = [
        "uci",
        "--data-dir",
        data_dir.to_str().unwrap(),
        "--datasets",
        "sonar",
        "--splits",
        "2",
        "--epochs",
        "2",
        "--methods",
        "linear,mkl-l21sq",
        "--c-grid",
        "1,10",
        "--eta0-grid",
        "1",
        "--no-inv",
        "--json",
        json.to_str().unwrap(),
        "--out-dir",
        out_dir.to_str().unwrap(),
    ];
    let mut line = vec!["reproduce"];
    line.extend_from_slice(&args);
    let stdout = ok(&line);
    assert!(stdout.contains("| sonar | linear |"), "{stdout}");
    assert!(stdout.contains("| sonar | mkl-l21sq |"), "{stdout}");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(written["experiment"], "uci");
    let methods: Vec<&str> = written["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["method"].as_str().unwrap())
        .collect();
    assert_eq!(methods, ["linear", "mkl-l21sq"]);
    // The tables and splits a peer's script reads.
    let splits: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("uci-splits.json")).unwrap())
            .unwrap();
    let sonar = &splits["tables"][0];
    assert_eq!(sonar["name"], "sonar");
    assert_eq!(sonar["splits"].as_array().unwrap().len(), 2);
    let (train, test) = (&sonar["splits"][0]["train"], &sonar["splits"][0]["test"]);
    let rows_in_csv = std::fs::read_to_string(out_dir.join("data/sonar.csv"))
        .unwrap()
        .lines()
        .count()
        - 1;
    assert_eq!(
        train.as_array().unwrap().len() + test.as_array().unwrap().len(),
        rows_in_csv
    );
    // The library's run of the options these flags parse to gives the same rows.
    let mut options = parse(&args);
    if let Reproduction::Uci(o) = &mut options {
        o.output = Default::default();
    }
    let report = options.run(&|_| {}).unwrap();
    let again: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(rows(&again), rows(&written));
}

//! The learner flags of `train` are the library's registry settings, and the library's
//! errors name the flag that sets a parameter (issue 47: these were unit tests of the
//! binary's `train.rs` and `errors.rs`; through the binary, it needs no test harness).

use crate::common::{assert_clean_error, data, ok, run, text};
use multikernel::estimator::registry::{Domain, SETTINGS, STRENGTH};
use multikernel::estimator::LearnerKind;

/// `train` on the shipped sonar table with `extra` flags, its model written into `dir`.
fn train(dir: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let d = data("sonar.csv");
    let out = dir.join("m.model");
    let mut line = vec![
        "train",
        "--data",
        d.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    line.extend_from_slice(extra);
    run(&line)
}

/// Every flag the registry names (current and deprecated) is a flag of `train`, seen as its
/// registry setting: given to a learner that does not take it, the refusal names the
/// learners the setting lists.
#[test]
fn the_cli_flags_are_the_registry_settings() {
    let dir = tempfile::tempdir().unwrap();
    for s in SETTINGS {
        let other = LearnerKind::ALL
            .into_iter()
            .find(|k| !s.learners.contains(k))
            .unwrap_or_else(|| panic!("{}: every learner takes it", s.name));
        let names: Vec<&str> = s.learners.iter().map(|k| k.name()).collect();
        for flag in std::iter::once(s.flag).chain(s.deprecated_flags.iter().copied()) {
            let mut extra = vec!["--algo", other.name(), flag];
            if s.domain != Domain::Switch {
                extra.push("2");
            }
            let o = train(dir.path(), &extra);
            let expected = format!(
                "{flag} applies to --algo {}, not to --algo {}",
                names.join(" or "),
                other.name()
            );
            assert_clean_error(&o, &[&expected]);
        }
    }
}

/// The regularization constant's registry entries are `train`'s `--C` and `--lambda`: every
/// learner takes them, and the two exclude each other.
#[test]
fn c_and_lambda_are_the_registry_strength() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        STRENGTH.iter().map(|s| s.flag).collect::<Vec<_>>(),
        ["--C", "--lambda"]
    );
    for s in STRENGTH {
        assert_eq!(s.learners, LearnerKind::ALL);
    }
    let o = train(
        dir.path(),
        &["--algo", "lp-mkl", "--p", "2", "--C", "1", "--lambda", "1"],
    );
    let (_, err) = text(&o);
    assert!(!o.status.success() && err.contains("--lambda"), "{err}");
}

/// A value outside a setting's domain is refused in the words of the command line: the
/// flag, the value, what was expected (`C`, every learner setting with a number or a norm,
/// the step schedule). A parameter no flag sets keeps its name (the data set of `generate`).
#[test]
fn parameters_become_flags() {
    let dir = tempfile::tempdir().unwrap();
    for s in SETTINGS {
        if !matches!(
            s.domain,
            Domain::PositiveReal | Domain::NonNegativeReal | Domain::Norm | Domain::Count
        ) {
            continue;
        }
        let o = train(dir.path(), &["--algo", s.learners[0].name(), s.flag, "x"]);
        let expected = format!("error: {} x: expected {}", s.flag, s.domain.describe());
        assert_clean_error(&o, &[&expected]);
    }
    let cases: [(&[&str], &str); 4] = [
        (
            &["--algo", "gomp", "--max-kernels", "0"],
            "--max-kernels 0: expected an integer, at least 1",
        ),
        (
            &["--algo", "ucd", "--degree", "0"],
            "--degree 0: expected an integer, at least 1",
        ),
        (
            &["--algo", "online", "--C", "-1"],
            "--C -1: expected a positive number",
        ),
        (
            &["--algo", "online", "--schedule", "inv:sigma=-1"],
            "--schedule inv:sigma=-1: expected",
        ),
    ];
    for (extra, expected) in cases {
        assert_clean_error(&train(dir.path(), extra), &[expected]);
    }
    let out = dir.path().join("g.csv");
    let o = run(&[
        "generate",
        "no-such-set",
        "--n",
        "5",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_clean_error(&o, &["error: data set no-such-set: expected"]);
}

/// The flags the error messages name for parameters called otherwise (`learner`, `kernels`,
/// `regularizer`, `sigma`, `averaging`) are flags of `train`.
#[test]
fn mapped_flags_are_real_flags() {
    let help = ok(&["train", "--help"]);
    for flag in ["--algo", "--kernel", "--reg", "--schedule", "--average"] {
        assert!(
            help.lines()
                .any(|l| l.split([' ', ',', '=']).any(|w| w == flag)),
            "{flag} is not a train flag:\n{help}"
        );
    }
}

/// A flag of another learner names that learner; a deprecated flag is the same setting as
/// its current one (the same model file, a warning).
#[test]
fn a_flag_of_another_learner_names_its_learners() {
    let dir = tempfile::tempdir().unwrap();
    let o = train(dir.path(), &["--algo", "online", "--max-iter", "5"]);
    assert_clean_error(&o, &["--max-iter applies to --algo mirror-descent"]);
    let model = |flag: &str, n: &str| {
        let o = train(
            dir.path(),
            &["--select", "none", "--algo", "ucd", flag, n, "--seed", "3"],
        );
        let (out, err) = text(&o);
        assert!(o.status.success(), "{flag} {n}\nstdout {out}\nstderr {err}");
        (std::fs::read(dir.path().join("m.model")).unwrap(), err)
    };
    let (current, err) = model("--max-iter", "7");
    assert!(!err.contains("deprecated"), "{err}");
    let (deprecated, err) = model("--iterations", "7");
    assert!(
        err.contains("warning: --iterations is deprecated; use --max-iter"),
        "{err}"
    );
    assert!(
        deprecated == current,
        "--iterations 7 and --max-iter 7 differ"
    );
    let (other, _) = model("--max-iter", "8");
    assert!(other != current, "--max-iter is not the iteration count");
}

//! Helpers shared by the end-to-end tests of the `multikernel` binary.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// The binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_multikernel"))
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

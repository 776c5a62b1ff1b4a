//! Checkpoints and resume (issue 32, item 3): `train --checkpoint F` killed with SIGKILL
//! once its checkpoint has reached a seeded epoch, then `--resume F` (killed again, and
//! again, then left to finish) writes the model of the run that was never stopped, byte
//! for byte; a checkpoint of other data, other settings, a corrupt or missing one is
//! refused. `KILLS` seeded kills per family here; `benches/checkpoint_kills.sh` runs the
//! long loop by hand.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::*;

/// The step of the checkpoint at `path`, if one is there.
fn saved_step(path: &Path) -> Option<u64> {
    let bytes = std::fs::read(path).ok()?;
    multikernel::checkpoint::from_bytes(&bytes, path)
        .ok()
        .map(|c| c.header.step)
}

/// Runs `train args --out out` plus the checkpoint flags, and SIGKILLs it as soon as its
/// checkpoint reaches step `kill_at` (or lets it finish). Returns whether it was killed.
fn run_until(args: &[String], out: &Path, extra: &[&str], ck: &Path, kill_at: u64) -> bool {
    let mut child = bin()
        .args(args)
        .arg("--out")
        .arg(out)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{args:?} {extra:?} failed");
            return false;
        }
        if saved_step(ck).is_some_and(|s| s >= kill_at) {
            let _ = child.kill(); // SIGKILL
            child.wait().unwrap();
            return true;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "{args:?} hangs");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The uninterrupted model of `args`, then `kills` seeded kills (each at a later epoch than
/// the last checkpoint) and resumes, then a resume to the end: the same bytes.
fn killed_and_resumed_is_uninterrupted(name: &str, args: &[&str], epochs: u64, kills: usize) {
    killed_and_resumed_with(name, args, &[], epochs, kills)
}

/// [`killed_and_resumed_is_uninterrupted`] with `ck_flags` (`--checkpoint-every N`) given to
/// every checkpointed run (resumed ones save to the same file with `--checkpoint`);
/// `steps`: the steps of the whole run (epochs, chunks of rows, cuts).
fn killed_and_resumed_with(name: &str, args: &[&str], ck_flags: &[&str], steps: u64, kills: usize) {
    let epochs = steps;
    let dir = tempfile::tempdir().unwrap();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let full = dir.path().join("full.model");
    let o = bin().args(&args).arg("--out").arg(&full).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let want = std::fs::read(&full).unwrap();
    let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(0x636b);
    let ck = dir.path().join("run.ckpt");
    let ck_s = ck.to_str().unwrap().to_string();
    let out = dir.path().join("m.model");
    let mut killed = 0;
    for k in 0..=kills {
        let last = saved_step(&ck).unwrap_or(0);
        let kill_at = if k == kills || last + 1 >= epochs {
            u64::MAX
        } else {
            rand::Rng::gen_range(&mut rng, last + 1..epochs)
        };
        let mut extra: Vec<&str> = if saved_step(&ck).is_some() {
            vec!["--resume", &ck_s]
        } else {
            vec!["--checkpoint", &ck_s]
        };
        if !ck_flags.is_empty() {
            if extra[0] == "--resume" {
                extra.extend_from_slice(&["--checkpoint", &ck_s]);
            }
            extra.extend_from_slice(ck_flags);
        }
        if run_until(&args, &out, &extra, &ck, kill_at) {
            killed += 1;
            assert!(!out.exists(), "{name}: a killed run wrote a model");
        } else {
            break;
        }
    }
    assert!(killed >= 1, "{name}: no run was killed");
    assert_eq!(
        std::fs::read(&out).unwrap(),
        want,
        "{name}: resumed after {killed} kills, not the uninterrupted model"
    );
}

fn table_args(data: &str) -> Vec<String> {
    [
        "train", "--select", "none", "--data", data, "--kernel", "rbf", "--kernel", "linear",
        "--C", "1", "--seed", "7", "--epochs", "40",
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn tables_resume_to_the_uninterrupted_model() {
    let d = data("pima-diabetes.csv");
    let a = table_args(d.to_str().unwrap());
    let a: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
    killed_and_resumed_is_uninterrupted("table", &a, 40, 3);
}

#[test]
#[ignore = "full tier: OCR sequence runs killed and resumed, 11 s"]
fn ocr_sequences_resume_to_the_uninterrupted_model() {
    let d = repo("data/ocr/letter.data.gz");
    let a = [
        "train",
        "--select",
        "none",
        "--task",
        "sequence",
        "--data",
        &d,
        "--train-folds",
        "0",
        "--epochs",
        "8",
        "--C",
        "1",
        "--seed",
        "3",
    ];
    killed_and_resumed_is_uninterrupted("ocr", &a, 8, 3);
}

#[test]
#[ignore = "full tier: TWT parser runs killed and resumed, 11 s"]
fn parsers_resume_to_the_uninterrupted_model() {
    let d = repo("data/treebank/tr-web.conllu.gz");
    let a = [
        "train",
        "--select",
        "none",
        "--task",
        "parsing",
        "--data",
        &d,
        "--train-folds",
        "0",
        "--validation-folds",
        "8",
        "--epochs",
        "8",
        "--lambda",
        "1e-3",
    ];
    killed_and_resumed_is_uninterrupted("parser", &a, 8, 3);
}

/// The tree CRF at the default step on the Turkish Web Treebank (issue 46: its loss was NaN
/// on sentences whose arcs form cycles far above every tree, the checkpoint stored `null`
/// and `--resume` failed): killed and resumed, the uninterrupted model's bytes.
#[test]
#[ignore = "full tier: CRF parser runs killed and resumed, 6 s"]
fn crf_parsers_resume_to_the_uninterrupted_model() {
    let d = repo("data/treebank/tr-web.conllu.gz");
    let a = [
        "train",
        "--task",
        "parsing",
        "--loss",
        "crf",
        "--data",
        &d,
        "--train-folds",
        "0",
        "--epochs",
        "6",
        "--lambda",
        "1e-3",
    ];
    killed_and_resumed_is_uninterrupted("crf parser", &a, 6, 3);
}

/// Sharded epochs (`--shards 2`: parallel passes mixed at the epoch's end) resume at an
/// epoch boundary to the uninterrupted model too.
#[test]
#[ignore = "full tier: sharded OCR and parser runs killed and resumed, 15 s"]
fn sharded_ocr_and_parser_runs_resume_to_the_uninterrupted_model() {
    let d = repo("data/ocr/letter.data.gz");
    let a = [
        "train",
        "--select",
        "none",
        "--task",
        "sequence",
        "--data",
        &d,
        "--train-folds",
        "0",
        "--epochs",
        "6",
        "--C",
        "1",
        "--seed",
        "3",
        "--shards",
        "2",
    ];
    killed_and_resumed_is_uninterrupted("ocr-shards", &a, 6, 2);
    let d = repo("data/treebank/tr-web.conllu.gz");
    let a = [
        "train",
        "--select",
        "none",
        "--task",
        "parsing",
        "--data",
        &d,
        "--train-folds",
        "0",
        "--validation-folds",
        "8",
        "--epochs",
        "6",
        "--lambda",
        "1e-3",
        "--shards",
        "2",
    ];
    killed_and_resumed_is_uninterrupted("parser-shards", &a, 6, 2);
}

/// Epochs in parallel mini-batches (`--batch 3`: decodings in parallel, updates in order)
/// resume at an epoch boundary to the uninterrupted model too.
#[test]
#[ignore = "full tier: batched OCR runs killed and resumed, 4 s"]
fn batched_ocr_runs_resume_to_the_uninterrupted_model() {
    let d = repo("data/ocr/letter.data.gz");
    let a = [
        "train",
        "--select",
        "none",
        "--task",
        "sequence",
        "--data",
        &d,
        "--train-folds",
        "0",
        "--epochs",
        "6",
        "--C",
        "1",
        "--seed",
        "3",
        "--batch",
        "3",
    ];
    killed_and_resumed_is_uninterrupted("ocr-batch", &a, 6, 2);
}

#[test]
#[ignore = "full tier: template tagger runs killed and resumed, 5 s"]
fn template_taggers_resume_to_the_uninterrupted_model() {
    let dir = tempfile::tempdir().unwrap();
    let tb = repo("data/treebank/tr-web.conllu.gz");
    let train = dir.path().join("train.txt");
    let dev = dir.path().join("dev.txt");
    for (folds, p) in [("0", &train), ("8", &dev)] {
        ok(&[
            "convert",
            "--data",
            &tb,
            "--folds",
            folds,
            "--out",
            p.to_str().unwrap(),
        ]);
    }
    let tpl = repo("data/tagging/twt-upos-small.templates");
    for schedule in ["sqrt", "adagrad"] {
        let mut a = columns_train_args(train.to_str().unwrap());
        a.extend([
            "--templates",
            &tpl,
            "--C",
            "1",
            "--validation",
            dev.to_str().unwrap(),
            "--algo",
            "online",
            "--schedule",
            schedule,
            "--epochs",
            "8",
        ]);
        killed_and_resumed_is_uninterrupted(&format!("tagger {schedule}"), &a, 8, 2);
    }
}

/// The structured selection (no `--C`) keeps checkpoints of its refit: the candidates run
/// without them, then the chosen one trains again with the checkpoints, and a run killed in
/// that refit and resumed (the selection runs again, to the same choice) gives the model of
/// the uninterrupted run.
#[test]
#[ignore = "full tier: selected tagger runs killed and resumed, 40 s"]
fn the_structured_selection_checkpoints_its_refit() {
    let dir = tempfile::tempdir().unwrap();
    let train = dir.path().join("train.txt");
    let dev = dir.path().join("dev.txt");
    columns("0", &train);
    columns("8", &dev);
    // Three of the small set's templates and the label pair: a quick tagger.
    let tpl_path = dir.path().join("t.templates");
    std::fs::write(&tpl_path, "U00:%x[0,1]\nU01:%x[0,4]\nU02:%x[-1,1]\nB\n").unwrap();
    let tpl = tpl_path.to_str().unwrap().to_string();
    let args = [
        "train",
        "--task",
        "sequence",
        "--format",
        "columns",
        "--data",
        train.to_str().unwrap(),
        "--templates",
        &tpl,
        "--validation",
        dev.to_str().unwrap(),
    ];
    // The refit's steps (cuts or epochs), from the uninterrupted run's last line.
    let out = dir.path().join("once.model");
    let ck = dir.path().join("once.ckpt");
    let mut once: Vec<&str> = args.to_vec();
    once.extend([
        "--out",
        out.to_str().unwrap(),
        "--checkpoint",
        ck.to_str().unwrap(),
    ]);
    once.extend(["--checkpoint-every", "1"]);
    let o = bin().args(&once).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{err}");
    assert!(err.contains("selected "), "{err}");
    assert!(!err.contains("keeps no checkpoints"), "{err}");
    let steps: u64 = err
        .lines()
        .last()
        .and_then(|l| l.split(", ").nth(1))
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no step count in {err}"));
    killed_and_resumed_with(
        "selected tagger",
        &args,
        &["--checkpoint-every", "1"],
        steps,
        2,
    );
}

/// Converts `folds` of the TWT web treebank to CRF++ columns at `out`.
fn columns(folds: &str, out: &Path) {
    let tb = repo("data/treebank/tr-web.conllu.gz");
    ok(&[
        "convert",
        "--data",
        &tb,
        "--folds",
        folds,
        "--out",
        out.to_str().unwrap(),
    ]);
}

/// Multi-template learning (the cutting plane, block norm `q`): `--max-iter` cuts with an
/// epsilon too small to converge first, the small templates on one fold.
fn mtl_args(train: &str, tpl: &str, cuts: &str, q: &str) -> Vec<String> {
    let mut a = columns_train_args(train);
    a.extend(["--templates", tpl, "--C", "1", "--algo", "mtl", "--q", q]);
    a.extend(["--eps", "1e-6", "--max-iter", cuts]);
    a.into_iter().map(String::from).collect()
}

#[test]
#[ignore = "full tier: mtl tagger runs killed and resumed, 30 s"]
fn multi_template_learning_resumes_to_the_uninterrupted_model() {
    let dir = tempfile::tempdir().unwrap();
    let train = dir.path().join("train.txt");
    columns("0", &train);
    let tpl = repo("data/tagging/twt-upos-small.templates");
    // q = 4 separates between the best point and the working set's solution, a state of
    // its own in the checkpoint.
    for (q, name) in [("1", "mtl"), ("4", "mtl-q4")] {
        let a = mtl_args(train.to_str().unwrap(), &tpl, "30", q);
        let a: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
        killed_and_resumed_with(name, &a, &["--checkpoint-every", "1"], 30, 3);
    }
}

/// A generated ringnorm table of `n` rows (seed `seed`) at `out`.
fn ringnorm(n: &str, seed: &str, out: &Path) {
    ok(&[
        "generate",
        "ringnorm",
        "--n",
        n,
        "--seed",
        seed,
        "--out",
        out.to_str().unwrap(),
    ]);
}

fn stream_args(data: &str) -> Vec<String> {
    [
        "train",
        "--stream",
        "--data",
        data,
        "--C",
        "1",
        "--epochs",
        "2",
        "--seed",
        "4",
        "--chunk-rows",
        "1000",
        "--shuffle-rows",
        "3000",
    ]
    .map(String::from)
    .to_vec()
}

/// `--stream` over 12,000 rows (two epochs of 6 blocks, 24 checkpoint steps of 1,000 rows):
/// killed inside epochs, resumed by replaying the epoch's shuffle buffer.
#[test]
#[ignore = "full tier: --stream runs killed and resumed, 7 s"]
fn streams_resume_to_the_uninterrupted_model() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("ring.csv");
    ringnorm("12000", "1", &data);
    let a = stream_args(data.to_str().unwrap());
    let a: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
    killed_and_resumed_is_uninterrupted("stream", &a, 24, 3);
}

/// A checkpoint of multi-template learning or of a stream is refused for other data, and
/// for other settings (another epsilon; another shuffle buffer).
#[test]
fn mtl_and_stream_checkpoints_of_other_data_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let tpl = repo("data/tagging/twt-upos-small.templates");
    columns("0", Path::new(&p("f0.txt")));
    columns("1", Path::new(&p("f1.txt")));
    let ck = p("mtl.ckpt");
    let mut a = mtl_args(&p("f0.txt"), &tpl, "3", "1");
    a.extend(
        [
            "--out",
            &p("m"),
            "--checkpoint",
            &ck,
            "--checkpoint-every",
            "1",
        ]
        .map(String::from),
    );
    let a: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
    assert!(run(&a).status.success());
    assert!(saved_step(Path::new(&ck)).is_some_and(|s| s >= 1));
    let mut other = mtl_args(&p("f1.txt"), &tpl, "3", "1");
    other.extend(["--out", &p("m2"), "--resume", &ck].map(String::from));
    let other: Vec<&str> = other.iter().map(|s| s.as_str()).collect();
    assert_clean_error(&run(&other), &["written for other data"]);
    let mut other = mtl_args(&p("f0.txt"), &tpl, "3", "1");
    let eps = other.iter().position(|s| s == "--eps").unwrap() + 1;
    other[eps] = "1e-5".into();
    other.extend(["--out", &p("m2"), "--resume", &ck].map(String::from));
    let other: Vec<&str> = other.iter().map(|s| s.as_str()).collect();
    assert_clean_error(&run(&other), &["written for other settings"]);

    ringnorm("3000", "1", Path::new(&p("r1.csv")));
    ringnorm("3000", "2", Path::new(&p("r2.csv")));
    let ck = p("stream.ckpt");
    let mut a = stream_args(&p("r1.csv"));
    a.extend(["--out", &p("s"), "--checkpoint", &ck].map(String::from));
    let a: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
    assert!(run(&a).status.success());
    assert!(saved_step(Path::new(&ck)).is_some_and(|s| s >= 1));
    let mut other = stream_args(&p("r2.csv"));
    other.extend(["--out", &p("s2"), "--resume", &ck].map(String::from));
    let other: Vec<&str> = other.iter().map(|s| s.as_str()).collect();
    assert_clean_error(&run(&other), &["written for other data"]);
    let mut other = stream_args(&p("r1.csv"));
    let last = other.len() - 1;
    other[last] = "2000".into();
    other.extend(["--out", &p("s2"), "--resume", &ck].map(String::from));
    let other: Vec<&str> = other.iter().map(|s| s.as_str()).collect();
    assert_clean_error(&run(&other), &["written for other settings"]);
    assert!(!Path::new(&p("m2")).exists() && !Path::new(&p("s2")).exists());
}

#[test]
fn other_data_other_settings_and_corrupt_checkpoints_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let pima = data("pima-diabetes.csv");
    let mut a = table_args(pima.to_str().unwrap());
    let last_at = a.len() - 1;
    a[last_at] = "3".into();
    let a: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
    let with = |extra: &[&str]| {
        let mut v = a.clone();
        v.extend_from_slice(extra);
        run(&v)
    };
    let ck = p("ck");
    let m2 = p("m2");
    assert!(with(&["--out", &p("m"), "--checkpoint", &ck])
        .status
        .success());
    let good = std::fs::read(&ck).unwrap();
    // Other data: the same flags on another table.
    let sonar = data("sonar.csv");
    let mut other = a.clone();
    other[4] = sonar.to_str().unwrap();
    other.extend_from_slice(&["--out", &m2, "--resume", &ck]);
    assert_clean_error(&run(&other), &["written for other data"]);
    // Other settings: another seed.
    let mut other = a.clone();
    let seed_at = other.len() - 3;
    other[seed_at] = "8";
    other.extend_from_slice(&["--out", &m2, "--resume", &ck]);
    assert_clean_error(&run(&other), &["written for other settings"]);
    // Corrupt: a byte of the state changed, the file cut short, another version, missing.
    let mut bad = good.clone();
    let last = bad.len() - 2;
    bad[last] ^= 0x04;
    std::fs::write(&ck, &bad).unwrap();
    assert_clean_error(
        &with(&["--out", &m2, "--resume", &ck]),
        &["corrupt checkpoint"],
    );
    std::fs::write(&ck, &good[..good.len() / 2]).unwrap();
    assert_clean_error(
        &with(&["--out", &m2, "--resume", &ck]),
        &["corrupt checkpoint"],
    );
    let v2 = String::from_utf8(good.clone())
        .unwrap()
        .replacen("\"version\":1", "\"version\":9", 1);
    std::fs::write(&ck, v2).unwrap();
    assert_clean_error(
        &with(&["--out", &m2, "--resume", &ck]),
        &["version 9 is not supported"],
    );
    assert_clean_error(
        &with(&["--out", &p("m2"), "--resume", &p("absent")]),
        &["absent"],
    );
    assert!(!Path::new(&p("m2")).exists());
    // The built-in selection and batch learners keep no checkpoints: refused up front.
    let o = run(&[
        "train",
        "--data",
        pima.to_str().unwrap(),
        "--out",
        &p("m3"),
        "--checkpoint",
        &ck,
    ]);
    assert_clean_error(&o, &["not to the built-in selection"]);
    let o = run(&[
        "train",
        "--data",
        pima.to_str().unwrap(),
        "--algo",
        "lp-mkl",
        "--p",
        "2",
        "--C",
        "1",
        "--out",
        &p("m3"),
        "--checkpoint",
        &ck,
    ]);
    assert_clean_error(&o, &["not to --algo lp-mkl"]);
}

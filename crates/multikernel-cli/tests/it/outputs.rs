//! What the outputs of a run point at is never destroyed (issue 46, item 1): a FIFO, a
//! character device and a symbolic link given as `--out`, `--run-json`, `--checkpoint` or
//! `predict --out` are what they were after the run (a FIFO's reader gets the model's bytes,
//! a link's file gets them and the link stays a link), a checkpoint that cannot be read back
//! is refused, an output that is one of the run's inputs is refused before any work with both
//! flags named and the input unchanged, and an output folder that cannot take a file is an
//! error before training starts.

use std::os::unix::fs::{symlink, FileTypeExt};
use std::path::Path;
use std::process::Output;

use crate::common::*;

/// A small tagging run (the shipped EUC-JP columns, 350 tokens, two unigram templates and
/// the label bigram, the online learner with the CRF loss, 2 epochs): the data and templates
/// are copied into `dir`; returns the flags up to (not including) the outputs.
fn tagger_args(dir: &Path) -> Vec<String> {
    let data = dir.join("data.txt");
    std::fs::copy(repo("data/tagging/ja-pos.euc-jp.txt"), &data).unwrap();
    let tpl = dir.join("T");
    std::fs::write(&tpl, "U00:%x[0,0]\nU01:%x[0,1]\nB\n").unwrap();
    [
        "train",
        "--select",
        "none",
        "--task",
        "sequence",
        "--format",
        "columns",
        "--templates",
        tpl.to_str().unwrap(),
        "--data",
        data.to_str().unwrap(),
        "--algo",
        "online",
        "--loss",
        "crf",
        "--epochs",
        "2",
    ]
    .map(String::from)
    .to_vec()
}

fn run_with(args: &[String], extra: &[&str]) -> Output {
    let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
    all.extend_from_slice(extra);
    run(&all)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(s(path)).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// A character device with /dev/null's numbers (1, 3) at `path`, when the tests run as root
/// and may create one; `false` otherwise (the device cases are then skipped).
fn null_device(path: &Path) -> bool {
    let c = std::ffi::CString::new(s(path)).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path; mknod only creates that node.
    unsafe {
        libc::geteuid() == 0
            && libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) == 0
    }
}

/// The kind of what is at `path` (a link is not followed), with a link's text.
fn kind(path: &Path) -> String {
    let ft = std::fs::symlink_metadata(path).unwrap().file_type();
    if ft.is_symlink() {
        format!("link to {}", std::fs::read_link(path).unwrap().display())
    } else if ft.is_fifo() {
        "fifo".into()
    } else if ft.is_char_device() {
        "char device".into()
    } else if ft.is_file() {
        "file".into()
    } else {
        "other".into()
    }
}

/// Runs `command` while a thread reads the FIFO `fifo` to its end; returns the run and the
/// bytes read. A run that never opened the FIFO has its reader released (opened for writing
/// without waiting), so a failure is reported rather than a hang.
fn with_fifo_reader(fifo: &Path, command: impl FnOnce() -> Output) -> (Output, Vec<u8>) {
    use std::os::unix::fs::OpenOptionsExt;
    let path = fifo.to_path_buf();
    let reader = std::thread::spawn(move || std::fs::read(path).unwrap());
    let o = command();
    let mut open = std::fs::OpenOptions::new();
    open.write(true).custom_flags(libc::O_NONBLOCK);
    while !reader.is_finished() && open.open(fifo).is_err() {
        std::thread::yield_now();
    }
    (o, reader.join().unwrap())
}

fn assert_ok(o: &Output) {
    let (out, err) = text(o);
    assert!(o.status.success(), "stdout {out}\nstderr {err}");
}

/// A FIFO, a character device and a symbolic link as `--out`, `--run-json` and `predict
/// --out` are what they were after the run; the FIFO's reader gets the model's bytes (those
/// of the same run written to a file), the predictions, and the run's JSON; a link's file
/// gets the bytes. `--out /dev/stdout` reaches the pipe of standard output.
#[test]
fn fifos_devices_and_links_as_outputs_keep_their_kind() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = tagger_args(d);
    let model = d.join("m.model");
    assert_ok(&run_with(&args, &["--out", s(&model)]));
    let model_bytes = std::fs::read(&model).unwrap();
    let data = d.join("data.txt");
    let predict = |out: &str| {
        run(&[
            "predict",
            "--model",
            s(&model),
            "--data",
            s(&data),
            "--out",
            out,
        ])
    };
    // generate --out -: the file's bytes on standard output.
    let ring = d.join("ring.csv");
    ok(&["generate", "ringnorm", "--n", "20", "--out", s(&ring)]);
    let o = run(&["generate", "ringnorm", "--n", "20", "--out", "-"]);
    assert_ok(&o);
    assert_eq!(o.stdout, std::fs::read(&ring).unwrap());
    let to_stdout = predict("-");
    assert_ok(&to_stdout);
    assert!(!to_stdout.stdout.is_empty());

    // FIFOs.
    let fifo = d.join("fifo");
    mkfifo(&fifo);
    let (o, got) = with_fifo_reader(&fifo, || run_with(&args, &["--out", s(&fifo)]));
    assert_ok(&o);
    assert_eq!(got, model_bytes, "the FIFO's reader gets the model");
    let (o, got) = with_fifo_reader(&fifo, || {
        run_with(
            &args,
            &["--out", s(&d.join("m2.model")), "--run-json", s(&fifo)],
        )
    });
    assert_ok(&o);
    let json: serde_json::Value = serde_json::from_slice(&got).expect("the run's JSON");
    assert_eq!(json["steps"], 2, "{json}");
    let (o, got) = with_fifo_reader(&fifo, || predict(s(&fifo)));
    assert_ok(&o);
    assert_eq!(
        got, to_stdout.stdout,
        "the FIFO's reader gets the predictions"
    );
    assert_eq!(kind(&fifo), "fifo");

    // A symbolic link to a regular file elsewhere: the file gets the bytes, the link stays.
    std::fs::create_dir(d.join("real")).unwrap();
    let real = d.join("real/target");
    std::fs::write(&real, b"old").unwrap();
    let link = d.join("link");
    symlink(&real, &link).unwrap();
    assert_ok(&run_with(&args, &["--out", s(&link)]));
    assert_eq!(std::fs::read(&real).unwrap(), model_bytes);
    assert_ok(&run_with(
        &args,
        &["--out", s(&d.join("m3.model")), "--run-json", s(&link)],
    ));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&real).unwrap()).unwrap();
    assert_eq!(json["steps"], 2, "{json}");
    assert_ok(&predict(s(&link)));
    assert_eq!(std::fs::read(&real).unwrap(), to_stdout.stdout);
    // A checkpoint through a link is written to the link's file, and resumed from it.
    std::fs::write(&real, b"").unwrap();
    // After epoch 1 of 2 (the state after the last step is not saved).
    let out4 = d.join("m4.model");
    assert_ok(&run_with(
        &args,
        &[
            "--out",
            s(&out4),
            "--checkpoint",
            s(&link),
            "--checkpoint-every",
            "1",
        ],
    ));
    assert!(!std::fs::read(&real).unwrap().is_empty(), "the checkpoint");
    assert_ok(&run_with(
        &args,
        &["--out", s(&d.join("m5.model")), "--resume", s(&link)],
    ));
    assert_eq!(
        std::fs::read(d.join("m5.model")).unwrap(),
        std::fs::read(&out4).unwrap(),
        "resumed through the link"
    );
    assert_eq!(kind(&link), format!("link to {}", real.display()));
    // Only the link and its file: no temporary file in either folder.
    assert_eq!(std::fs::read_dir(d.join("real")).unwrap().count(), 1);

    // /dev/stdout (a link into /proc) reaches the pipe the run's standard output is.
    if Path::new("/dev/stdout").exists() {
        let o = predict("/dev/stdout");
        assert_ok(&o);
        assert_eq!(o.stdout, to_stdout.stdout);
        assert!(std::fs::symlink_metadata("/dev/stdout").is_ok());
    }

    // A character device like /dev/null (root only).
    let dev = d.join("null");
    if null_device(&dev) {
        assert_ok(&run_with(&args, &["--out", s(&dev)]));
        assert_ok(&run_with(
            &args,
            &["--out", s(&d.join("m6.model")), "--run-json", s(&dev)],
        ));
        assert_ok(&predict(s(&dev)));
        assert_eq!(kind(&dev), "char device");
    } else {
        eprintln!("skip: the character device cases need root");
    }
}

/// `--checkpoint` (and `--resume` when later checkpoints go to it) refuses standard output, a
/// FIFO and a character device before any work: a checkpoint is rewritten and read back.
#[test]
fn checkpoints_refuse_what_cannot_be_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = tagger_args(d);
    let out = d.join("m.model");
    let fifo = d.join("fifo");
    mkfifo(&fifo);
    let dev = d.join("null");
    let mut targets = vec![
        ("-".to_string(), "standard output"),
        (s(&fifo).into(), "FIFO"),
    ];
    if null_device(&dev) {
        targets.push((s(&dev).into(), "character device"));
    }
    for (target, says) in &targets {
        let o = run_with(&args, &["--out", s(&out), "--checkpoint", target]);
        assert_clean_error(&o, &["--checkpoint", says, "regular file"]);
        assert!(!text(&o).1.contains("training "), "refused before the data");
        if target != "-" {
            let o = run_with(&args, &["--out", s(&out), "--resume", target]);
            assert_clean_error(&o, &["--resume", says]);
        }
    }
    assert_eq!(kind(&fifo), "fifo");
    assert!(!out.exists());
}

/// An output that is one of the run's inputs (however it is spelled: `./x`, a symbolic or a
/// hard link) is refused before any work, naming both flags, and the input is unchanged; so
/// are two outputs in one file.
#[test]
fn inputs_as_outputs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = tagger_args(d);
    let data = d.join("data.txt");
    let tpl = d.join("T");
    let model = d.join("m.model");
    assert_ok(&run_with(&args, &["--out", s(&model)]));
    let ck = d.join("ck");
    assert_ok(&run_with(
        &args,
        &[
            "--out",
            s(&d.join("m2.model")),
            "--checkpoint",
            s(&ck),
            "--checkpoint-every",
            "1",
        ],
    ));
    assert!(ck.exists());
    symlink("data.txt", d.join("link-to-data")).unwrap();
    std::fs::hard_link(&data, d.join("hard-data")).unwrap();
    let dot_data = format!("{}/./data.txt", s(d));
    let (link_data, hard_data) = (d.join("link-to-data"), d.join("hard-data"));
    let inputs = [&data, &tpl, &model, &ck].map(|p| std::fs::read(p).unwrap());
    let other = s(&d.join("other.model")).to_string();
    let ck_s = s(&ck).to_string();
    let cases: Vec<(Vec<&str>, [&str; 2])> = vec![
        (vec!["--out", s(&data)], ["--out", "--data"]),
        (vec!["--out", &dot_data], ["--out", "--data"]),
        (vec!["--out", s(&link_data)], ["--out", "--data"]),
        (vec!["--out", s(&hard_data)], ["--out", "--data"]),
        (vec!["--out", s(&tpl)], ["--out", "--templates"]),
        (
            vec!["--out", &other, "--checkpoint", s(&data)],
            ["--checkpoint", "--data"],
        ),
        (
            vec!["--out", &other, "--run-json", s(&data)],
            ["--run-json", "--data"],
        ),
        (
            vec!["--out", &other, "--run-json", s(&tpl)],
            ["--run-json", "--templates"],
        ),
        (
            vec!["--out", &other, "--run-json", &other],
            ["--run-json", "--out"],
        ),
        (
            vec!["--out", &ck_s, "--checkpoint", &ck_s],
            ["--checkpoint", "--out"],
        ),
        (
            vec!["--out", &ck_s, "--resume", &ck_s],
            ["--resume", "--out"],
        ),
        (
            vec!["--out", &other, "--resume", &ck_s, "--run-json", &ck_s],
            ["--run-json", "--resume"],
        ),
        (
            vec!["--out", &other, "--resume", &ck_s, "--checkpoint", s(&tpl)],
            ["--checkpoint", "--templates"],
        ),
    ];
    for (extra, flags) in &cases {
        let o = run_with(&args, extra);
        assert_clean_error(&o, &[flags[0], flags[1], "same file"]);
        assert!(
            !text(&o).1.contains("training "),
            "{extra:?}: before any work"
        );
    }
    // predict: the model or the data as --out.
    for (out, flag) in [(&model, "--model"), (&data, "--data")] {
        let o = run(&[
            "predict",
            "--model",
            s(&model),
            "--data",
            s(&data),
            "--out",
            s(out),
        ]);
        assert_clean_error(&o, &["--out", flag, "same file"]);
    }
    let now = [&data, &tpl, &model, &ck].map(|p| std::fs::read(p).unwrap());
    assert!(inputs == now, "an input was overwritten");
    assert!(!Path::new(&other).exists());

    // convert: the treebank as --out.
    let tb = d.join("tb.conllu");
    let conllu =
        "1\tBen\tben\tPRON\t_\t_\t2\tnsubj\t_\t_\n2\tgeldim\tgel\tVERB\t_\t_\t0\troot\t_\t_\n\n";
    std::fs::write(&tb, conllu).unwrap();
    let o = run(&["convert", "--data", s(&tb), "--out", s(&tb)]);
    assert_clean_error(&o, &["--out", "--data", "same file"]);
    assert_eq!(std::fs::read_to_string(&tb).unwrap(), conllu);
    // The same command with another --out converts (so the refusal is the check's).
    ok(&["convert", "--data", s(&tb), "--out", s(&d.join("tb.txt"))]);

    // reproduce --json: an input file, or a file in an input folder (small runs in case
    // the check let them through).
    let glass = d.join("glass.csv");
    std::fs::copy(crate::common::data("glass.csv"), &glass).unwrap();
    std::fs::create_dir(d.join("uci")).unwrap();
    let sonar = d.join("uci/sonar.csv");
    std::fs::copy(crate::common::data("sonar.csv"), &sonar).unwrap();
    let tables = [&glass, &sonar].map(|p| std::fs::read(p).unwrap());
    let o = run(&[
        "reproduce",
        "gomp",
        "--reps",
        "1",
        "--glass",
        s(&glass),
        "--json",
        s(&glass),
    ]);
    assert_clean_error(&o, &["--json", "--glass", "same file"]);
    let o = run(&[
        "reproduce",
        "uci",
        "--splits",
        "1",
        "--epochs",
        "1",
        "--datasets",
        "sonar",
        "--data-dir",
        s(&d.join("uci")),
        "--json",
        s(&sonar),
    ]);
    assert_clean_error(&o, &["--json", "--data-dir"]);
    assert!(tables == [&glass, &sonar].map(|p| std::fs::read(p).unwrap()));
}

/// An output folder that is missing, a regular file or cannot take a new file (`/proc`,
/// even for root) is an error naming the flag and the path before training starts.
#[test]
fn unwritable_output_folders_fail_before_training() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = tagger_args(d);
    let out = d.join("m.model");
    let under_file = s(&d.join("T/m.model")).to_string();
    let missing = s(&d.join("no/such/ck")).to_string();
    let mut cases: Vec<(Vec<&str>, [&str; 2])> = vec![
        (vec!["--out", &under_file], ["--out", "not a folder"]),
        (
            vec!["--out", s(&out), "--checkpoint", &missing],
            ["--checkpoint", "does not exist"],
        ),
        (
            vec!["--out", s(&out), "--run-json", &under_file],
            ["--run-json", "not a folder"],
        ),
    ];
    if Path::new("/proc/self").exists() {
        cases.push((
            vec!["--out", s(&out), "--run-json", "/proc/run.json"],
            ["--run-json /proc/run.json", "cannot create a file"],
        ));
        cases.push((
            vec!["--out", "/proc/m.model"],
            ["--out /proc/m.model", "/proc"],
        ));
    }
    for (extra, needles) in &cases {
        let o = run_with(&args, extra);
        assert_clean_error(&o, needles);
        assert!(
            !text(&o).1.contains("training "),
            "{extra:?}: before training"
        );
    }
    assert!(!out.exists());
    assert_eq!(kind(&d.join("T")), "file");
}

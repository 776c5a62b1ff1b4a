//! Kill-safe writes (issue 11, item 3): `train --out F` killed (SIGKILL) at random moments
//! while F holds an older model leaves F as the old model or as the complete new one, never
//! anything else; a normal run afterwards leaves no temporary file in the directory (it
//! removes those of the killed runs).

use multikernel::model::Model;
use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use crate::common::*;

/// The names in a directory, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Whether a directory entry is a temporary file of `io::write_atomic`.
fn is_temp(name: &str) -> bool {
    name.ends_with(multikernel::io::TEMP_SUFFIX)
}

#[test]
#[ignore = "full tier: train runs killed at random moments, 3 s"]
fn killed_training_leaves_the_old_model_or_the_new_one() {
    const KILLS: usize = 30;
    let data = data("pima-diabetes.csv");
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("m.model");
    let fs = f.to_str().unwrap();
    let train = |epochs: &str, seed: &str, out: &str| {
        let mut c = bin();
        c.args([
            "train",
            "--select",
            "none",
            "--data",
            data.to_str().unwrap(),
        ])
        .args(["--kernel", "rbf", "--kernel", "linear"])
        .args(["--epochs", epochs, "--seed", seed, "--out", out])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        c
    };
    // The old model, and the new one (the same seed gives the same bytes: what a completed
    // run writes). A normal run takes a moment (~0.1 s); its length scales the kill moments.
    assert!(train("2", "1", fs).status().unwrap().success());
    let old = std::fs::read(&f).unwrap();
    let started = Instant::now();
    assert!(train("150", "7", fs).status().unwrap().success());
    let normal = started.elapsed();
    let new = std::fs::read(&f).unwrap();
    assert_ne!(old, new);
    assert_eq!(names_in(dir.path()), vec!["m.model".to_string()]);
    Model::from_bytes(&new).unwrap();

    // Seeded, so that the kill moments are the same on every run of the test.
    let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(0x6b69_6c6c);
    let (mut kept_old, mut got_new) = (0, 0);
    for k in 0..KILLS {
        std::fs::write(&f, &old).unwrap();
        let mut child = train("150", "7", fs).spawn().unwrap();
        std::thread::sleep(normal.mul_f64(1.25 * rand::Rng::r#gen::<f64>(&mut rng)));
        // SIGKILL (a no-op error when the run has already finished).
        let _ = child.kill();
        child.wait().unwrap();
        let now = std::fs::read(&f).unwrap();
        if now == old {
            kept_old += 1;
        } else {
            assert!(
                now == new,
                "kill {k}: the model file is neither the old nor the new"
            );
            got_new += 1;
        }
        Model::load(&f).unwrap_or_else(|e| panic!("kill {k}: {e}"));
        // Only the model and temporary files of killed writes.
        for n in names_in(dir.path()) {
            assert!(n == "m.model" || is_temp(&n), "kill {k}: {n} left behind");
        }
    }
    eprintln!(
        "{KILLS} kills: the old model {kept_old} times, the new one {got_new} times; \
         temporary files left by killed writes: {}",
        names_in(dir.path()).len() - 1
    );

    // A normal run removes the temporary files the killed runs left. One is planted in case
    // no kill landed inside a write: a file of a process that has exited.
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    std::fs::write(
        dir.path()
            .join(format!(".m.model.{dead}-0{}", multikernel::io::TEMP_SUFFIX)),
        &new[..new.len() / 2],
    )
    .unwrap();
    let run_json = dir.path().join("run.json");
    let o = train("150", "7", fs)
        .args(["--run-json", run_json.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(o.success());
    assert_eq!(std::fs::read(&f).unwrap(), new);
    // Predictions written with --out go through the same atomic write.
    let pred = dir.path().join("p.txt");
    let o = run(&[
        "predict",
        "--model",
        fs,
        "--data",
        data.to_str().unwrap(),
        "--out",
        pred.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert_eq!(
        names_in(dir.path()),
        vec![
            "m.model".to_string(),
            "p.txt".to_string(),
            "run.json".to_string()
        ]
    );
    let _: serde_json::Value = serde_json::from_slice(&std::fs::read(&run_json).unwrap()).unwrap();
}

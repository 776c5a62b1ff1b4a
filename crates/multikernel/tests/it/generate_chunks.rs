//! The chunked generator (`synthetic::generate_chunks`, used by `multikernel generate`) draws
//! exactly the rows of the in-memory one: its CSV, written chunk by chunk, equals
//! `data::to_csv` of `synthetic::generate` byte for byte, for every generated data set and
//! chunk sizes that do and do not divide the number of rows.

use multikernel::data::synthetic::{generate, generate_chunks};
use multikernel::data::to_csv;
use multikernel::error::Result;
use multikernel::io::AtomicWriter;

fn chunked_csv(name: &str, n: usize, seed: u64, chunk: usize) -> String {
    let chunks = generate_chunks(name, n, 6, 3, seed, chunk).unwrap();
    assert_eq!(chunks.len(), n.div_ceil(chunk));
    let mut out = String::new();
    let rows = chunks
        .write_csv(|t| {
            out.push_str(t);
            Ok(())
        })
        .unwrap();
    assert_eq!(rows, n);
    out
}

#[test]
fn chunked_csv_equals_the_in_memory_csv() {
    for name in [
        "ringnorm",
        "waveform",
        "polynomial",
        "interactions",
        "indicators",
    ] {
        let (ds, _) = generate(name, 3_001, 6, 3, 11).unwrap();
        let whole = to_csv(&ds);
        for chunk in [7, 1_000, 3_001, 5_000] {
            assert!(
                chunked_csv(name, 3_001, 11, chunk) == whole,
                "{name}, chunks of {chunk}"
            );
        }
        assert_eq!(
            chunked_csv(name, 1, 11, 7),
            to_csv(&generate(name, 1, 6, 3, 11).unwrap().0)
        );
    }
}

#[test]
fn chunks_are_the_rows_of_the_whole_set() {
    let (ds, _) = generate("ringnorm", 100, 6, 3, 5).unwrap();
    let chunks: Vec<_> = generate_chunks("ringnorm", 100, 6, 3, 5, 7)
        .unwrap()
        .collect();
    assert_eq!(chunks.len(), 15);
    assert!(chunks[..14].iter().all(|c| c.len() == 7));
    assert_eq!(chunks[14].len(), 2);
    let values: Vec<f64> = chunks.iter().flat_map(|c| c.x.data.clone()).collect();
    assert_eq!(values, ds.x.data);
    let (_, target) = generate("polynomial", 10, 6, 3, 5).unwrap();
    let c = generate_chunks("polynomial", 10, 6, 3, 5, 4).unwrap();
    assert_eq!(c.target(), target.as_deref());
    assert_eq!(c.n_features(), 6);
}

#[test]
fn bad_arguments_are_errors() {
    assert!(generate_chunks("ringnorm", 10, 6, 3, 5, 0).is_err());
    assert!(generate_chunks("ringnorm", 0, 6, 3, 5, 7).is_err());
    assert!(generate_chunks("spiral", 10, 6, 3, 5, 7).is_err());
    assert!(generate_chunks("polynomial", 10, 1, 3, 5, 7).is_err());
    assert!(generate_chunks("interactions", 10, 1, 3, 5, 7).is_err());
}

/// A sink's error stops the writing and is returned; through an [`AtomicWriter`] the target
/// is then untouched and no temporary file is left.
#[test]
fn a_failing_sink_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ring.csv");
    let mut w = AtomicWriter::create(&path).unwrap();
    let mut calls = 0;
    let r: Result<usize> = generate_chunks("ringnorm", 50, 6, 3, 5, 7)
        .unwrap()
        .write_csv(|t| {
            calls += 1;
            if calls == 3 {
                return Err(multikernel::error::Error::Data("disk full".into()));
            }
            w.write_all(t.as_bytes())
        });
    assert!(r.unwrap_err().to_string().contains("disk full"));
    assert_eq!(calls, 3);
    drop(w);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // Committed, the file is the whole CSV.
    let mut w = AtomicWriter::create(&path).unwrap();
    generate_chunks("ringnorm", 50, 6, 3, 5, 7)
        .unwrap()
        .write_csv(|t| w.write_all(t.as_bytes()))
        .unwrap();
    w.commit().unwrap();
    let whole = to_csv(&generate("ringnorm", 50, 6, 3, 5).unwrap().0);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), whole);
}

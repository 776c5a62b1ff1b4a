//! Replays every committed fuzz corpus file (`fuzz/corpus/<target>/`) through the target's
//! body in `multikernel::fuzzing`, so CI guards what fuzzing found (docs/fuzzing.md).

use std::path::Path;

/// Every file of `fuzz/corpus/<target>`, sorted (at least one: an empty corpus is a mistake).
fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} is empty", dir.display());
    files
        .into_iter()
        .map(|p| {
            (
                p.display().to_string(),
                std::fs::read(&p).expect("corpus file"),
            )
        })
        .collect()
}

fn replay(target: &str, body: fn(&[u8])) {
    for (name, bytes) in corpus(target) {
        let outcome = std::panic::catch_unwind(|| body(&bytes));
        assert!(outcome.is_ok(), "{target}: {name} panicked");
    }
}

#[test]
fn kernel_spec_corpus() {
    replay("kernel_spec", multikernel::fuzzing::kernel_spec);
}

#[test]
fn checkpoint_bytes_corpus() {
    replay("checkpoint_bytes", multikernel::fuzzing::checkpoint_bytes);
}

#[test]
fn model_bytes_corpus() {
    replay("model_bytes", multikernel::fuzzing::model_bytes);
}

#[test]
fn csv_corpus() {
    replay("csv", multikernel::fuzzing::csv);
}

#[test]
fn csv_weights_corpus() {
    replay("csv_weights", multikernel::fuzzing::csv_weights);
}

#[test]
fn libsvm_corpus() {
    replay("libsvm", multikernel::fuzzing::libsvm);
}

#[test]
fn model_stream_corpus() {
    replay("model_stream", multikernel::fuzzing::model_stream);
}

#[test]
fn table_stream_corpus() {
    replay("table_stream", multikernel::fuzzing::table_stream);
}

#[test]
fn ocr_corpus() {
    replay("ocr", multikernel::fuzzing::ocr);
}

#[test]
fn regularizer_corpus() {
    replay("regularizer", multikernel::fuzzing::regularizer);
}

#[test]
fn settings_corpus() {
    replay("settings", multikernel::fuzzing::settings);
}

#[test]
fn conllu_corpus() {
    replay("conllu", multikernel::fuzzing::conllu);
}

#[test]
fn arc_templates_corpus() {
    replay("arc_templates", multikernel::fuzzing::arc_templates);
}

#[test]
fn columns_corpus() {
    replay("columns", multikernel::fuzzing::columns);
}

#[test]
fn crf_templates_corpus() {
    replay("crf_templates", multikernel::fuzzing::crf_templates);
}

#[test]
fn tagger_parts_corpus() {
    replay("tagger_parts", multikernel::fuzzing::tagger_parts);
}

#[test]
fn parser_parts_corpus() {
    replay("parser_parts", multikernel::fuzzing::parser_parts);
}

#[test]
fn online_parts_corpus() {
    replay("online_parts", multikernel::fuzzing::online_parts);
}

//! The streaming table reader (`data::stream`) against the whole-file reader, fed from bytes.
//!
//! The first byte of an input chooses how the rest is read; the rest is the file's content.
//! The stream never panics, and whenever the whole-file reader accepts the content the
//! stream yields the same rows, targets and feature names in every chunk size, and its
//! summary the same classes and statistics; when the whole-file reader refuses it with a
//! parse error, the stream gives the same message.

use crate::data::standardize::Standardizer;
use crate::data::stream::{summarize, TableStream};
use crate::data::{parse_table, Dataset, Format, Matrix, TargetKind, Targets};
use crate::error::{Error, Result};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;

/// Decompressed content beyond this is not compared (a tiny input may inflate hugely).
const MAX_INFLATED: u64 = 1 << 24;

/// Streams `data[1..]` the way `data[0]` says and checks it against the whole-file reader.
///
/// Bits 0-1 of the first byte: the origin and format (0: no extension, the format sniffed;
/// 1: CSV given; 2: libsvm given; 3: `fuzz.svm.gz`, libsvm from the name); bit 2: real
/// targets (else classes); bits 3-5: the feature count given (0: none); bit 6: the stream
/// reads the content gzip-compressed.
pub fn table_stream(data: &[u8]) {
    let Some((&mode, bytes)) = data.split_first() else {
        return;
    };
    let (origin, format) = match mode & 3 {
        0 => (Path::new("fuzz-data"), None),
        1 => (Path::new("fuzz.csv"), Some(Format::Csv)),
        2 => (Path::new("fuzz.svm"), Some(Format::Libsvm)),
        _ => (Path::new("fuzz.svm.gz"), None),
    };
    let kind = if mode & 4 == 0 {
        TargetKind::Classes
    } else {
        TargetKind::Real
    };
    let d = usize::from((mode >> 3) & 7);
    let n_features = (d > 0).then_some(d);
    let streamed: Arc<[u8]> = if mode & 0x40 != 0 {
        match gzip(bytes) {
            Some(z) => z.into(),
            None => return,
        }
    } else {
        bytes.into()
    };
    // What the whole-file reader sees: the content, gunzipped when it is gzip itself.
    let plain: Vec<u8> = if bytes.starts_with(&[0x1f, 0x8b]) {
        match inflate(bytes) {
            Some(out) => out,
            // Corrupt or huge: the stream must only not panic.
            None => {
                let _ = read_all(origin, &streamed, format, kind, n_features, 3);
                return;
            }
        }
    } else {
        bytes.to_vec()
    };
    let whole = parse_table(origin, &plain, format, kind, None, n_features);
    for chunk in [1, 2, 1000] {
        let got = read_all(origin, &streamed, format, kind, n_features, chunk);
        match (&whole, got) {
            (Ok(ds), Ok(read)) => check_same(ds, &read, chunk),
            (Err(e), Err(g)) => {
                if matches!(e, Error::Parse { .. } | Error::Data(_)) {
                    assert_eq!(g.to_string(), e.to_string(), "chunk {chunk}");
                }
            }
            (Ok(_), Err(g)) => panic!("the stream refuses what the reader reads: {g}"),
            (Err(e), Ok(_)) => assert!(
                matches!(e, Error::Memory { .. }),
                "the stream reads what the reader refuses: {e}"
            ),
        }
    }
}

/// `bytes` gzip-compressed (`None` if the encoder fails).
pub(super) fn gzip(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).ok()?;
    enc.finish().ok()
}

/// gzip `bytes` decompressed, as the whole-file readers gunzip a file; `None` when they are
/// corrupt or inflate beyond [`MAX_INFLATED`] bytes (not compared).
pub(super) fn inflate(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let n = flate2::read::MultiGzDecoder::new(bytes)
        .take(MAX_INFLATED + 1)
        .read_to_end(&mut out)
        .ok()?;
    ((n as u64) <= MAX_INFLATED).then_some(out)
}

/// Everything one stream over `bytes` gives: the rows, the targets mapped to the classes
/// its summary found, the feature names, the line numbers, and the summary's standardizer.
struct Streamed {
    x: Matrix,
    targets: Targets,
    feature_names: Vec<String>,
    lines: Vec<usize>,
    standardizer: Standardizer,
}

fn read_all(
    origin: &Path,
    bytes: &Arc<[u8]>,
    format: Option<Format>,
    kind: TargetKind,
    n_features: Option<usize>,
    chunk: usize,
) -> Result<Streamed> {
    let mut s = TableStream::from_bytes(origin, Arc::clone(bytes), format, kind, n_features)?;
    let summary = summarize(&mut s, chunk)?;
    s.rewind()?;
    let classes = summary.classes.clone();
    let mut x = Matrix::zeros(0, s.n_features());
    let mut lines = Vec::new();
    let mut y = Vec::new();
    let mut real = Vec::new();
    while let Some(c) = s.next_chunk(chunk)? {
        assert!(
            !c.is_empty() && c.len() <= chunk,
            "chunk of {} rows",
            c.len()
        );
        assert_eq!(c.x.cols, s.n_features());
        assert!(
            lines.last().is_none_or(|l| l < &c.lines[0]),
            "increasing lines"
        );
        x.data.extend_from_slice(&c.x.data);
        x.rows += c.len();
        match s.targets(&c, classes.as_deref())? {
            Targets::Classes { y: v, .. } => y.extend(v),
            Targets::Real(v) => real.extend(v),
        }
        lines.extend(c.lines);
    }
    assert_eq!(x.rows, summary.rows, "the summary counts the rows");
    assert_eq!(s.rows_read(), summary.rows);
    let targets = match classes {
        Some(classes) => Targets::Classes { classes, y },
        None => Targets::Real(real),
    };
    Ok(Streamed {
        x,
        targets,
        feature_names: s.feature_names().to_vec(),
        lines,
        standardizer: summary.standardizer,
    })
}

/// The stream gave the whole-file reader's table, and statistics close to its.
fn check_same(ds: &Dataset, got: &Streamed, chunk: usize) {
    assert_eq!(got.x, ds.x, "rows, chunk {chunk}");
    assert_eq!(got.targets, ds.targets, "targets, chunk {chunk}");
    assert_eq!(got.feature_names, ds.feature_names);
    assert_eq!(got.lines.len(), ds.len());
    let fit = Standardizer::fit(&ds.x);
    for j in 0..ds.n_features() {
        let max_abs = (0..ds.len()).fold(0.0f64, |m, i| m.max(ds.x.get(i, j).abs()));
        let (m, s) = (got.standardizer.mean[j], got.standardizer.scale[j]);
        assert!(
            m.is_finite() && s.is_finite() && s > 0.0,
            "column {j}: {m} {s}"
        );
        assert!(
            (m - fit.mean[j]).abs() <= 1e-9 * max_abs + 1e-300,
            "column {j}: mean {m} vs {}",
            fit.mean[j]
        );
        if fit.scale[j] > 1e-6 * max_abs && s > 1e-6 * max_abs && fit.scale[j] > 1e-290 {
            assert!(
                (s - fit.scale[j]).abs() <= 1e-9 * fit.scale[j],
                "column {j}: scale {s} vs {}",
                fit.scale[j]
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::data::{parse_table, Format, TargetKind};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::path::Path;

    /// Random small tables, well-formed or corrupted: the fuzz target's checks (the stream
    /// equals the whole-file reader, or gives its message) hold.
    #[test]
    fn random_tables_stream_as_read_whole() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let csv_tokens = ["1", "-2.5", "0", "1e3", "x", "", "nan", "\"a,b\"", "M", "R"];
        let svm_tokens = [
            "1:1", "2:0.5", "3:-1", "qid:2", "#", "0:1", "5:x", "+1", "-1",
        ];
        let (mut oks, mut errs) = (0, 0);
        for case in 0..400 {
            let mut text = String::new();
            let width = rng.gen_range(1..4);
            let svm = case % 2 == 1;
            for _ in 0..rng.gen_range(0..12) {
                if svm {
                    text.push_str(["+1", "-1", "2"][rng.gen_range(0..3)]);
                    let mut index = 0;
                    for _ in 0..rng.gen_range(0..4) {
                        if rng.gen_bool(0.95) {
                            index += rng.gen_range(1..3);
                            text.push_str(&format!(" {index}:{}", rng.gen_range(-3..4)));
                        } else {
                            text.push(' ');
                            text.push_str(svm_tokens[rng.gen_range(0..svm_tokens.len())]);
                        }
                    }
                } else {
                    let n = if rng.gen_bool(0.95) { width + 1 } else { width };
                    let fields: Vec<&str> = (0..n)
                        .map(|_| {
                            if rng.gen_bool(0.95) {
                                csv_tokens[rng.gen_range(0..3)]
                            } else {
                                csv_tokens[rng.gen_range(0..csv_tokens.len())]
                            }
                        })
                        .collect();
                    text.push_str(&fields.join(","));
                }
                text.push_str(if rng.gen_bool(0.1) { "\r\n" } else { "\n" });
            }
            let mode: u8 = rng.r#gen::<u8>() & 0x7c | if svm { 2 } else { 1 };
            let mut input = vec![mode];
            input.extend_from_slice(text.as_bytes());
            super::table_stream(&input);
            let kind = if mode & 4 == 0 {
                TargetKind::Classes
            } else {
                TargetKind::Real
            };
            let format = Some(if svm { Format::Libsvm } else { Format::Csv });
            match parse_table(Path::new("r"), text.as_bytes(), format, kind, None, None) {
                Ok(_) => oks += 1,
                Err(_) => errs += 1,
            }
        }
        assert!(oks > 50 && errs > 50, "ok {oks}, err {errs}");
    }
}

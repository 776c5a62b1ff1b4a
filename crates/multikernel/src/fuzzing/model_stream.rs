//! The streamed reader for a model (`data::model_stream`) against the whole-file reader
//! (`data::parse_for_model`), fed from bytes.
//!
//! The first byte of an input chooses how the rest is read; the rest is the file's content.
//! The stream never panics, and whenever the whole-file reader accepts the content the
//! stream yields the same rows and targets in every chunk size; when the whole-file reader
//! refuses it with a parse or data error, the stream gives the same message.

use crate::data::model_stream::ModelStream;
use crate::data::{parse_for_model, Format, Matrix, ModelRows, Schema, TargetSchema, Targets};
use crate::error::{Error, Result};
use std::path::Path;
use std::sync::Arc;

use super::stream::{gzip, inflate};

/// Streams `data[1..]` for a model the way `data[0]` says and checks it against the
/// whole-file reader.
///
/// Bits 0-1 of the first byte: the origin and format (0: no extension, the format sniffed;
/// 1: CSV given; 2: libsvm given; 3: `fuzz.svm.gz`, libsvm from the name); bit 2: real
/// targets (else the classes `-1`, `+1`, `M`); bits 3-5: the model's feature count, 0-7;
/// bit 6: the stream reads the content gzip-compressed; bit 7: the features are named `a`,
/// `b`, ... (matched by name), else `x1`, `x2`, ... (by position).
pub fn model_stream(data: &[u8]) {
    let Some((&mode, bytes)) = data.split_first() else {
        return;
    };
    let (origin, format) = match mode & 3 {
        0 => (Path::new("fuzz-data"), None),
        1 => (Path::new("fuzz.csv"), Some(Format::Csv)),
        2 => (Path::new("fuzz.svm"), Some(Format::Libsvm)),
        _ => (Path::new("fuzz.svm.gz"), None),
    };
    let d = usize::from((mode >> 3) & 7);
    let schema = Schema {
        feature_names: (0..d)
            .map(|j| {
                if mode & 0x80 != 0 {
                    ["a", "b", "c", "d", "e", "f", "g"][j].to_string()
                } else {
                    format!("x{}", j + 1)
                }
            })
            .collect(),
        target: if mode & 4 == 0 {
            TargetSchema::Classes(["-1", "+1", "M"].iter().map(|s| s.to_string()).collect())
        } else {
            TargetSchema::Real
        },
    };
    // The file as stored, and what the whole-file reader parses: the file, gunzipped once
    // when it starts with the gzip magic bytes.
    let (file, plain): (Arc<[u8]>, Vec<u8>) = if mode & 0x40 != 0 {
        match gzip(bytes) {
            Some(z) => (z.into(), bytes.to_vec()),
            None => return,
        }
    } else if bytes.starts_with(&[0x1f, 0x8b]) {
        match inflate(bytes) {
            Some(out) => (bytes.into(), out),
            // Corrupt or huge: the stream must only not panic.
            None => {
                let _ = read_all(origin, &bytes.into(), format, &schema, 3);
                return;
            }
        }
    } else {
        (bytes.into(), bytes.to_vec())
    };
    let whole = parse_for_model(origin, &plain, format, &schema);
    for chunk in [1, 2, 1000] {
        match (&whole, read_all(origin, &file, format, &schema, chunk)) {
            (Ok(rows), Ok((got, lines))) => {
                assert_eq!(&got, rows, "chunk {chunk}");
                assert_eq!(lines.len(), rows.x.rows, "one line per row");
            }
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

/// Every row one stream over `file` gives, in chunks of at most `chunk` rows, glued
/// together, and their line numbers; checks each chunk on the way (its size and width,
/// increasing lines, targets in every chunk or in none, as [`ModelStream::labelled`] says).
fn read_all(
    origin: &Path,
    file: &Arc<[u8]>,
    format: Option<Format>,
    schema: &Schema,
    chunk: usize,
) -> Result<(ModelRows, Vec<usize>)> {
    let d = schema.feature_names.len();
    let mut s = ModelStream::from_bytes(origin, Arc::clone(file), format, schema)?;
    let mut x = Matrix::zeros(0, d);
    let mut lines: Vec<usize> = Vec::new();
    let mut y: Vec<usize> = Vec::new();
    let mut real: Vec<f64> = Vec::new();
    let mut labelled: Option<bool> = None;
    while let Some(c) = s.next_chunk(chunk)? {
        assert!(
            !c.is_empty() && c.len() <= chunk,
            "chunk of {} rows",
            c.len()
        );
        assert_eq!((c.x.cols, c.lines.len()), (d, c.len()));
        assert!(
            lines.last().is_none_or(|l| *l < c.lines[0]) && c.lines.windows(2).all(|w| w[0] < w[1]),
            "increasing lines"
        );
        let has = c.targets.is_some();
        assert_eq!(
            *labelled.get_or_insert(has),
            has,
            "targets in every chunk or none"
        );
        assert_eq!(s.labelled(), Some(has));
        x.data.extend_from_slice(&c.x.data);
        x.rows += c.len();
        lines.extend(c.lines);
        match (c.targets, &schema.target) {
            (None, _) => {}
            (Some(Targets::Classes { classes, y: v }), TargetSchema::Classes(want)) => {
                assert_eq!(&classes, want, "the model's classes");
                y.extend(v);
            }
            (Some(Targets::Real(v)), TargetSchema::Real) => real.extend(v),
            (Some(t), want) => panic!("targets {t:?} for a schema {want:?}"),
        }
    }
    assert_eq!(s.rows_read(), x.rows);
    let targets = labelled.unwrap_or(false).then(|| match &schema.target {
        TargetSchema::Classes(classes) => Targets::Classes {
            classes: classes.clone(),
            y,
        },
        TargetSchema::Real => Targets::Real(real),
    });
    Ok((ModelRows { x, targets }, lines))
}

#[cfg(test)]
mod tests {
    use crate::data::{parse_for_model, Format, Schema, TargetSchema};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::path::Path;

    /// Random small tables for a model, well-formed or corrupted (columns by name in any
    /// order or by position, with and without targets, libsvm with and without labels): the
    /// fuzz target's checks (the stream equals the whole-file reader, or gives its message)
    /// hold, and both outcomes occur often.
    #[test]
    fn random_tables_stream_for_a_model_as_read_whole() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let names = ["a", "b", "c", "y", "label"];
        let values = ["1", "-2.5", "0", "1e3", "+1", "-1", "M"];
        let odd = ["x", "", "nan", "\"a,b\"", "2", "1:1"];
        let (mut oks, mut errs) = (0, 0);
        for case in 0..600 {
            let svm = case % 3 == 2;
            let d = rng.gen_range(0..4u8);
            let by_name = rng.gen_bool(0.5);
            let real = rng.gen_bool(0.3);
            let mut text = String::new();
            if svm {
                let labelled = rng.gen_bool(0.6);
                for _ in 0..rng.gen_range(0..10) {
                    if labelled != rng.gen_bool(0.03) {
                        text.push_str(["+1", "-1", "M", "2", "0.5"][rng.gen_range(0..5)]);
                    }
                    let mut index = 0;
                    for _ in 0..rng.gen_range(0..3) {
                        index += rng.gen_range(1..3);
                        let v = if rng.gen_bool(0.97) { "0.5" } else { "x" };
                        text.push_str(&format!(" {index}:{v}"));
                    }
                    text.push('\n');
                }
            } else {
                let width = usize::from(d) + rng.gen_range(0..2);
                let mut cols: Vec<&str> = names[..usize::from(d).min(3)].to_vec();
                if width > cols.len() {
                    cols.push(names[rng.gen_range(3..5)]);
                }
                while cols.len() < width {
                    cols.push("z");
                }
                // Shuffle the header.
                for i in (1..cols.len()).rev() {
                    cols.swap(i, rng.gen_range(0..=i));
                }
                if rng.gen_bool(0.7) {
                    text.push_str(&cols.join(","));
                    text.push('\n');
                }
                for _ in 0..rng.gen_range(0..10) {
                    let n = if rng.gen_bool(0.97) { width } else { width + 1 };
                    let fields: Vec<&str> = (0..n)
                        .map(|_| {
                            if rng.gen_bool(0.97) {
                                values[rng.gen_range(0..if real { 4 } else { 7 })]
                            } else {
                                odd[rng.gen_range(0..odd.len())]
                            }
                        })
                        .collect();
                    text.push_str(&fields.join(","));
                    text.push_str(if rng.gen_bool(0.1) { "\r\n" } else { "\n" });
                }
            }
            let mode: u8 = (if svm { 2 } else { 1 })
                | if real { 4 } else { 0 }
                | (d << 3)
                | if rng.gen_bool(0.3) { 0x40 } else { 0 }
                | if by_name { 0x80 } else { 0 };
            let mut input = vec![mode];
            input.extend_from_slice(text.as_bytes());
            super::model_stream(&input);
            let schema = Schema {
                feature_names: (0..usize::from(d))
                    .map(|j| {
                        if by_name {
                            ["a", "b", "c"][j].to_string()
                        } else {
                            format!("x{}", j + 1)
                        }
                    })
                    .collect(),
                target: if real {
                    TargetSchema::Real
                } else {
                    TargetSchema::Classes(vec!["-1".into(), "+1".into(), "M".into()])
                },
            };
            let format = Some(if svm { Format::Libsvm } else { Format::Csv });
            match parse_for_model(Path::new("r"), text.as_bytes(), format, &schema) {
                Ok(_) => oks += 1,
                Err(_) => errs += 1,
            }
        }
        assert!(oks > 100 && errs > 100, "ok {oks}, err {errs}");
    }
}

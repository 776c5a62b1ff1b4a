//! Rows read for a trained model chunk by chunk, never whole in memory: what
//! [`super::read_for_model`] reads, for evaluating or applying a model to tables larger than
//! memory.
//!
//! [`ModelStream`] accepts exactly what [`super::read_for_model`] / [`super::parse_for_model`]
//! accept, through the same per-line code (the CSV column matching of
//! `csv::ModelCsvLayout`, the libsvm label and entry parsing of [`super::libsvm`], the line
//! reading and gzip detection of [`super::stream`]): CSV columns matched to the model's
//! [`Schema`] by name in any order (one extra column is the target; without a header, by
//! position: `d` fields are the features, `d + 1` the features then the target), libsvm lines
//! with or without labels (all or none), gzip detected by its magic bytes, the format given,
//! implied by the file name or sniffed from the first data line. A malformed row is the same
//! error (file, line, message) as the whole-file reader gives for the same file, returned by
//! the chunk that holds it. Chunks are consistent: every chunk has targets, or none has, as
//! the whole-file reader decides (`ModelStream::labelled`).
//!
//! Memory is bounded by one chunk of rows plus the longest line
//! (`super::stream::MAX_LINE_BYTES`). Differences from the whole-file reader, by design: the
//! file as a whole may exceed its 2^28-value limit (a chunk holds at most 2^28 values); a line
//! may hold at most `super::stream::MAX_LINE_BYTES` bytes; a libsvm model wider than 2^28
//! features is refused when the stream opens.

use super::csv::{split_fields, ModelCsvLayout};
use super::libsvm::{
    line_tokens, placeholder_label, push_dense_row, take_label, LabelPresence, LABEL,
};
use super::lines::{line_err, parse_err};
use super::rows::{check_dense_size, TargetCollector, NO_ROWS};
#[cfg(any(test, feature = "fuzzing"))]
use super::stream::bytes_opener;
use super::stream::{
    csv_first_line, file_opener, pick_source_format, LineReader, Opener, MAX_CHUNK_VALUES,
};
#[cfg(test)]
use super::ModelRows;
use super::{Format, Matrix, Schema, TargetKind, Targets};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
#[cfg(any(test, feature = "fuzzing"))]
use std::sync::Arc;

/// Up to a chunk of rows of a [`ModelStream`].
#[derive(Debug, Clone, PartialEq)]
pub struct ModelChunk {
    /// The features in the model's column order (one row per data row).
    pub x: Matrix,
    /// The rows' targets mapped as the whole-file reader maps them (real values, or indices
    /// into the model's classes); `None` when the file has no target column (libsvm: no
    /// labels), in every chunk of the file alike.
    pub targets: Option<Targets>,
    /// Each row's 1-based line number in the (decompressed) file.
    pub lines: Vec<usize>,
}

impl ModelChunk {
    /// Number of rows.
    pub(crate) fn len(&self) -> usize {
        self.x.rows
    }

    /// Whether the chunk has no rows (never the case for a chunk a stream returns).
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn is_empty(&self) -> bool {
        self.x.rows == 0
    }

    /// The rows as [`ModelRows`] (the line numbers dropped).
    #[cfg(test)]
    pub(crate) fn into_rows(self) -> ModelRows {
        ModelRows {
            x: self.x,
            targets: self.targets,
        }
    }
}

/// How the lines of the file are read.
enum Body {
    /// CSV: the columns fixed by the first non-blank line.
    Csv(ModelCsvLayout),
    /// libsvm: whether lines carry labels, fixed by the first data line.
    Libsvm(LabelPresence),
}

/// A data file read for a model with a given [`Schema`], chunk by chunk, in one pass (module
/// docs): `ModelStream::next_chunk` until `None`.
pub struct ModelStream {
    origin: PathBuf,
    format: Format,
    kind: TargetKind,
    /// The model's classes (class targets).
    classes: Option<Vec<String>>,
    /// The model's feature count.
    d: usize,
    body: Body,
    lines: LineReader,
    /// The first line of a CSV file without a header: a data row not yet returned.
    pending: Option<(usize, Vec<String>)>,
    /// The last line read.
    last_line: usize,
    /// Rows returned so far.
    rows: usize,
    /// Whether the end of the file was reached.
    finished: bool,
    /// Whether the stream stopped at an error.
    failed: bool,
}

impl std::fmt::Debug for ModelStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelStream")
            .field("origin", &self.origin)
            .field("format", &self.format)
            .field("n_features", &self.d)
            .field("line", &self.last_line)
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
}

impl ModelStream {
    /// Opens `path` for a model with `schema`, in `format`, or in the format implied by the
    /// file name, or, failing that, the one its first data line looks like (as
    /// [`super::read_for_model`] picks it). Reads a CSV file's first non-blank line (the
    /// header, or the first row) and refuses it as the whole-file reader would.
    pub fn open(path: &Path, format: Option<Format>, schema: &Schema) -> Result<ModelStream> {
        ModelStream::from_source(path, file_opener(path), format, schema)
    }

    /// As [`ModelStream::open`] on bytes already in memory (tests, fuzzing); they may be
    /// gzip-compressed. `origin` names the data in messages and picks the format by its
    /// extension when `format` is `None`.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn from_bytes(
        origin: &Path,
        bytes: Arc<[u8]>,
        format: Option<Format>,
        schema: &Schema,
    ) -> Result<ModelStream> {
        ModelStream::from_source(origin, bytes_opener(bytes), format, schema)
    }

    /// As [`ModelStream::open`] on data that `opener` opens from its start (a second time
    /// only when the format is sniffed); `origin` names the data in messages and picks the
    /// format by its extension when `format` is `None`.
    pub(crate) fn from_source(
        origin: &Path,
        mut opener: Opener,
        format: Option<Format>,
        schema: &Schema,
    ) -> Result<ModelStream> {
        let format = pick_source_format(origin, &mut opener, format)?;
        let mut lines = LineReader::open(origin, &mut opener)?;
        let (kind, classes) = schema.target_kind();
        let d = schema.feature_names.len();
        let (body, pending, last_line) = match format {
            Format::Csv => {
                let (layout, no) = csv_first_line(origin, &mut lines, |no, l| {
                    ModelCsvLayout::new(origin, no, l, schema)
                })?;
                let pending = layout.first_row.clone().map(|r| (no, r));
                (Body::Csv(layout), pending, no)
            }
            Format::Libsvm => {
                // One row must fit in a chunk.
                check_dense_size(origin, 1, d)?;
                (Body::Libsvm(LabelPresence::new(true)), None, 0)
            }
        };
        Ok(ModelStream {
            origin: origin.to_path_buf(),
            format,
            kind,
            classes: classes.map(<[String]>::to_vec),
            d,
            body,
            lines,
            pending,
            last_line,
            rows: 0,
            finished: false,
            failed: false,
        })
    }

    /// The format being read.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The name of the data in messages (the file).
    pub(crate) fn origin(&self) -> &Path {
        &self.origin
    }

    /// The number of feature columns of every chunk (the model's).
    pub fn n_features(&self) -> usize {
        self.d
    }

    /// Rows returned so far.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn rows_read(&self) -> usize {
        self.rows
    }

    /// Whether the rows come with targets: known when a CSV file is opened (a target column
    /// or none), for libsvm once the first data line is read (`None` before).
    pub(crate) fn labelled(&self) -> Option<bool> {
        match &self.body {
            Body::Csv(layout) => Some(layout.target_col.is_some()),
            Body::Libsvm(presence) => presence.labelled(),
        }
    }

    /// Up to `max_rows` next rows (at least 1; fewer at the end of the file, or when
    /// `max_rows` rows would exceed 2^28 values): their features in the model's order, their
    /// targets and their line numbers. `None` once the file is exhausted. An error names the
    /// file and the line of the first malformed row, as the whole-file reader would; a file
    /// without data rows is an error at its end. After an error the stream reads no more.
    pub(crate) fn next_chunk(&mut self, max_rows: usize) -> Result<Option<ModelChunk>> {
        if self.failed {
            return Err(Error::data(format!(
                "{}: the stream stopped at an error",
                self.origin.display()
            )));
        }
        if self.finished {
            return Ok(None);
        }
        self.failed = true; // until this chunk is read
        let d = self.d;
        let max_rows = max_rows.clamp(1, (MAX_CHUNK_VALUES / d.max(1)).max(1));
        let origin = self.origin.as_path();
        let mut targets = TargetCollector::new(origin, self.kind, self.classes.as_deref());
        let mut data: Vec<f64> = Vec::new();
        let mut line_nos: Vec<usize> = Vec::new();
        if let (Some((no, fields)), Body::Csv(layout)) = (self.pending.take(), &self.body) {
            if let Some(t) = layout.parse_row(origin, no, &fields, &mut data)? {
                targets.push(t, no, &layout.target_what)?;
            }
            line_nos.push(no);
        }
        while line_nos.len() < max_rows {
            let Some((no, line)) = self.lines.next_line()? else {
                self.finished = true;
                break;
            };
            self.last_line = no;
            let line = line.map_err(|b| line_err(origin, no, b))?;
            match &mut self.body {
                Body::Csv(layout) => {
                    if line.trim().is_empty() {
                        continue;
                    }
                    let fields =
                        split_fields(line, layout.delim).map_err(|m| parse_err(origin, no, m))?;
                    if let Some(t) = layout.parse_row(origin, no, &fields, &mut data)? {
                        targets.push(t, no, &layout.target_what)?;
                    }
                }
                Body::Libsvm(presence) => {
                    let Some(mut tokens) = line_tokens(line) else {
                        continue; // blank or comment line
                    };
                    if presence.check(origin, no, &mut tokens)? {
                        let label = take_label(origin, no, &mut tokens)?;
                        targets.push(label, no, LABEL)?;
                    }
                    push_dense_row(origin, no, tokens, d, &mut data)?;
                }
            }
            line_nos.push(no);
        }
        self.rows += line_nos.len();
        if self.finished {
            if self.labelled() == Some(false) && self.format == Format::Libsvm {
                // The whole-file reader gives unlabelled rows placeholder targets at the
                // last line; a placeholder the model's classes refuse is its error.
                let mut check = TargetCollector::new(origin, self.kind, self.classes.as_deref());
                let placeholder = placeholder_label(self.kind, self.classes.as_deref());
                check.push(placeholder, self.last_line, LABEL)?;
            }
            if self.rows == 0 {
                return Err(parse_err(origin, self.last_line.max(1), NO_ROWS));
            }
        }
        self.failed = false;
        if line_nos.is_empty() {
            return Ok(None);
        }
        let labelled = self.labelled().unwrap_or(true);
        Ok(Some(ModelChunk {
            x: Matrix::from_vec(line_nos.len(), d, data),
            targets: labelled.then(|| targets.finish()),
            lines: line_nos,
        }))
    }
}

impl Iterator for ModelStream {
    type Item = Result<ModelChunk>;

    /// The next chunk of [`DEFAULT_CHUNK_ROWS`] rows (`ModelStream::next_chunk`); after
    /// an error, `None`.
    fn next(&mut self) -> Option<Result<ModelChunk>> {
        if self.failed {
            return None;
        }
        self.next_chunk(DEFAULT_CHUNK_ROWS).transpose()
    }
}

/// The chunk size of the [`Iterator`] of a [`ModelStream`] (and of `multikernel eval` and
/// `predict`): 65,536 rows.
pub const DEFAULT_CHUNK_ROWS: usize = 1 << 16;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{parse_for_model, TargetSchema};
    use std::io::Write;

    fn schema(names: &[&str], classes: Option<&[&str]>) -> Schema {
        Schema {
            feature_names: names.iter().map(|s| s.to_string()).collect(),
            target: match classes {
                Some(c) => TargetSchema::Classes(c.iter().map(|s| s.to_string()).collect()),
                None => TargetSchema::Real,
            },
        }
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(bytes).unwrap();
        enc.finish().unwrap()
    }

    /// Every chunk of a stream over `bytes`, glued back together, with the line numbers;
    /// checks that chunks hold 1 to `chunk` rows of the model's width, agree on having
    /// targets, and that their lines increase.
    fn streamed(
        origin: &str,
        bytes: &[u8],
        format: Option<Format>,
        schema: &Schema,
        chunk: usize,
    ) -> Result<(ModelRows, Vec<usize>)> {
        let mut s = ModelStream::from_bytes(Path::new(origin), bytes.into(), format, schema)?;
        let mut x = Matrix::zeros(0, schema.feature_names.len());
        let mut targets: Option<Targets> = None;
        let mut lines: Vec<usize> = Vec::new();
        let mut labelled = None;
        while let Some(c) = s.next_chunk(chunk)? {
            assert!((1..=chunk).contains(&c.len()), "chunk of {} rows", c.len());
            assert_eq!(c.x.cols, schema.feature_names.len());
            assert_eq!(s.labelled(), Some(c.targets.is_some()));
            assert_eq!(
                *labelled.get_or_insert(c.targets.is_some()),
                c.targets.is_some()
            );
            assert!(
                lines.last().is_none_or(|l| *l < c.lines[0]),
                "lines increase"
            );
            x.data.extend_from_slice(&c.x.data);
            x.rows += c.len();
            lines.extend_from_slice(&c.lines);
            match (&mut targets, c.targets) {
                (_, None) => {}
                (None, Some(t)) => targets = Some(t),
                (Some(Targets::Real(a)), Some(Targets::Real(b))) => a.extend(b),
                (Some(Targets::Classes { y: a, .. }), Some(Targets::Classes { y: b, .. })) => {
                    a.extend(b)
                }
                (Some(_), Some(_)) => panic!("targets change kind"),
            }
        }
        assert!(s.next_chunk(chunk).unwrap().is_none(), "stays at the end");
        assert_eq!(s.rows_read(), x.rows);
        Ok((ModelRows { x, targets }, lines))
    }

    /// The stream gives what `parse_for_model` gives for `text` (plain and gzipped, in
    /// chunks of 1, 2 and 1000 rows): the same rows and targets, or the same message.
    /// Returns the whole-file result.
    fn same_as_whole(
        origin: &str,
        text: &str,
        format: Option<Format>,
        schema: &Schema,
    ) -> Result<ModelRows> {
        let whole = parse_for_model(Path::new(origin), text.as_bytes(), format, schema);
        for bytes in [text.as_bytes().to_vec(), gzip(text.as_bytes())] {
            for chunk in [1, 2, 1000] {
                match (&whole, streamed(origin, &bytes, format, schema, chunk)) {
                    (Ok(w), Ok((s, lines))) => {
                        assert_eq!(&s, w, "{text:?}, chunk {chunk}");
                        assert_eq!(lines.len(), w.x.rows);
                    }
                    (Err(w), Err(s)) => {
                        assert_eq!(s.to_string(), w.to_string(), "{text:?}, chunk {chunk}")
                    }
                    (w, s) => panic!("{text:?}, chunk {chunk}: whole {w:?}, stream {s:?}"),
                }
            }
        }
        whole
    }

    #[test]
    fn csv_tables_stream_as_read_whole() {
        let ab = schema(&["a", "b"], Some(&["neg", "pos"]));
        let xs = schema(&["x1", "x2"], None);
        let real = schema(&["a", "b", "c"], None);
        let cases: &[(&str, &Schema)] = &[
            // By name, columns shuffled, the target anywhere, blank lines, CRLF, a BOM.
            ("label,b,a\npos,2,1\nneg,4,3\n\npos,6,5\n", &ab),
            ("\u{feff}b,label,a\r\n2,pos,1\r\n4,neg,3\r\n", &ab),
            ("b,a\n2,1\n4,3\n6,5\n", &ab),
            // No header: by position, features only or the target last.
            ("1,2\n3,4\n5,6\n", &ab),
            (
                "1,2,1\n3,4,+0\n5,6,0\n",
                &schema(&["a", "b"], Some(&["0", "1"])),
            ),
            ("\n\n1,2,pos\n3,4,neg\n", &ab),
            // Default names match by position; real targets; quoted fields; tabs.
            ("u,v,price\n1,2,3.5\n4,5,-1e3\n", &xs),
            ("c\ta\tb\n3\t1\t2\n6\t4\t5\n", &real),
            (
                "\"b\",\"a\",y\n2,1,0.5\n\"4\",3,1\n",
                &schema(&["a", "b"], None),
            ),
        ];
        for (text, s) in cases {
            let rows = same_as_whole("t.csv", text, None, s).unwrap();
            assert!(rows.x.rows >= 1);
        }
        // The columns really are in the model's order.
        let rows = same_as_whole("t.csv", cases[0].0, None, &ab).unwrap();
        assert_eq!(rows.x.row(2), &[5.0, 6.0]);
        let errors: &[(&str, &Schema, &str)] = &[
            (
                "a,b,label\n1,2,pos\n3,x,neg\n",
                &ab,
                "t.csv:3: field 2 'x' is not a number",
            ),
            (
                "a,b,label\n1,2,pos\n3,4\n5,6,neg\n",
                &ab,
                "t.csv:3: expected 3 fields, found 2",
            ),
            (
                "a,b,label\n1,2,pos\n3,4,zzz\n",
                &ab,
                "t.csv:3: label 'zzz' was not seen",
            ),
            (
                "a,b,label\n1,2,pos\n3,4,\n",
                &ab,
                "t.csv:3: field 3 (the target) is empty",
            ),
            (
                "a,b,y\n1,2,3\n1,2,inf\n",
                &schema(&["a", "b"], None),
                "t.csv:3:",
            ),
            ("a,b,label\n1,2,pos\n\"3,4,neg\n", &ab, "unterminated quote"),
            ("a,b,label\n1,2,pos\n3,4,\u{0}neg\n", &ab, "not seen"),
            ("a,c\n1,2\n", &ab, "t.csv:1: the header does not name"),
            ("a,b,c,d\n1,2,3,4\n", &ab, "'c', 'd'"),
            ("1,2,3,4\n", &xs, "t.csv:1: 4 columns, expected 2"),
            ("a,b\n", &ab, "t.csv:1: no data rows"),
            ("a,b\n\n\n", &ab, "t.csv:3: no data rows"),
            ("", &ab, "t.csv:1: no data rows (the file is empty)"),
            ("\n\n", &ab, "t.csv:2: no data rows (the file is empty)"),
        ];
        for (text, s, want) in errors {
            let e = same_as_whole("t.csv", text, None, s)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
        // A line that is not UTF-8, in the header and in a row.
        for text in [&b"a,b\xff\n1,2\n"[..], b"a,b\n1,2\n3,\xff\n"] {
            let whole = parse_for_model(Path::new("u.csv"), text, None, &ab).unwrap_err();
            for chunk in [1, 1000] {
                let e = streamed("u.csv", text, None, &ab, chunk).unwrap_err();
                assert_eq!(e.to_string(), whole.to_string());
            }
        }
    }

    #[test]
    fn libsvm_files_stream_as_read_whole() {
        let cls = schema(&["x1", "x2", "x3"], Some(&["-1", "+1"]));
        let real = schema(&["x1", "x2", "x3"], None);
        let cases: &[(&str, &Schema)] = &[
            (
                "+1 1:0.5 3:2\n-1 2:1\n# comment\n\n1 qid:3 1:1 # note\n-1\n",
                &cls,
            ),
            ("1:0.5 3:2\n2:1\n\n3:-1\n", &cls),
            ("2.5 1:1\n-0.5 2:1\n", &real),
            ("1:1\n2:2 3:3\n", &real),
        ];
        for (text, s) in cases {
            same_as_whole("t.svm", text, None, s).unwrap();
        }
        let rows = same_as_whole("t.svm", cases[1].0, None, &cls).unwrap();
        assert_eq!((rows.x.rows, rows.targets), (3, None));
        let errors: &[(&str, &Schema, &str)] = &[
            (
                "+1 1:1\n1:1\n",
                &cls,
                "t.svm:2: no label, but line 1 has one",
            ),
            (
                "1:1\n+1 1:1\n",
                &cls,
                "t.svm:2: a label, but line 1 has none",
            ),
            (
                "+1 1:1\n-1 4:1\n",
                &cls,
                "feature index 4 is beyond the 3 features",
            ),
            ("+1 1:1\n-1 2:1 1:1\n", &cls, "indices must increase"),
            ("+1 1:1\n2 1:1\n", &cls, "t.svm:2: label '2' was not seen"),
            ("+1 1:1\n-1 2:x\n", &cls, "t.svm:2:"),
            ("+1 1:1\n-1 0:1\n", &cls, "start at 1"),
            ("# nothing\n\n", &cls, "t.svm:2: no data rows"),
            ("x 1:1\n", &real, "t.svm:1:"),
            ("qid:1 1:1\n", &cls, "t.svm:1: 'qid:1' is not a label"),
        ];
        for (text, s, want) in errors {
            let e = same_as_whole("t.svm", text, None, s)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
        // Unlabelled lines for a model without classes: the whole-file reader's placeholder
        // target is refused at the last line, and so is the stream.
        let none = schema(&["x1"], Some(&[]));
        let e = same_as_whole("t.svm", "1:1\n1:2\n", None, &none).unwrap_err();
        assert!(e.to_string().starts_with("t.svm:2:"), "{e}");
    }

    /// The format as the whole-file reader picks it: given, from the name (also behind
    /// `.gz`), or sniffed from the first data line; an unknown one is its error.
    #[test]
    fn formats_are_picked_as_the_whole_file_reader_picks_them() {
        let s = schema(&["x1", "x2"], Some(&["-1", "+1"]));
        same_as_whole("data", "\n+1 1:1 2:2\n", None, &s).unwrap();
        same_as_whole("data", "# c\n\u{feff}1,2,+1\n", None, &s).unwrap_err();
        same_as_whole("data", "1,2,+1\n-1,2,-1\n", None, &s).unwrap();
        same_as_whole("data.svm.gz", "+1 1:1\n", None, &s).unwrap();
        same_as_whole("data.csv", "+1 1:1\n", Some(Format::Libsvm), &s).unwrap();
        let e = same_as_whole("data", "hello\n", None, &s).unwrap_err();
        assert!(e.to_string().contains("cannot tell the data format"), "{e}");
        same_as_whole("data", "", None, &s).unwrap_err();
    }

    /// Reading a file by path: the same rows as `read_for_model`, gzip detected by its magic
    /// bytes whatever the name, a missing file an I/O error naming it.
    #[test]
    fn files_stream_as_read_for_model_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let s = schema(&["a", "b"], Some(&["M", "R"]));
        let mut text = String::from("b,label,a\n");
        for i in 0..2500 {
            text.push_str(&format!("{},{},{}\n", i % 7, ["M", "R"][i % 3 % 2], i));
        }
        for (name, bytes) in [
            ("p.csv", text.as_bytes().to_vec()),
            ("z.csv", gzip(text.as_bytes())),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, &bytes).unwrap();
            let whole = crate::data::read_for_model(&path, None, &s).unwrap();
            let mut stream = ModelStream::open(&path, None, &s).unwrap();
            let mut got: Vec<ModelRows> = Vec::new();
            for chunk in stream.by_ref() {
                got.push(chunk.unwrap().into_rows());
            }
            assert_eq!(got.len(), 1, "2,500 rows in one default chunk");
            assert_eq!(got[0], whole);
            let mut stream = ModelStream::open(&path, None, &s).unwrap();
            let first = stream.next_chunk(1000).unwrap().unwrap();
            assert_eq!(first.x.row(999), whole.x.row(999));
            assert_eq!(first.lines[0], 2);
        }
        let missing = dir.path().join("missing.csv");
        let e = ModelStream::open(&missing, None, &s).unwrap_err();
        assert!(matches!(e, Error::Io { .. }) && e.to_string().contains("missing.csv"));
    }

    /// After an error the stream reads no more; the iterator ends.
    #[test]
    fn a_stream_stops_at_its_first_error() {
        let s = schema(&["a"], None);
        let text: Arc<[u8]> = Arc::from(&b"a,y\n1,2\nx,3\n4,5\n"[..]);
        let mut stream =
            ModelStream::from_bytes(Path::new("e.csv"), text.clone(), None, &s).unwrap();
        assert_eq!(stream.next_chunk(1).unwrap().unwrap().len(), 1);
        let e = stream.next_chunk(10).unwrap_err().to_string();
        assert!(e.starts_with("e.csv:3:"), "{e}");
        assert!(stream.next_chunk(10).is_err());
        let stream = ModelStream::from_bytes(Path::new("e.csv"), text, None, &s).unwrap();
        let items: Vec<Result<ModelChunk>> = stream.collect();
        assert_eq!(items.len(), 1);
        assert!(items[0].is_err());
    }
}

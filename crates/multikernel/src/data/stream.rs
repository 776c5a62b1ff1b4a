//! Streaming table reader: a CSV or libsvm table (gzip or not) read chunk by chunk, never
//! whole in memory, for training on files larger than memory (issue 17).
//!
//! [`TableStream`] accepts exactly what the in-memory readers ([`super::read_table`],
//! [`super::csv`], [`super::libsvm`]) accept, through the same per-line parsing code, and a
//! malformed row gives the same error (file, line, message) as the in-memory reader would
//! give for the same file. It reads one line at a time into a reused buffer, so memory is
//! bounded by one chunk of rows plus the longest line; a line longer than
//! `MAX_LINE_BYTES` is an error at its line. A gzip file (detected by its magic bytes, as
//! the in-memory readers do) is decompressed on the fly.
//!
//! [`scan`] makes one pass over a file and returns what a trainer needs before the first
//! epoch ([`TableSummary`]): the row count, the feature names, the classes (in the natural
//! order of [`super::read`]) or the target's mean and scale, and the column means and scales
//! of [`Standardizer::fit`] on the whole table (streamed by
//! `StandardizerAccumulator`). Since every row is parsed, a scan also validates the whole
//! file before training starts.
//!
//! Differences from the in-memory readers, by design: the table as a whole may exceed the
//! in-memory readers' 2^28-value limit (only a chunk is dense in memory); a chunk holds at
//! most 2^28 values; a line may hold at most `MAX_LINE_BYTES` bytes; libsvm lines must
//! carry labels (training files).

use super::csv::{parse_row, split_fields, target_what, CsvLayout, EMPTY_FILE};
use super::libsvm::{
    check_sparse_width, line_tokens, parse_entries, push_dense_row, take_label, LABEL,
};
use super::lines::{line_err, parse_err, text_line, BadLine};
use super::read::{sniff_line, unknown_format_err};
use super::rows::{check_dense_size, check_target, natural_order, TargetCollector, NO_ROWS};
use super::standardize::{Standardizer, StandardizerAccumulator, TargetScaler};
use super::{Format, Matrix, TargetKind, Targets};
use crate::error::{Error, Result};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
#[cfg(any(test, feature = "fuzzing"))]
use std::sync::Arc;

/// The longest line a [`TableStream`] reads (16 MiB, the line ending included); a longer
/// line is an error at its line rather than an unbounded allocation.
pub(crate) const MAX_LINE_BYTES: usize = 16 << 20;

/// Most values a chunk holds (2^28 `f64`, 2 GiB): a chunk has fewer rows than asked when
/// the rows are that wide.
pub(crate) const MAX_CHUNK_VALUES: usize = 1 << 28;

/// Size of the read buffers.
const BUFFER_BYTES: usize = 1 << 16;

/// Opens the data from its start, for each pass over it (the format sniffing, the libsvm
/// width pass, each [`TableStream::rewind`]). The bytes may be gzip-compressed.
pub(crate) type Opener = Box<dyn FnMut() -> std::io::Result<Box<dyn BufRead + Send>> + Send>;

/// Opens the file `path` from its start, buffered, for each pass over it.
pub(crate) fn file_opener(path: &Path) -> Opener {
    let p = path.to_path_buf();
    Box::new(move || {
        let file = std::fs::File::open(&p)?;
        Ok(Box::new(BufReader::with_capacity(BUFFER_BYTES, file)) as Box<dyn BufRead + Send>)
    })
}

/// Opens bytes already in memory from their start, for each pass over them.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn bytes_opener(bytes: Arc<[u8]>) -> Opener {
    Box::new(move || {
        Ok(Box::new(std::io::Cursor::new(Arc::clone(&bytes))) as Box<dyn BufRead + Send>)
    })
}

/// Lines of a reader with 1-based numbers, one at a time into a reused buffer: the same
/// lines as the in-memory readers' splitting (`\r\n` endings and a leading UTF-8 byte order
/// mark removed; a line that is not UTF-8 or holds a carriage return followed by more text
/// is the [`BadLine`]).
pub(crate) struct LineReader {
    origin: PathBuf,
    reader: Box<dyn BufRead + Send>,
    buf: Vec<u8>,
    line: usize,
}

impl LineReader {
    /// Opens the data through `opener`, gunzipping it when it starts with the gzip magic
    /// bytes.
    pub(crate) fn open(origin: &Path, opener: &mut Opener) -> Result<LineReader> {
        let io = |source| Error::Io {
            path: origin.to_path_buf(),
            source,
        };
        let mut raw = opener().map_err(io)?;
        let mut head = Vec::with_capacity(2);
        while head.len() < 2 {
            let buf = match raw.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io(e)),
            };
            if buf.is_empty() {
                break;
            }
            let take = (2 - head.len()).min(buf.len());
            head.extend_from_slice(&buf[..take]);
            raw.consume(take);
        }
        let gzip = head == [0x1f, 0x8b];
        let chained = std::io::Cursor::new(head).chain(raw);
        let reader: Box<dyn BufRead + Send> = if gzip {
            Box::new(BufReader::with_capacity(
                BUFFER_BYTES,
                flate2::bufread::MultiGzDecoder::new(chained),
            ))
        } else {
            Box::new(chained)
        };
        Ok(LineReader {
            origin: origin.to_path_buf(),
            reader,
            buf: Vec::new(),
            line: 0,
        })
    }

    /// The next line and its number; `None` at the end of the data.
    pub(crate) fn next_line(
        &mut self,
    ) -> Result<Option<(usize, std::result::Result<&str, BadLine>)>> {
        self.buf.clear();
        let n = (&mut self.reader)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut self.buf)
            .map_err(|source| Error::Io {
                path: self.origin.clone(),
                source,
            })?;
        if n == 0 {
            return Ok(None);
        }
        let mut line = self.buf.as_slice();
        if self.line == 0 {
            if let Some(rest) = line.strip_prefix(b"\xEF\xBB\xBF") {
                if rest.is_empty() {
                    // Only a byte order mark: no line at all.
                    return Ok(None);
                }
                line = rest;
            }
        }
        self.line += 1;
        match line.strip_suffix(b"\n") {
            Some(l) => line = l,
            None if self.buf.len() > MAX_LINE_BYTES => {
                return Err(parse_err(
                    &self.origin,
                    self.line,
                    format!("the line is longer than {} MiB", MAX_LINE_BYTES >> 20),
                ))
            }
            None => {}
        }
        if let Some(l) = line.strip_suffix(b"\r") {
            line = l;
        }
        Ok(Some((self.line, text_line(line))))
    }
}

/// The CSV layout a stream keeps between passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CsvShape {
    delim: char,
    n_cols: usize,
}

/// Up to a chunk of rows of a [`TableStream`].
#[derive(Debug, Clone, PartialEq)]
pub struct RawChunk {
    /// The feature values, one row per data row (row-major, [`TableStream::n_features`]
    /// columns).
    pub x: Matrix,
    /// Each row's target as written (trimmed), already checked as the in-memory reader
    /// checks it for the stream's [`TargetKind`]: a finite number for a real target, a
    /// non-empty label for classes. [`TableStream::targets`] maps them.
    pub targets: Vec<String>,
    /// Each row's 1-based line number in the (decompressed) file.
    pub lines: Vec<usize>,
}

impl RawChunk {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.x.rows
    }

    /// Whether the chunk has no rows (never the case for a chunk a stream returns).
    pub fn is_empty(&self) -> bool {
        self.x.rows == 0
    }
}

/// A table read row by row from a file (CSV or libsvm, gzip or not), never whole in memory
/// (module docs). Each pass reads the file from its start: [`TableStream::next_chunk`]
/// until `None`, then [`TableStream::rewind`] for another pass.
pub struct TableStream {
    origin: PathBuf,
    opener: Opener,
    format: Format,
    target: TargetKind,
    /// `Some` for CSV.
    csv: Option<CsvShape>,
    n_features: usize,
    feature_names: Vec<String>,
    /// How messages name a row's target.
    target_what: String,
    lines: LineReader,
    /// The first line of a CSV file without a header: a data row not yet returned.
    pending: Option<(usize, Vec<String>)>,
    /// The last line read in this pass.
    last_line: usize,
    /// Rows returned in this pass.
    rows: usize,
    /// Whether this pass reached the end of the file.
    finished: bool,
    /// Whether this pass stopped at an error.
    failed: bool,
}

impl std::fmt::Debug for TableStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableStream")
            .field("origin", &self.origin)
            .field("format", &self.format)
            .field("target", &self.target)
            .field("n_features", &self.n_features)
            .field("line", &self.last_line)
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
}

impl TableStream {
    /// Opens the table in `path`, in `format`, or in the format implied by the file name
    /// ([`Format::from_path`]), or, failing that, the one its first data line looks like
    /// (as [`super::read_table`] picks it; sniffing reads the file up to that line). Reads
    /// the CSV header.
    ///
    /// `target`: what the target holds; each row's target is checked as the in-memory
    /// reader checks it. `n_features`: for CSV, `None` (the columns of the file) or the
    /// count the file must have; for libsvm, the feature count (rows padded to it, an index
    /// beyond it an error at its line), or `None` to take the largest index of the file
    /// from a first pass over it (which validates every line, as [`scan`] does).
    pub fn open(
        path: &Path,
        format: Option<Format>,
        target: TargetKind,
        n_features: Option<usize>,
    ) -> Result<TableStream> {
        TableStream::from_source(path, file_opener(path), format, target, n_features)
    }

    /// As [`TableStream::open`] on data that `opener` opens from its start (once for each
    /// pass); `origin` names the data in messages and picks the format by its extension
    /// when `format` is `None`.
    pub(crate) fn from_source(
        origin: &Path,
        mut opener: Opener,
        format: Option<Format>,
        target: TargetKind,
        n_features: Option<usize>,
    ) -> Result<TableStream> {
        let format = pick_source_format(origin, &mut opener, format)?;
        let mut lines = LineReader::open(origin, &mut opener)?;
        Ok(match format {
            Format::Csv => {
                let (layout, first_no) = csv_start(origin, &mut lines, target, n_features)?;
                TableStream {
                    origin: origin.to_path_buf(),
                    opener,
                    format,
                    target,
                    csv: Some(CsvShape {
                        delim: layout.delim,
                        n_cols: layout.n_cols,
                    }),
                    n_features: layout.d,
                    feature_names: layout.feature_names,
                    target_what: target_what(layout.n_cols),
                    lines,
                    pending: layout.first_row.map(|r| (first_no, r)),
                    last_line: first_no,
                    rows: 0,
                    finished: false,
                    failed: false,
                }
            }
            Format::Libsvm => {
                let d = match n_features {
                    Some(d) => d,
                    None => libsvm_width(origin, &mut opener, target)?,
                };
                // One row must fit in a chunk (and its names in memory).
                check_dense_size(origin, 1, d)?;
                TableStream {
                    origin: origin.to_path_buf(),
                    opener,
                    format,
                    target,
                    csv: None,
                    n_features: d,
                    feature_names: (1..=d).map(|j| format!("x{j}")).collect(),
                    target_what: LABEL.to_string(),
                    lines,
                    pending: None,
                    last_line: 0,
                    rows: 0,
                    finished: false,
                    failed: false,
                }
            }
        })
    }

    /// As [`TableStream::from_source`] on bytes already in memory (e.g. for tests, fuzzing,
    /// or standard input read whole); they may be gzip-compressed.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn from_bytes(
        origin: &Path,
        bytes: Arc<[u8]>,
        format: Option<Format>,
        target: TargetKind,
        n_features: Option<usize>,
    ) -> Result<TableStream> {
        TableStream::from_source(origin, bytes_opener(bytes), format, target, n_features)
    }

    /// The names of the feature columns (from the CSV header, or `x1, x2, ...`).
    pub fn feature_names(&self) -> &[String] {
        &self.feature_names
    }

    /// The number of feature columns of every row.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// The format being read.
    pub fn format(&self) -> Format {
        self.format
    }

    /// What the target holds.
    pub(crate) fn target_kind(&self) -> TargetKind {
        self.target
    }

    /// The name of the data in messages (the file).
    pub(crate) fn origin(&self) -> &Path {
        &self.origin
    }

    /// Rows returned in the current pass.
    pub fn rows_read(&self) -> usize {
        self.rows
    }

    /// Starts a new pass: the next chunk is the file's first rows again (the file is opened
    /// anew; its CSV header must not have changed).
    pub fn rewind(&mut self) -> Result<()> {
        self.failed = true;
        let mut lines = LineReader::open(&self.origin, &mut self.opener)?;
        self.pending = None;
        self.last_line = 0;
        if let Some(shape) = self.csv {
            let (layout, first_no) =
                csv_start(&self.origin, &mut lines, self.target, Some(self.n_features))?;
            if shape.delim != layout.delim || layout.feature_names != self.feature_names {
                return Err(Error::data(format!(
                    "{}: the header changed since the file was opened",
                    self.origin.display()
                )));
            }
            self.pending = layout.first_row.map(|r| (first_no, r));
            self.last_line = first_no;
        }
        self.lines = lines;
        self.rows = 0;
        self.finished = false;
        self.failed = false;
        Ok(())
    }

    /// Up to `max_rows` next rows (at least 1; fewer at the end of the file, or when
    /// `max_rows` rows would exceed 2^28 values): their features, their raw targets and
    /// their line numbers. `None` once the file is exhausted. An error names the file and
    /// the line of the first malformed row, as the in-memory reader would, and a file
    /// without data rows is an error at its end; after an error the stream must be
    /// [rewound](TableStream::rewind) before it reads again.
    pub fn next_chunk(&mut self, max_rows: usize) -> Result<Option<RawChunk>> {
        if self.failed {
            return Err(Error::data(format!(
                "{}: the stream stopped at an error; rewind it to read the file again",
                self.origin.display()
            )));
        }
        if self.finished {
            return Ok(None);
        }
        self.failed = true; // until this chunk is read
        let d = self.n_features;
        let max_rows = max_rows.clamp(1, (MAX_CHUNK_VALUES / d.max(1)).max(1));
        let origin = self.origin.as_path();
        let (kind, what) = (self.target, self.target_what.as_str());
        let mut data: Vec<f64> = Vec::new();
        let mut targets: Vec<String> = Vec::new();
        let mut line_nos: Vec<usize> = Vec::new();
        if let (Some((no, fields)), Some(shape)) = (self.pending.take(), self.csv) {
            let t = parse_row(origin, no, &fields, shape.n_cols, &mut data)?;
            let (label, _) = check_target(origin, kind, t, no, what)?;
            targets.push(label.to_string());
            line_nos.push(no);
        }
        while targets.len() < max_rows {
            let Some((no, line)) = self.lines.next_line()? else {
                self.finished = true;
                break;
            };
            self.last_line = no;
            let line = line.map_err(|b| line_err(origin, no, b))?;
            let label = match self.csv {
                Some(shape) => {
                    if line.trim().is_empty() {
                        continue;
                    }
                    let fields =
                        split_fields(line, shape.delim).map_err(|m| parse_err(origin, no, m))?;
                    let t = parse_row(origin, no, &fields, shape.n_cols, &mut data)?;
                    check_target(origin, kind, t, no, what)?.0.to_string()
                }
                None => {
                    let Some(mut tokens) = line_tokens(line) else {
                        continue; // blank or comment line
                    };
                    let label = take_label(origin, no, &mut tokens)?;
                    let (label, _) = check_target(origin, kind, label, no, what)?;
                    push_dense_row(origin, no, tokens, d, &mut data)?;
                    label.to_string()
                }
            };
            targets.push(label);
            line_nos.push(no);
        }
        self.rows += targets.len();
        if self.finished && self.rows == 0 {
            return Err(parse_err(origin, self.last_line.max(1), NO_ROWS));
        }
        self.failed = false;
        if targets.is_empty() {
            return Ok(None);
        }
        Ok(Some(RawChunk {
            x: Matrix::from_vec(targets.len(), d, data),
            targets,
            lines: line_nos,
        }))
    }

    /// The targets of `chunk` (read from this stream) as the in-memory reader makes them,
    /// with the same messages: real values, or class indices into `classes` (a label
    /// matching none is an error at its line). For training pass the classes of the whole
    /// file ([`TableSummary::classes`]); `None` takes the classes of this chunk alone.
    pub fn targets(&self, chunk: &RawChunk, classes: Option<&[String]>) -> Result<Targets> {
        let mut collector = TargetCollector::new(&self.origin, self.target, classes);
        for (t, &no) in chunk.targets.iter().zip(&chunk.lines) {
            collector.push(t, no, &self.target_what)?;
        }
        Ok(collector.finish())
    }
}

/// `format`, or the one implied by the name of `origin`, or the one the first data line of
/// the source looks like: the in-memory readers' choice (`read::pick_format`), reading the
/// source only as far as that line.
pub(crate) fn pick_source_format(
    origin: &Path,
    opener: &mut Opener,
    format: Option<Format>,
) -> Result<Format> {
    match format.or_else(|| Format::from_path(origin)) {
        Some(f) => Ok(f),
        None => sniff_source(origin, opener),
    }
}

/// Sniffs the format from the first line with content, as the in-memory readers do.
fn sniff_source(origin: &Path, opener: &mut Opener) -> Result<Format> {
    let mut lines = LineReader::open(origin, opener)?;
    while let Some((_, line)) = lines.next_line()? {
        if let Some(guess) = line.ok().and_then(sniff_line) {
            return guess.ok_or_else(|| unknown_format_err(origin));
        }
    }
    Err(unknown_format_err(origin))
}

/// Reads a CSV file up to its first non-blank line and returns the layout it fixes and its
/// number, with the in-memory reader's errors.
fn csv_start(
    origin: &Path,
    lines: &mut LineReader,
    target: TargetKind,
    n_features: Option<usize>,
) -> Result<(CsvLayout, usize)> {
    csv_first_line(origin, lines, |no, l| {
        CsvLayout::new(origin, no, l, target, n_features)
    })
}

/// Reads a CSV file up to its first non-blank line, gives it and its number to `start`
/// (which reads the header or the first row) and returns what `start` makes of it and the
/// number; a file without such a line, or a line before it that is not UTF-8, is the
/// in-memory CSV readers' error.
pub(crate) fn csv_first_line<T>(
    origin: &Path,
    lines: &mut LineReader,
    start: impl FnOnce(usize, &str) -> Result<T>,
) -> Result<(T, usize)> {
    let mut last_line = 0;
    loop {
        match lines.next_line()? {
            None => return Err(parse_err(origin, last_line.max(1), EMPTY_FILE)),
            Some((no, Err(b))) => return Err(line_err(origin, no, b)),
            Some((no, Ok(l))) => {
                last_line = no;
                if !l.trim().is_empty() {
                    return Ok((start(no, l)?, no));
                }
            }
        }
    }
}

/// The feature count of a libsvm file, its largest index, from a pass that checks every
/// line as the in-memory reader does (and refuses, as it does, a stray huge index and a
/// file without data rows).
fn libsvm_width(origin: &Path, opener: &mut Opener, target: TargetKind) -> Result<usize> {
    let mut lines = LineReader::open(origin, opener)?;
    let (mut rows, mut stored, mut max_index, mut max_line, mut last_line) = (0, 0, 0, 0, 0);
    while let Some((no, line)) = lines.next_line()? {
        last_line = no;
        let line = line.map_err(|b| line_err(origin, no, b))?;
        let Some(mut tokens) = line_tokens(line) else {
            continue;
        };
        let label = take_label(origin, no, &mut tokens)?;
        check_target(origin, target, label, no, LABEL)?;
        rows += 1;
        parse_entries(origin, no, tokens, None, |j, _| {
            stored += 1;
            if j >= max_index {
                max_index = j + 1;
                max_line = no;
            }
        })?;
    }
    check_sparse_width(origin, rows, max_index, stored, max_line)?;
    if rows == 0 {
        return Err(parse_err(origin, last_line.max(1), NO_ROWS));
    }
    Ok(max_index)
}

/// What one pass over a training table tells before training: see [`scan`].
#[derive(Debug, Clone, PartialEq)]
pub struct TableSummary {
    /// The format read.
    pub format: Format,
    /// Number of data rows.
    pub rows: usize,
    /// The feature names (from the CSV header, or `x1, x2, ...`).
    pub feature_names: Vec<String>,
    /// For class targets, the classes in natural order (as the in-memory reader sorts
    /// them); `None` for real targets.
    pub classes: Option<Vec<String>>,
    /// Column means and scales, equal (to rounding) to [`Standardizer::fit`] on the whole
    /// table.
    pub standardizer: Standardizer,
    /// For real targets, their mean and scale as [`TargetScaler::fit`] gives them on all
    /// targets (to rounding); `None` for class targets.
    pub target_scaler: Option<TargetScaler>,
}

impl TableSummary {
    /// The number of feature columns.
    pub fn n_features(&self) -> usize {
        self.feature_names.len()
    }
}

/// One pass over the table in `path` (format as in [`TableStream::open`]; libsvm files are
/// read twice, the first pass for their width), in chunks of `chunk_rows` rows: the row
/// count, the feature names, the classes or the target's moments, and the column
/// statistics of [`Standardizer::fit`], accumulated chunk by chunk
/// (`StandardizerAccumulator`). Every row is parsed: a malformed one is an error naming
/// the file and its line, as the in-memory reader gives it.
pub fn scan(
    path: &Path,
    format: Option<Format>,
    target: TargetKind,
    chunk_rows: usize,
) -> Result<TableSummary> {
    let mut stream = TableStream::open(path, format, target, None)?;
    summarize(&mut stream, chunk_rows)
}

/// [`scan`] through an opened stream: a whole pass from the start of the file (the stream is
/// rewound first when it has been read from); the stream is left at the end of the file.
pub fn summarize(stream: &mut TableStream, chunk_rows: usize) -> Result<TableSummary> {
    if stream.rows_read() > 0 || stream.finished || stream.failed {
        stream.rewind()?;
    }
    let mut features = StandardizerAccumulator::new(stream.n_features());
    let mut target_moments = StandardizerAccumulator::new(1);
    let mut classes: HashSet<String> = HashSet::new();
    while let Some(chunk) = stream.next_chunk(chunk_rows)? {
        features.push_rows(&chunk.x)?;
        match stream.target_kind() {
            TargetKind::Real => {
                let y = chunk
                    .targets
                    .iter()
                    .zip(&chunk.lines)
                    .map(|(t, &no)| {
                        check_target(
                            stream.origin(),
                            TargetKind::Real,
                            t,
                            no,
                            &stream.target_what,
                        )
                        .map(|(_, v)| v.unwrap_or_default())
                    })
                    .collect::<Result<Vec<f64>>>()?;
                target_moments.push_rows(&Matrix::from_vec(y.len(), 1, y))?;
            }
            TargetKind::Classes => {
                classes.extend(chunk.targets);
            }
        }
    }
    let (classes, target_scaler) = match stream.target_kind() {
        TargetKind::Real => {
            let m = target_moments.finish();
            (
                None,
                Some(TargetScaler {
                    mean: m.mean[0],
                    scale: m.scale[0],
                }),
            )
        }
        TargetKind::Classes => {
            let names: Vec<String> = classes.into_iter().collect();
            let order = natural_order(&names);
            (
                Some(order.iter().map(|&i| names[i].clone()).collect()),
                None,
            )
        }
    };
    Ok(TableSummary {
        format: stream.format(),
        rows: features.rows(),
        feature_names: stream.feature_names().to_vec(),
        classes,
        standardizer: features.finish(),
        target_scaler,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    type Line = (usize, std::result::Result<String, BadLine>);

    fn lines_of(bytes: &[u8]) -> Result<Vec<Line>> {
        let mut opener = bytes_opener(bytes.into());
        let mut r = LineReader::open(Path::new("t"), &mut opener)?;
        let mut out = Vec::new();
        while let Some((no, l)) = r.next_line()? {
            out.push((no, l.map(str::to_string)));
        }
        Ok(out)
    }

    /// The line reader splits as the in-memory `Lines` does.
    #[test]
    fn lines_equal_the_in_memory_splitting() {
        for text in [
            &b"\xEF\xBB\xBFa\r\nb\n\n\xFF\nc"[..],
            b"x\n",
            b"",
            b"\xEF\xBB\xBF",
            b"\xEF\xBB\xBF\n",
            b"\r\n\r\r\n",
            b"a,b\r1,2\r3,4\n5,6\r\n",
            b"a\xEF\xBB\xBF\n\xEF\xBB\xBFb",
            b"\x1f",
        ] {
            let want: Vec<_> = super::super::lines::Lines::new(text)
                .map(|(no, l)| (no, l.map(str::to_string)))
                .collect();
            assert_eq!(lines_of(text).unwrap(), want, "{text:?}");
        }
    }

    /// A line beyond the limit is an error at its line, not an allocation of the whole file.
    #[test]
    fn overlong_line_is_an_error_at_its_line() {
        let mut text = b"a,label\n1,x\n".to_vec();
        text.resize(text.len() + MAX_LINE_BYTES + 10, b'1');
        let e = lines_of(&text).unwrap_err().to_string();
        assert!(e.starts_with("t:3: the line is longer than 16 MiB"), "{e}");
        // Exactly at the limit (the newline included) is fine.
        let mut text = vec![b'7'; MAX_LINE_BYTES - 1];
        text.push(b'\n');
        assert_eq!(lines_of(&text).unwrap().len(), 1);
    }

    /// A corrupt gzip stream is an I/O error naming the file.
    #[test]
    fn corrupt_gzip_is_an_io_error() {
        let e = TableStream::from_bytes(
            Path::new("t.csv.gz"),
            Arc::from(&b"\x1f\x8b\x08\x00garbage"[..]),
            None,
            TargetKind::Classes,
            None,
        )
        .unwrap_err();
        assert!(matches!(e, Error::Io { .. }), "{e}");
        assert!(e.to_string().starts_with("t.csv.gz: "), "{e}");
    }

    /// A libsvm width too large for one row of a chunk is refused, not allocated.
    #[test]
    fn wide_rows_are_refused_not_allocated() {
        let e = TableStream::from_bytes(
            Path::new("w.svm"),
            Arc::from(&b"1 1:1\n"[..]),
            None,
            TargetKind::Classes,
            Some(1 << 29),
        )
        .unwrap_err();
        assert!(matches!(e, Error::Memory { .. }), "{e}");
        assert!(e.to_string().contains("w.svm"), "{e}");
    }
}

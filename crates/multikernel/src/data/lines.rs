//! Text files as the table readers see them: the whole content, gunzipped when compressed;
//! numbered lines with `\r\n` endings and a byte order mark removed, a line with invalid
//! UTF-8 or a carriage return inside (CR line ends) named; parse errors with file and line;
//! finite numbers.

use crate::error::{Error, Result};
use std::io::Read;
use std::path::Path;

/// The whole content of `path`, gunzipped when it starts with the gzip magic bytes.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let raw = std::fs::read(path).map_err(io)?;
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(raw.as_slice())
            .read_to_end(&mut out)
            .map_err(io)?;
        Ok(out)
    } else {
        Ok(raw)
    }
}

/// Why a line cannot be read as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BadLine {
    /// The line is not valid UTF-8.
    NotUtf8,
    /// A carriage return inside the line: the file ends its lines with CR alone (classic
    /// Mac OS), so that what looks like many lines is one.
    CrLineEnds,
}

/// Whether `line` (split at `\n`, its `\r\n` ending removed) holds a carriage return
/// followed by more text: the file's lines end with CR alone. Carriage returns at the end
/// of the line (`\r\r\n`, a file converted twice) are not counted.
pub(crate) fn has_cr_line_ends(line: &[u8]) -> bool {
    let end = line.iter().rposition(|&b| b != b'\r').map_or(0, |p| p + 1);
    line[..end].contains(&b'\r')
}

/// Checks one line as the text readers do: no carriage return inside it
/// ([`has_cr_line_ends`]), valid UTF-8.
pub(crate) fn text_line(line: &[u8]) -> std::result::Result<&str, BadLine> {
    if has_cr_line_ends(line) {
        return Err(BadLine::CrLineEnds);
    }
    std::str::from_utf8(line).map_err(|_| BadLine::NotUtf8)
}

/// Lines of a byte buffer with 1-based numbers; `\r\n` endings and a leading UTF-8 byte
/// order mark are removed; a line that is not UTF-8, or holds a carriage return followed by
/// more text (a file with CR line ends), yields the [`BadLine`].
pub(crate) struct Lines<'a> {
    rest: Option<&'a [u8]>,
    line: usize,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        Lines {
            rest: if bytes.is_empty() { None } else { Some(bytes) },
            line: 0,
        }
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = (usize, std::result::Result<&'a str, BadLine>);

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.rest?;
        let (mut line, tail) = match rest.iter().position(|&b| b == b'\n') {
            Some(p) => (&rest[..p], &rest[p + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        self.rest = if tail.is_empty() { None } else { Some(tail) };
        if let Some(l) = line.strip_suffix(b"\r") {
            line = l;
        }
        self.line += 1;
        Some((self.line, text_line(line)))
    }
}

/// Lines of a byte buffer as bytes, with 1-based numbers; `\r\n` endings and a leading
/// UTF-8 byte order mark are removed, nothing is decoded (the caller checks
/// [`has_cr_line_ends`]).
pub(crate) fn byte_lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let lines = (!bytes.is_empty()).then(|| body.split(|&b| b == b'\n'));
    lines
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(k, l)| (k + 1, l.strip_suffix(b"\r").unwrap_or(l)))
}

/// A parse error at `line` of `path`.
pub(crate) fn parse_err(path: &Path, line: usize, msg: impl Into<String>) -> Error {
    Error::Parse {
        path: path.to_path_buf(),
        line,
        msg: msg.into(),
    }
}

/// The message for a line with a carriage return inside it ([`has_cr_line_ends`]).
pub(crate) const CR_LINE_ENDS: &str = "a carriage return (CR) inside the line: the file's \
     lines end with CR alone (an old Mac OS text file), so it reads as one line; convert the \
     line ends to LF (e.g. tr '\\r' '\\n' < FILE > FILE.lf) or CR LF";

/// The error for a line that cannot be read as text.
pub(crate) fn line_err(path: &Path, line: usize, bad: BadLine) -> Error {
    match bad {
        BadLine::NotUtf8 => parse_err(path, line, "the line is not valid UTF-8 text"),
        BadLine::CrLineEnds => parse_err(path, line, CR_LINE_ENDS),
    }
}

/// Parses a finite number; `what` names it in the message (e.g. "field 3").
pub(crate) fn parse_number(s: &str, what: &str) -> std::result::Result<f64, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err(format!(
            "{what} is empty (missing values are not supported)"
        ));
    }
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(format!("{what} '{t}' is not a finite number")),
        Err(_) => Err(format!("{what} '{t}' is not a number")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_numbers_crlf_bom_and_bad_utf8() {
        let v: Vec<_> = Lines::new(b"\xEF\xBB\xBFa\r\nb\n\n\xFF\nc").collect();
        assert_eq!(
            v,
            vec![
                (1, Ok("a")),
                (2, Ok("b")),
                (3, Ok("")),
                (4, Err(BadLine::NotUtf8)),
                (5, Ok("c"))
            ]
        );
        assert_eq!(Lines::new(b"x\n").count(), 1);
        assert_eq!(Lines::new(b"").count(), 0);
        // CR line ends (an old Mac file) are named; CRs at a line's end are line ends.
        let v: Vec<_> = Lines::new(b"a,b\r1,2\r").collect();
        assert_eq!(v, vec![(1, Err(BadLine::CrLineEnds))]);
        let v: Vec<_> = Lines::new(b"a\r\r\nb\r").collect();
        assert_eq!(v, vec![(1, Ok("a\r")), (2, Ok("b"))]);
        let e = line_err(Path::new("m.csv"), 1, BadLine::CrLineEnds).to_string();
        assert!(e.starts_with("m.csv:1: a carriage return (CR)") && e.contains("CR alone"));
    }
}

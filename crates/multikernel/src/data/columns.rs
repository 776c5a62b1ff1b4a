//! Reader and writer of the column format of CRF++ and CoNLL shared tasks: one token a line,
//! whitespace-separated columns (spaces or tabs, runs count as one), the label in the last
//! column, a blank line between sentences. Plain or gzip.
//!
//! Columns are bytes, never decoded, as CRF++ reads them: a file in any ASCII-compatible
//! encoding (UTF-8, EUC-JP, Shift_JIS, GB2312, GBK, Big5, Latin-1, ...) is read, and
//! written back byte for byte. Columns are split at ASCII space, tab and carriage-return
//! bytes, which no multi-byte character of these encodings contains (Shift_JIS and Big5
//! trail bytes may be ASCII letters or punctuation, 0x40-0x7E, but never whitespace). A file
//! in UTF-16 or UTF-32 (NUL bytes, or their byte order mark) is refused with a message.
//!
//! Read as CRF++ 0.58 reads it, with these differences (CRF++ would go on silently; here the
//! first two are errors with file and line):
//! - every token line of a file has the same number of columns (CRF++ checks this for
//!   training files only);
//! - a line that starts with a space or a tab but has text on it is refused (CRF++ ends the
//!   sentence there and drops the line); a line of whitespace only ends a sentence, as in
//!   CRF++;
//! - a UTF-8 byte order mark is dropped at the start of every line that is valid UTF-8, not
//!   only the file's first (files joined by `cat` keep theirs), and separates columns
//!   elsewhere in such a line (in a line of another encoding its three bytes may be text);
//! - a carriage return separates columns like a space (CRF++ keeps it inside the last
//!   column of a file with Windows line ends, so that `O\r` is another label than `O`);
//! - a carriage return followed by more text on its line is refused: the file's lines end
//!   with CR alone (an old Mac OS file), which CRF++ would read as one long sentence.
//!
//! `write_with_predictions` writes sentences back as `crf_test` does: each token's columns
//! separated by tabs, the predicted label appended, a blank line after each sentence.

use crate::data::lines::{byte_lines, has_cr_line_ends, parse_err, read_bytes, CR_LINE_ENDS};
use crate::error::Result;
use std::io::Write;
use std::path::Path;

/// One column of one token: its bytes as read (any ASCII-compatible encoding).
pub(crate) type Column = Vec<u8>;

/// One sentence: its tokens' columns.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ColumnSentence {
    /// Each token's columns, as read (bytes).
    pub tokens: Vec<Vec<Column>>,
    /// Line of the file where the sentence starts (1-based).
    pub line: usize,
}

impl ColumnSentence {
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Column `col` of every token (empty for a token without it).
    pub(crate) fn column(&self, col: usize) -> Vec<&[u8]> {
        self.tokens
            .iter()
            .map(|t| t.get(col).map_or(&b""[..], Vec::as_slice))
            .collect()
    }

    /// The last column of every token (the label of a training or evaluation file).
    pub(crate) fn last_column(&self) -> Vec<&[u8]> {
        self.tokens
            .iter()
            .map(|t| t.last().map_or(&b""[..], Vec::as_slice))
            .collect()
    }
}

/// A file of sentences in the column format.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ColumnData {
    pub sentences: Vec<ColumnSentence>,
    /// Columns of every token line.
    pub n_columns: usize,
}

impl ColumnData {
    /// Tokens of all sentences.
    #[cfg(test)]
    pub(crate) fn n_tokens(&self) -> usize {
        self.sentences.iter().map(ColumnSentence::len).sum()
    }
}

/// Reads a column file (plain or gzip).
pub(crate) fn read_columns(path: &Path) -> Result<ColumnData> {
    parse_columns(&read_bytes(path)?, path)
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Whether a byte separates columns: space, tab, carriage return (ASCII whitespace bytes,
/// which in an ASCII-compatible encoding never occur inside a multi-byte character; in
/// Shift_JIS a trail byte may be 0x40-0x7E but never one of these).
fn is_separator(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r')
}

/// The columns of one line. A line that is valid UTF-8 also drops byte order marks at its
/// start and splits at them elsewhere; a line in another encoding is split at the separator
/// bytes only (three bytes that spell a UTF-8 byte order mark may be text there).
fn split_line(text: &[u8]) -> (&[u8], Vec<Column>) {
    if std::str::from_utf8(text).is_ok() {
        let mut t = text;
        while let Some(r) = t.strip_prefix(BOM) {
            t = r;
        }
        let mut cols = Vec::new();
        let mut cur = Vec::new();
        let mut k = 0;
        while k < t.len() {
            if t[k..].starts_with(BOM) || is_separator(t[k]) {
                if !cur.is_empty() {
                    cols.push(std::mem::take(&mut cur));
                }
                k += if is_separator(t[k]) { 1 } else { BOM.len() };
            } else {
                cur.push(t[k]);
                k += 1;
            }
        }
        if !cur.is_empty() {
            cols.push(cur);
        }
        (t, cols)
    } else {
        let cols = text
            .split(|&b| is_separator(b))
            .filter(|c| !c.is_empty())
            .map(<[u8]>::to_vec)
            .collect();
        (text, cols)
    }
}

/// The refusal of a file in an encoding that is not ASCII-compatible: UTF-16 or UTF-32
/// (a byte order mark of theirs, or NUL bytes, which no text in an ASCII-compatible
/// encoding has).
fn check_ascii_compatible(bytes: &[u8], path: &Path) -> Result<()> {
    let utf16_bom = bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF");
    if let Some(p) = bytes
        .iter()
        .position(|&b| b == 0)
        .or(utf16_bom.then_some(0))
    {
        let line = 1 + bytes[..p].iter().filter(|&&b| b == b'\n').count();
        return Err(parse_err(
            path,
            line,
            "the file looks like UTF-16 or UTF-32 (a NUL byte or their byte order mark): \
             column files are read as bytes in an ASCII-compatible encoding (UTF-8, EUC-JP, \
             Shift_JIS, GB2312, Latin-1, ...); convert it first, e.g. \
             iconv -f UTF-16 -t UTF-8",
        ));
    }
    Ok(())
}

/// Parses column text as bytes; `path` names it in errors. An error for a file without
/// tokens, a line with another number of columns than the first token line, a token line
/// that starts with whitespace, a file with CR line ends, or a file in an encoding that is
/// not ASCII-compatible.
pub fn parse_columns(bytes: &[u8], path: &Path) -> Result<ColumnData> {
    check_ascii_compatible(bytes, path)?;
    let mut out = ColumnData::default();
    let mut cur = ColumnSentence::default();
    let mut first_line = 0;
    for (line, raw) in byte_lines(bytes) {
        if has_cr_line_ends(raw) {
            return Err(parse_err(path, line, CR_LINE_ENDS));
        }
        let (text, cols) = split_line(raw);
        if cols.is_empty() {
            // A line of separators only (spaces, tabs, carriage returns, byte order marks).
            if !cur.tokens.is_empty() {
                out.sentences.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if text.starts_with(b" ") || text.starts_with(b"\t") {
            return Err(parse_err(
                path,
                line,
                "the line starts with a space or a tab (CRF++ would end the sentence here \
                 and drop the line): remove the leading whitespace, or leave the line empty \
                 to end the sentence",
            ));
        }
        if out.n_columns == 0 {
            out.n_columns = cols.len();
            first_line = line;
        } else if cols.len() != out.n_columns {
            return Err(parse_err(
                path,
                line,
                format!(
                    "expected {} columns (as on line {first_line}), found {}",
                    out.n_columns,
                    cols.len()
                ),
            ));
        }
        if cur.tokens.is_empty() {
            cur.line = line;
        }
        cur.tokens.push(cols);
    }
    if !cur.tokens.is_empty() {
        out.sentences.push(cur);
    }
    if out.sentences.is_empty() {
        return Err(parse_err(
            path,
            1,
            "no tokens: expected lines of whitespace-separated columns, a blank line between \
             sentences",
        ));
    }
    Ok(out)
}

/// Writes `sentences` in the column format (columns separated by tabs, a blank line after
/// each sentence).
pub fn write_columns(out: &mut impl Write, sentences: &[ColumnSentence]) -> std::io::Result<()> {
    for s in sentences {
        for tok in &s.tokens {
            out.write_all(&tok.join(&b'\t'))?;
            out.write_all(b"\n")?;
        }
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// Writes `sentences` with `predicted[i][t]` appended to token `t` of sentence `i` (columns
/// separated by tabs, a blank line after each sentence), as `crf_test` prints them. An error
/// when the predictions do not match the sentences' lengths.
pub(crate) fn write_with_predictions(
    out: &mut impl Write,
    sentences: &[ColumnSentence],
    predicted: &[Vec<impl AsRef<[u8]>>],
) -> std::io::Result<()> {
    if sentences.len() != predicted.len()
        || sentences
            .iter()
            .zip(predicted)
            .any(|(s, p)| s.len() != p.len())
    {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the predictions do not match the sentences",
        ));
    }
    for (s, p) in sentences.iter().zip(predicted) {
        for (tok, label) in s.tokens.iter().zip(p) {
            for c in tok {
                out.write_all(c)?;
                out.write_all(b"\t")?;
            }
            out.write_all(label.as_ref())?;
            out.write_all(b"\n")?;
        }
        out.write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<ColumnData> {
        parse_columns(s.as_bytes(), Path::new("t.txt"))
    }

    #[test]
    fn sentences_split_at_blank_lines_and_columns_at_whitespace_runs() {
        let d = parse("He PRP B-NP\nran  VBD\tB-VP\n\n\n \t\nIt PRP B-NP\r\n").unwrap();
        assert_eq!(d.n_columns, 3);
        assert_eq!(d.sentences.len(), 2);
        assert_eq!(d.sentences[0].tokens[1], [&b"ran"[..], b"VBD", b"B-VP"]);
        assert_eq!(d.sentences[0].line, 1);
        assert_eq!(d.sentences[1].line, 6);
        assert_eq!(d.sentences[1].last_column(), [b"B-NP"]);
        assert_eq!(d.sentences[0].column(1), [b"PRP", b"VBD"]);
        assert_eq!(d.n_tokens(), 3);
    }

    #[test]
    fn bad_input_names_the_line() {
        let e = parse("a b c\nd e\n").unwrap_err().to_string();
        assert!(e.contains("t.txt") && e.contains('2') && e.contains("expected 3 columns"));
        let e = parse("a b\n c d\n").unwrap_err().to_string();
        assert!(e.contains("starts with a space"), "{e}");
        let e = parse("\n\n  \n").unwrap_err().to_string();
        assert!(e.contains("no tokens"), "{e}");
        // An old Mac file (CR line ends) reads as one line: named, not a sentence of one
        // token; a line after LF lines is named by its number.
        let e = parse("He PRP\rran VBD\r\rIt PRP\r")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t.txt:1: a carriage return (CR)"), "{e}");
        assert!(e.contains("CR alone"), "{e}");
        let e = parse("He PRP\n\nran VBD\rIt PRP\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t.txt:3: a carriage return"), "{e}");
        assert_eq!(parse("a B\r\r\nc D\r").unwrap().n_tokens(), 2);
        for utf16 in [&b"a\0 \0b\0\n\0"[..], b"\xff\xfea\0"] {
            let e = parse_columns(utf16, Path::new("t.txt"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("UTF-16") && e.contains("t.txt:1"), "{e}");
        }
    }

    #[test]
    fn predictions_are_appended_and_read_back() {
        let d = parse("a X B-NP\nb Y I-NP\n\nc Z O\n").unwrap();
        let pred = vec![vec!["B-NP", "O"], vec!["O"]];
        let mut buf = Vec::new();
        write_with_predictions(&mut buf, &d.sentences, &pred).unwrap();
        assert_eq!(
            String::from_utf8(buf.clone()).unwrap(),
            "a\tX\tB-NP\tB-NP\nb\tY\tI-NP\tO\n\nc\tZ\tO\tO\n\n"
        );
        let back = parse_columns(&buf, Path::new("p.txt")).unwrap();
        assert_eq!(back.n_columns, 4);
        assert_eq!(back.sentences[0].last_column(), [&b"B-NP"[..], b"O"]);
        assert!(write_with_predictions(&mut Vec::new(), &d.sentences, &pred[..1]).is_err());
        let mut plain = Vec::new();
        write_columns(&mut plain, &d.sentences).unwrap();
        assert_eq!(parse_columns(&plain, Path::new("w")).unwrap(), {
            let mut e = d.clone();
            e.sentences[1].line = 4;
            e
        });
    }

    /// EUC-JP, Shift_JIS (a trail byte 0x5C, `\\`) and Latin-1 bytes are columns as read
    /// and are written back byte for byte; a UTF-8 byte order mark is text in such a line.
    #[test]
    fn legacy_encodings_are_read_and_written_as_bytes() {
        let euc: &[u8] = b"\xc5\xec\xb5\xfe NOUN\n\xa4\xcb ADP\n\n";
        let sjis: &[u8] = b"\x95\x5c\x8e\xa6 NOUN\n\x82\xa0\xef\xbb\xbf X\n\n";
        let latin1: &[u8] = b"caf\xe9\tNOUN\n";
        for file in [euc, sjis, latin1] {
            let d = parse_columns(file, Path::new("e.txt")).unwrap();
            let labels: Vec<Vec<&[u8]>> = d.sentences.iter().map(|s| s.column(0)).collect();
            let mut out = Vec::new();
            write_with_predictions(&mut out, &d.sentences, &labels).unwrap();
            // Each output line: the input's columns (tab-separated) and the first again.
            let lines_in: Vec<&[u8]> = file.split(|&b| b == b'\n').collect();
            for (i, o) in lines_in.iter().zip(out.split(|&b| b == b'\n')) {
                if i.is_empty() {
                    assert!(o.is_empty());
                    continue;
                }
                let cols: Vec<&[u8]> = i.split(|&b| b == b' ' || b == b'\t').collect();
                let mut want = cols.join(&b'\t');
                want.push(b'\t');
                want.extend_from_slice(cols[0]);
                assert_eq!(o, &want[..]);
            }
        }
        let d = parse_columns(sjis, Path::new("s.txt")).unwrap();
        assert_eq!(d.sentences[0].tokens[1][0], b"\x82\xa0\xef\xbb\xbf");
        let d = parse_columns(
            b"\xef\xbb\xbfa\xef\xbb\xbfb c\n\xef\xbb\xbfd e f\n",
            Path::new("u"),
        );
        assert_eq!(d.unwrap().sentences[0].tokens[1], [&b"d"[..], b"e", b"f"]);
    }
}

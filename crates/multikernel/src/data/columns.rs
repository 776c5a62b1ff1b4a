//! Reader and writer of the column format of CRF++ and CoNLL shared tasks: one token a line,
//! whitespace-separated columns (spaces or tabs, runs count as one), the label in the last
//! column, a blank line between sentences. Plain or gzip.
//!
//! Read as CRF++ 0.58 reads it, with these differences (CRF++ would go on silently; here the
//! first two are errors with file and line):
//! - every token line of a file has the same number of columns (CRF++ checks this for
//!   training files only);
//! - a line that starts with a space or a tab but has text on it is refused (CRF++ ends the
//!   sentence there and drops the line); a line of whitespace only ends a sentence, as in
//!   CRF++;
//! - a byte order mark (U+FEFF) is dropped at the start of every line, not only the file's
//!   first (files joined by `cat` keep theirs), and separates columns elsewhere;
//! - a carriage return separates columns like a space (CRF++ keeps it inside the last
//!   column of a file with Windows line ends, so that `O\r` is another label than `O`).
//!
//! [`write_with_predictions`] writes sentences back as `crf_test` does: each token's columns
//! separated by tabs, the predicted label appended, a blank line after each sentence.

use crate::data::read::{parse_err, read_bytes, utf8_err, Lines};
use crate::error::Result;
use std::io::Write;
use std::path::Path;

/// One sentence: its tokens' columns.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ColumnSentence {
    /// Each token's columns, as read.
    pub tokens: Vec<Vec<String>>,
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

    /// Column `col` of every token.
    pub fn column(&self, col: usize) -> Vec<&str> {
        self.tokens
            .iter()
            .map(|t| t.get(col).map_or("", String::as_str))
            .collect()
    }

    /// The last column of every token (the label of a training or evaluation file).
    pub fn last_column(&self) -> Vec<&str> {
        self.tokens
            .iter()
            .map(|t| t.last().map_or("", String::as_str))
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
    pub fn n_tokens(&self) -> usize {
        self.sentences.iter().map(ColumnSentence::len).sum()
    }
}

/// Reads a column file (plain or gzip).
pub fn read_columns(path: &Path) -> Result<ColumnData> {
    parse_columns(&read_bytes(path)?, path)
}

/// Parses column text; `path` names it in errors. An error for a file without tokens, a
/// line with another number of columns than the first token line, or a token line that
/// starts with whitespace.
pub fn parse_columns(bytes: &[u8], path: &Path) -> Result<ColumnData> {
    let mut out = ColumnData::default();
    let mut cur = ColumnSentence::default();
    let mut first_line = 0;
    for (line, text) in Lines::new(bytes) {
        // A byte order mark may start any line: files concatenated with `cat` keep theirs.
        let text = text
            .map_err(|()| utf8_err(path, line))?
            .trim_start_matches('\u{feff}');
        let cols: Vec<String> = text
            .split([' ', '\t', '\r', '\u{feff}'])
            .filter(|c| !c.is_empty())
            .map(str::to_string)
            .collect();
        if cols.is_empty() {
            // A line of separators only (spaces, tabs, carriage returns, byte order marks).
            if !cur.tokens.is_empty() {
                out.sentences.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if text.starts_with([' ', '\t']) {
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
            out.write_all(tok.join("\t").as_bytes())?;
            out.write_all(b"\n")?;
        }
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// Writes `sentences` with `predicted[i][t]` appended to token `t` of sentence `i` (columns
/// separated by tabs, a blank line after each sentence), as `crf_test` prints them. An error
/// when the predictions do not match the sentences' lengths.
pub fn write_with_predictions(
    out: &mut impl Write,
    sentences: &[ColumnSentence],
    predicted: &[Vec<String>],
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
                out.write_all(c.as_bytes())?;
                out.write_all(b"\t")?;
            }
            out.write_all(label.as_bytes())?;
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
        assert_eq!(d.sentences[0].tokens[1], ["ran", "VBD", "B-VP"]);
        assert_eq!(d.sentences[0].line, 1);
        assert_eq!(d.sentences[1].line, 6);
        assert_eq!(d.sentences[1].last_column(), ["B-NP"]);
        assert_eq!(d.sentences[0].column(1), ["PRP", "VBD"]);
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
        let e = parse_columns(b"a b\n\xff c\n", Path::new("t.txt"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("UTF-8"), "{e}");
    }

    #[test]
    fn predictions_are_appended_and_read_back() {
        let d = parse("a X B-NP\nb Y I-NP\n\nc Z O\n").unwrap();
        let pred = vec![vec!["B-NP".into(), "O".into()], vec!["O".into()]];
        let mut buf = Vec::new();
        write_with_predictions(&mut buf, &d.sentences, &pred).unwrap();
        assert_eq!(
            String::from_utf8(buf.clone()).unwrap(),
            "a\tX\tB-NP\tB-NP\nb\tY\tI-NP\tO\n\nc\tZ\tO\tO\n\n"
        );
        let back = parse_columns(&buf, Path::new("p.txt")).unwrap();
        assert_eq!(back.n_columns, 4);
        assert_eq!(back.sentences[0].last_column(), ["B-NP", "O"]);
        assert!(write_with_predictions(&mut Vec::new(), &d.sentences, &pred[..1]).is_err());
        let mut plain = Vec::new();
        write_columns(&mut plain, &d.sentences).unwrap();
        assert_eq!(parse_columns(&plain, Path::new("w")).unwrap(), {
            let mut e = d.clone();
            e.sentences[1].line = 4;
            e
        });
    }
}

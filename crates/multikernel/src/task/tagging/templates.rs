//! CRF++ feature templates (read as CRF++ 0.58 reads them).
//!
//! A template file has one template a line. Empty lines and lines starting with `#` are
//! skipped; every other line starts with `U` (a unigram template: its expansion at a token,
//! conjoined with the token's label, is a feature) or `B` (a bigram template: conjoined with
//! the label pair of the token and the one before). Inside a template, `%x[row,col]` is
//! replaced by column `col` (0-based, absolute) of the token `row` positions away (`row` an
//! optional `-` and digits, `col` digits, no spaces); everything else is copied as it is, so
//! the prefix (`U01:`) keeps two templates' features apart. A row outside the sentence reads
//! the boundary tokens `_B-1`, `_B-2`, ... before the sentence and `_B+1`, `_B+2`, ... after;
//! CRF++ 0.58 allows `|row| <= 8`.
//!
//! Carriage returns at the end of a line are dropped (Windows line ends; CRF++ would keep
//! them inside the feature strings). Errors (with file and line) for what CRF++ refuses: another first letter ("unknown type"),
//! a `%` not followed by `x`, a malformed `[row,col]`, `|row| > 8`; [`TemplateFile::check_columns`]
//! refuses a column the data does not have (CRF++ fails on it at the first sentence).

use super::keys::FeatureKeys;
use crate::data::lines::{line_err, parse_err, read_bytes, Lines};
use crate::error::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The farthest row a macro may reach (CRF++ 0.58's context size).
pub(crate) const MAX_ROW: i32 = 8;

/// Unigram (`U...`) or bigram (`B...`) template.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TemplateKind {
    Unigram,
    Bigram,
}

/// A piece of a template: literal text or a `%x[row,col]` macro.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    Text(String),
    Macro { row: i32, col: usize },
}

/// One template line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Template {
    /// The line as written (its name in reports).
    pub text: String,
    pub kind: TemplateKind,
    pieces: Vec<Piece>,
}

impl From<Template> for String {
    fn from(t: Template) -> String {
        t.text
    }
}

impl TryFrom<String> for Template {
    type Error = String;
    fn try_from(s: String) -> std::result::Result<Template, String> {
        Template::parse(&s)
    }
}

impl Template {
    /// Parses one template line (not empty, not a comment).
    pub(crate) fn parse(line: &str) -> std::result::Result<Template, String> {
        let kind = match line.as_bytes().first() {
            Some(b'U') => TemplateKind::Unigram,
            Some(b'B') => TemplateKind::Bigram,
            _ => {
                return Err(format!(
                    "unknown template type '{line}': a template starts with U (unigram) or B \
                     (bigram)"
                ))
            }
        };
        let mut pieces = Vec::new();
        let mut text = String::new();
        let mut rest = line;
        while let Some(p) = rest.find('%') {
            text.push_str(&rest[..p]);
            let after = &rest[p + 1..];
            let Some(body) = after.strip_prefix("x[") else {
                return Err(format!(
                    "'%' at byte {} must start a macro %x[row,col]",
                    line.len() - rest.len() + p
                ));
            };
            let close = body
                .find(']')
                .ok_or_else(|| "a macro %x[row,col] is not closed by ']'".to_string())?;
            let (row, col) = parse_macro(&body[..close])?;
            if !text.is_empty() {
                pieces.push(Piece::Text(std::mem::take(&mut text)));
            }
            pieces.push(Piece::Macro { row, col });
            rest = &body[close + 1..];
        }
        text.push_str(rest);
        if !text.is_empty() {
            pieces.push(Piece::Text(text));
        }
        Ok(Template {
            text: line.to_string(),
            kind,
            pieces,
        })
    }

    /// Whether the template has a `%x` macro.
    pub(crate) fn has_macros(&self) -> bool {
        self.pieces.iter().any(|p| matches!(p, Piece::Macro { .. }))
    }

    /// The largest column a macro reads plus one (0 without macros).
    pub(crate) fn columns_needed(&self) -> usize {
        self.pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Macro { col, .. } => Some(col + 1),
                Piece::Text(_) => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// The template expanded at token `pos` of a sentence whose token `t` has columns
    /// `column(t, c)` (bytes, in the data's encoding), into `out` (cleared first). Columns must exist
    /// ([`TemplateFile::check_columns`]).
    pub(crate) fn expand<'s>(
        &self,
        len: usize,
        pos: usize,
        column: impl Fn(usize, usize) -> &'s [u8],
        out: &mut Vec<u8>,
    ) {
        out.clear();
        for p in &self.pieces {
            match p {
                Piece::Text(t) => out.extend_from_slice(t.as_bytes()),
                Piece::Macro { row, col } => {
                    let idx = pos as i64 + i64::from(*row);
                    if idx < 0 {
                        out.extend_from_slice(format!("_B-{}", -idx).as_bytes());
                    } else if idx as usize >= len {
                        out.extend_from_slice(format!("_B+{}", idx as usize - len + 1).as_bytes());
                    } else {
                        out.extend_from_slice(column(idx as usize, *col));
                    }
                }
            }
        }
    }
}

/// `row,col` of a macro as CRF++ reads it: an optional `-`, digits, `,`, digits.
fn parse_macro(s: &str) -> std::result::Result<(i32, usize), String> {
    let bad = || format!("macro %x[{s}]: expected %x[row,col] with integers, e.g. %x[-1,0]");
    let (r, c) = s.split_once(',').ok_or_else(bad)?;
    let (neg, digits) = match r.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, r),
    };
    let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    // CRF++ reads an empty number as 0; so do we.
    if !all_digits(digits) || !all_digits(c) || digits.len() > 9 || c.len() > 9 {
        return Err(bad());
    }
    let row: i32 = if digits.is_empty() {
        0
    } else {
        digits.parse().map_err(|_| bad())?
    };
    let col: usize = if c.is_empty() {
        0
    } else {
        c.parse().map_err(|_| bad())?
    };
    let row = if neg { -row } else { row };
    if row.abs() > MAX_ROW {
        return Err(format!(
            "macro %x[{s}]: the row is {row}; CRF++ reaches at most {MAX_ROW} tokens away"
        ));
    }
    Ok((row, col))
}

/// A template file: its templates with their line numbers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemplateFile {
    pub templates: Vec<Template>,
    /// Line of each template in its file (1-based; 0 when built in code).
    #[serde(default)]
    pub lines: Vec<usize>,
    /// The file's name in errors.
    #[serde(default)]
    pub origin: String,
    /// Templates generated from the keys of feature dicts (`FeatureKeys::templates`): the
    /// keys, whose cells give each feature's value (none for templates read from a file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<FeatureKeys>,
}

impl TemplateFile {
    /// Reads a template file (plain or gzip).
    pub fn read(path: &Path) -> Result<TemplateFile> {
        TemplateFile::parse(&read_bytes(path)?, path)
    }

    /// Parses a template file; `path` names it in errors. An error for a file without
    /// templates.
    pub fn parse(bytes: &[u8], path: &Path) -> Result<TemplateFile> {
        let mut templates = Vec::new();
        let mut lines = Vec::new();
        for (line, text) in Lines::new(bytes) {
            let text = text
                .map_err(|b| line_err(path, line, b))?
                .trim_end_matches('\r');
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            templates.push(Template::parse(text).map_err(|m| parse_err(path, line, m))?);
            lines.push(line);
        }
        if templates.is_empty() {
            return Err(parse_err(
                path,
                1,
                "no templates: expected lines like U01:%x[0,0] or B",
            ));
        }
        Ok(TemplateFile {
            templates,
            lines,
            origin: path.display().to_string(),
            keys: None,
        })
    }

    /// The templates as a file's text (one a line).
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn to_text(&self) -> String {
        self.templates
            .iter()
            .map(|t| t.text.clone() + "\n")
            .collect()
    }

    /// Refuses a template reading a column at or past `n_columns` (the observation columns
    /// of the data: all but the label), naming the template's line.
    pub(crate) fn check_columns(&self, n_columns: usize) -> Result<()> {
        for (k, t) in self.templates.iter().enumerate() {
            let need = t.columns_needed();
            if need > n_columns {
                return Err(parse_err(
                    Path::new(&self.origin),
                    self.lines.get(k).copied().unwrap_or(0),
                    format!(
                        "template '{}' reads column {} but the data has {n_columns} \
                         observation columns (0 to {}; the last column is the label)",
                        t.text,
                        need - 1,
                        n_columns.saturating_sub(1)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The unigram templates, in file order.
    pub fn unigrams(&self) -> impl Iterator<Item = &Template> {
        self.templates
            .iter()
            .filter(|t| t.kind == TemplateKind::Unigram)
    }

    /// Whether a plain bigram template (`B`, no macros: the label pair alone) is present.
    pub fn has_bigram(&self) -> bool {
        self.templates
            .iter()
            .any(|t| t.kind == TemplateKind::Bigram && !t.has_macros())
    }

    /// The bigram templates with macros (`B01:%x[0,0]`: the label pair of tokens `i - 1`
    /// and `i` conjoined with the expansion at `i`, as CRF++ builds them), in file order.
    pub(crate) fn bigram_macros(&self) -> impl Iterator<Item = &Template> {
        self.templates
            .iter()
            .filter(|t| t.kind == TemplateKind::Bigram && t.has_macros())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(t: &str, toks: &[[&str; 2]], pos: usize) -> String {
        let t = Template::parse(t).unwrap();
        let mut s = Vec::new();
        t.expand(toks.len(), pos, |i, c| toks[i][c].as_bytes(), &mut s);
        String::from_utf8(s).unwrap()
    }

    #[test]
    fn macros_expand_like_crfpp_with_boundary_tokens() {
        let toks = [["He", "PRP"], ["reckons", "VBZ"], ["the", "DT"]];
        assert_eq!(expand("U00:%x[-2,0]", &toks, 0), "U00:_B-2");
        assert_eq!(expand("U01:%x[-1,0]", &toks, 1), "U01:He");
        assert_eq!(
            expand("U05:%x[-1,0]/%x[0,0]/%x[1,1]", &toks, 1),
            "U05:He/reckons/DT"
        );
        assert_eq!(expand("U06:%x[2,1]", &toks, 2), "U06:_B+2");
        assert_eq!(expand("U07:%x[1,0]", &toks, 2), "U07:_B+1");
        assert_eq!(expand("U", &toks, 1), "U");
        assert_eq!(expand("B", &toks, 1), "B");
        // CRF++ reads an empty number as 0.
        assert_eq!(expand("U:%x[,1]", &toks, 0), "U:PRP");
        let t = Template::parse("U05:%x[-1,0]/%x[0,3]").unwrap();
        assert_eq!(t.columns_needed(), 4);
        assert!(t.has_macros());
    }

    #[test]
    fn files_skip_comments_and_blank_lines_and_name_bad_lines() {
        let f = TemplateFile::parse(
            b"# Unigram\nU00:%x[-2,0]\n\nU01:%x[0,1]\r\nB\n",
            Path::new("tpl"),
        )
        .unwrap();
        assert_eq!(f.templates.len(), 3);
        assert_eq!(f.lines, [2, 4, 5]);
        assert!(f.has_bigram());
        assert_eq!(f.unigrams().count(), 2);
        assert_eq!(f.to_text(), "U00:%x[-2,0]\nU01:%x[0,1]\nB\n");
        assert!(f.check_columns(2).is_ok());
        let e = f.check_columns(1).unwrap_err().to_string();
        assert!(e.contains("tpl:4") && e.contains("column 1"), "{e}");
        for (bad, what) in [
            ("U00:%x[-2,0]\n X\n", "unknown template type"),
            ("U00:%y[0,0]\n", "must start a macro"),
            ("U00:%x[0 ,0]\n", "expected %x[row,col]"),
            ("U00:%x[+1,0]\n", "expected %x[row,col]"),
            ("U00:%x[0,0\n", "not closed"),
            ("U00:%x[-9,0]\n", "at most 8"),
            ("# only\n\n", "no templates"),
        ] {
            let e = TemplateFile::parse(bad.as_bytes(), Path::new("tpl"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(what) && e.contains("tpl:"), "{bad:?}: {e}");
        }
        let b = TemplateFile::parse(b"U:%x[0,0]\nB01:%x[0,0]\nB\n", Path::new("tpl")).unwrap();
        assert!(b.has_bigram());
        assert_eq!(b.bigram_macros().count(), 1);
        let b = TemplateFile::parse(b"U:%x[0,0]\nB01:%x[0,0]\n", Path::new("tpl")).unwrap();
        assert!(!b.has_bigram());
    }

    #[test]
    fn templates_round_trip_through_serde() {
        let t = Template::parse("U05:%x[-1,0]/%x[0,0]").unwrap();
        let j = serde_json::to_string(&t).unwrap();
        assert_eq!(j, "\"U05:%x[-1,0]/%x[0,0]\"");
        let back: Template = serde_json::from_str(&j).unwrap();
        assert_eq!(back, t);
        assert!(serde_json::from_str::<Template>("\"X\"").is_err());
    }
}

//! A CoNLL-U treebank as tagging data in the column format: part-of-speech tagging of the
//! Turkish Web Treebank from the shipped files (docs/parsing-tagging-facts.md: predict UPOS from
//! the form, lemma, suffixes and `SpaceAfter`).
//!
//! Columns (0-based, what the shipped template files read):
//!
//! | col | content |
//! | --- | --- |
//! | 0 | FORM |
//! | 1 | FORM lowercased |
//! | 2 | LEMMA (`_` where the treebank leaves it empty: a word's later inflectional groups) |
//! | 3, 4, 5 | the last 1, 2, 3 characters of the lowercased form (the whole form if shorter) |
//! | 6 | `Y` when a space follows the token, `N` for `SpaceAfter=No` |
//! | 7 | the form's shape: `X` upper, `x` lower, `d` digit, other characters kept, runs collapsed |
//! | 8 | the label: UPOS or XPOS |
//!
//! Whitespace inside a value (none in TWT) is replaced by `_`, so a value stays one column.

use crate::data::columns::ColumnSentence;
use crate::data::conllu::ConlluSentence;
use crate::error::{Error, Result};
use std::str::FromStr;

/// Which CoNLL-U column is the label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelColumn {
    Upos,
    Xpos,
}

impl FromStr for LabelColumn {
    type Err = Error;
    fn from_str(s: &str) -> Result<LabelColumn> {
        match s.trim().to_ascii_lowercase().as_str() {
            "upos" => Ok(LabelColumn::Upos),
            "xpos" => Ok(LabelColumn::Xpos),
            _ => Err(Error::param("label", s, "upos or xpos")),
        }
    }
}

/// Observation columns of [`from_conllu`]'s output (the label is one more).
#[cfg(test)]
pub(crate) const OBSERVATION_COLUMNS: usize = 8;

/// The shape of a word: `X` for an uppercase letter, `x` lowercase, `d` a digit, any other
/// character itself; runs of the same symbol collapsed (`Ankara'da` -> `Xx'x`).
pub(crate) fn shape(word: &str) -> String {
    let mut out = String::new();
    let mut last = None;
    for c in word.chars() {
        let s = if c.is_uppercase() {
            'X'
        } else if c.is_lowercase() {
            'x'
        } else if c.is_numeric() {
            'd'
        } else {
            c
        };
        if last != Some(s) {
            out.push(s);
            last = Some(s);
        }
    }
    out
}

fn clean(s: &str) -> String {
    if s.is_empty() {
        return "_".into();
    }
    s.chars()
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect()
}

fn suffix(s: &str, n: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    chars[chars.len().saturating_sub(n)..].iter().collect()
}

/// Each sentence's tokens as columns (the table above).
pub fn from_conllu(sentences: &[ConlluSentence], label: LabelColumn) -> Vec<ColumnSentence> {
    sentences
        .iter()
        .map(|s| ColumnSentence {
            line: s.line,
            tokens: s
                .tokens
                .iter()
                .map(|t| {
                    let form = clean(&t.form);
                    let lower = form.to_lowercase();
                    vec![
                        form.clone(),
                        lower.clone(),
                        clean(&t.lemma),
                        suffix(&lower, 1),
                        suffix(&lower, 2),
                        suffix(&lower, 3),
                        if t.space_after() { "Y" } else { "N" }.into(),
                        shape(&form),
                        clean(match label {
                            LabelColumn::Upos => &t.upos,
                            LabelColumn::Xpos => &t.xpos,
                        }),
                    ]
                    .into_iter()
                    .map(String::into_bytes)
                    .collect()
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::conllu::{parse_conllu, Heads};
    use std::path::Path;

    #[test]
    fn tokens_become_columns() {
        let text = "1\tAçık\taçık\tNOUN\tNN\t_\t2\tig\t_\tSpaceAfter=No\n\
                    2\tla\t_\tVERB\tVB\t_\t0\troot\t_\t_\n\
                    3\t2020'de\t2020\tNUM\tCD\t_\t2\tnum\t_\t_\n\n";
        let s = parse_conllu(text.as_bytes(), Path::new("t"), Heads::Required).unwrap();
        let c = from_conllu(&s, LabelColumn::Upos);
        assert_eq!(c.len(), 1);
        let text = |t: &Vec<Vec<u8>>| -> Vec<String> {
            t.iter()
                .map(|c| String::from_utf8(c.clone()).unwrap())
                .collect()
        };
        assert_eq!(
            text(&c[0].tokens[0]),
            ["Açık", "açık", "açık", "k", "ık", "çık", "N", "Xx", "NOUN"]
        );
        assert_eq!(
            text(&c[0].tokens[1]),
            ["la", "la", "_", "a", "la", "la", "Y", "x", "VERB"]
        );
        assert_eq!(c[0].tokens[2][7], b"d'x");
        assert_eq!(from_conllu(&s, LabelColumn::Xpos)[0].tokens[2][8], b"CD");
        assert!(c[0]
            .tokens
            .iter()
            .all(|t| t.len() == OBSERVATION_COLUMNS + 1));
        assert_eq!("XPOS".parse::<LabelColumn>().unwrap(), LabelColumn::Xpos);
        assert!("deprel".parse::<LabelColumn>().is_err());
    }
}

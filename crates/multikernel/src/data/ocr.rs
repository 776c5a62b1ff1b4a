//! Reader for the OCR handwriting data of Taskar, Guestrin & Koller (2003) (`letter.data`),
//! the sequence-labeling data set of Sec. 4.1 / Table 1 of Martins et al. (2011).
//!
//! One character a line, tab-separated (plain text or gzip):
//!
//! ```text
//! id  letter  next_id  word_id  position  fold  p_0_0 ... p_15_7
//! ```
//!
//! `letter` is `a`-`z`; `next_id` is `-1` at the last character of a word, else the id of the
//! next line; `position` counts from 1 within the word; `fold` is 0-9; then 128 pixels of a
//! 16x8 binary image, row-major. Words are the chains of consecutive lines linked by
//! `next_id`.
//!
//! The reader produces generic [`SequenceData`]: words are sequences, characters positions,
//! the letters `a`-`z` the label names (all 26, whether or not a subset uses them), the
//! pixels `p_ROW_COL` the features, and the file's folds the folds.

use crate::data::sequence::SequenceData;
use crate::data::Matrix;
use crate::error::{Error, Result};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Pixels per character image (16 x 8).
pub(crate) const N_PIXELS: usize = 128;
/// Labels: the letters a-z.
pub(crate) const N_LETTERS: usize = 26;
/// Folds of the data set (Taskar et al.'s split).
pub(crate) const N_FOLDS: usize = 10;
/// Fields before the pixels: id, letter, next_id, word_id, position, fold.
const N_META: usize = 6;

/// The letter of label `y` (0 -> 'a'); `'?'` beyond the alphabet.
pub(crate) fn label_char(y: usize) -> char {
    if y < N_LETTERS {
        (b'a' + y as u8) as char
    } else {
        '?'
    }
}

/// The label of a letter a-z.
pub(crate) fn char_label(c: char) -> Option<usize> {
    c.is_ascii_lowercase().then(|| (c as u8 - b'a') as usize)
}

/// The label names of OCR data: the letters `a`-`z`.
pub(crate) fn letter_names() -> Vec<String> {
    (0..N_LETTERS).map(|y| label_char(y).to_string()).collect()
}

/// The pixel names `p_ROW_COL` of the 16 x 8 image, row-major.
pub(crate) fn pixel_names() -> Vec<String> {
    (0..N_PIXELS)
        .map(|j| format!("p_{}_{}", j / 8, j % 8))
        .collect()
}

/// Parses a fold list: `3`, `0,4,7`, `1-9`, or a mix (`0-2,5`). Folds are 0-9; the result
/// is sorted without repeats.
pub fn parse_folds(list: &str) -> Result<Vec<usize>> {
    let bad = |why: String| {
        Error::param(
            "folds",
            format!("'{list}'"),
            format!(
                "{why}: expected folds 0-{} as e.g. 3, 0,4,7 or 1-9",
                N_FOLDS - 1
            ),
        )
    };
    let fold = |t: &str| -> Result<usize> {
        let t = t.trim();
        let f: usize = t
            .parse()
            .map_err(|_| bad(format!("'{t}' is not a fold number")))?;
        if f >= N_FOLDS {
            return Err(bad(format!("fold {f} does not exist")));
        }
        Ok(f)
    };
    let mut out = Vec::new();
    for part in list.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(bad("empty item".into()));
        }
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (fold(a)?, fold(b)?);
                if a > b {
                    return Err(bad(format!("range {a}-{b} is decreasing")));
                }
                out.extend(a..=b);
            }
            None => out.push(fold(part)?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Reads `letter.data` (plain, or gzip: detected from the magic bytes).
pub fn read_ocr(path: &Path) -> Result<SequenceData> {
    let io_err = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let raw = std::fs::read(path).map_err(io_err)?;
    let bytes = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .map_err(io_err)?;
        out
    } else {
        raw
    };
    parse_ocr(path, &bytes)
}

/// One parsed line.
struct Line {
    id: i64,
    label: usize,
    next: i64,
    word: usize,
    pos: usize,
    fold: usize,
}

/// Parses the text of a `letter.data` file; `path` only names the file in errors.
pub(crate) fn parse_ocr(path: &Path, bytes: &[u8]) -> Result<SequenceData> {
    let text = std::str::from_utf8(bytes).map_err(|e| Error::Parse {
        path: path.to_path_buf(),
        line: 1 + bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count(),
        msg: "not UTF-8 text (is this letter.data?)".into(),
    })?;
    let perr = |line: usize, msg: String| Error::Parse {
        path: PathBuf::from(path),
        line,
        msg,
    };
    let mut data: Vec<f64> = Vec::new();
    let mut labels = Vec::new();
    let mut words = Vec::new();
    let mut folds = Vec::new();
    // The word being read: (its first row, the line it started on, the previous line).
    let mut open: Option<(usize, usize, Line)> = None;
    for (k, raw_line) in text.lines().enumerate() {
        let lineno = k + 1;
        if crate::data::lines::has_cr_line_ends(raw_line.as_bytes()) {
            return Err(perr(lineno, crate::data::lines::CR_LINE_ENDS.into()));
        }
        let line = raw_line.trim_end();
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').map(str::trim).collect();
        if fields.len() != N_META + N_PIXELS {
            return Err(perr(
                lineno,
                format!(
                    "expected {} tab-separated fields (id, letter, next_id, word_id, position, \
                     fold, then {N_PIXELS} pixels), found {}",
                    N_META + N_PIXELS,
                    fields.len()
                ),
            ));
        }
        let int = |i: usize, name: &str| -> Result<i64> {
            fields[i].parse::<i64>().map_err(|_| {
                perr(
                    lineno,
                    format!(
                        "field {} ({name}): '{}' is not an integer",
                        i + 1,
                        fields[i]
                    ),
                )
            })
        };
        let nonneg = |i: usize, name: &str| -> Result<usize> {
            let v = int(i, name)?;
            usize::try_from(v)
                .map_err(|_| perr(lineno, format!("field {} ({name}): {v} is negative", i + 1)))
        };
        let mut letter = fields[1].chars();
        let label = match (letter.next().and_then(char_label), letter.next()) {
            (Some(y), None) => y,
            _ => {
                return Err(perr(
                    lineno,
                    format!("field 2 (letter): '{}' is not a letter a-z", fields[1]),
                ))
            }
        };
        let cur = Line {
            id: int(0, "id")?,
            label,
            next: int(2, "next_id")?,
            word: nonneg(3, "word_id")?,
            pos: nonneg(4, "position")?,
            fold: nonneg(5, "fold")?,
        };
        if cur.fold >= N_FOLDS {
            return Err(perr(
                lineno,
                format!(
                    "field 6 (fold): {} is not a fold 0-{}",
                    cur.fold,
                    N_FOLDS - 1
                ),
            ));
        }
        if cur.next < -1 {
            return Err(perr(
                lineno,
                format!("field 3 (next_id): {} is neither -1 nor an id", cur.next),
            ));
        }
        for (j, f) in fields[N_META..].iter().enumerate() {
            let v: f64 = f
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .ok_or_else(|| {
                    perr(
                        lineno,
                        format!(
                            "field {} (pixel {j}): '{f}' is not a number",
                            N_META + j + 1
                        ),
                    )
                })?;
            data.push(v);
        }
        let row = labels.len();
        labels.push(cur.label);
        // Check the chain against the previous character of the open word.
        let start = match open.take() {
            Some((start, _, prev)) => {
                if cur.id != prev.next {
                    return Err(perr(
                        lineno,
                        format!(
                            "the previous character's next_id is {}, but this line's id is {}",
                            prev.next, cur.id
                        ),
                    ));
                }
                if cur.word != prev.word || cur.fold != prev.fold || cur.pos != prev.pos + 1 {
                    return Err(perr(
                        lineno,
                        format!(
                            "continues word {} (position {}, fold {}) but has word_id {}, \
                             position {}, fold {}",
                            prev.word, prev.pos, prev.fold, cur.word, cur.pos, cur.fold
                        ),
                    ));
                }
                start
            }
            None => row,
        };
        if cur.next == -1 {
            words.push(start..row + 1);
            folds.push(cur.fold);
        } else {
            if cur.next == cur.id {
                return Err(perr(
                    lineno,
                    format!("next_id {} points to itself", cur.next),
                ));
            }
            open = Some((start, lineno, cur));
        }
    }
    if let Some((_, started, prev)) = open {
        return Err(perr(
            started,
            format!(
                "word {} starting here never ends: the file stops before the character with id {}",
                prev.word, prev.next
            ),
        ));
    }
    if labels.is_empty() {
        return Err(Error::data(format!(
            "{}: no characters (empty OCR file)",
            path.display()
        )));
    }
    SequenceData::new(
        Matrix::from_vec(labels.len(), N_PIXELS, data),
        labels,
        words,
        letter_names(),
        pixel_names(),
        Some(folds),
    )
}

/// A small seeded OCR file for the tests of the experiments: `n_words` short words (2-4
/// letters) over 4 letters whose 16 x 8 images are copies of one prototype per letter with
/// each pixel flipped with probability `flip`, word `w` in fold `w % n_folds`.
pub fn synthetic_words(n_words: usize, n_folds: usize, flip: f64) -> SequenceData {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let protos: Vec<Vec<u8>> = (0..4)
        .map(|_| (0..128).map(|_| u8::from(rng.gen_bool(0.3))).collect())
        .collect();
    let mut text = String::new();
    let mut id = 1;
    for w in 0..n_words {
        let len = rng.gen_range(2..5);
        for pos in 0..len {
            let y = rng.gen_range(0..4);
            let next = if pos + 1 == len { -1 } else { id + 1 };
            text.push_str(&format!(
                "{id}\t{}\t{next}\t{w}\t{}\t{}",
                (b'a' + y as u8) as char,
                pos + 1,
                w % n_folds
            ));
            for &p in &protos[y] {
                let v = if rng.gen_bool(flip) { 1 - p } else { p };
                text.push_str(&format!("\t{v}"));
            }
            text.push('\n');
            id += 1;
        }
    }
    parse_ocr(Path::new("synthetic"), text.as_bytes()).expect("the synthetic file parses")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn line(
        id: i64,
        letter: &str,
        next: i64,
        word: usize,
        pos: usize,
        fold: usize,
        px: u8,
    ) -> String {
        let mut s = format!("{id}\t{letter}\t{next}\t{word}\t{pos}\t{fold}");
        for j in 0..N_PIXELS {
            s.push_str(if (j as u8 % 7) == px { "\t1" } else { "\t0" });
        }
        s.push('\n');
        s
    }

    fn word(d: &SequenceData, w: usize) -> String {
        d.sequence_names(w).concat()
    }

    fn sample() -> String {
        // "ab" (fold 3), "c" (fold 0), "dd" (fold 3)
        [
            line(1, "a", 2, 1, 1, 3, 0),
            line(2, "b", -1, 1, 2, 3, 1),
            line(3, "c", -1, 2, 1, 0, 2),
            line(4, "d", 5, 3, 1, 3, 3),
            line(5, "d", -1, 3, 2, 3, 4),
        ]
        .concat()
    }

    #[test]
    fn reads_words_labels_folds_and_pixels() {
        let d = parse_ocr(Path::new("t"), sample().as_bytes()).unwrap();
        assert_eq!(d.n_positions(), 5);
        assert_eq!(d.n_sequences(), 3);
        assert_eq!(d.spans, vec![0..2, 2..3, 3..5]);
        assert_eq!(d.folds, Some(vec![3, 0, 3]));
        assert_eq!(word(&d, 0), "ab");
        assert_eq!(word(&d, 2), "dd");
        assert_eq!(d.n_labels(), 26);
        assert_eq!(d.feature_names[9], "p_1_1");
        assert_eq!(d.labels, vec![0, 1, 2, 3, 3]);
        // Pixel j of row r is 1 iff j % 7 == r's marker.
        assert_eq!(d.x.get(1, 1), 1.0);
        assert_eq!(d.x.get(1, 8), 1.0);
        assert_eq!(d.x.get(1, 2), 0.0);
        let f3 = d.select_folds(&[3]);
        assert_eq!(f3.n_sequences(), 2);
        assert_eq!(f3.spans, vec![0..2, 2..4]);
        assert_eq!(word(&f3, 1), "dd");
        assert_eq!(f3.x.row(2), d.x.row(3));
        let rest = d.exclude_folds(&[3]);
        assert_eq!(rest.n_positions(), 1);
        assert_eq!(word(&rest, 0), "c");
        assert_eq!(d.fold_list(), vec![0, 3]);
    }

    #[test]
    fn reads_gzip_and_trailing_tabs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("letter.data.gz");
        // Taskar's original file ends each line with a tab.
        let text = sample().replace('\n', "\t\n");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(text.as_bytes()).unwrap();
        std::fs::write(&path, enc.finish().unwrap()).unwrap();
        let d = read_ocr(&path).unwrap();
        assert_eq!(d.n_sequences(), 3);
        assert_eq!(word(&d, 0), "ab");
    }

    fn parse_err(text: &str) -> (usize, String) {
        match parse_ocr(Path::new("letter.data"), text.as_bytes()) {
            Err(Error::Parse { line, msg, .. }) => (line, msg),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn malformed_lines_are_reported_with_line_numbers() {
        let good = sample();
        let lines: Vec<&str> = good.lines().collect();
        // Bad letter on line 2.
        let t = good.replacen("\tb\t", "\tB\t", 1);
        let (l, m) = parse_err(&t);
        assert_eq!(l, 2);
        assert!(m.contains("letter"), "{m}");
        // Too few fields on line 3.
        let short = lines[2].rsplit_once('\t').unwrap().0;
        let t = [lines[0], lines[1], short, lines[3], lines[4]].join("\n");
        let (l, m) = parse_err(&t);
        assert_eq!(l, 3);
        assert!(m.contains("134"), "{m}");
        // Non-numeric pixel.
        let t = good.replacen("\t0\n", "\tx\n", 1);
        let (l, m) = parse_err(&t);
        assert_eq!(l, 1);
        assert!(m.contains("pixel"), "{m}");
        // Broken chain: line 2 does not have the id line 1 announces.
        let t = [lines[0], &lines[3].replacen("4\t", "9\t", 1)].join("\n");
        let (l, m) = parse_err(&t);
        assert_eq!(l, 2);
        assert!(m.contains("next_id"), "{m}");
        // A word cut off at the end of the file.
        let t = [lines[0]].join("\n");
        let (l, m) = parse_err(&t);
        assert_eq!(l, 1);
        assert!(m.contains("never ends"), "{m}");
        // Fold out of range.
        let t = good.replacen("\t1\t3\t", "\t1\t12\t", 1);
        let (_, m) = parse_err(&t);
        assert!(m.contains("fold"), "{m}");
        // CR line ends (an old Mac file): named, not a count of fields.
        let (l, m) = parse_err(&good.replace('\n', "\r"));
        assert_eq!(l, 1);
        assert!(m.contains("carriage return"), "{m}");
    }

    #[test]
    fn fold_lists_parse() {
        assert_eq!(parse_folds("3").unwrap(), vec![3]);
        assert_eq!(parse_folds("0,4,7").unwrap(), vec![0, 4, 7]);
        assert_eq!(parse_folds("1-9").unwrap(), (1..10).collect::<Vec<_>>());
        assert_eq!(parse_folds(" 7, 0-2 ,1").unwrap(), vec![0, 1, 2, 7]);
        for bad in ["", "10", "a", "3-1", "1,,2", "-1", "0-10"] {
            assert!(
                matches!(parse_folds(bad), Err(Error::InvalidParameter { name, .. }) if name == "folds"),
                "{bad} accepted"
            );
        }
    }

    #[test]
    fn letters_round_trip() {
        for y in 0..N_LETTERS {
            assert_eq!(char_label(label_char(y)), Some(y));
        }
        assert_eq!(char_label('A'), None);
    }

    /// The shipped file: the counts of the paper (6,877 words, 52,152 characters) and of
    /// data/README.md (fold 0: 626 words, 4,617 characters), binary pixels.
    #[test]
    fn reads_the_shipped_data() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/ocr/letter.data.gz");
        let d = read_ocr(&path).unwrap();
        assert_eq!(d.n_sequences(), 6877);
        assert_eq!(d.n_positions(), 52152);
        assert_eq!(d.fold_list(), (0..10).collect::<Vec<_>>());
        let f0 = d.select_folds(&[0]);
        assert_eq!((f0.n_sequences(), f0.n_positions()), (626, 4617));
        assert!(d.x.data.iter().all(|&v| v == 0.0 || v == 1.0));
        assert_eq!(d.exclude_folds(&[0]).n_positions(), 52152 - 4617);
    }
}

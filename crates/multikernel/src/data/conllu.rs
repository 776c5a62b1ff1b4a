//! Reader and writer of CoNLL-U treebanks (Universal Dependencies; the Turkish Web Treebank
//! uses the same columns with its own tag sets).
//!
//! A sentence is a block of lines ended by a blank line: comment lines (`# ...`), token lines
//! of ten tab-separated columns
//!
//! ```text
//! ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC
//! ```
//!
//! and, skipped as tokens but kept for writing back, multi-word token ranges (`3-4`) and
//! empty nodes (`5.1`). Token IDs run 1, 2, ... in order; HEAD is a token ID or 0 (the root).
//! When heads are required ([`Heads::Required`]: training and evaluation files) each
//! sentence must be a tree with exactly one token on the root, as Universal Dependencies
//! requires and as the parser decodes (its decoders build single-root trees): HEAD a number
//! within the sentence, one token with HEAD 0, no cycle. A gold tree with several root
//! children (CoNLL-X files have them) is refused, naming them: trained on, it would be a
//! tree the parser can never output. Text to parse ([`Heads::Optional`]) may have several.
//! A multi-word token range `a-b` must come just before token `a`, with `a < b` and `b`
//! within the sentence.
//!
//! Errors name the file and the line and say what was expected. `write_sentence` gives a
//! sentence's lines back exactly (line ends as `\n`), with HEAD and DEPREL filled in.
//! `fold_of`: the Turkish Web Treebank's official split (sentence index mod 10: 0-7 train,
//! 8 dev, 9 test).

use crate::data::lines::{line_err, parse_err, read_bytes, Lines};
use crate::error::Result;
use std::path::Path;

/// One token line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConlluToken {
    pub form: String,
    pub lemma: String,
    pub upos: String,
    pub xpos: String,
    pub feats: String,
    /// `None` when HEAD is `_` (allowed with [`Heads::Optional`]).
    pub head: Option<usize>,
    pub deprel: String,
    pub misc: String,
}

impl ConlluToken {
    /// False when MISC holds `SpaceAfter=No`.
    pub(crate) fn space_after(&self) -> bool {
        !self.misc.split('|').any(|m| m == "SpaceAfter=No")
    }
}

/// One sentence: its tokens, and its lines for writing it back.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConlluSentence {
    pub tokens: Vec<ConlluToken>,
    /// Line of the file where the sentence starts (1-based).
    pub line: usize,
    /// Every line of the sentence as read (comments, ranges, empty nodes, tokens).
    lines: Vec<String>,
    /// Index in `lines` of each token's line.
    token_lines: Vec<usize>,
    /// The multi-word token ranges (first, last token) and their lines, checked against
    /// the sentence's length when it ends.
    ranges: Vec<(usize, usize, usize)>,
}

impl ConlluSentence {
    /// The heads of every token (0 = root), if every token has one.
    pub(crate) fn heads(&self) -> Option<Vec<usize>> {
        self.tokens.iter().map(|t| t.head).collect()
    }

    /// The relations of every token.
    pub(crate) fn deprels(&self) -> Vec<String> {
        self.tokens.iter().map(|t| t.deprel.clone()).collect()
    }

    /// The line of the file holding token `k` (0-based) of the sentence.
    pub(crate) fn token_line(&self, k: usize) -> usize {
        self.line + self.token_lines[k]
    }

    /// The comment lines (`# ...`).
    pub fn comments(&self) -> impl Iterator<Item = &str> {
        self.lines
            .iter()
            .filter(|l| l.starts_with('#'))
            .map(String::as_str)
    }
}

/// Whether token lines must carry a head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heads {
    /// Training and evaluation data: every sentence a tree.
    Required,
    /// Text to parse: HEAD may be `_` (or a number, checked like a required one, except
    /// that several tokens may be on the root).
    Optional,
}

/// The fold of the sentence at `index` (0-based, file order) in the Turkish Web Treebank's
/// official split: `index mod 10` (0-7 train, 8 dev, 9 test).
pub(crate) fn fold_of(index: usize) -> usize {
    index % 10
}

/// The sentences whose fold (`fold_of`) is in `folds`, in file order.
pub fn select_folds(sentences: &[ConlluSentence], folds: &[usize]) -> Vec<ConlluSentence> {
    sentences
        .iter()
        .enumerate()
        .filter(|(i, _)| folds.contains(&fold_of(*i)))
        .map(|(_, s)| s.clone())
        .collect()
}

/// Reads a CoNLL-U file (plain or gzip).
pub fn read_conllu(path: &Path, heads: Heads) -> Result<Vec<ConlluSentence>> {
    parse_conllu(&read_bytes(path)?, path, heads)
}

/// Parses CoNLL-U text; `path` names it in errors.
pub(crate) fn parse_conllu(bytes: &[u8], path: &Path, heads: Heads) -> Result<Vec<ConlluSentence>> {
    let mut out = Vec::new();
    let mut cur = ConlluSentence::default();
    let mut last_line = 0;
    for (line, text) in Lines::new(bytes) {
        last_line = line;
        let text = text.map_err(|b| line_err(path, line, b))?;
        if text.trim().is_empty() {
            if !cur.lines.is_empty() {
                finish(&mut cur, path, heads, line)?;
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if cur.lines.is_empty() {
            cur.line = line;
        }
        if text.starts_with('#') {
            cur.lines.push(text.to_string());
            continue;
        }
        let cols: Vec<&str> = text.split('\t').collect();
        if cols.len() != 10 {
            return Err(parse_err(
                path,
                line,
                format!(
                    "expected 10 tab-separated columns (ID FORM LEMMA UPOS XPOS FEATS HEAD \
                     DEPREL DEPS MISC), found {}",
                    cols.len()
                ),
            ));
        }
        let id = cols[0];
        if id.contains('-') || id.contains('.') {
            // A multi-word token range or an empty node: not a token of the tree.
            let ok = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            let (a, b) = id.split_once(['-', '.']).unwrap_or((id, ""));
            if !ok(a) || !ok(b) {
                return Err(parse_err(
                    path,
                    line,
                    format!(
                        "ID '{id}' is not a token number, a range (3-4) or an empty node (5.1)"
                    ),
                ));
            }
            if id.contains('-') {
                check_range(&mut cur, path, line, id, a, b)?;
            }
            cur.lines.push(text.to_string());
            continue;
        }
        let expected = cur.tokens.len() + 1;
        if id.parse::<usize>().ok() != Some(expected) || !id.bytes().all(|b| b.is_ascii_digit()) {
            return Err(parse_err(
                path,
                line,
                format!("ID '{id}': expected token {expected} (IDs run 1, 2, ... in order)"),
            ));
        }
        let head = match (cols[6], heads) {
            ("_", Heads::Optional) => None,
            (h, _) => Some(
                h.parse::<usize>()
                    .ok()
                    .filter(|_| h.bytes().all(|b| b.is_ascii_digit()))
                    .ok_or_else(|| {
                        parse_err(
                            path,
                            line,
                            format!("HEAD '{h}' is not a token number (0 for the root)"),
                        )
                    })?,
            ),
        };
        cur.token_lines.push(cur.lines.len());
        cur.lines.push(text.to_string());
        cur.tokens.push(ConlluToken {
            form: cols[1].to_string(),
            lemma: cols[2].to_string(),
            upos: cols[3].to_string(),
            xpos: cols[4].to_string(),
            feats: cols[5].to_string(),
            head,
            deprel: cols[7].to_string(),
            misc: cols[9].to_string(),
        });
    }
    if !cur.lines.is_empty() {
        finish(&mut cur, path, heads, last_line + 1)?;
        out.push(cur);
    }
    if out.is_empty() {
        return Err(parse_err(
            path,
            last_line.max(1),
            "no sentence: expected token lines of 10 tab-separated columns",
        ));
    }
    Ok(out)
}

/// Checks the multi-word token range `id` (`a-b`) at `line` as Universal Dependencies
/// defines it: it comes just before its first token (`a` is the next token), spans at least
/// two tokens (`a < b`) and does not overlap the range before it; its last token is checked
/// against the sentence's length when the sentence ends ([`finish`]).
fn check_range(
    s: &mut ConlluSentence,
    path: &Path,
    line: usize,
    id: &str,
    a: &str,
    b: &str,
) -> Result<()> {
    let next = s.tokens.len() + 1;
    let number = |x: &str| x.parse::<usize>().ok();
    let (Some(first), Some(last)) = (number(a), number(b)) else {
        return Err(parse_err(
            path,
            line,
            format!("the range '{id}' has a token number too large to read"),
        ));
    };
    if first >= last {
        return Err(parse_err(
            path,
            line,
            format!(
                "the multi-word token range '{id}' is empty or reversed: expected FIRST-LAST \
                 with FIRST < LAST (e.g. {next}-{})",
                next + 1
            ),
        ));
    }
    if first != next {
        return Err(parse_err(
            path,
            line,
            format!(
                "the multi-word token range '{id}' does not start at the next token: expected \
                 {next}-N, just before token {next}'s line"
            ),
        ));
    }
    if let Some(&(p, q, at)) = s.ranges.last().filter(|r| r.1 >= first) {
        return Err(parse_err(
            path,
            line,
            format!(
                "the multi-word token range '{id}' overlaps the range '{p}-{q}' of line {at}: \
                 expected ranges of distinct tokens"
            ),
        ));
    }
    s.ranges.push((first, last, line));
    Ok(())
}

/// Checks a finished sentence: tokens present, heads in range, multi-word token ranges
/// within it, a tree when heads are required, with exactly one token on the root (as
/// Universal Dependencies requires, and as the parser decodes). `end` is the line after the
/// sentence.
fn finish(s: &mut ConlluSentence, path: &Path, heads: Heads, end: usize) -> Result<()> {
    let n = s.tokens.len();
    if n == 0 {
        return Err(parse_err(
            path,
            s.line,
            format!(
                "the sentence of lines {}-{} has no token line",
                s.line,
                end - 1
            ),
        ));
    }
    if let Some(&(first, last, line)) = s.ranges.iter().find(|r| r.1 > n) {
        return Err(parse_err(
            path,
            line,
            format!(
                "the multi-word token range '{first}-{last}' goes past the end of the sentence \
                 of lines {}-{}, which has {n} tokens: expected a range of tokens 1 to {n}",
                s.line,
                end - 1
            ),
        ));
    }
    let line_of = |k: usize| s.line + s.token_lines[k];
    for (k, t) in s.tokens.iter().enumerate() {
        if let Some(h) = t.head {
            if h > n {
                return Err(parse_err(
                    path,
                    line_of(k),
                    format!("HEAD {h} is out of range: the sentence has {n} tokens"),
                ));
            }
            if h == k + 1 {
                return Err(parse_err(
                    path,
                    line_of(k),
                    format!("token {h} is its own head"),
                ));
            }
        }
    }
    let Some(heads_all) = s.heads() else {
        return if heads == Heads::Required {
            Err(parse_err(path, s.line, "a token has no HEAD"))
        } else {
            Ok(())
        };
    };
    if !heads_all.contains(&0) {
        return Err(parse_err(
            path,
            line_of(0),
            "no token is attached to the root (HEAD 0)",
        ));
    }
    let roots: Vec<usize> = (1..=n).filter(|&k| heads_all[k - 1] == 0).collect();
    if heads == Heads::Required && roots.len() > 1 {
        let list: Vec<String> = roots.iter().map(usize::to_string).collect();
        return Err(parse_err(
            path,
            line_of(roots[1] - 1),
            format!(
                "the sentence of lines {}-{} has {} tokens on the root (HEAD 0: tokens {}): \
                 expected exactly one, as Universal Dependencies requires and the parser \
                 decodes; attach the others to a token of the sentence",
                s.line,
                end - 1,
                roots.len(),
                list.join(", ")
            ),
        ));
    }
    // Cycles: follow heads from each token, marking tokens known to reach the root.
    let mut state = vec![0u8; n + 1]; // 0 unknown, 1 on the path, 2 reaches the root
    state[0] = 2;
    for start in 1..=n {
        let mut path_nodes = Vec::new();
        let mut v = start;
        while state[v] == 0 {
            state[v] = 1;
            path_nodes.push(v);
            v = heads_all[v - 1];
        }
        if state[v] == 1 {
            let at = path_nodes.iter().position(|&p| p == v).unwrap_or(0);
            let cycle: Vec<String> = path_nodes[at..].iter().map(|t| t.to_string()).collect();
            return Err(parse_err(
                path,
                line_of(v - 1),
                format!("the heads of tokens {} form a cycle", cycle.join(", ")),
            ));
        }
        for p in path_nodes {
            state[p] = 2;
        }
    }
    Ok(())
}

/// Appends the sentence's lines to `out` (each ended by `\n`, then a blank line), with the
/// HEAD and DEPREL of token `k` replaced by `heads[k]` and `deprels[k]` (when given).
pub(crate) fn write_sentence(
    s: &ConlluSentence,
    heads: &[usize],
    deprels: Option<&[String]>,
    out: &mut String,
) {
    let mut next_token = 0;
    for (i, line) in s.lines.iter().enumerate() {
        if s.token_lines.get(next_token) == Some(&i) {
            let k = next_token;
            next_token += 1;
            for (c, col) in line.split('\t').enumerate() {
                if c > 0 {
                    out.push('\t');
                }
                match c {
                    6 if k < heads.len() => out.push_str(&heads[k].to_string()),
                    7 => match deprels.and_then(|d| d.get(k)) {
                        Some(r) => out.push_str(r),
                        None => out.push_str(col),
                    },
                    _ => out.push_str(col),
                }
            }
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, heads: Heads) -> Result<Vec<ConlluSentence>> {
        parse_conllu(text.as_bytes(), Path::new("t.conllu"), heads)
    }

    const SENT: &str = "# sent_id = 1\n# text = Ali'nin evi.\n1-2\tAli'nin\t_\t_\t_\t_\t_\t_\t_\t_\n1\tAli\tAli\tPROPN\tNNP\tCase=Nom\t3\tnmod\t_\tSpaceAfter=No\n2\t'nin\t_\tAFFIX\tX\t_\t1\tig\t_\t_\n2.1\tx\t_\t_\t_\t_\t_\t_\t_\t_\n3\tevi\tev\tNOUN\tNN\tCase=Nom\t0\troot\t_\tSpaceAfter=No\n4\t.\t.\tPUNCT\t.\t_\t3\tp\t_\t_\n";

    #[test]
    fn reads_tokens_and_writes_back_byte_for_byte() {
        let text = format!("{SENT}\n\n{SENT}");
        let s = parse(&text, Heads::Required).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].tokens.len(), 4);
        assert_eq!(s[0].heads(), Some(vec![3, 1, 0, 3]));
        assert_eq!(s[0].tokens[1].upos, "AFFIX");
        assert!(!s[0].tokens[0].space_after() && s[0].tokens[1].space_after());
        assert_eq!(s[0].comments().count(), 2);
        assert_eq!((s[0].line, s[1].line), (1, 11));
        let mut out = String::new();
        write_sentence(
            &s[0],
            &s[0].heads().unwrap(),
            Some(&s[0].deprels()),
            &mut out,
        );
        assert_eq!(out, format!("{SENT}\n"));
        let mut out = String::new();
        write_sentence(&s[0], &[0, 3, 1, 1], None, &mut out);
        let again = parse(&out, Heads::Required).unwrap();
        assert_eq!(again[0].heads(), Some(vec![0, 3, 1, 1]));
        assert_eq!(again[0].deprels(), s[0].deprels());
    }

    #[test]
    fn malformed_lines_are_named() {
        let tok = |id: &str, head: &str| format!("{id}\tw\tw\tX\tX\t_\t{head}\tdep\t_\t_\n");
        let msg = |t: &str| parse(t, Heads::Required).unwrap_err().to_string();
        assert_eq!(msg("1\tw\n"), "t.conllu:1: expected 10 tab-separated columns (ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC), found 2");
        let two = format!("{}{}", tok("1", "0"), tok("3", "1"));
        assert!(msg(&two).starts_with("t.conllu:2: ID '3': expected token 2"));
        let bad_head = format!("{}{}", tok("1", "0"), tok("2", "x"));
        assert!(msg(&bad_head).starts_with("t.conllu:2: HEAD 'x' is not a token number"));
        let range = format!("{}{}", tok("1", "0"), tok("2", "5"));
        assert!(msg(&range).starts_with("t.conllu:2: HEAD 5 is out of range"));
        let cycle = format!("# c\n{}{}{}", tok("1", "0"), tok("2", "3"), tok("3", "2"));
        assert!(
            msg(&cycle).contains("t.conllu:3: the heads of tokens 2, 3 form a cycle"),
            "{}",
            msg(&cycle)
        );
        let rootless = format!("\n\n{}{}", tok("1", "2"), tok("2", "1"));
        assert!(msg(&rootless).starts_with("t.conllu:3: no token is attached to the root"));
        let own = tok("1", "1");
        assert!(msg(&own).contains("its own head"));
        assert!(msg("").contains("no sentence"));
        assert!(msg("# only a comment\n").contains("no token line"));
        assert!(msg(&tok("1", "_")).contains("HEAD '_' is not a token number"));
        assert!(parse(&tok("1", "_"), Heads::Optional).unwrap()[0]
            .heads()
            .is_none());
        assert!(msg(&tok("1-x", "0")).contains("is not a token number, a range"));
        // Two tokens on the root: refused with the sentence's lines and the tokens when
        // heads are required (gold trees), allowed in text to parse.
        let two_roots = format!("# c\n{}{}{}", tok("1", "0"), tok("2", "0"), tok("3", "2"));
        assert_eq!(
            msg(&two_roots),
            "t.conllu:3: the sentence of lines 1-4 has 2 tokens on the root (HEAD 0: tokens \
             1, 2): expected exactly one, as Universal Dependencies requires and the parser \
             decodes; attach the others to a token of the sentence"
        );
        assert_eq!(
            parse(&two_roots, Heads::Optional).unwrap()[0].tokens.len(),
            3
        );
        // Multi-word token ranges: reversed, empty, not at the next token, overlapping,
        // past the end of the sentence (7 tokens).
        let seven = |range: &str, before: usize| {
            let mut t = String::new();
            for k in 1..=7 {
                if k == before {
                    t.push_str(&tok(range, "_"));
                }
                t.push_str(&tok(&k.to_string(), if k == 1 { "0" } else { "1" }));
            }
            t
        };
        for (range, before, line, want) in [
            (
                "2-1",
                2,
                2,
                "'2-1' is empty or reversed: expected FIRST-LAST with FIRST < LAST",
            ),
            ("3-3", 3, 3, "'3-3' is empty or reversed"),
            (
                "4-5",
                2,
                2,
                "'4-5' does not start at the next token: expected 2-N",
            ),
            (
                "6-9",
                6,
                6,
                "'6-9' goes past the end of the sentence of lines 1-8, which has 7 tokens",
            ),
        ] {
            for heads in [Heads::Required, Heads::Optional] {
                let e = parse(&seven(range, before), heads).unwrap_err().to_string();
                assert!(e.starts_with(&format!("t.conllu:{line}: ")), "{e}");
                assert!(e.contains(want), "{e}");
            }
        }
        assert!(parse(&seven("6-7", 6), Heads::Required).is_ok());
        let overlap = format!(
            "{}{}{}{}{}",
            tok("1-3", "_"),
            tok("1", "0"),
            tok("2-3", "_"),
            tok("2", "1"),
            tok("3", "1")
        );
        assert!(msg(&overlap).contains(
            "t.conllu:3: the multi-word token range '2-3' overlaps the range '1-3' of line 1"
        ));
        let bytes = b"1\tw\xff\tw\tX\tX\t_\t0\tdep\t_\t_\n";
        let e = parse_conllu(bytes, Path::new("t.conllu"), Heads::Required).unwrap_err();
        assert!(e.to_string().starts_with("t.conllu:1: "), "{e}");
        // CRLF line ends, several blank lines, no final blank line: all fine.
        let ok = format!(
            "{}\r\n\r\n\n{}",
            tok("1", "0").trim_end(),
            tok("1", "0").trim_end()
        );
        assert_eq!(parse(&ok, Heads::Required).unwrap().len(), 2);
    }

    #[test]
    fn shipped_treebanks_have_the_documented_counts() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/treebank");
        for (file, sents, tokens, split) in [
            ("tr-web.conllu.gz", 2541, 32422, [2033, 254, 254]),
            ("tr-wiki.conllu.gz", 2310, 48948, [1848, 231, 231]),
        ] {
            let s = read_conllu(&dir.join(file), Heads::Required).unwrap();
            assert_eq!(s.len(), sents, "{file}");
            assert_eq!(s.iter().map(|x| x.tokens.len()).sum::<usize>(), tokens);
            let counts = [
                select_folds(&s, &[0, 1, 2, 3, 4, 5, 6, 7]).len(),
                select_folds(&s, &[8]).len(),
                select_folds(&s, &[9]).len(),
            ];
            assert_eq!(counts, split, "{file}");
            // Exactly one root per sentence, and the first 100 sentences write back as read.
            assert!(s
                .iter()
                .all(|x| x.heads().unwrap().iter().filter(|&&h| h == 0).count() == 1));
            let mut out = String::new();
            for x in &s[..100] {
                write_sentence(x, &x.heads().unwrap(), Some(&x.deprels()), &mut out);
            }
            let back = parse(&out, Heads::Required).unwrap();
            assert_eq!(
                back.iter().map(|x| &x.tokens).collect::<Vec<_>>(),
                s[..100].iter().map(|x| &x.tokens).collect::<Vec<_>>()
            );
        }
    }
}

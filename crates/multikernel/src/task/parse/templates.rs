//! Arc feature templates as data: a small language that conjoins token attributes of the head,
//! the dependent, their neighbours and the tokens in between, with the arc's direction and
//! distance (McDonald, Crammer & Pereira 2005; martins2011 Sec. 4.2 makes each template one
//! group of the group-sparse regularizer).
//!
//! A template file has one template a line; `#` starts a comment, blank lines are skipped. A
//! template is a list of atoms separated by spaces, and yields one feature per arc (one per
//! token in between for a template with `b`):
//!
//! ```text
//! h.form h.upos            head's form and coarse tag
//! h.upos b.upos d.upos     one feature per token strictly between head and dependent
//! h-1.upos h.upos d.upos d+1.upos    neighbours (offsets -3..=3)
//! h.upos d.feat:Case dir dist        a morphological feature, direction, distance bin
//! d.space dir dist         SpaceAfter of the dependent (the inflectional-group cue)
//! bias                     one feature shared by every arc
//! ```
//!
//! Positions: `h` (head), `d` (dependent) with an optional offset `+k`/`-k` (`|k| <= 3`),
//! and `b` (each token between). Attributes ([`Attribute`]): `form`, `lower`, `lemma`,
//! `upos`, `xpos`, `feats`, `feat:NAME`, `pre:K`, `suf:K` (`1 <= K <= 9`), `space`. Arc atoms:
//! `dir`, `dist` (MSTParser's bins: 1-5 each, then 6-10, then 11 and more), `bias` (alone).
//!
//! The artificial root has the value `<root>` for every attribute; positions outside the
//! sentence have `<s>` (before) and `</s>` (after).

use crate::error::{Error, Result};
use std::fmt;
use std::path::Path;

/// The default templates (about 48 groups; docs/parsing-tagging-facts.md): McDonald et
/// al.'s first-order templates alone and conjoined with direction and distance, lemmas,
/// morphology, fine tags in between, the inflectional-group cue, direction and distance
/// alone, and a bias. Works on any CoNLL-U file.
pub(crate) const DEFAULT_TEMPLATES: &str = include_str!("default.templates");

/// Largest neighbour offset of a position.
pub(crate) const MAX_OFFSET: i8 = 3;
/// Largest `K` of `pre:K` / `suf:K`.
pub(crate) const MAX_AFFIX: u8 = 9;
/// Most atoms in one template.
pub(crate) const MAX_ATOMS: usize = 8;

/// A token attribute a template can read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Attribute {
    /// The FORM column.
    Form,
    /// The form in lower case.
    Lower,
    /// The LEMMA column.
    Lemma,
    /// The UPOS column (coarse tag).
    Upos,
    /// The XPOS column (fine tag).
    Xpos,
    /// The whole FEATS column.
    Feats,
    /// The value of one morphological feature in FEATS (`_` when absent; the first value if
    /// repeated).
    Feat(String),
    /// The first `K` characters of the lower-cased form.
    Prefix(u8),
    /// The last `K` characters of the lower-cased form.
    Suffix(u8),
    /// `SpaceAfter=No` in MISC: `n`, else `y`.
    Space,
}

/// Every attribute name the language knows, for error messages.
pub(crate) const ATTRIBUTE_NAMES: &str =
    "form, lower, lemma, upos, xpos, feats, feat:NAME, pre:K, suf:K (K in 1-9), space";

impl Attribute {
    fn parse(s: &str) -> std::result::Result<Attribute, String> {
        let affix = |k: &str| -> std::result::Result<u8, String> {
            match k.parse::<u8>() {
                Ok(k) if (1..=MAX_AFFIX).contains(&k) => Ok(k),
                _ => Err(format!("'{k}' is not a length 1-{MAX_AFFIX}")),
            }
        };
        Ok(match s {
            "form" => Attribute::Form,
            "lower" => Attribute::Lower,
            "lemma" => Attribute::Lemma,
            "upos" => Attribute::Upos,
            "xpos" => Attribute::Xpos,
            "feats" => Attribute::Feats,
            "space" => Attribute::Space,
            _ => {
                if let Some(name) = s.strip_prefix("feat:") {
                    if name.is_empty()
                        || !name
                            .chars()
                            .all(|c| c.is_alphanumeric() || "[]_-".contains(c))
                    {
                        return Err(format!("'{name}' is not a feature name"));
                    }
                    Attribute::Feat(name.to_string())
                } else if let Some(k) = s.strip_prefix("pre:") {
                    Attribute::Prefix(affix(k)?)
                } else if let Some(k) = s.strip_prefix("suf:") {
                    Attribute::Suffix(affix(k)?)
                } else {
                    return Err(format!(
                        "unknown attribute '{s}'; known attributes: {ATTRIBUTE_NAMES}"
                    ));
                }
            }
        })
    }
}

impl fmt::Display for Attribute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Attribute::Form => f.write_str("form"),
            Attribute::Lower => f.write_str("lower"),
            Attribute::Lemma => f.write_str("lemma"),
            Attribute::Upos => f.write_str("upos"),
            Attribute::Xpos => f.write_str("xpos"),
            Attribute::Feats => f.write_str("feats"),
            Attribute::Feat(n) => write!(f, "feat:{n}"),
            Attribute::Prefix(k) => write!(f, "pre:{k}"),
            Attribute::Suffix(k) => write!(f, "suf:{k}"),
            Attribute::Space => f.write_str("space"),
        }
    }
}

/// Which token of an arc an atom reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Anchor {
    /// The head, shifted by an offset.
    Head(i8),
    /// The dependent, shifted by an offset.
    Dep(i8),
    /// Each token strictly between head and dependent.
    Between,
}

impl fmt::Display for Anchor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (c, k) = match self {
            Anchor::Head(k) => ('h', *k),
            Anchor::Dep(k) => ('d', *k),
            Anchor::Between => return f.write_str("b"),
        };
        match k {
            0 => write!(f, "{c}"),
            k if k > 0 => write!(f, "{c}+{k}"),
            k => write!(f, "{c}{k}"),
        }
    }
}

/// One element of a template.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Atom {
    /// An attribute of a token of the arc. `attr` indexes [`TemplateSet::attributes`].
    Token { anchor: Anchor, attr: usize },
    /// `L` (head right of the dependent) or `R`.
    Direction,
    /// The distance bin ([`distance_bin`]).
    Distance,
}

/// MSTParser's distance bins: `dist - 1` for distances 1-5, then 5 for 6-10, then 10.
pub(crate) fn distance_bin(dist: usize) -> u32 {
    match dist {
        0..=5 => dist.saturating_sub(1) as u32,
        6..=10 => 5,
        _ => 10,
    }
}

/// A template: its atoms, and its text (the group's name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pub name: String,
    pub atoms: Vec<Atom>,
    /// Whether an atom reads the tokens in between.
    pub between: bool,
}

/// The templates of a file with the attributes they read (each attribute once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateSet {
    pub templates: Vec<Template>,
    pub attributes: Vec<Attribute>,
}

impl TemplateSet {
    /// The default templates ([`DEFAULT_TEMPLATES`]).
    pub fn default_set() -> TemplateSet {
        TemplateSet::parse(DEFAULT_TEMPLATES, Path::new("<default templates>"))
            .expect("the default templates parse")
    }

    /// Parses a template file's text; `path` names it in errors (file and line).
    pub fn parse(text: &str, path: &Path) -> Result<TemplateSet> {
        let mut set = TemplateSet {
            templates: Vec::new(),
            attributes: Vec::new(),
        };
        for (k, raw) in text.lines().enumerate() {
            let err = |msg: String| Error::Parse {
                path: path.to_path_buf(),
                line: k + 1,
                msg,
            };
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let template = set.parse_template(line).map_err(err)?;
            if let Some(first) = set.templates.iter().position(|t| t.name == template.name) {
                return Err(err(format!(
                    "template '{}' repeats template {} of the file",
                    template.name,
                    first + 1
                )));
            }
            set.templates.push(template);
        }
        if set.templates.is_empty() {
            return Err(Error::Parse {
                path: path.to_path_buf(),
                line: text.lines().count().max(1),
                msg: "no template in the file (one template a line, atoms like h.form d.upos \
                      dir)"
                    .into(),
            });
        }
        Ok(set)
    }

    /// Reads a template file.
    pub fn read(path: &Path) -> Result<TemplateSet> {
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let text = std::str::from_utf8(&bytes).map_err(|e| Error::Parse {
            path: path.to_path_buf(),
            line: bytes[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1,
            msg: "not UTF-8 text".into(),
        })?;
        TemplateSet::parse(text, path)
    }

    fn attribute_index(&mut self, a: Attribute) -> usize {
        match self.attributes.iter().position(|b| *b == a) {
            Some(i) => i,
            None => {
                self.attributes.push(a);
                self.attributes.len() - 1
            }
        }
    }

    fn parse_template(&mut self, line: &str) -> std::result::Result<Template, String> {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words == ["bias"] {
            return Ok(Template {
                name: "bias".into(),
                atoms: Vec::new(),
                between: false,
            });
        }
        if words.len() > MAX_ATOMS {
            return Err(format!(
                "{} atoms; a template has at most {MAX_ATOMS}",
                words.len()
            ));
        }
        let mut atoms = Vec::with_capacity(words.len());
        for w in &words {
            let atom = match *w {
                "dir" => Atom::Direction,
                "dist" => Atom::Distance,
                "bias" => return Err("'bias' stands alone on its line".into()),
                _ => {
                    let (pos, attr) = w.split_once('.').ok_or_else(|| {
                        format!(
                            "'{w}' is not an atom: expected POSITION.ATTRIBUTE (h.form, \
                             d-1.upos, b.xpos), dir, dist or bias"
                        )
                    })?;
                    let anchor = parse_anchor(pos)?;
                    let attr = Attribute::parse(attr)?;
                    Atom::Token {
                        anchor,
                        attr: self.attribute_index(attr),
                    }
                }
            };
            if atoms.contains(&atom) {
                return Err(format!("atom '{w}' appears twice"));
            }
            atoms.push(atom);
        }
        let between = atoms.iter().any(|a| {
            matches!(
                a,
                Atom::Token {
                    anchor: Anchor::Between,
                    ..
                }
            )
        });
        let name = atoms
            .iter()
            .map(|a| self.atom_text(a))
            .collect::<Vec<_>>()
            .join(" ");
        Ok(Template {
            name,
            atoms,
            between,
        })
    }

    /// The text of an atom (as the template file spells it).
    pub(crate) fn atom_text(&self, a: &Atom) -> String {
        match a {
            Atom::Token { anchor, attr } => format!("{anchor}.{}", self.attributes[*attr]),
            Atom::Direction => "dir".into(),
            Atom::Distance => "dist".into(),
        }
    }

    /// The set as a template file (parses back to itself).
    pub(crate) fn to_text(&self) -> String {
        self.templates
            .iter()
            .map(|t| format!("{}\n", t.name))
            .collect()
    }
}

fn parse_anchor(s: &str) -> std::result::Result<Anchor, String> {
    let bad = || {
        format!("'{s}' is not a position: expected h, d, b, or h/d with an offset such as h+1, d-2")
    };
    let (c, rest) = s.split_at(s.chars().next().map_or(0, char::len_utf8));
    let offset = if rest.is_empty() {
        0
    } else {
        let (negative, digits) = match (rest.strip_prefix('+'), rest.strip_prefix('-')) {
            (Some(d), _) => (false, d),
            (_, Some(d)) => (true, d),
            _ => return Err(bad()),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 2 {
            return Err(bad());
        }
        let k: i8 = digits.parse().map_err(|_| bad())?;
        let k = if negative { -k } else { k };
        if k.abs() > MAX_OFFSET {
            return Err(format!(
                "offset {k} in '{s}': offsets go from -{MAX_OFFSET} to {MAX_OFFSET}"
            ));
        }
        k
    };
    match (c, offset) {
        ("h", k) => Ok(Anchor::Head(k)),
        ("d", k) => Ok(Anchor::Dep(k)),
        ("b", 0) => Ok(Anchor::Between),
        ("b", _) => Err(format!("'{s}': the tokens in between take no offset")),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<TemplateSet> {
        TemplateSet::parse(text, Path::new("t.txt"))
    }

    #[test]
    fn default_file_has_about_48_groups_and_prints_back() {
        let set = TemplateSet::default_set();
        assert!(
            (44..=52).contains(&set.templates.len()),
            "{}",
            set.templates.len()
        );
        let again = parse(&set.to_text()).unwrap();
        assert_eq!(again, set);
    }

    #[test]
    fn atoms_and_names() {
        let set = parse("# comment\n\n h.form   h.upos # trailing\nh-1.upos b.xpos d+2.feat:Case dir dist\nbias\n").unwrap();
        assert_eq!(set.templates.len(), 3);
        assert_eq!(set.templates[0].name, "h.form h.upos");
        assert_eq!(
            set.templates[1].name,
            "h-1.upos b.xpos d+2.feat:Case dir dist"
        );
        assert!(set.templates[1].between && !set.templates[0].between);
        assert_eq!(set.templates[2].atoms, vec![]);
        assert_eq!(set.attributes.len(), 4);
        assert_eq!(distance_bin(1), 0);
        assert_eq!(distance_bin(5), 4);
        assert_eq!(distance_bin(6), 5);
        assert_eq!(distance_bin(10), 5);
        assert_eq!(distance_bin(11), 10);
    }

    #[test]
    fn errors_name_the_line_and_what_is_known() {
        let msg = |t: &str| parse(t).unwrap_err().to_string();
        assert!(msg("h.form\nh.colour")
            .starts_with("t.txt:2: unknown attribute 'colour'; known attributes: form"));
        assert!(msg("x.form").contains("'x' is not a position"));
        assert!(msg("h+4.form").contains("offsets go from -3 to 3"));
        assert!(msg("b+1.form").contains("take no offset"));
        assert!(msg("h.form h.form").contains("appears twice"));
        assert!(
            msg("h.form\n h.form ").starts_with("t.txt:2: template 'h.form' repeats template 1")
        );
        assert!(msg("hform").contains("not an atom"));
        assert!(msg("h.suf:0").contains("not a length"));
        assert!(msg("h.feat:").contains("not a feature name"));
        assert!(msg("bias dir").contains("stands alone"));
        assert!(msg("# nothing\n").contains("no template"));
        assert!(
            msg("h.form h.upos h.xpos h.lemma d.form d.upos d.xpos d.lemma dir")
                .contains("at most 8")
        );
        assert!(msg("h++1.form").contains("not a position"));
        assert!(msg("h+-1.form").contains("not a position"));
    }
}

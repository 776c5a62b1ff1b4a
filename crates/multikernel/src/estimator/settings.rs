//! One learner setting given as text, by its name in the registry ([`super::registry`]):
//! [`LearnerSpec::set`] parses the text in the setting's [`Domain`](super::registry::Domain), refuses a value outside
//! it (naming the setting and the domain) and a setting of another learner, and stores the
//! value in the family's settings type. A shell that takes settings as text (the command
//! line) keeps no parser or list of its own.

use super::registry::{self, real, Setting};
use super::spec::{Learner, LearnerKind, LearnerSpec, LossKind, Strength, Task};
use crate::error::{Error, Result};

/// The error for a setting given to a learner that does not take it, naming its owners.
fn not_owned(s: &Setting, kind: LearnerKind) -> Error {
    let names: Vec<&str> = s.learners.iter().map(|k| k.name()).collect();
    Error::unsupported(format!(
        "{} is a setting of the {} learner, not of {kind}",
        s.name,
        names.join(" / ")
    ))
}

/// Learner settings given by their registry names ([`registry::SETTINGS`]), each with its
/// text as the command line takes it (`"0.5"`, `"4/3"`, `"l21"`, `"on"`): what the shells
/// pass instead of one keyword per setting, so that a new setting needs no edit in them.
/// The table estimators', the tagger's and the parser's settings are this one type.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    given: Vec<(String, String)>,
}

impl Settings {
    pub fn new() -> Settings {
        Settings::default()
    }

    /// These settings and `name = text` (replacing an earlier `name`).
    pub fn with(mut self, name: &str, text: impl Into<String>) -> Settings {
        self.push(name, text);
        self
    }

    /// Adds `name = text`, replacing an earlier `name`; the order of first appearance is
    /// kept (it is the order [`LearnerSpec::set_all`] sets them in).
    pub fn push(&mut self, name: &str, text: impl Into<String>) {
        let text = text.into();
        match self.given.iter_mut().find(|(n, _)| n == name) {
            Some((_, t)) => *t = text,
            None => self.given.push((name.to_string(), text)),
        }
    }

    /// The settings as (name, text), in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.given.iter().map(|(n, t)| (n.as_str(), t.as_str()))
    }

    /// The text of `name`, when given.
    pub fn text(&self, name: &str) -> Option<&str> {
        self.iter().find(|(n, _)| *n == name).map(|(_, t)| t)
    }

    /// Refuses a name the registry does not list, and a setting `kind` does not take
    /// (naming the learners that do), without setting anything: for a caller that does not
    /// go through [`LearnerSpec::set_all`], which refuses the same.
    pub fn check_owner(&self, kind: LearnerKind) -> Result<()> {
        for (name, _) in self.iter() {
            let s = registry::setting(name)
                .ok_or_else(|| Error::unsupported(format!("no learner setting is named {name}")))?;
            if !s.learners.contains(&kind) {
                return Err(not_owned(s, kind));
            }
        }
        Ok(())
    }

    /// The checked spec of a tagger (`task` sequence) or a parser (`task` parsing) trained
    /// by `kind` (the online learner or multi-template learning; a tagger also by the batch
    /// CRF, lbfgs) with `C` and these
    /// settings; an error for another learner, a setting of the other learner (naming its
    /// owners), a loss that is not a loss of sequences and trees (hinge, crf), or a value
    /// out of its domain.
    pub fn structured_spec(
        &self,
        task: Task,
        kind: LearnerKind,
        c: f64,
        seed: u64,
    ) -> Result<LearnerSpec> {
        let tagger = task != Task::Parsing;
        let learns = match kind {
            LearnerKind::Online | LearnerKind::Mtl => true,
            LearnerKind::Lbfgs => tagger,
            _ => false,
        };
        if !learns {
            return Err(Error::param(
                "learner",
                kind.name(),
                if tagger {
                    "online, mtl or lbfgs (the learners of a tagger)"
                } else {
                    "online or mtl (the learners of a parser)"
                },
            ));
        }
        let mut spec = LearnerSpec::new(task, Learner::default_for(kind))
            .with_c(c)
            .with_seed(seed);
        spec.set_all(self)?;
        if let Some(l) = self.text("loss") {
            l.trim().parse::<LossKind>()?.sequence_loss()?;
        }
        spec.check()?;
        Ok(spec)
    }
}

impl LearnerSpec {
    /// Sets every setting of `settings` in order ([`LearnerSpec::set`]); the first error
    /// stops it.
    pub fn set_all(&mut self, settings: &Settings) -> Result<()> {
        settings.iter().try_for_each(|(n, t)| self.set(n, t))
    }

    /// Sets the setting `name` (a [`registry::SETTINGS`] name, or `C` / `lambda` of
    /// [`registry::STRENGTH`], the regularization constant) from its text: a
    /// number, a count, a norm (`4/3`, `inf`), a switch (`on`, `off`) or the setting's own
    /// grammar (a regularizer, a loss, a step rule, `rho2`'s list). Errors: an unknown name,
    /// a setting of another learner family, a value outside the setting's domain (the
    /// message names the setting and the domain). `validation` is a file, given to
    /// [`TrainSource`](super::TrainSource), not a setting of the spec.
    pub fn set(&mut self, name: &str, text: &str) -> Result<()> {
        let s = registry::setting(name)
            .ok_or_else(|| Error::unsupported(format!("no learner setting is named {name}")))?;
        let kind = self.learner.kind();
        if !s.learners.contains(&kind) {
            return Err(not_owned(s, kind));
        }
        let t = text.trim();
        match name {
            "C" => self.strength = Strength::C(real(s, t)?),
            "lambda" => self.strength = Strength::Lambda(real(s, t)?),
            _ => {}
        }
        if matches!(name, "C" | "lambda") {
            return Ok(());
        }
        self.learner.family_mut().set(s, t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimator::registry::Domain;
    use crate::estimator::spec::{Budget, MtlSpec, PolySpec, WrapperSpec};

    /// A value inside each domain, and one outside it.
    fn good_and_bad(s: &Setting) -> (&'static str, &'static str) {
        match (s.name, s.domain) {
            ("regularizer", _) => ("l21", "l3"),
            ("loss", _) => ("logistic", "squared-hinge"),
            ("schedule", _) => ("inv:sigma=2", "fast"),
            ("rho2", _) => ("1,0.5,2", "1,x"),
            (_, Domain::Switch) => ("on", "maybe"),
            (_, Domain::Norm) => ("4/3", "0.5"),
            (_, Domain::Count) => ("5", "0"),
            (_, Domain::PositiveReal) => ("0.25", "0"),
            (_, Domain::NonNegativeReal) => ("0.25", "-1"),
            _ => ("?", "?"),
        }
    }

    /// Every setting of every learner family is settable from text, changes the spec,
    /// passes `check()`; a value outside the domain is refused naming the setting (and,
    /// for the numeric domains, the domain).
    #[test]
    fn every_registry_setting_is_settable() {
        for s in registry::SETTINGS {
            for &kind in s.learners {
                let task = match kind {
                    LearnerKind::Mtl | LearnerKind::Lbfgs => Task::Sequence,
                    _ => Task::Binary,
                };
                let mut spec = LearnerSpec::new(task, Learner::default_for(kind));
                if s.name == "validation" {
                    assert!(spec.set(s.name, "v.csv").is_err());
                    continue;
                }
                let (good, bad) = good_and_bad(s);
                let before = spec.clone();
                spec.set(s.name, good)
                    .unwrap_or_else(|e| panic!("{} {good} for {kind}: {e}", s.name));
                assert_ne!(spec, before, "{} for {kind} changed nothing", s.name);
                if task == Task::Sequence {
                    spec.check().unwrap_or_else(|e| panic!("{}: {e}", s.name));
                }
                let e = spec.set(s.name, bad).unwrap_err().to_string();
                assert!(e.contains(s.name) || e.contains(bad), "{}: {e}", s.name);
                if !matches!(s.domain, Domain::Text | Domain::Choice(_)) {
                    assert!(e.contains(&s.domain.describe()), "{}: {e}", s.name);
                }
            }
        }
    }

    #[test]
    fn a_setting_of_another_learner_or_no_setting_is_refused() {
        let mut spec = LearnerSpec::new(Task::Binary, Learner::default_for(LearnerKind::Online));
        let e = spec.set("max_iter", "5").unwrap_err().to_string();
        assert!(
            e.contains("max_iter") && e.contains("mirror-descent"),
            "{e}"
        );
        assert!(spec.set("no_such", "1").is_err());
    }

    /// The values land where the by-hand spec has them.
    #[test]
    fn set_equals_the_spec_written_by_hand() {
        let mut ucd = LearnerSpec::new(Task::Binary, Learner::default_for(LearnerKind::Ucd));
        ucd.set("max_iter", "7").unwrap();
        ucd.set("degree", "2").unwrap();
        let want = PolySpec {
            degree: 2,
            budget: Budget::Iterations(7),
            ..PolySpec::default()
        };
        assert_eq!(ucd.learner, Learner::Ucd(want));
        let mut w = LearnerSpec::new(
            Task::Regression,
            Learner::default_for(LearnerKind::SimpleMkl),
        );
        w.set("epsilon", "0").unwrap();
        w.set("tol", "1e-3").unwrap();
        let want = WrapperSpec {
            epsilon: 0.0,
            tol: 1e-3,
            ..WrapperSpec::default()
        };
        assert_eq!(w.learner, Learner::SimpleMkl(want));
        let mut mtl = LearnerSpec::new(Task::Sequence, Learner::default_for(LearnerKind::Mtl));
        mtl.set("separation_step", "1").unwrap();
        mtl.set("q", "2").unwrap();
        let want = MtlSpec {
            q: 2.0,
            separation_step: Some(1.0),
            ..MtlSpec::default()
        };
        assert_eq!(mtl.learner, Learner::Mtl(want));
    }

    /// The registry's default text for `kind`: the value labelled with the learner when the
    /// text lists several (`1e-4 (gomp), 0.01 (mtl)`; `wrappers` labels SimpleMKL and
    /// Gauss-Seidel), `None` where it is no value a user types (`auto`, `none`, `all 1`) or a
    /// shell's own (`1000 (... poly from Python)`: the Python estimators' budget).
    fn default_text(s: &Setting, kind: LearnerKind) -> Option<String> {
        let mut rest = s.default.trim();
        let mut parts = Vec::new();
        while !rest.is_empty() {
            let end = rest.find([' ', ',']).unwrap_or(rest.len());
            let (value, after) = rest.split_at(end);
            let after = after.trim_start();
            let (labels, after) = match after.strip_prefix('(') {
                Some(a) => {
                    let close = a.find(')').expect("a closing parenthesis");
                    (Some(&a[..close]), &a[close + 1..])
                }
                None => (None, after),
            };
            parts.push((value, labels));
            rest = after.trim_start_matches([',', ' ']);
        }
        let name = kind.name().replace('-', " ");
        let wrapper = matches!(kind, LearnerKind::SimpleMkl | LearnerKind::GaussSeidel);
        let (value, labels) = parts.into_iter().find(|(_, labels)| match labels {
            None | Some("command line") => true,
            Some(l) => l
                .trim_end_matches(" from Python")
                .split(", ")
                .any(|l| l == name || (wrapper && l == "wrappers")),
        })?;
        let python_only = labels.is_some_and(|l| l.ends_with("from Python"));
        (!python_only && !matches!(value, "auto" | "none" | "all")).then(|| value.to_string())
    }

    /// Each setting's default is declared once, in the family's settings type (whose online
    /// and wrapper defaults are the engines'): the registry's text sets every owner's default
    /// spec to itself, the step of the cutting plane it names is the engine's, and the
    /// online engine runs the default spec with its own defaults.
    #[test]
    fn the_registry_the_specs_and_the_engines_agree_on_every_default() {
        let mut compared = 0;
        for s in registry::SETTINGS.iter().chain(registry::STRENGTH) {
            for &kind in s.learners {
                let task = match kind {
                    LearnerKind::Mtl | LearnerKind::Lbfgs => Task::Sequence,
                    _ => Task::Binary,
                };
                let Some(text) = default_text(s, kind) else {
                    continue;
                };
                let mut spec = LearnerSpec::new(task, Learner::default_for(kind));
                let before = spec.clone();
                spec.set(s.name, &text)
                    .unwrap_or_else(|e| panic!("{} = {text} for {kind}: {e}", s.name));
                if s.name == "separation_step" {
                    // None in the spec: the cutting plane's own step.
                    let Learner::Mtl(m) = &spec.learner else {
                        unreachable!()
                    };
                    assert_eq!(
                        m.separation_step,
                        Some(crate::solver::cutting_plane::SEPARATION_STEP)
                    );
                } else {
                    assert_eq!(spec, before, "{} = {text} is not {kind}'s default", s.name);
                }
                compared += 1;
            }
        }
        // Every owner of every setting with a default a user types: 34 pairs, and C for
        // each of the 10 learners.
        assert_eq!(compared, 44);
        let online = LearnerSpec::new(Task::Binary, Learner::default_for(LearnerKind::Online));
        let checked = online.check().unwrap();
        let params = checked.online_params(10).unwrap();
        let engine = crate::solver::online::OnlineParams::default();
        assert_eq!(
            params,
            crate::solver::online::OnlineParams {
                lambda: params.lambda,
                reg: params.reg.clone(),
                seed: params.seed,
                ..engine
            }
        );
    }

    /// The regularization constant is set by name like a learner setting, for every
    /// learner, and checked in its domain.
    #[test]
    fn c_and_lambda_set_the_strength() {
        for kind in LearnerKind::ALL {
            let mut spec = LearnerSpec::new(Task::Binary, Learner::default_for(kind));
            spec.set("C", "10").unwrap();
            assert_eq!(spec.strength, Strength::C(10.0));
            spec.set("lambda", "0.5").unwrap();
            assert_eq!(spec.strength, Strength::Lambda(0.5));
            let e = spec.set("C", "0").unwrap_err().to_string();
            assert!(e.contains('C') && e.contains("a positive number"), "{e}");
        }
        let all = Settings::new().with("C", "3").with("eta0", "0.5");
        let spec = all
            .structured_spec(Task::Sequence, LearnerKind::Online, 1.0, 0)
            .unwrap();
        assert_eq!(spec.strength, Strength::C(3.0), "a C given by name wins");
    }

    /// The separation step is parsed as a positive number and checked to be at most 1 with
    /// the spec (the cutting plane's own check).
    #[test]
    fn a_separation_step_outside_0_1_is_refused() {
        let mut mtl = LearnerSpec::new(Task::Sequence, Learner::default_for(LearnerKind::Mtl));
        for bad in ["0", "-0.5", "nan", "x"] {
            assert!(mtl.set("separation_step", bad).is_err(), "{bad}");
        }
        mtl.set("separation_step", "1.5").unwrap();
        let e = mtl.check().unwrap_err().to_string();
        assert!(e.contains("separation_step") && e.contains("(0, 1]"), "{e}");
        mtl.set("separation_step", "0.25").unwrap();
        mtl.check().unwrap();
    }
}

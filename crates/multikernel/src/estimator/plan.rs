//! Whether a request runs the built-in selection, and over which learners: the one rule the
//! command line (`multikernel train`) and the Python estimators both apply (issue 49).
//!
//! A request runs the selection ([`super::auto`]) when it is a table task (binary,
//! multiclass, regression) with neither C nor lambda, is not a stream, and names the online,
//! lp-MKL, GOMP, SimpleMKL or Gauss-Seidel learner or none. With none named, a setting only
//! the online learner takes makes it the online learner's selection, unless the setting
//! equals its default for the task (`loss = squared` on a regression, `hinge` on a
//! classification, `epochs = 20`, ...): a default restated is no choice. GOMP with a
//! validation file picks its path length on that file instead. eta0 is searched unless it is
//! given or the step rule is `inv` (whose steps do not scale with eta0 alone).
//!
//! **A C given with no learner** (issue 51): the selection still chooses the learner (and
//! the kernels, p, eta0), on a grid of that one C, so the model is the one the default
//! (no C) would fit had it chosen that C: a search over C (scikit-learn's `GridSearchCV`
//! over `C`) tunes the default's learner, not another one. A learner named, a setting only
//! the online learner takes, or lambda: no selection, that learner at that strength.

use super::auto::AutoConfig;
use super::registry;
use super::settings::Settings;
use super::spec::{LearnerKind, Task};
use super::structured_auto::StructuredPlan;
use crate::solver::lp_mkl::parse_p;
use crate::solver::online::StepSchedule;

/// What decides the selection in a training request, as a shell received it.
#[derive(Debug, Clone, Copy)]
pub struct SelectionRequest<'a> {
    pub task: Task,
    /// The learner named (`None`: not named, or `auto`).
    pub learner: Option<LearnerKind>,
    /// C or lambda was given.
    pub strength_given: bool,
    /// The C given (not lambda), which a selection with no learner named keeps (module
    /// docs).
    pub c: Option<f64>,
    /// The rows come as a stream (cross-validation would read them many times).
    pub streaming: bool,
    /// The learner settings given, by their registry names, with their text as the command
    /// line takes it.
    pub settings: &'a Settings,
}

impl SelectionRequest<'_> {
    fn text(&self, name: &str) -> Option<&str> {
        self.settings.text(name).map(str::trim)
    }
}

/// The default of a setting on `task` as text: the registry's, with `loss`'s `auto`
/// resolved (squared on regression, hinge otherwise); `None` where the default depends on
/// more than the task.
fn task_default(task: Task, name: &str) -> Option<&'static str> {
    let setting = registry::setting(name)?;
    match (name, setting.default) {
        ("loss", _) => Some(if task == Task::Regression {
            "squared"
        } else {
            "hinge"
        }),
        (_, "auto") => None,
        (_, d) => Some(d),
    }
}

/// Whether `text` restates the default `default` (as text, or as the same number).
fn is_default(text: &str, default: &str) -> bool {
    let t = text.trim();
    t == default || matches!((t.parse::<f64>(), default.parse::<f64>()), (Ok(a), Ok(b)) if a == b)
}

/// Whether the request names the online learner by a setting only it takes (not restating
/// its default for the task).
fn names_online(request: &SelectionRequest<'_>) -> bool {
    request.settings.iter().any(|(name, text)| {
        registry::owners(name) == [LearnerKind::Online]
            && !task_default(request.task, name).is_some_and(|d| is_default(text, d))
    })
}

/// The built-in selection `request` runs, if any (module docs); the caller adds its budget
/// ([`AutoConfig::with_budget`]) and keeps its own switch that turns the selection off.
pub fn selection_plan(request: &SelectionRequest<'_>) -> Option<AutoConfig> {
    let fixed_c = match request.c {
        Some(c) if request.learner.is_none() && !names_online(request) => Some(c),
        _ => None,
    };
    if (request.strength_given && fixed_c.is_none())
        || request.streaming
        || matches!(request.task, Task::Sequence | Task::Parsing)
        || (request.learner == Some(LearnerKind::Gomp) && request.text("validation").is_some())
    {
        return None;
    }
    let inv = request
        .text("schedule")
        .is_some_and(|s| matches!(s.parse::<StepSchedule>(), Ok(StepSchedule::Inv { .. })));
    let p = request.text("p").and_then(|t| parse_p(t).ok());
    let tune_eta0 = request.text("eta0").is_none() && !inv;
    let cfg = AutoConfig::for_request(request.learner, names_online(request), p, tune_eta0)?;
    Some(match fixed_c {
        Some(c) => AutoConfig {
            c_grid: vec![c],
            ..cfg
        },
        None => cfg,
    })
}

/// The structured selection `request` runs, if any ([`super::structured_auto`]): a
/// sequence or parsing task with neither C nor lambda, no learner named and no learner
/// setting given (a validation file is the development sentences, not a setting). A named
/// learner or any of its settings trains that learner as given, with C = 1 unless given.
/// The caller keeps its own switch that turns the selection off and applies it to template
/// taggers and parsers only (not to the OCR sequences).
pub fn structured_plan(request: &SelectionRequest<'_>) -> Option<StructuredPlan> {
    let only_validation = request
        .settings
        .iter()
        .all(|(name, _)| name == "validation");
    (matches!(request.task, Task::Sequence | Task::Parsing)
        && !request.strength_given
        && !request.streaming
        && request.learner.is_none()
        && only_validation)
        .then(StructuredPlan::default)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(
        task: Task,
        learner: Option<LearnerKind>,
        given: &[(&str, &str)],
    ) -> Option<AutoConfig> {
        let settings = given
            .iter()
            .fold(Settings::new(), |s, (n, t)| s.with(n, *t));
        selection_plan(&SelectionRequest {
            task,
            learner,
            strength_given: false,
            c: None,
            streaming: false,
            settings: &settings,
        })
    }

    #[test]
    fn a_default_restated_is_no_choice_of_learner() {
        use LearnerKind::*;
        let free = plan(Task::Regression, None, &[]).unwrap();
        assert_eq!(free.learner, None);
        // The servo case of issue 49: loss = squared on a regression chooses nothing.
        assert_eq!(
            plan(Task::Regression, None, &[("loss", "squared")]),
            Some(free.clone())
        );
        assert_eq!(
            plan(Task::Binary, None, &[("loss", " hinge ")])
                .unwrap()
                .learner,
            None
        );
        assert_eq!(
            plan(Task::Binary, None, &[("epochs", "20")])
                .unwrap()
                .learner,
            None
        );
        // Another value is a choice of the online learner.
        for (name, text) in [("loss", "logistic"), ("epochs", "5"), ("regularizer", "l2")] {
            assert_eq!(
                plan(Task::Binary, None, &[(name, text)]).unwrap().learner,
                Some(Online),
                "{name}={text}"
            );
        }
        assert_eq!(
            plan(Task::Regression, None, &[("loss", "hinge")])
                .unwrap()
                .learner,
            Some(Online)
        );
    }

    #[test]
    fn eta0_is_searched_unless_given_or_inv() {
        assert!(plan(Task::Binary, None, &[]).unwrap().tune_eta0);
        let given = plan(Task::Binary, None, &[("eta0", "1")]).unwrap();
        assert!(!given.tune_eta0);
        assert_eq!(given.learner, None, "eta0 = 1 restates the default");
        assert_eq!(
            plan(Task::Binary, None, &[("eta0", "0.5")])
                .unwrap()
                .learner,
            Some(LearnerKind::Online)
        );
        assert!(
            !plan(Task::Binary, None, &[("schedule", "inv")])
                .unwrap()
                .tune_eta0
        );
        assert!(
            plan(Task::Binary, None, &[("schedule", "sqrt")])
                .unwrap()
                .tune_eta0
        );
    }

    #[test]
    fn what_turns_the_selection_off() {
        use LearnerKind::*;
        let off = |r: SelectionRequest<'_>| selection_plan(&r).is_none();
        let none = Settings::new();
        let base = SelectionRequest {
            task: Task::Binary,
            learner: None,
            strength_given: false,
            c: None,
            streaming: false,
            settings: &none,
        };
        assert!(!off(base));
        // lambda given.
        assert!(off(SelectionRequest {
            strength_given: true,
            ..base
        }));
        assert!(off(SelectionRequest {
            streaming: true,
            ..base
        }));
        assert!(off(SelectionRequest {
            task: Task::Sequence,
            ..base
        }));
        assert!(off(SelectionRequest {
            task: Task::Parsing,
            ..base
        }));
        assert!(off(SelectionRequest {
            learner: Some(MirrorDescent),
            ..base
        }));
        let validation = Settings::new().with("validation", "v.csv");
        assert!(off(SelectionRequest {
            learner: Some(Gomp),
            settings: &validation,
            ..base
        }));
        assert!(!off(SelectionRequest {
            learner: Some(Gomp),
            ..base
        }));
        let p = Settings::new().with("p", "4/3");
        let with_p = selection_plan(&SelectionRequest {
            learner: Some(LpMkl),
            settings: &p,
            ..base
        });
        assert_eq!(with_p.unwrap().p, Some(4.0 / 3.0));
    }

    #[test]
    fn a_c_given_with_no_learner_selects_the_learner_at_that_c() {
        use LearnerKind::*;
        let none = Settings::new();
        let given = |learner, settings| SelectionRequest {
            task: Task::Binary,
            learner,
            strength_given: true,
            c: Some(10.0),
            streaming: false,
            settings,
        };
        let cfg = selection_plan(&given(None, &none)).expect("the selection runs");
        assert_eq!(cfg.c_grid, vec![10.0]);
        assert_eq!(cfg.learner, None, "it chooses the learner");
        let free = plan(Task::Binary, None, &[]).unwrap();
        assert_eq!(
            AutoConfig {
                c_grid: free.c_grid.clone(),
                ..cfg
            },
            free,
            "all else as without C"
        );
        // A learner named, or a setting only the online learner takes: that learner at C.
        assert!(selection_plan(&given(Some(LpMkl), &none)).is_none());
        assert!(selection_plan(&given(Some(Online), &none)).is_none());
        let reg = Settings::new().with("regularizer", "l2");
        assert!(selection_plan(&given(None, &reg)).is_none());
        // A restated default is no choice of learner.
        let epochs = Settings::new().with("epochs", "20");
        assert_eq!(
            selection_plan(&given(None, &epochs)).unwrap().c_grid,
            vec![10.0]
        );
        // Structured tasks and streams: none.
        assert!(selection_plan(&SelectionRequest {
            task: Task::Sequence,
            ..given(None, &none)
        })
        .is_none());
        assert!(selection_plan(&SelectionRequest {
            streaming: true,
            ..given(None, &none)
        })
        .is_none());
    }
}

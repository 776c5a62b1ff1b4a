//! Parsers of the short settings strings.

use crate::data::ocr::{parse_folds, N_FOLDS};
use crate::data::Format;
use crate::estimator::{Learner, LearnerKind, LearnerSpec, LossKind, Task};
use crate::kernel::{KernelSpec, Normalization};
use crate::prox::RegSpec;
use crate::solver::lp_mkl::{p_label, parse_p};
use crate::solver::mirror_descent::Sampling;
use crate::solver::online::StepSchedule;
use std::fmt;
use std::str::FromStr;

/// Kernel spec strings (`rbf:gamma=0.5`, `poly:degree=3,norm=trace`, ...): parse; a parsed
/// spec prints as text that parses back to the same text.
pub fn kernel_spec(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(spec) = text.parse::<KernelSpec>() {
        let again: KernelSpec = spec.to_string().parse().expect("a printed spec parses");
        assert_eq!(again.to_string(), spec.to_string());
    }
}

/// Regularizer strings (`l21`, `l2q:q=4/3`, `elastic:sigma=0.5`, ...): parse; a parsed spec
/// prints as text that parses back to an equal spec, which prints the same.
pub fn regularizer(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(spec) = text.parse::<RegSpec>() {
        let printed = spec.to_string();
        let again: RegSpec = printed.parse().expect("a printed regularizer parses");
        assert_eq!(again, spec, "'{text}' printed as '{printed}'");
        assert_eq!(again.to_string(), printed);
    }
}

/// A value that prints back to itself: `text` parses, and what it prints parses to an equal
/// value that prints the same.
fn round_trip<T>(text: &str)
where
    T: FromStr + fmt::Display + PartialEq + fmt::Debug,
{
    if let Ok(v) = text.parse::<T>() {
        let printed = v.to_string();
        let again: T = printed
            .parse()
            .unwrap_or_else(|_| panic!("'{text}' printed as '{printed}', which does not parse"));
        assert_eq!(again, v, "'{text}' printed as '{printed}'");
        assert_eq!(again.to_string(), printed);
    }
}

/// The small settings parsers, chosen by the first byte: task, learner, loss, step
/// schedule, sampling, kernel-weight norm p, OCR folds, data format, kernel normalization,
/// and a learner setting given as `name=value` ([`LearnerSpec::set`]).
/// Each parses or returns an error; a parsed value prints back to itself where it prints.
pub fn settings(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    match which % 10 {
        0 => round_trip::<Task>(text),
        1 => round_trip::<LearnerKind>(text),
        2 => round_trip::<LossKind>(text),
        3 => round_trip::<StepSchedule>(text),
        4 => {
            if let Ok(s) = Sampling::parse(text) {
                let again = Sampling::parse(s.name()).expect("a sampling's name parses");
                assert_eq!(again.name(), s.name());
            }
        }
        5 => {
            if let Ok(p) = parse_p(text) {
                assert!(p >= 1.0, "p = {p} from '{text}'");
                let label = p_label(p);
                let again = parse_p(&label).expect("a p label parses");
                assert!(again >= 1.0);
                if p.is_infinite() || (p.fract() == 0.0 && p < 1e15) {
                    assert_eq!(again, p, "'{text}' labelled '{label}'");
                }
            }
        }
        6 => {
            if let Ok(folds) = parse_folds(text) {
                assert!(!folds.is_empty(), "'{text}' gives folds");
                assert!(folds.windows(2).all(|w| w[0] < w[1]), "sorted, no repeats");
                assert!(folds.iter().all(|&f| f < N_FOLDS));
                let list: Vec<String> = folds.iter().map(|f| f.to_string()).collect();
                assert_eq!(parse_folds(&list.join(",")).expect("a fold list"), folds);
            }
        }
        7 => round_trip::<Format>(text),
        8 => round_trip::<Normalization>(text),
        _ => learner_setting(text),
    }
}

/// `name=value` applied to every learner's default spec by [`LearnerSpec::set`]: an error or
/// a spec that checks without a panic, and a value that was accepted is accepted again.
fn learner_setting(text: &str) {
    let Some((name, value)) = text.split_once('=') else {
        return;
    };
    for kind in LearnerKind::ALL {
        for task in [Task::Binary, Task::Sequence] {
            let mut spec = LearnerSpec::new(task, Learner::default_for(kind));
            if spec.set(name, value).is_ok() {
                let _ = spec.check();
                let once = spec.clone();
                spec.set(name, value)
                    .expect("an accepted value is accepted again");
                assert_eq!(spec, once, "{name}={value} set twice");
            }
        }
    }
}

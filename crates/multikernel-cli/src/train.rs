//! `multikernel train`: flags -> [`LearnerSpec`] and a [`TrainSource`]; the library reads
//! the data and picks the fit ([`multikernel::estimator::source`]); this writes the model
//! and prints.

use crate::cli::TrainArgs;
use crate::cli::{KernelArg, SelectMode};
use crate::observe::{catch_interrupt, Bar};
use crate::Outcome;
use anyhow::{bail, Result};
use multikernel::checkpoint::{FileCheckpoints, Fingerprint};
use multikernel::estimator::registry;
use multikernel::estimator::stream::StreamOptions;
use multikernel::estimator::{AutoConfig, SelectionRequest, Settings, StructuredPlan};
use multikernel::estimator::{
    FileSource, Fitted, Learner, LearnerKind, LearnerSpec, Source, Strength, Task, TrainSource,
};
use multikernel::kernel::MemoryLimit;
use multikernel::run::Observer;
use multikernel::run::{Checkpointed, RunStatus};
use std::time::Instant;

/// The learner when `--algo` is not given (and no built-in selection runs): the library's
/// [`registry::default_learner`] for the task, the template file and the settings given.
pub fn default_learner(a: &TrainArgs) -> LearnerKind {
    registry::default_learner(
        a.task,
        a.structured.templates.is_some(),
        a.settings.given.iter().map(|(setting, _, _)| setting.name),
    )
}

/// The learner spec the flags describe: each learner flag's text is set by the library
/// ([`LearnerSpec::set`] parses and checks it), which fills in and checks the rest.
pub fn spec_from_flags(a: &TrainArgs) -> Result<LearnerSpec> {
    let kind = a.learner.unwrap_or_else(|| default_learner(a));
    for (setting, flag, _) in &a.settings.given {
        if setting.name == "validation" && matches!(a.task, Task::Parsing | Task::Sequence) {
            continue; // the file that chooses the epoch
        }
        if !setting.learners.contains(&kind) {
            let names: Vec<&str> = setting.learners.iter().map(|k| k.name()).collect();
            bail!(
                "{flag} applies to --algo {}, not to --algo {kind}",
                names.join(" or ")
            );
        }
        if setting.deprecated_flags.contains(flag) {
            eprintln!(
                "warning: {flag} is deprecated; use {} (the same setting)",
                setting.flag
            );
        }
    }
    if a.structured.train_folds.is_some() && a.task != Task::Sequence && a.task != Task::Parsing {
        bail!(
            "--train-folds selects folds of sequence data or a treebank (--task sequence, parsing)"
        );
    }
    let parse_only = [
        (
            "--validation-folds",
            a.structured.validation_folds.is_some(),
        ),
        ("--projective", a.structured.projective),
    ];
    if let Some((flag, _)) = parse_only.iter().find(|(_, given)| *given) {
        if a.task != Task::Parsing {
            bail!("{flag} applies to --task parsing");
        }
    }
    if a.structured.templates.is_some() && a.task != Task::Parsing && a.task != Task::Sequence {
        bail!("--templates applies to --task parsing or sequence (--format columns)");
    }
    if a.structured.min_count.is_some() && !is_columns(a) {
        bail!("--min-count applies to --task sequence --format columns");
    }
    if is_columns(a) && !a.kernels.is_empty() {
        bail!("a template tagger's groups are its templates: --kernel does not apply");
    }
    let mut spec = LearnerSpec::new(a.task, Learner::default_for(kind));
    for (setting, _, text) in &a.settings.given {
        if setting.name != "validation" {
            spec.set(setting.name, text)?;
        }
    }
    let selects_p = selection_plan(a).is_some_and(|c| c.p.is_none());
    if kind == LearnerKind::LpMkl && a.settings.text("p").is_none() && !selects_p {
        bail!(
            "--algo lp-mkl needs --p P, the kernel-weight norm: a number >= 1 such as \
             1, 4/3, 2, 4, or inf"
        );
    }
    let auto = a.kernels.contains(&KernelArg::Auto);
    if auto && a.kernels.len() > 1 {
        bail!("--kernel auto is the whole default dictionary: give it alone, or list kernels");
    }
    spec.kernels = a
        .kernels
        .iter()
        .filter_map(|k| match k {
            KernelArg::Spec(s) => Some(s.clone()),
            KernelArg::Auto => None,
        })
        .collect();
    spec.strength = match (a.c, a.lambda) {
        (_, Some(l)) => Strength::Lambda(l),
        (Some(c), None) => Strength::C(c),
        (None, None) => Strength::default(),
    };
    spec.bias = !a.no_bias;
    spec.standardize = !a.no_standardize;
    spec.seed = a.seed;
    spec.memory = MemoryLimit::try_gib(a.memory_limit_gb)?;
    Ok(spec)
}

/// The built-in selection `train` runs, if any: none with `--select none`, else the
/// library's rule, which the Python estimators apply too
/// ([`multikernel::estimator::selection_plan`]), with `--select-budget`.
pub fn selection_plan(a: &TrainArgs) -> Option<AutoConfig> {
    if a.select == SelectMode::None {
        return None;
    }
    let settings = given_settings(a);
    multikernel::estimator::selection_plan(&selection_request(a, &settings))
        .map(|cfg| cfg.with_budget(a.select_budget))
}

/// The learner settings given on the command line, by registry name.
fn given_settings(a: &TrainArgs) -> Settings {
    a.settings
        .given
        .iter()
        .fold(Settings::new(), |all, (s, _, text)| all.with(s.name, text))
}

/// What decides the built-in selections, as the flags say it.
fn selection_request<'a>(a: &TrainArgs, settings: &'a Settings) -> SelectionRequest<'a> {
    SelectionRequest {
        task: a.task,
        learner: a.learner,
        strength_given: a.c.is_some() || a.lambda.is_some(),
        c: a.c.filter(|_| a.lambda.is_none()),
        streaming: a.stream,
        settings,
    }
}

/// The structured selection `train` runs, if any: none with `--select none`, else the
/// library's rule ([`multikernel::estimator::structured_plan`]) for a template tagger
/// (`--task sequence --format columns`) or a parser.
pub fn structured_plan(a: &TrainArgs) -> Option<StructuredPlan> {
    if a.select == SelectMode::None || !(a.task == Task::Parsing || is_columns(a)) {
        return None;
    }
    let settings = given_settings(a);
    multikernel::estimator::structured_plan(&selection_request(a, &settings))
}

/// The outputs of `train`, checked before any data is read (a typo in `--out` or an
/// unwritable folder is reported before training rather than after it): the model
/// (`--out`), the run's JSON (`--run-json`; at most one of the two may be `-`, standard
/// output) and the checkpoint (`--checkpoint`, or `--resume` when later checkpoints go to
/// it: a regular file) can be written, and none of them is an input of the run (`--data`,
/// `--validation`, `--templates`, the checkpoint resumed) or another output.
fn check_outputs(a: &TrainArgs) -> Result<()> {
    use std::path::Path;
    let mut outputs: Vec<(&str, &Path)> = vec![("--out", &a.out)];
    if let Some(p) = &a.run_json {
        outputs.push(("--run-json", p));
    }
    let save_to = match (&a.checkpoint, &a.resume) {
        (Some(c), _) => Some(("--checkpoint", c)),
        (None, Some(r)) => Some(("--resume", r)),
        (None, None) => None,
    };
    if let Some((flag, path)) = save_to {
        multikernel::io::check_rewritable(flag, path)?;
        outputs.push((flag, path));
    }
    let mut inputs: Vec<(&str, &Path)> = vec![("--data", &a.data.data)];
    if let Some(v) = a.settings.text("validation") {
        inputs.push(("--validation", Path::new(v)));
    }
    if let Some(t) = &a.structured.templates {
        inputs.push(("--templates", t));
    }
    if let (Some(r), Some(c)) = (&a.resume, &a.checkpoint) {
        // Saving over the checkpoint resumed is what `--resume F --checkpoint F` asks.
        if !multikernel::io::same_file(r, c) {
            inputs.push(("--resume", r));
        }
    }
    Ok(multikernel::io::check_outputs(&outputs, &inputs)?)
}

pub fn train(a: &TrainArgs) -> Result<Outcome> {
    let spec = spec_from_flags(a)?;
    // Check every setting before reading any data.
    spec.check()?;
    // And that the outputs can be written, before a long training.
    check_outputs(a)?;
    if a.stream && !matches!(a.learner, None | Some(LearnerKind::Online)) {
        bail!("--stream trains the online learner (--algo online)");
    }
    let start = Instant::now();
    let bar = Bar::new();
    catch_interrupt();
    let plan = selection_plan(a);
    let structured = structured_plan(a);
    let learner_name = match (a.learner, plan.is_some() || structured.is_some()) {
        (Some(k), _) => k.name().to_string(),
        (None, true) => "the learner the selection picks".into(),
        (None, false) => default_learner(a).name().into(),
    };
    let store = checkpoints(a, &spec, plan.is_some())?;
    let checkpointed = store.as_ref().map(|s| Checkpointed {
        observer: &bar,
        checkpoints: s,
    });
    let observer: &dyn Observer = match &checkpointed {
        Some(c) => c,
        None => &bar,
    };
    let out = if let Some((data, weights)) = crate::weights::weighted_table(a)? {
        // Row weights: the table in memory, through the library's fit.
        eprintln!(
            "training {learner_name} on {} rows x {} features, weighted (Ctrl-C stops it)",
            data.len(),
            data.n_features()
        );
        let table = data.view().with_weights(&weights)?;
        let request = multikernel::estimator::FitRequest::new(&spec).select(plan.as_ref());
        multikernel::estimator::fit(table, request, observer)?
    } else {
        let loaded = train_source(a)?.load(a.task)?;
        eprintln!(
            "training {learner_name} on {} (Ctrl-C stops it)",
            loaded.describe()
        );
        loaded.fit(&spec, plan.as_ref(), structured.as_ref(), observer)?
    };
    bar.finish();
    if let Some(s) = &store {
        if s.claimed().is_none() {
            eprintln!(
                "warning: this learner ({learner_name} on this data) keeps no checkpoints: \
                 none was written or read"
            );
        }
    }
    if let Some(report) = &out.stream {
        let losses: Vec<String> = report
            .epoch_losses
            .iter()
            .map(|l| format!("{l:.4}"))
            .collect();
        eprintln!(
            "{} rows (first pass {:.2} s); progressive loss by epoch: {}",
            report.rows,
            report.scan_seconds,
            losses.join(" ")
        );
    }
    let mut trained_with = learner_name;
    if let Some(selection) = &out.selection {
        let record = &selection.record;
        eprintln!("{}", record.headline());
        if let Some(why) = &record.learner_choice {
            eprintln!("learner: {why}");
        }
        let lines = if record.candidates.is_empty() {
            record.grid_lines()
        } else {
            record.candidate_lines()
        };
        for line in lines {
            eprintln!("  {line}");
        }
        eprintln!("selection took {:.2} s", selection.seconds);
        trained_with = selection.learner.name().to_string();
    }
    let fitted = out;
    bar.finish();
    if fitted.run.status == RunStatus::Cancelled {
        eprintln!(
            "interrupted after {} {}s: no model written to {}",
            fitted.run.steps,
            fitted.run.unit.name(),
            a.out.display()
        );
        return Ok(Outcome::Interrupted);
    }
    // The model is written before anything is printed: a closed pipe loses output, never
    // the model. `--out -` writes it to standard output (or `--run-json -` the run's JSON),
    // and the summary goes to stderr.
    let to_stdout = multikernel::io::is_stdout(&a.out)
        || a.run_json
            .as_deref()
            .is_some_and(multikernel::io::is_stdout);
    let print = |bytes: &[u8]| -> Result<()> {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(bytes)?;
        stdout.flush()?;
        Ok(())
    };
    if multikernel::io::is_stdout(&a.out) {
        print(&fitted.model.to_bytes()?)?;
    } else {
        fitted.model.save(&a.out)?;
    }
    if let Some(path) = &a.run_json {
        let text = serde_json::to_string_pretty(&fitted.run)?;
        if multikernel::io::is_stdout(path) {
            print(format!("{text}\n").as_bytes())?;
        } else {
            multikernel::io::write_atomic(path, text.as_bytes())?;
        }
    }
    for n in &fitted.notes {
        if n.starts_with("warning: ") {
            eprintln!("{n}");
        } else {
            eprintln!("note: {n}");
        }
    }
    if a.task == Task::Parsing && !fitted.run.trace.is_empty() {
        let by_epoch: Vec<String> = fitted
            .run
            .trace
            .iter()
            .map(|t| format!("{}:{:.5}", t.step, t.objective))
            .collect();
        eprintln!("objective by epoch: {}", by_epoch.join(" "));
    }
    if fitted.run.skipped_examples > 0 {
        eprintln!(
            "warning: the loss of {} examples could not be computed (no marginals), so no \
             step was taken on them (counted once per epoch)",
            fitted.run.skipped_examples
        );
    }
    let summary = fit_summary(&fitted);
    if to_stdout {
        eprint!("{summary}");
    } else {
        crate::emit(&summary);
    }
    eprintln!(
        "trained {} on the {} task in {:.2} s ({}, {} {}s); model written to {}",
        trained_with,
        a.task,
        start.elapsed().as_secs_f64(),
        fitted.run.status.describe(),
        fitted.run.steps,
        fitted.run.unit.name(),
        a.out.display()
    );
    Ok(Outcome::Done)
}

/// `--checkpoint-every` of `--algo mtl` when not given: cuts between two saves.
const MTL_CHECKPOINT_EVERY: u64 = 10;

/// The checkpoint store `--checkpoint` / `--resume` ask for, if any: fingerprints of the
/// data (the content of the data, validation and template files) and of the settings (the
/// resolved learner spec, seed included, and the options of the data source; not the
/// memory limit, the outputs or the checkpoint flags), and the checkpoint resumed from
/// (refused when either fingerprint differs).
fn checkpoints(
    a: &TrainArgs,
    spec: &LearnerSpec,
    selects: bool,
) -> Result<Option<FileCheckpoints>> {
    if a.checkpoint.is_none() && a.resume.is_none() {
        return Ok(None);
    }
    let flag = if a.checkpoint.is_some() {
        "--checkpoint"
    } else {
        "--resume"
    };
    if selects {
        bail!(
            "{flag} applies to one learner run, not to the built-in selection: give --algo \
             with --C, or --lambda (or --select none)"
        );
    }
    let kind = a.learner.unwrap_or_else(|| default_learner(a));
    if !matches!(kind, LearnerKind::Online | LearnerKind::Mtl) {
        bail!(
            "{flag} applies to the online learner (--algo online: tables, streams, \
             sequences, parsing, template taggers) and to --algo mtl, not to --algo {kind}"
        );
    }
    let mut data = Fingerprint::new();
    data.file("data", &a.data.data)?;
    if let Some(v) = a.settings.text("validation") {
        data.file("validation", std::path::Path::new(v))?;
    }
    if let Some(t) = &a.structured.templates {
        data.file("templates", t)?;
    }
    let mut resolved = spec.clone();
    resolved.memory = MemoryLimit::default();
    let o = &a.structured;
    let mut source = format!(
        "format={:?} train_folds={:?} validation_folds={:?} min_count={:?} projective={} \
         stream={} chunk_rows={} shuffle_rows={} learner={kind}",
        a.data.format,
        o.train_folds,
        o.validation_folds,
        o.min_count,
        o.projective,
        a.stream,
        if a.stream { a.chunk_rows } else { 0 },
        if a.stream { a.shuffle_rows } else { 0 },
    );
    if a.weight_column.is_some() || a.class_weight.is_some() {
        // Row weights change the fit (unweighted runs keep their fingerprints).
        source.push_str(&format!(
            " weight_column={:?} class_weight={:?}",
            a.weight_column, a.class_weight
        ));
    }
    let settings = Fingerprint::new()
        .bytes("spec", serde_json::to_string(&resolved)?.as_bytes())
        .bytes("source", source.as_bytes())
        .finish();
    let save_to = a.checkpoint.clone().or_else(|| a.resume.clone());
    let every = a.checkpoint_every.unwrap_or(match kind {
        LearnerKind::Mtl => MTL_CHECKPOINT_EVERY,
        _ => 1,
    });
    // Said once the learner restored the state and checked the header's step against it.
    let announce: fn(u64) =
        |step| eprintln!("resuming after step {step} of the run saved in the checkpoint");
    let store = FileCheckpoints::new(save_to, every, data.finish(), settings).on_resume(announce);
    Ok(Some(match &a.resume {
        Some(p) => store.resuming(p)?,
        None => store,
    }))
}

/// Whether the training data are sentences in columns for a template tagger.
fn is_columns(a: &TrainArgs) -> bool {
    a.task == Task::Sequence
        && (a.data.format.as_deref() == Some("columns")
            || (a.data.format.is_none() && a.structured.templates.is_some()))
}

/// The data, validation and templates the flags name.
fn train_source(a: &TrainArgs) -> Result<TrainSource<'static>> {
    let o = &a.structured;
    let file = crate::data::file_source(&a.data, &o.train_folds)?;
    let validation = match (a.settings.text("validation"), &o.validation_folds) {
        (Some(path), _) => Some(FileSource::new(path).with_format(file.format)),
        (None, Some(folds)) => Some(file.clone().with_folds(Some(folds.clone()))),
        (None, None) => None,
    };
    let data = if a.stream {
        let opts = StreamOptions {
            chunk_rows: a.chunk_rows,
            shuffle_rows: a.shuffle_rows,
        };
        Source::Stream(file, opts)
    } else {
        Source::File(file)
    };
    Ok(TrainSource {
        data,
        validation,
        templates: o.templates.clone(),
        min_count: o.min_count,
        projective: o.projective,
    })
}

/// What `train` prints: the model's headline, the validation choice, the kernel table.
fn fit_summary(f: &Fitted) -> String {
    let s = f.model.summary();
    let mut out = format!("{}\n", s.headline);
    if let Some(c) = &f.path_choice {
        out.push_str(&format!(
            "validation ({} rows): path length {} of {} chosen, {} {:.4}\n",
            c.rows, c.chosen, c.of, c.metric, c.losses[c.chosen]
        ));
        let by_len: Vec<String> = c
            .losses
            .iter()
            .enumerate()
            .map(|(k, l)| format!("{k}:{l:.4}"))
            .collect();
        out.push_str(&format!(
            "  {} by path length: {}\n",
            c.metric,
            by_len.join(" ")
        ));
    }
    out.push_str(&s.kernel_table(multikernel::model::summary::SHOWN_KERNELS));
    for n in &s.notes {
        out.push_str(&format!("  {n}\n"));
    }
    out
}

//! Error messages in the command line's words: a library parameter becomes the flag that
//! sets it, a memory refusal says which flag raises the limit.

use multikernel::error::suggest_gib;
use multikernel::Error;

/// Library parameter names whose flag is not `--NAME` (underscores as dashes).
const RENAMED: &[(&str, &str)] = &[
    ("learner", "--algo"),
    ("kernels", "--kernel"),
    ("regularizer", "--reg"),
    ("sigma", "--schedule"),
    ("averaging", "--average"),
];

/// Every long flag of every command.
fn long_flags() -> Vec<String> {
    fn walk(cmd: &clap::Command, out: &mut Vec<String>) {
        out.extend(
            cmd.get_arguments()
                .filter_map(|a| a.get_long())
                .map(|l| format!("--{l}")),
        );
        for sub in cmd.get_subcommands() {
            walk(sub, out);
        }
    }
    let mut out = Vec::new();
    walk(
        &<crate::cli::Cli as clap::CommandFactory>::command(),
        &mut out,
    );
    out
}

/// The flag that sets a library parameter, or the name itself when no flag sets it (a
/// setting of the Python package or of a kernel spec).
pub fn flag_of(name: &str) -> String {
    let flag = match RENAMED.iter().find(|(n, _)| *n == name) {
        Some((_, f)) => f.to_string(),
        None => format!("--{}", name.replace('_', "-")),
    };
    if long_flags().contains(&flag) {
        flag
    } else {
        name.to_string()
    }
}

/// One library error in flag terms.
fn error_text(e: &Error) -> String {
    match e {
        Error::InvalidParameter {
            name,
            value,
            expected,
        } => format!("{} {value}: expected {expected}", flag_of(name)),
        Error::Memory { needed, .. } => {
            format!("{e} (--memory-limit-gb {})", suggest_gib(*needed))
        }
        Error::Input { name, source } => format!("{}: {}", flag_of(name), error_text(source)),
        _ => e.to_string(),
    }
}

/// The message of an error chain: the library's typed errors in flag terms, causes joined
/// by ": " (a cause whose text the message already contains is left out).
pub fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = match cause.downcast_ref::<Error>() {
            Some(inner @ Error::Input { .. }) => {
                // The rest of the chain is inside it.
                push_cause(&mut out, error_text(inner));
                break;
            }
            Some(e) => error_text(e),
            None => cause.to_string(),
        };
        push_cause(&mut out, text);
    }
    out
}

/// Appends a cause unless the message already says it.
fn push_cause(out: &mut String, text: String) {
    if !out.contains(&text) {
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
}

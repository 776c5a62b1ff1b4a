//! Error messages in the command line's words: a library parameter becomes the flag that
//! sets it, a memory refusal says which flag raises the limit.

use multikernel::error::suggest_gib;
use multikernel::Error;

/// The flag that sets a library parameter.
pub fn flag_of(name: &str) -> String {
    match name {
        "learner" => "--algo".to_string(),
        "degree" => "--poly-degree".to_string(),
        "kernels" => "--kernel".to_string(),
        "sigma" => "--schedule".to_string(),
        "averaging" => "--average".to_string(),
        "data set" => "data set".to_string(),
        "n" => "--n".to_string(),
        other => format!("--{}", other.replace('_', "-")),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_become_flags() {
        let e = anyhow::Error::from(Error::param("max_kernels", 0, "at least 1"));
        assert_eq!(message(&e), "--max-kernels 0: expected at least 1");
        let e = anyhow::Error::from(Error::param("C", -1.0, "a positive number"));
        assert_eq!(message(&e), "--C -1: expected a positive number");
        let e = anyhow::Error::from(Error::Memory {
            what: "a Gram matrix".into(),
            needed: 3 << 30,
            limit: 1 << 30,
        });
        assert!(
            message(&e).contains("--memory-limit-gb 4"),
            "{}",
            message(&e)
        );
        assert_eq!(flag_of("degree"), "--poly-degree");
    }
}

//! `multikernel`: the command-line tool.

mod batch;
mod cli;
mod commands;
mod generate;
mod reproduce;
mod sequence;

use clap::Parser;
use cli::{Cli, Command};

/// Restores the default SIGPIPE action, so `multikernel inspect ... | head` ends quietly like
/// other command-line tools instead of panicking on a closed pipe. Model files are written
/// before anything is printed, so nothing is lost.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called once at start-up before any thread exists; SIG_DFL is a valid action.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() {
    restore_sigpipe();
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Train(a) => commands::train(a),
        Command::Eval(a) => commands::eval(a),
        Command::Predict(a) => commands::predict(a),
        Command::Inspect(a) => commands::inspect(a),
        Command::Reproduce(r) => reproduce::run(r),
        Command::Demo(a) => reproduce::demo(a),
        Command::Generate(a) => generate::run(a),
    };
    if let Err(e) = result {
        eprintln!("error: {}", message(&e));
        std::process::exit(1);
    }
}

/// The error with its causes joined by ": ", leaving out a cause whose text the message
/// already contains (the library's errors print their I/O source themselves).
fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if !out.contains(&text) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&text);
        }
    }
    out
}

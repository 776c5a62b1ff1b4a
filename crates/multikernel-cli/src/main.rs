//! `multikernel`: the command-line tool. Flags become library specs, the library does the
//! work, this crate prints.

mod cli;
mod data;
mod errors;
mod observe;
mod reproduce;
mod train;
mod use_model;
mod weights;

use clap::Parser;
use cli::{Cli, Command};
use std::io::Write;

/// How a command ended when it did not fail.
pub enum Outcome {
    Done,
    /// Ctrl-C stopped training; nothing was written.
    Interrupted,
}

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

/// Writes to standard output; a closed pipe (`| head`) is not an error.
pub fn emit(text: &str) {
    emit_bytes(text.as_bytes());
}

/// Prints bytes as they are (columns in the data's own encoding).
pub fn emit_bytes(bytes: &[u8]) {
    let _ = std::io::stdout().lock().write_all(bytes);
}

fn main() {
    restore_sigpipe();
    let cli = Cli::parse();
    let done = |r: anyhow::Result<()>| r.map(|()| Outcome::Done);
    let result = match &cli.command {
        Command::Train(a) => train::train(a),
        Command::Eval(a) => done(use_model::eval(a)),
        Command::Predict(a) => done(use_model::predict(a)),
        Command::Inspect(a) => done(use_model::inspect(a)),
        Command::Reproduce(r) => done(reproduce::run(r)),
        Command::Demo(a) => done(reproduce::demo(a)),
        Command::Generate(a) => done(reproduce::generate(a)),
        Command::Convert(a) => done(use_model::convert(a)),
        Command::Score(a) => done(use_model::score(a)),
    };
    match result {
        Ok(Outcome::Done) => {}
        Ok(Outcome::Interrupted) => std::process::exit(130),
        Err(e) => {
            eprintln!("error: {}", errors::message(&e));
            std::process::exit(1);
        }
    }
}

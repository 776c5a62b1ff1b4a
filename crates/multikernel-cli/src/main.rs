//! `multikernel`: the command-line tool.

mod cli;
mod commands;
mod reproduce;
mod sequence;

use clap::Parser;
use cli::{Cli, Command};

fn main() {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Train(a) => commands::train(a),
        Command::Eval(a) => commands::eval(a),
        Command::Predict(a) => commands::predict(a),
        Command::Inspect(a) => commands::inspect(a),
        Command::Reproduce(r) => reproduce::run(r),
        Command::Demo(a) => reproduce::demo(a),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

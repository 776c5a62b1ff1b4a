//! The files a command writes, checked before any work. The writing itself is the library's
//! ([`multikernel::io::AtomicWriter`]: a new path or a regular file, through any symbolic
//! links, replaced atomically; a device, a FIFO or a socket written in place); here each
//! output's folder is probed ([`multikernel::io::check_output`]), no output may be one of the
//! command's inputs or another of its outputs, standard output (`-`) takes at most one
//! output, and a checkpoint must be a file that can be rewritten and read back.

use anyhow::{anyhow, bail, Result};
use multikernel::io;
use std::path::Path;

/// Whether `path` is `-`, standard output.
pub fn is_stdout(path: &Path) -> bool {
    path == Path::new("-")
}

/// A library error about `path` in the command line's words: `FLAG PATH: what`.
fn flagged(flag: &str, path: &Path, e: multikernel::Error) -> anyhow::Error {
    match e {
        multikernel::Error::Io { source, .. } => anyhow!("{flag} {}: {source}", path.display()),
        e => anyhow::Error::from(e).context(format!("{flag} {}", path.display())),
    }
}

/// Checks the outputs `(flag, path)` of one run before any work: at most one is `-`; every
/// other can be written (its folder exists and takes a new file, it is not a directory); none
/// is the same file as one of the `inputs` `(flag, path)` or as an earlier output (by device
/// and inode, or by real folder and name for a path not created yet, so `x`, `./x`, a
/// symbolic or hard link to `x` all match). A character device may be both (a terminal,
/// `/dev/null`).
pub fn check(outputs: &[(&str, &Path)], inputs: &[(&str, &Path)]) -> Result<()> {
    let to_stdout: Vec<&str> = outputs
        .iter()
        .filter(|(_, p)| is_stdout(p))
        .map(|(f, _)| *f)
        .collect();
    if to_stdout.len() > 1 {
        bail!(
            "{}: standard output (-) takes one output of a run; give the others a file",
            to_stdout
                .iter()
                .map(|f| format!("{f} -"))
                .collect::<Vec<_>>()
                .join(" and ")
        );
    }
    for (i, &(flag, path)) in outputs.iter().enumerate() {
        if is_stdout(path) {
            continue;
        }
        io::check_output(path).map_err(|e| flagged(flag, path, e))?;
        for &(in_flag, input) in inputs {
            if !is_stdout(input) && overwrites(path, input) {
                bail!(
                    "{flag} {}: the same file as {in_flag} {}, an input of this run: writing \
                     it would destroy the input; give another file",
                    path.display(),
                    input.display()
                );
            }
        }
        for &(other_flag, other) in &outputs[..i] {
            if !is_stdout(other) && overwrites(path, other) {
                bail!(
                    "{flag} {}: the same file as {other_flag} {}: give each output a file \
                     of its own",
                    path.display(),
                    other.display()
                );
            }
        }
    }
    Ok(())
}

/// Whether writing `output` writes over `other`: the same file, unless it is a character
/// device (a terminal or `/dev/null` may be read and written by one run).
fn overwrites(output: &Path, other: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if std::fs::metadata(output).is_ok_and(|m| m.file_type().is_char_device()) {
            return false;
        }
    }
    io::same_file(output, other)
}

/// The file later checkpoints go to (`--checkpoint`, or `--resume` without it): a new path or
/// a regular file (through symbolic links), never standard output, a FIFO, a device or a
/// socket, since a checkpoint is rewritten every step and read back by `--resume`.
pub fn check_checkpoint(flag: &str, path: &Path) -> Result<()> {
    if is_stdout(path) {
        bail!(
            "{flag} -: a checkpoint is rewritten every step and read back by --resume, so it \
             cannot be standard output: give a regular file"
        );
    }
    let kind = io::output_kind(path).map_err(|e| flagged(flag, path, e))?;
    if !kind.is_replaced() {
        bail!(
            "{flag} {}: is {}; a checkpoint is rewritten every step and read back by \
             --resume: give a regular file",
            path.display(),
            kind.describe()
        );
    }
    Ok(())
}

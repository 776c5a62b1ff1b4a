//! Writing result files safely: an output is whole or absent, never half-written, and what
//! the user points an output at is never destroyed.
//!
//! Every output of the library and of the command line (model files, checkpoints, a run's
//! JSON, predictions, converted columns, generated data, reproductions' JSON, CSV and SVG
//! files) goes through [`AtomicWriter`], or [`write_atomic`] for bytes already in memory.
//! Both look at what the path is first, following symbolic links as `open` would, and write
//! each kind of target the way GNU coreutils and SQLite treat the files they are given:
//!
//! | the path is | what is written |
//! | --- | --- |
//! | absent, or a regular file | the path, atomically (below); a replaced file keeps its permissions |
//! | a symbolic link to a regular file, or a dangling one | the file the link names, atomically in that file's own folder: the link stays a link |
//! | a character or block device, a FIFO | the device or FIFO itself, opened and written in place: no temporary file, no rename (`/dev/null` discards, a FIFO's reader gets the bytes; opening a FIFO waits for its reader, as a shell's `>` does) |
//! | a Unix socket | the socket, connected to and written |
//! | a file named through `/proc` (`/dev/stdout`, `/dev/fd/N`) | the open file it names, in place; a regular file reached so is appended to, as the shell opened it |
//! | a directory | nothing: an error |
//!
//! Atomically: the bytes go into a temporary file next to the target, which is flushed to
//! disk (`fsync`) and renamed over the target, and the folder is flushed after the rename,
//! so a reader (or a later run) sees the old content or the new content, never a mixture,
//! even when the writing process is killed or the machine loses power. A process killed
//! between creating its temporary file and the rename leaves that file behind; the
//! temporary names are recognizable, `.{name}.{pid}-{n}.multikernel-tmp` next to the target
//! `name`, and the next successful atomic write of the same target removes the ones whose
//! process is gone ([`TEMP_SUFFIX`]). That cleanup runs only after a rename, in the folder
//! the rename happened in (the target's real folder): never in the folder of a device, a
//! FIFO or a socket, which is written in place.
//!
//! Before a long run a program calls [`check_outputs`] with the run's outputs and inputs:
//! each output is checked by `check_output`, which resolves the path as the writer will
//! and, for an atomic write, creates and removes a temporary file in the target's folder, so
//! a missing, read-only or otherwise unwritable folder is an error before any work (a probe,
//! because permission bits do not stop root while a read-only mount or `/proc` does); an
//! output that is one of the inputs or another output ([`same_file`]: by device and inode,
//! so `x`, `./x` and links to `x` match) is refused, as is more than one `-` ([`is_stdout`],
//! standard output, which the caller writes). A checkpoint, rewritten every step and read
//! back, must be a regular file or a new path ([`check_rewritable`]); `output_kind` says
//! what a path is without touching it.

use crate::error::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// How every temporary file of [`write_atomic`] ends: `.{name}.{pid}-{n}` and this suffix,
/// in the target's directory. A file with this name and no process `pid` running is left
/// over from a killed write: it is safe to delete (the next write of the same target does).
pub const TEMP_SUFFIX: &str = ".multikernel-tmp";

/// Distinguishes the temporary files of one process (several threads may write).
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Symbolic links followed before a path is refused as a loop (Linux's own limit).
const MAX_LINKS: usize = 40;

/// What an output path is, and so how [`AtomicWriter`] writes it (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputKind {
    /// Nothing is there yet (or a dangling symbolic link names a file that is not): the
    /// file is created atomically.
    New,
    /// A regular file (or a symbolic link to one): replaced atomically.
    Regular,
    /// A character device (`/dev/null`, a terminal): written in place.
    CharDevice,
    /// A block device: written in place.
    BlockDevice,
    /// A named pipe: written in place (opening it waits for a reader).
    Fifo,
    /// A Unix socket: connected to and written.
    Socket,
    /// A file named through `/proc` (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`): the
    /// open file it names, written in place (appended to when it is a regular file).
    Descriptor,
}

impl OutputKind {
    /// Whether the target is replaced by a rename (a new path, a regular file) rather than
    /// written in place.
    pub(crate) fn is_replaced(self) -> bool {
        matches!(self, OutputKind::New | OutputKind::Regular)
    }

    /// The kind in words, for messages ("a FIFO").
    pub(crate) fn describe(self) -> &'static str {
        match self {
            OutputKind::New => "a new file",
            OutputKind::Regular => "a regular file",
            OutputKind::CharDevice => "a character device",
            OutputKind::BlockDevice => "a block device",
            OutputKind::Fifo => "a FIFO (named pipe)",
            OutputKind::Socket => "a socket",
            OutputKind::Descriptor => "an open file named through /proc",
        }
    }
}

/// An output path resolved: the file written (every symbolic link of the last component
/// followed, except a link into `/proc`, which is opened as it is) and its kind.
#[derive(Debug)]
struct Resolved {
    file: PathBuf,
    kind: OutputKind,
}

fn io_error(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The folder of `path` (`.` for a bare name).
fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Whether the symbolic link `link` lies in `/proc` (its folder resolved), where links such
/// as `/proc/self/fd/1` name open files rather than paths.
fn in_proc(link: &Path) -> bool {
    std::fs::canonicalize(folder_of(link)).is_ok_and(|d| d.starts_with("/proc"))
}

/// Follows the symbolic links of `path` (the last component, link after link) to the file
/// an output to `path` writes, and says what it is.
fn resolve(path: &Path) -> Result<Resolved> {
    let mut file = path.to_path_buf();
    for _ in 0..=MAX_LINKS {
        let meta = match std::fs::symlink_metadata(&file) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Resolved {
                    file,
                    kind: OutputKind::New,
                });
            }
            // A component of the folder is not a folder (`a-file/x`): written as a new
            // file, whose creation fails with the system's words.
            Err(e) if e.raw_os_error() == Some(ENOTDIR) => {
                return Ok(Resolved {
                    file,
                    kind: OutputKind::New,
                });
            }
            Err(e) => return Err(io_error(path, e)),
        };
        let ft = meta.file_type();
        if ft.is_symlink() {
            if in_proc(&file) {
                // Opened as it is: the kernel follows it to the open file.
                let target = std::fs::metadata(&file).map_err(|e| io_error(path, e))?;
                if target.is_dir() {
                    return Err(is_a_directory(path));
                }
                return Ok(Resolved {
                    file,
                    kind: OutputKind::Descriptor,
                });
            }
            let target = std::fs::read_link(&file).map_err(|e| io_error(path, e))?;
            file = if target.is_absolute() {
                target
            } else {
                folder_of(&file).join(target)
            };
            continue;
        }
        let kind = if ft.is_file() {
            OutputKind::Regular
        } else if ft.is_dir() {
            return Err(is_a_directory(path));
        } else {
            special_kind(&ft)
        };
        return Ok(Resolved { file, kind });
    }
    Err(io_error(
        path,
        std::io::Error::other(format!(
            "more than {MAX_LINKS} symbolic links to follow (a loop?)"
        )),
    ))
}

/// ENOTDIR, the error of a path through a file that is not a folder.
#[cfg(unix)]
const ENOTDIR: i32 = libc::ENOTDIR;
#[cfg(not(unix))]
const ENOTDIR: i32 = 267; // ERROR_DIRECTORY

fn is_a_directory(path: &Path) -> Error {
    io_error(
        path,
        std::io::Error::other("is a directory, expected a file name"),
    )
}

/// The kind of a file that is neither regular, a folder nor a symbolic link.
fn special_kind(ft: &std::fs::FileType) -> OutputKind {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_char_device() {
            return OutputKind::CharDevice;
        }
        if ft.is_block_device() {
            return OutputKind::BlockDevice;
        }
        if ft.is_fifo() {
            return OutputKind::Fifo;
        }
        if ft.is_socket() {
            return OutputKind::Socket;
        }
    }
    let _ = ft;
    OutputKind::CharDevice
}

/// What writing `path` would write (module docs): a new file, a regular file (through any
/// symbolic links), a device, a FIFO, a socket or an open file named through `/proc`. A
/// directory, a loop of symbolic links or a path that cannot be examined is an error naming
/// `path`. Nothing is opened or created.
pub(crate) fn output_kind(path: &Path) -> Result<OutputKind> {
    resolve(path).map(|r| r.kind)
}

/// Checks, before any work, that `path` can be written as [`AtomicWriter`] will write it,
/// and says what it is. For an atomic write (a new path or a regular file, through any
/// symbolic links) the real folder of the target must exist and take a new file: a
/// temporary file is created there and removed (so a read-only mount, `/proc` or a folder
/// root cannot write is refused even when the permission bits would let root through). A
/// device, a FIFO or a socket is not opened (a FIFO would wait for its reader).
pub(crate) fn check_output(path: &Path) -> Result<OutputKind> {
    let r = resolve(path)?;
    if !r.kind.is_replaced() {
        return Ok(r.kind);
    }
    let (dir, _, tmp) = temp_target(&r.file).map_err(|e| match e {
        Error::Io { source, .. } => io_error(path, source),
        e => e,
    })?;
    match std::fs::metadata(&dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(io_error(
                path,
                std::io::Error::other(format!("{} is not a folder", dir.display())),
            ))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(io_error(
                path,
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("the folder {} does not exist", dir.display()),
                ),
            ))
        }
        Err(e) if e.raw_os_error() == Some(ENOTDIR) => {
            return Err(io_error(
                path,
                std::io::Error::other(format!(
                    "the folder {} is under a file that is not a folder",
                    dir.display()
                )),
            ))
        }
        Err(e) => return Err(io_error(path, e)),
    }
    let probe = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp);
    match probe {
        Ok(f) => {
            drop(f);
            let _ = std::fs::remove_file(&tmp);
            Ok(r.kind)
        }
        Err(e) => Err(io_error(
            path,
            std::io::Error::new(
                e.kind(),
                format!("cannot create a file in the folder {}: {e}", dir.display()),
            ),
        )),
    }
}

/// Whether `a` and `b` name the same file: the same device and inode when both exist
/// (through symbolic links and hard links, `./x`, `x` and `dir/../x` alike), else the same
/// resolved path (the real folder and the name the writer would create).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(ma), Ok(mb)) => same_inode(a, &ma, b, &mb),
        (Err(_), Err(_)) => match (resolve(a), resolve(b)) {
            (Ok(ra), Ok(rb)) => real_path(&ra.file) == real_path(&rb.file),
            _ => false,
        },
        _ => false,
    }
}

#[cfg(unix)]
fn same_inode(_: &Path, ma: &std::fs::Metadata, _: &Path, mb: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    ma.dev() == mb.dev() && ma.ino() == mb.ino()
}

#[cfg(not(unix))]
fn same_inode(a: &Path, _: &std::fs::Metadata, b: &Path, _: &std::fs::Metadata) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// A path that does not exist, as its real folder (canonical, when it exists) and its name.
fn real_path(file: &Path) -> PathBuf {
    let dir = folder_of(file);
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    match file.file_name() {
        Some(name) => dir.join(name),
        None => file.to_path_buf(),
    }
}

/// Whether `path` is `-`, which a command line takes for standard output.
pub fn is_stdout(path: &Path) -> bool {
    path == Path::new("-")
}

/// An [`Error::Output`] about the output `name` at `path`.
fn refuse(name: &str, path: &Path, msg: impl Into<String>) -> Error {
    Error::Output {
        name: name.to_string(),
        path: path.to_path_buf(),
        msg: msg.into(),
    }
}

/// An error of this module about `path` as an [`Error::Output`] named `name`.
fn named(name: &str, path: &Path, e: Error) -> Error {
    match e {
        Error::Io { source, .. } => refuse(name, path, source.to_string()),
        e => e,
    }
}

/// Checks the outputs of one run before any work, each given as `(name, path)` with the
/// caller's name for it (a flag such as `--out`), and refuses with an [`Error::Output`]
/// naming both paths' names: more than one output `-` (standard output, which the caller
/// writes); an output that cannot be written (`check_output`: a missing folder, a folder
/// that takes no file, a directory); an output that is the same file ([`same_file`]: `x`,
/// `./x`, a symbolic or hard link to `x`) as one of the `inputs` or an earlier output, or an
/// existing file inside an input that is a folder. A character device may be both an input
/// and an output (a terminal, `/dev/null`).
pub fn check_outputs(outputs: &[(&str, &Path)], inputs: &[(&str, &Path)]) -> Result<()> {
    let to_stdout: Vec<&str> = outputs
        .iter()
        .filter(|(_, p)| is_stdout(p))
        .map(|(name, _)| *name)
        .collect();
    if to_stdout.len() > 1 {
        let others = to_stdout[..to_stdout.len() - 1].join(" -, ");
        return Err(refuse(
            to_stdout[to_stdout.len() - 1],
            Path::new("-"),
            format!("standard output takes one output of a run, and {others} - is one already"),
        ));
    }
    for (i, &(name, path)) in outputs.iter().enumerate() {
        if is_stdout(path) {
            continue;
        }
        check_output(path).map_err(|e| named(name, path, e))?;
        if is_char_device(path) {
            continue;
        }
        let earlier = outputs[..i]
            .iter()
            .map(|o| (o, "give each output a file of its own"));
        let sources = inputs
            .iter()
            .map(|o| (o, "writing it would destroy an input of the run"));
        for (&(other_name, other), why) in sources.chain(earlier) {
            if is_stdout(other) {
                continue;
            }
            if same_file(path, other) {
                let msg = format!("the same file as {other_name} {}: {why}", other.display());
                return Err(refuse(name, path, msg));
            }
            let inside = std::fs::metadata(path).is_ok_and(|m| m.is_file())
                && std::fs::metadata(other).is_ok_and(|m| m.is_dir())
                && match (std::fs::canonicalize(path), std::fs::canonicalize(other)) {
                    (Ok(p), Ok(d)) => p.starts_with(d),
                    _ => false,
                };
            if inside {
                let msg = format!("a file in {other_name} {}: {why}", other.display());
                return Err(refuse(name, path, msg));
            }
        }
    }
    Ok(())
}

fn is_char_device(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata(path).is_ok_and(|m| m.file_type().is_char_device())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// Checks a file that is rewritten during a run and read back (a checkpoint), named `name`
/// by the caller: a new path or a regular file (through symbolic links), never `-`
/// (standard output), a FIFO, a device or a socket ([`Error::Output`] otherwise).
pub fn check_rewritable(name: &str, path: &Path) -> Result<()> {
    let why = "a checkpoint is rewritten every step and read back to resume the run: give a \
               regular file";
    if is_stdout(path) {
        return Err(refuse(
            name,
            path,
            format!("standard output cannot be read back; {why}"),
        ));
    }
    let kind = output_kind(path).map_err(|e| named(name, path, e))?;
    if !kind.is_replaced() {
        return Err(refuse(name, path, format!("is {}; {why}", kind.describe())));
    }
    Ok(())
}

/// The directory of `path`, its file name and a fresh temporary path next to it (named as
/// [`TEMP_SUFFIX`] says) for a new version of it.
fn temp_target(path: &Path) -> Result<(PathBuf, String, PathBuf)> {
    let dir = folder_of(path);
    let file_name = path
        .file_name()
        .ok_or_else(|| {
            io_error(
                path,
                std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file path"),
            )
        })?
        .to_string_lossy()
        .to_string();
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(temp_name(&file_name, std::process::id(), n));
    Ok((dir, file_name, tmp))
}

/// Writes `bytes` to `path` as the module docs say: a new path or a regular file (through
/// any symbolic links) atomically, through a temporary file in the target's folder (named
/// as [`TEMP_SUFFIX`] says), flushed to disk (`fsync`) before it is renamed over the target,
/// and the folder flushed after the rename so that the new name survives a power loss; a
/// device, a FIFO or a socket in place. On an error the temporary file is removed and the
/// target keeps its old content (or stays absent). After a successful atomic write,
/// temporary files of the same target left by killed processes are removed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut w = AtomicWriter::create(path)?;
    w.write_all(bytes)?;
    w.commit()
}

/// Where the bytes of an [`AtomicWriter`] go.
#[derive(Debug)]
enum Sink {
    File(std::fs::File),
    #[cfg(unix)]
    Socket(std::os::unix::net::UnixStream),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::File(f) => f.write(buf),
            #[cfg(unix)]
            Sink::Socket(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::File(f) => f.flush(),
            #[cfg(unix)]
            Sink::Socket(s) => s.flush(),
        }
    }
}

/// How an [`AtomicWriter`] publishes what it wrote.
#[derive(Debug)]
enum Publish {
    /// Rename the temporary file `tmp` over `file` (the resolved target) in its folder.
    Rename {
        file: PathBuf,
        dir: PathBuf,
        file_name: String,
        tmp: PathBuf,
    },
    /// Nothing to publish: the target itself is being written.
    InPlace,
}

/// A file written piece by piece, as [`write_atomic`] writes a whole one: a new path or a
/// regular file (through any symbolic links) gets the pieces (buffered) in a temporary file
/// next to the target (named as [`TEMP_SUFFIX`] says), and [`AtomicWriter::commit`] flushes
/// it to disk and renames it over the target; until then the target keeps its old content
/// (or stays absent), and a writer dropped without a commit (an error on the way, a panic)
/// removes its temporary file. A device, a FIFO or a socket is written in place as the
/// pieces come (module docs). For outputs too large to build in memory first (`multikernel
/// generate` at millions of rows, predictions chunk by chunk).
#[derive(Debug)]
pub struct AtomicWriter {
    path: PathBuf,
    publish: Publish,
    /// `None` once committed (or after a failed commit, which removed the temporary file).
    out: Option<std::io::BufWriter<Sink>>,
}

impl AtomicWriter {
    /// Opens `path` for writing as its kind says (module docs): the temporary file of a new
    /// version of a new path or regular file (the target's folder must exist; a replaced
    /// file's permissions are given to the new version), or the device, FIFO (waiting for
    /// its reader) or socket itself. A directory is an error.
    pub fn create(path: &Path) -> Result<AtomicWriter> {
        let r = resolve(path)?;
        let io_err = |source| io_error(path, source);
        let (sink, publish) = if r.kind.is_replaced() {
            let (dir, file_name, tmp) = temp_target(&r.file)?;
            let f = std::fs::File::create(&tmp).map_err(io_err)?;
            if r.kind == OutputKind::Regular {
                if let Ok(meta) = std::fs::metadata(&r.file) {
                    let _ = f.set_permissions(meta.permissions());
                }
            }
            let publish = Publish::Rename {
                file: r.file,
                dir,
                file_name,
                tmp,
            };
            (Sink::File(f), publish)
        } else {
            (open_in_place(&r).map_err(io_err)?, Publish::InPlace)
        };
        Ok(AtomicWriter {
            path: path.to_path_buf(),
            publish,
            out: Some(std::io::BufWriter::with_capacity(1 << 20, sink)),
        })
    }

    /// Appends `bytes` to the new version; an error names the target.
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        let Some(out) = self.out.as_mut() else {
            return Err(self.io_err(std::io::Error::other("written after commit")));
        };
        out.write_all(bytes).map_err(|e| self.io_err(e))
    }

    /// Publishes what was written. An atomic write flushes the new version to disk
    /// (`fsync`), renames it over the target and flushes the folder, as [`write_atomic`]
    /// does, then removes the temporary files of the same target left by killed processes;
    /// on an error the temporary file is removed and the target keeps its old content. A
    /// target written in place gets the last buffered bytes.
    pub fn commit(mut self) -> Result<()> {
        let Some(out) = self.out.take() else {
            return Err(self.io_err(std::io::Error::other("committed twice")));
        };
        let sink = out.into_inner().map_err(|e| e.into_error());
        let Publish::Rename {
            file,
            dir,
            file_name,
            tmp,
        } = &self.publish
        else {
            return sink.map(drop).map_err(|e| self.io_err(e));
        };
        let result = (|| {
            let Sink::File(f) = sink? else {
                unreachable!("an atomic write goes to a temporary file");
            };
            f.sync_all()?;
            drop(f);
            std::fs::rename(tmp, file)
        })();
        if let Err(e) = result {
            let _ = std::fs::remove_file(tmp);
            return Err(self.io_err(e));
        }
        sync_dir(dir);
        remove_stale_temps(dir, file_name);
        Ok(())
    }

    fn io_err(&self, source: std::io::Error) -> Error {
        io_error(&self.path, source)
    }
}

impl Drop for AtomicWriter {
    /// An uncommitted atomic writer removes its temporary file (the target is untouched).
    fn drop(&mut self) {
        if let Some(out) = self.out.take() {
            drop(out);
            if let Publish::Rename { tmp, .. } = &self.publish {
                let _ = std::fs::remove_file(tmp);
            }
        }
    }
}

/// Opens a target that is written in place: a device or a FIFO for writing (never created,
/// never truncated), a socket by connecting to it, a file named through `/proc` for
/// appending.
fn open_in_place(r: &Resolved) -> std::io::Result<Sink> {
    #[cfg(unix)]
    if r.kind == OutputKind::Socket {
        return std::os::unix::net::UnixStream::connect(&r.file).map(Sink::Socket);
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true);
    if r.kind == OutputKind::Descriptor {
        opts.append(true);
    }
    opts.open(&r.file).map(Sink::File)
}

/// The temporary file name of write number `n` of process `pid` to the target `file_name`.
fn temp_name(file_name: &str, pid: u32, n: u64) -> String {
    format!(".{file_name}.{pid}-{n}{TEMP_SUFFIX}")
}

/// The process id in a temporary file name of the target `file_name`, `None` when `name` is
/// not one (strictly `.{file_name}.{digits}-{digits}{TEMP_SUFFIX}`, so the temporary files of
/// a target `a.b` are never taken for those of `a`).
fn temp_pid(name: &str, file_name: &str) -> Option<u32> {
    let rest = name
        .strip_prefix('.')?
        .strip_prefix(file_name)?
        .strip_prefix('.')?
        .strip_suffix(TEMP_SUFFIX)?;
    let (pid, n) = rest.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid) || !digits(n) {
        return None;
    }
    pid.parse().ok()
}

/// Flushes a directory's entries (the rename) to disk. Best effort, as SQLite does: some
/// file systems refuse to `fsync` a directory, and the rename has happened either way.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// Removes the temporary files of `file_name` in `dir` whose process no longer runs (left by
/// a write that was killed). Unix only (elsewhere there is no cheap test of a process id);
/// errors are ignored: this is housekeeping, the write itself has succeeded.
fn remove_stale_temps(dir: &Path, file_name: &str) {
    #[cfg(unix)]
    {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let me = std::process::id();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name.to_str().and_then(|n| temp_pid(n, file_name)) else {
                continue;
            };
            if pid != me && !process_exists(pid) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    #[cfg(not(unix))]
    let _ = (dir, file_name);
}

/// Whether a process with this id exists (signal 0 checks without sending anything; a
/// process of another user answers EPERM and counts as existing).
#[cfg(unix)]
fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    if pid <= 0 {
        return true;
    }
    // SAFETY: kill with signal 0 sends nothing; it only checks that the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Writes a CSV file (comma separated, fields with commas or quotes quoted) atomically.
pub fn write_csv(path: &Path, header: &[&str], rows: &[Vec<String>]) -> Result<()> {
    fn field(s: &str) -> String {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    }
    let mut out = String::new();
    out.push_str(
        &header
            .iter()
            .map(|h| field(h))
            .collect::<Vec<_>>()
            .join(","),
    );
    out.push('\n');
    for r in rows {
        out.push_str(&r.iter().map(|h| field(h)).collect::<Vec<_>>().join(","));
        out.push('\n');
    }
    write_atomic(path, out.as_bytes())
}

/// Creates a directory (and its parents) with a clear error.
pub fn create_dir(path: &Path) -> Result<()> {
    std::fs::create_dir_all(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests;

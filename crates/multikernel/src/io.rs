//! Writing result files safely: a file is either whole or absent, never half-written.
//!
//! [`write_atomic`] writes into a temporary file next to the target, flushes it to disk, and
//! renames it over the target, so a reader (or a later run) sees the old content or the new
//! content, never a mixture, even when the writing process is killed or the machine loses
//! power. A process killed between creating its temporary file and the rename leaves that
//! file behind; the temporary names are recognizable, `.{name}.{pid}-{n}.multikernel-tmp`
//! next to the target `name`, and the next successful write of the same target removes the
//! ones whose process is gone ([`TEMP_SUFFIX`]).

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

/// The directory of `path`, its file name and a fresh temporary path next to it (named as
/// [`TEMP_SUFFIX`] says) for a new version of it.
fn temp_target(path: &Path) -> Result<(PathBuf, String, PathBuf)> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = path
        .file_name()
        .ok_or_else(|| Error::Io {
            path: path.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file path"),
        })?
        .to_string_lossy()
        .to_string();
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(temp_name(&file_name, std::process::id(), n));
    Ok((dir, file_name, tmp))
}

/// Writes `bytes` to `path` atomically: through a temporary file in the same directory
/// (named as [`TEMP_SUFFIX`] says), flushed to disk (`fsync`) before it is renamed over
/// `path`, and the directory flushed after the rename so that the new name survives a power
/// loss. On an error the temporary file is removed and `path` keeps its old content (or
/// stays absent). After a successful write, temporary files of the same target left by
/// killed processes are removed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let io_err = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let (dir, file_name, tmp) = temp_target(path)?;
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        // Keep the permissions of the file being replaced (a rename would otherwise give it
        // the temporary file's defaults).
        if let Ok(meta) = std::fs::metadata(path) {
            let _ = f.set_permissions(meta.permissions());
        }
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(io_err(e));
    }
    sync_dir(&dir);
    remove_stale_temps(&dir, &file_name);
    Ok(())
}

/// A file written piece by piece and published atomically, as [`write_atomic`] writes a
/// whole one: the pieces go (buffered) into a temporary file next to the target (named as
/// [`TEMP_SUFFIX`] says), and [`AtomicWriter::commit`] flushes it to disk and renames it over
/// the target. Until then the target keeps its old content (or stays absent); a writer
/// dropped without a commit (an error on the way, a panic) removes its temporary file. For
/// outputs too large to build in memory first (`multikernel generate` at millions of rows).
#[derive(Debug)]
pub struct AtomicWriter {
    path: PathBuf,
    dir: PathBuf,
    file_name: String,
    tmp: PathBuf,
    /// `None` once committed (or after a failed commit, which removed the temporary file).
    out: Option<std::io::BufWriter<std::fs::File>>,
}

impl AtomicWriter {
    /// Creates the temporary file of a new version of `path` (the target's directory must
    /// exist); the target's permissions, when it exists, are given to the new version.
    pub fn create(path: &Path) -> Result<AtomicWriter> {
        let io_err = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let (dir, file_name, tmp) = temp_target(path)?;
        let f = std::fs::File::create(&tmp).map_err(io_err)?;
        if let Ok(meta) = std::fs::metadata(path) {
            let _ = f.set_permissions(meta.permissions());
        }
        Ok(AtomicWriter {
            path: path.to_path_buf(),
            dir,
            file_name,
            tmp,
            out: Some(std::io::BufWriter::with_capacity(1 << 20, f)),
        })
    }

    /// The target path (not the temporary file's).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `bytes` to the new version; an error names the target.
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        let Some(out) = self.out.as_mut() else {
            return Err(self.io_err(std::io::Error::other("written after commit")));
        };
        out.write_all(bytes).map_err(|e| self.io_err(e))
    }

    /// Flushes the new version to disk (`fsync`), renames it over the target and flushes the
    /// directory, as [`write_atomic`] does; then removes the temporary files of the same
    /// target left by killed processes. On an error the temporary file is removed and the
    /// target keeps its old content.
    pub fn commit(mut self) -> Result<()> {
        let Some(out) = self.out.take() else {
            return Err(self.io_err(std::io::Error::other("committed twice")));
        };
        let result = (|| {
            let f = out.into_inner().map_err(|e| e.into_error())?;
            f.sync_all()?;
            drop(f);
            std::fs::rename(&self.tmp, &self.path)
        })();
        if let Err(e) = result {
            let _ = std::fs::remove_file(&self.tmp);
            return Err(self.io_err(e));
        }
        sync_dir(&self.dir);
        remove_stale_temps(&self.dir, &self.file_name);
        Ok(())
    }

    fn io_err(&self, source: std::io::Error) -> Error {
        Error::Io {
            path: self.path.clone(),
            source,
        }
    }
}

impl Drop for AtomicWriter {
    /// An uncommitted writer removes its temporary file (the target is untouched).
    fn drop(&mut self) {
        if let Some(out) = self.out.take() {
            drop(out);
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
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
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_whole_file_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        write_atomic(&p, b"first version, long").unwrap();
        write_atomic(&p, b"second").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "second");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    fn names_in(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn temp_names_are_recognized_only_for_their_target() {
        let t = temp_name("m.model", 123, 4);
        assert_eq!(t, ".m.model.123-4.multikernel-tmp");
        assert_eq!(temp_pid(&t, "m.model"), Some(123));
        // Another target's, a prefix of the name, or a user's file are not ours.
        assert_eq!(temp_pid(&t, "m"), None);
        assert_eq!(temp_pid(&temp_name("m.model.x", 5, 0), "m.model"), None);
        assert_eq!(temp_pid(".m.model.tmp123", "m.model"), None);
        assert_eq!(temp_pid(".m.model.12-.multikernel-tmp", "m.model"), None);
        assert_eq!(temp_pid(".m.model.a-1.multikernel-tmp", "m.model"), None);
        assert_eq!(temp_pid("m.model", "m.model"), None);
    }

    /// A temporary file left by a killed process (its pid no longer runs) is removed by the
    /// next write of the same target; those of running processes and of other targets stay.
    #[cfg(unix)]
    #[test]
    fn stale_temp_files_of_dead_processes_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.model");
        // A process that has exited: its id is free (reused only after the id space wraps).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let stale = temp_name("m.model", dead, 0);
        let alive = temp_name("m.model", 1, 0);
        let other = temp_name("other.model", dead, 0);
        for n in [&stale, &alive, &other] {
            std::fs::write(dir.path().join(n), b"half").unwrap();
        }
        write_atomic(&p, b"new").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        let mut want = vec![alive, "m.model".to_string(), other];
        want.sort();
        assert_eq!(names_in(dir.path()), want);
    }

    /// A rename that fails (the target is a directory) leaves no temporary file.
    #[test]
    fn failed_write_removes_its_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("d");
        std::fs::create_dir(&p).unwrap();
        std::fs::write(p.join("inside"), b"x").unwrap();
        let e = write_atomic(&p, b"x").unwrap_err();
        assert!(matches!(e, Error::Io { .. }), "{e}");
        assert_eq!(names_in(dir.path()), vec!["d".to_string()]);
    }

    /// Replacing a file keeps its permissions.
    #[cfg(unix)]
    #[test]
    fn replacing_keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.model");
        write_atomic(&p, b"old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&p, b"new").unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn write_into_missing_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("no/such/dir/a.txt");
        let e = write_atomic(&p, b"x").unwrap_err();
        assert!(e.to_string().contains("a.txt"));
    }

    /// A streamed file appears whole at commit; before it, only the temporary file exists;
    /// a writer dropped without a commit leaves the old content and no temporary file.
    #[test]
    fn atomic_writer_publishes_at_commit_only() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.csv");
        write_atomic(&p, b"old").unwrap();
        let mut w = AtomicWriter::create(&p).unwrap();
        w.write_all(b"new ").unwrap();
        w.write_all(b"content").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        assert_eq!(names_in(dir.path()).len(), 2);
        w.commit().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new content");
        assert_eq!(names_in(dir.path()), vec!["big.csv".to_string()]);
        let mut w = AtomicWriter::create(&p).unwrap();
        w.write_all(b"abandoned").unwrap();
        drop(w);
        assert_eq!(std::fs::read(&p).unwrap(), b"new content");
        assert_eq!(names_in(dir.path()), vec!["big.csv".to_string()]);
        // A missing directory is an error naming the target, not a panic.
        let e = AtomicWriter::create(&dir.path().join("no/such/x.csv")).unwrap_err();
        assert!(e.to_string().contains("x.csv"), "{e}");
    }

    #[test]
    fn csv_quotes_fields() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.csv");
        write_csv(&p, &["a", "b"], &[vec!["1,2".into(), "x\"y".into()]]).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "a,b\n\"1,2\",\"x\"\"y\"\n"
        );
    }
}

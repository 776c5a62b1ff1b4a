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

/// Two paths name one file through `./`, `..`, symbolic and hard links; a path that does
/// not exist yet is compared by its real folder and name.
#[cfg(unix)]
#[test]
fn same_file_sees_through_spellings_and_links() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("sub")).unwrap();
    std::fs::write(d.join("x"), b"x").unwrap();
    std::fs::write(d.join("y"), b"x").unwrap();
    std::os::unix::fs::symlink("x", d.join("lx")).unwrap();
    std::fs::hard_link(d.join("x"), d.join("hx")).unwrap();
    std::os::unix::fs::symlink("new", d.join("lnew")).unwrap();
    let x = d.join("x");
    for same in ["sub/../x", "./x", "lx", "hx"] {
        assert!(same_file(&x, &d.join(same)), "{same}");
    }
    assert!(!same_file(&x, &d.join("y")));
    assert!(!same_file(&x, &d.join("new")));
    assert!(same_file(&d.join("new"), &d.join("sub/../new")));
    assert!(same_file(&d.join("new"), &d.join("lnew")));
    assert!(!same_file(&d.join("new"), &d.join("other")));
}

/// The probe before a run: a missing folder, a folder under a regular file, a directory
/// and a folder nobody can create files in (`/proc`, even for root) are errors naming
/// the path; a writable folder passes and keeps no probe file.
#[test]
fn check_output_refuses_unwritable_places() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("file"), b"x").unwrap();
    for (bad, says) in [
        ("no/such/m.model", "does not exist"),
        ("file/m.model", "not a folder"),
        (".", "is a directory"),
    ] {
        let e = check_output(&d.join(bad)).unwrap_err().to_string();
        assert!(
            e.contains(bad.trim_start_matches('.')) && e.contains(says),
            "{bad}: {e}"
        );
    }
    assert_eq!(check_output(&d.join("m.model")).unwrap(), OutputKind::New);
    assert_eq!(check_output(&d.join("file")).unwrap(), OutputKind::Regular);
    assert_eq!(names_in(d), vec!["file".to_string()]);
    #[cfg(target_os = "linux")]
    if Path::new("/proc/self").exists() {
        let e = check_output(Path::new("/proc/m.model")).unwrap_err();
        assert!(e.to_string().contains("cannot create a file"), "{e}");
        assert_eq!(
            output_kind(Path::new("/dev/null")).unwrap(),
            OutputKind::CharDevice
        );
        if Path::new("/dev/stdout").exists() {
            assert_eq!(
                output_kind(Path::new("/dev/stdout")).unwrap(),
                OutputKind::Descriptor
            );
        }
    }
}

/// The checks of a run's outputs: an input (through any spelling), a file in an input
/// folder or an earlier output refused with both names; `-` once; a character device may
/// be read and written; a checkpoint must be a regular file or a new path.
#[cfg(unix)]
#[test]
fn outputs_that_are_inputs_or_other_outputs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("data")).unwrap();
    std::fs::write(d.join("data/x.csv"), b"a,b").unwrap();
    std::os::unix::fs::symlink("data/x.csv", d.join("lx")).unwrap();
    let inputs = [("--data", d.join("data/x.csv")), ("--dir", d.join("data"))];
    let inputs: Vec<(&str, &Path)> = inputs.iter().map(|(n, p)| (*n, p.as_path())).collect();
    let check = |outs: &[(&str, PathBuf)]| {
        let outs: Vec<(&str, &Path)> = outs.iter().map(|(n, p)| (*n, p.as_path())).collect();
        check_outputs(&outs, &inputs).map_err(|e| e.to_string())
    };
    let out = |p: &str| ("--out", d.join(p));
    for (bad, says) in [
        ("data/x.csv", "the same file as --data"),
        ("data/../lx", "the same file as --data"),
        ("data/x.csv/m", "not a folder"),
    ] {
        let e = check(&[out(bad)]).unwrap_err();
        assert!(e.starts_with("--out ") && e.contains(says), "{bad}: {e}");
    }
    std::fs::write(d.join("data/old.json"), b"{}").unwrap();
    let e = check(&[out("data/old.json")]).unwrap_err();
    assert!(e.contains("a file in --dir"), "{e}");
    // A new file in an input folder destroys nothing.
    check(&[out("data/new.json"), out("m.model")]).unwrap();
    let e = check(&[out("m.model"), ("--run-json", d.join("./m.model"))]).unwrap_err();
    assert!(
        e.contains("--run-json") && e.contains("the same file as --out"),
        "{e}"
    );
    let e = check(&[("--out", "-".into()), ("--run-json", "-".into())]).unwrap_err();
    assert!(e.contains("--run-json -") && e.contains("--out -"), "{e}");
    check(&[out("m.model"), ("--run-json", "-".into())]).unwrap();
    assert_eq!(names_in(d), vec!["data".to_string(), "lx".to_string()]);
    let null = Path::new("/dev/null");
    if null.exists() {
        check_outputs(&[("--out", null)], &[("--data", null)]).unwrap();
        let e = check_rewritable("--checkpoint", null)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--checkpoint /dev/null: is a character device"),
            "{e}"
        );
    }
    let e = check_rewritable("--checkpoint", Path::new("-")).unwrap_err();
    assert!(e.to_string().contains("regular file"), "{e}");
    check_rewritable("--checkpoint", &d.join("lx")).unwrap();
    check_rewritable("--checkpoint", &d.join("new.ck")).unwrap();
}

/// The kinds of target the property test writes.
#[cfg(unix)]
#[derive(Debug, Clone, Copy, PartialEq)]
enum Target {
    New,
    Regular,
    /// A relative link to a regular file in the same folder.
    LinkToRegular,
    /// An absolute link to a regular file in another folder.
    LinkElsewhere,
    /// A link to a link to a regular file in another folder.
    LinkChain,
    /// A link to a file that does not exist yet, in another folder.
    Dangling,
    Fifo,
    LinkToFifo,
    /// A character device like /dev/null (mknod c 1 3 as root, else a link to /dev/null).
    NullDevice,
    Socket,
    Directory,
    LinkLoop,
}

#[cfg(unix)]
const TARGETS: [Target; 12] = [
    Target::New,
    Target::Regular,
    Target::LinkToRegular,
    Target::LinkElsewhere,
    Target::LinkChain,
    Target::Dangling,
    Target::Fifo,
    Target::LinkToFifo,
    Target::NullDevice,
    Target::Socket,
    Target::Directory,
    Target::LinkLoop,
];

#[cfg(unix)]
fn c_path(path: &Path) -> std::ffi::CString {
    std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap()
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let c = c_path(path);
    // SAFETY: `c` is a valid NUL-terminated path.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(rc, 0, "mkfifo {}", path.display());
}

/// A character device that discards what it gets: /dev/null's numbers (1, 3) made with
/// mknod when the process may (root), else a symbolic link to /dev/null itself.
#[cfg(unix)]
fn null_device(path: &Path) {
    let c = c_path(path);
    // SAFETY: `c` is a valid NUL-terminated path; mknod only creates that node.
    let made = unsafe {
        libc::geteuid() == 0
            && libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) == 0
    };
    if !made {
        std::os::unix::fs::symlink("/dev/null", path).unwrap();
    }
}

/// Every entry under `root`, its kind (a link with its text), sorted.
#[cfg(unix)]
fn tree(root: &Path) -> Vec<(PathBuf, String)> {
    use std::os::unix::fs::FileTypeExt;
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let ft = std::fs::symlink_metadata(&p).unwrap().file_type();
            let kind = if ft.is_symlink() {
                format!("link to {}", std::fs::read_link(&p).unwrap().display())
            } else if ft.is_dir() {
                stack.push(p.clone());
                "dir".into()
            } else if ft.is_file() {
                "file".into()
            } else if ft.is_fifo() {
                "fifo".into()
            } else if ft.is_char_device() {
                "char device".into()
            } else if ft.is_socket() {
                "socket".into()
            } else {
                "other".into()
            };
            out.push((p.strip_prefix(root).unwrap().to_path_buf(), kind));
        }
    }
    out.sort();
    out
}

/// Writes `bytes` to a target of kind `t` (whole with `write_atomic` when `piece` is 0,
/// else streamed in pieces of `piece` bytes), then checks that no entry changed kind
/// (only a new path or a dangling link's file appears, as a regular file), that no
/// temporary file is left anywhere, and that the bytes are where they belong.
#[cfg(unix)]
fn write_to_target(t: Target, bytes: &[u8], piece: usize, old: &[u8]) {
    use std::os::unix::fs::symlink;
    let root = tempfile::tempdir().unwrap();
    let (a, b) = (root.path().join("a"), root.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let p = a.join("out");
    let mut fifo = None;
    let mut socket = None;
    match t {
        Target::New => {}
        Target::Regular => std::fs::write(&p, old).unwrap(),
        Target::LinkToRegular => {
            std::fs::write(a.join("real"), old).unwrap();
            symlink("real", &p).unwrap();
        }
        Target::LinkElsewhere => {
            std::fs::write(b.join("real"), old).unwrap();
            symlink(b.join("real"), &p).unwrap();
        }
        Target::LinkChain => {
            std::fs::write(b.join("real"), old).unwrap();
            symlink("../b/real", a.join("l2")).unwrap();
            symlink("l2", &p).unwrap();
        }
        Target::Dangling => symlink("../b/later", &p).unwrap(),
        Target::Fifo => {
            mkfifo(&p);
            fifo = Some(p.clone());
        }
        Target::LinkToFifo => {
            mkfifo(&b.join("fifo"));
            symlink(b.join("fifo"), &p).unwrap();
            fifo = Some(b.join("fifo"));
        }
        Target::NullDevice => null_device(&p),
        Target::Socket => socket = Some(std::os::unix::net::UnixListener::bind(&p).unwrap()),
        Target::Directory => {
            std::fs::create_dir(&p).unwrap();
            std::fs::write(p.join("inside"), old).unwrap();
        }
        Target::LinkLoop => {
            symlink("loop", &p).unwrap();
            symlink("out", a.join("loop")).unwrap();
        }
    }
    let before = tree(root.path());
    // The reader of a FIFO or a socket, in a thread of its own (the writer waits for it).
    let reader = if let Some(f) = fifo.clone() {
        Some(std::thread::spawn(move || std::fs::read(f).unwrap()))
    } else {
        socket.map(|l| {
            std::thread::spawn(move || {
                let mut got = Vec::new();
                std::io::Read::read_to_end(&mut l.accept().unwrap().0, &mut got).unwrap();
                got
            })
        })
    };
    let result = if piece == 0 {
        write_atomic(&p, bytes)
    } else {
        (|| {
            let mut w = AtomicWriter::create(&p)?;
            for c in bytes.chunks(piece) {
                w.write_all(c)?;
            }
            w.commit()
        })()
    };
    if result.is_err() {
        // Free a reader still waiting for a writer, so that the failure is reported.
        if let Some(f) = &fifo {
            use std::os::unix::fs::OpenOptionsExt;
            let mut o = std::fs::OpenOptions::new();
            o.write(true).custom_flags(libc::O_NONBLOCK);
            while o.open(f).is_err() {
                std::thread::yield_now();
            }
        } else if t == Target::Socket {
            let _ = std::os::unix::net::UnixStream::connect(&p);
        }
    }
    let got = reader.map(|r| r.join().unwrap());
    let mut want = before.clone();
    match t {
        Target::New => want.push(("a/out".into(), "file".into())),
        Target::Dangling => want.push(("b/later".into(), "file".into())),
        _ => {}
    }
    want.sort();
    assert_eq!(
        tree(root.path()),
        want,
        "{t:?}: the kinds changed or a temp is left"
    );
    match t {
        Target::Directory | Target::LinkLoop => {
            let e = result.expect_err("a directory or a loop is not written");
            assert!(e.to_string().contains("out"), "{t:?}: {e}");
            if t == Target::Directory {
                assert_eq!(std::fs::read(p.join("inside")).unwrap(), old);
            }
        }
        Target::Fifo | Target::LinkToFifo | Target::Socket => {
            result.unwrap();
            assert_eq!(got.unwrap(), bytes, "{t:?}: the reader's bytes");
        }
        Target::NullDevice => result.unwrap(),
        _ => {
            result.unwrap();
            assert_eq!(std::fs::read(&p).unwrap(), bytes, "{t:?}: the content");
        }
    }
    let kind = output_kind(&p);
    let expected = match t {
        Target::Fifo | Target::LinkToFifo => Some(OutputKind::Fifo),
        Target::Socket => Some(OutputKind::Socket),
        Target::NullDevice => Some(OutputKind::CharDevice),
        Target::Directory | Target::LinkLoop => None,
        _ => Some(OutputKind::Regular),
    };
    assert_eq!(kind.ok(), expected, "{t:?}");
}

#[cfg(unix)]
proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(10))]
    /// Every kind of target, with any bytes, whole or streamed in pieces: what was there
    /// is still there (a link stays a link, a FIFO a FIFO, a device a device), the bytes
    /// reach the file, the FIFO's or the socket's reader, no temporary file is left, and
    /// a directory or a loop of links is an error that changes nothing.
    #[test]
    fn every_kind_of_target_keeps_its_kind(
        bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..3000),
        piece in 0usize..700,
        old in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..100),
    ) {
        for t in TARGETS {
            write_to_target(t, &bytes, piece, &old);
        }
    }
}

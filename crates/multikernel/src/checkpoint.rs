//! Checkpoint files: a learner's state at a step boundary, so that a killed run can go on
//! from there to the same model, bit for bit, as the run that was never stopped.
//!
//! A file is one line of JSON (the header), a newline, then the learner's state (JSON
//! written by the learner, floats printed so that they read back to the same bits):
//!
//! ```text
//! {"format":"multikernel-checkpoint","version":1,"crate_version":"0.1.0","family":"online",
//!  "step":3,"data":"<sha-256>","settings":"<sha-256>","state_bytes":N,"state_sha256":"..."}
//! <state>
//! ```
//!
//! `data` fingerprints the bytes the learner trains on (the files' content), `settings`
//! everything else that changes the model (the resolved learner settings, seed included);
//! both are computed by the caller with [`Fingerprint`]. A file is written atomically
//! ([`crate::io::write_atomic`]), so a kill while saving leaves the previous checkpoint.
//! Reading checks the format, the version, the version of multikernel that wrote it (only
//! this one's resumes), the state's length and hash (a truncated or altered file is
//! refused) and, against the run that resumes, the learner family and the two
//! fingerprints, naming the one that differs. The header's `step` is not covered by the
//! state's hash: the learner that restores the state tells the store the step the state is
//! after ([`Checkpoints::resumed_at`]), and a header that says another step is refused.
//!
//! [`FileCheckpoints`] is the store a run's observer carries
//! ([`crate::run::Checkpointed`]); the learners see it as [`crate::run::Checkpoints`].

mod finite;

use crate::error::{Error, Result};
use crate::run::Checkpoints;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The format tag every checkpoint file carries.
pub(crate) const FORMAT: &str = "multikernel-checkpoint";
/// The version this build writes and reads.
pub(crate) const VERSION: u32 = 1;

/// The header line of a checkpoint file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub version: u32,
    pub crate_version: String,
    /// The learner whose state follows (`online`, `parser`, `tagger`, `stream`, `mtl`).
    pub family: String,
    /// Steps done (epochs, cuts).
    pub step: u64,
    /// SHA-256 of the training data (hex).
    pub data: String,
    /// SHA-256 of the settings (hex).
    pub settings: String,
    pub state_bytes: usize,
    pub state_sha256: String,
}

/// A checkpoint read back: its header and the learner's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    pub header: Header,
    pub state: Vec<u8>,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A SHA-256 over labelled parts (each length-prefixed, so that parts cannot run into each
/// other): file contents for the data, texts for the settings.
#[derive(Debug, Clone, Default)]
pub struct Fingerprint(Sha256);

impl Fingerprint {
    pub fn new() -> Fingerprint {
        Fingerprint::default()
    }

    /// Adds a labelled part.
    pub fn bytes(&mut self, label: &str, bytes: &[u8]) -> &mut Self {
        for part in [label.as_bytes(), bytes] {
            self.0.update((part.len() as u64).to_le_bytes());
            self.0.update(part);
        }
        self
    }

    /// Adds the content of the file at `path` (streamed: a file larger than memory is fine).
    pub fn file(&mut self, label: &str, path: &Path) -> Result<&mut Self> {
        use std::io::Read;
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut f = std::fs::File::open(path).map_err(io)?;
        let len = f.metadata().map_err(io)?.len();
        self.0.update((label.len() as u64).to_le_bytes());
        self.0.update(label.as_bytes());
        self.0.update(len.to_le_bytes());
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let k = f.read(&mut buf).map_err(io)?;
            if k == 0 {
                break;
            }
            self.0.update(&buf[..k]);
        }
        Ok(self)
    }

    /// The hash, hex.
    pub fn finish(&self) -> String {
        hex(&self.0.clone().finalize())
    }
}

/// The bytes of a checkpoint file for `state`.
pub(crate) fn to_bytes(
    family: &str,
    step: u64,
    data: &str,
    settings: &str,
    state: &[u8],
) -> Vec<u8> {
    let header = Header {
        format: FORMAT.into(),
        version: VERSION,
        crate_version: env!("CARGO_PKG_VERSION").into(),
        family: family.into(),
        step,
        data: data.into(),
        settings: settings.into(),
        state_bytes: state.len(),
        state_sha256: hex(&Sha256::digest(state)),
    };
    let mut out = serde_json::to_vec(&header).expect("a header serializes");
    out.push(b'\n');
    out.extend_from_slice(state);
    out
}

/// Reads a checkpoint from its bytes; `path` names them in messages. Checks the format,
/// the version, the version of multikernel that wrote it (this one's) and the state's length
/// and hash; never panics.
pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Checkpoint> {
    let err = |line: usize, msg: String| Error::Parse {
        path: path.to_path_buf(),
        line,
        msg,
    };
    let nl = bytes.iter().position(|&b| b == b'\n').ok_or_else(|| {
        err(
            1,
            "not a multikernel checkpoint (expected a header line, then the state)".to_string(),
        )
    })?;
    let value: serde_json::Value = serde_json::from_slice(&bytes[..nl])
        .map_err(|e| err(1, format!("not a multikernel checkpoint (header: {e})")))?;
    if value.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
        return Err(err(
            1,
            format!("not a multikernel checkpoint (no \"format\": \"{FORMAT}\")"),
        ));
    }
    match value.get("version").and_then(|v| v.as_u64()) {
        Some(v) if v == u64::from(VERSION) => {}
        v => {
            return Err(err(
                1,
                format!(
                    "checkpoint version {} is not supported by this build (it reads version \
                     {VERSION}; written by multikernel {})",
                    v.map_or("(none)".into(), |v| v.to_string()),
                    value
                        .get("crate_version")
                        .and_then(|c| c.as_str())
                        .unwrap_or("?")
                ),
            ))
        }
    }
    let header: Header = serde_json::from_value(value)
        .map_err(|e| err(1, format!("malformed checkpoint header: {e}")))?;
    let ours = env!("CARGO_PKG_VERSION");
    if header.crate_version != ours {
        return Err(err(
            1,
            format!(
                "this checkpoint was written by multikernel {}, this is multikernel {ours}: a \
                 checkpoint resumes only in the version that wrote it (a learner's state may \
                 differ between versions); resume with that version, or train without --resume",
                header.crate_version
            ),
        ));
    }
    let state = &bytes[nl + 1..];
    if state.len() != header.state_bytes {
        return Err(err(
            2,
            format!(
                "corrupt checkpoint: the state has {} bytes, the header says {} (a truncated \
                 or altered file)",
                state.len(),
                header.state_bytes
            ),
        ));
    }
    if hex(&Sha256::digest(state)) != header.state_sha256 {
        return Err(err(
            2,
            "corrupt checkpoint: the state's SHA-256 is not the header's (an altered file)".into(),
        ));
    }
    Ok(Checkpoint {
        header,
        state: state.to_vec(),
    })
}

/// Reads the checkpoint file at `path` ([`from_bytes`]).
pub(crate) fn read(path: &Path) -> Result<Checkpoint> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    from_bytes(&bytes, path)
}

/// The checkpoints of one run: saved to `path` after every `every` steps, fingerprinted
/// with `data` and `settings`; optionally resuming from a checkpoint read earlier (whose
/// fingerprints [`FileCheckpoints::resuming`] checked).
#[derive(Debug)]
pub struct FileCheckpoints {
    path: Option<PathBuf>,
    every: u64,
    data: String,
    settings: String,
    resume: Option<(PathBuf, Checkpoint)>,
    /// Called with the step once the learner restored the state and its step was checked.
    announce: Option<fn(u64)>,
    claimed: Mutex<Option<String>>,
    saved: Mutex<u64>,
}

impl FileCheckpoints {
    /// Saves to `path` (none: never saves) after every `every` steps (at least 1).
    pub fn new(path: Option<PathBuf>, every: u64, data: String, settings: String) -> Self {
        FileCheckpoints {
            path,
            every: every.max(1),
            data,
            settings,
            resume: None,
            announce: None,
            claimed: Mutex::new(None),
            saved: Mutex::new(0),
        }
    }

    /// Resumes from the checkpoint file at `path`: fails when it cannot be read, is
    /// corrupt, or was written for other data or other settings (the message says which).
    pub fn resuming(mut self, path: &Path) -> Result<Self> {
        let ck = read(path)?;
        let short = |h: &str| h.get(..12).unwrap_or(h).to_string();
        let refuse = |what: &str, theirs: &str, ours: &str| {
            Err(Error::data(format!(
                "{}: this checkpoint was written for other {what} (SHA-256 {}..., this run's \
                 is {}...): resume with the same {what}, or train without --resume",
                path.display(),
                short(theirs),
                short(ours),
            )))
        };
        if ck.header.data != self.data {
            return refuse("data", &ck.header.data, &self.data);
        }
        if ck.header.settings != self.settings {
            return refuse("settings", &ck.header.settings, &self.settings);
        }
        self.resume = Some((path.to_path_buf(), ck));
        Ok(self)
    }

    /// Calls `announce` with the step resumed after, once the learner restored the saved
    /// state and the step was checked ([`Checkpoints::resumed_at`]), before it trains on.
    pub fn on_resume(mut self, announce: fn(u64)) -> Self {
        self.announce = Some(announce);
        self
    }

    /// The learner that claimed the store, if any did.
    pub fn claimed(&self) -> Option<String> {
        self.claimed.lock().expect("not poisoned").clone()
    }

    /// Checkpoints saved by this run.
    pub fn saved(&self) -> u64 {
        *self.saved.lock().expect("not poisoned")
    }
}

impl Checkpoints for FileCheckpoints {
    fn resume(&self, family: &str) -> Result<Option<Vec<u8>>> {
        {
            let mut claimed = self.claimed.lock().expect("not poisoned");
            if let Some(c) = claimed.as_ref() {
                return Err(Error::unsupported(format!(
                    "checkpoints: the {c} learner already keeps this run's checkpoints, and \
                     a second learner ({family}) runs inside the same fit; checkpoints apply \
                     to one learner run"
                )));
            }
            *claimed = Some(family.to_string());
        }
        match &self.resume {
            None => Ok(None),
            Some((path, ck)) if ck.header.family != family => Err(Error::data(format!(
                "{}: this checkpoint holds the state of the {} learner, this run trains the \
                 {family} learner",
                path.display(),
                ck.header.family
            ))),
            Some((_, ck)) => Ok(Some(ck.state.clone())),
        }
    }

    fn resumed_at(&self, step: u64) -> Result<()> {
        let Some((path, ck)) = &self.resume else {
            return Ok(());
        };
        if ck.header.step != step {
            return Err(Error::Parse {
                path: path.clone(),
                line: 1,
                msg: format!(
                    "the header says step {}, but the saved state is after step {step} (the \
                     header is not covered by the state's SHA-256: an edited file); resume \
                     from the checkpoint as it was written, or train without --resume",
                    ck.header.step
                ),
            });
        }
        if let Some(announce) = self.announce {
            announce(step);
        }
        Ok(())
    }

    fn due(&self, step: u64) -> bool {
        self.path.is_some() && step.is_multiple_of(self.every)
    }

    fn save(&self, family: &str, step: u64, state: &[u8]) -> Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let bytes = to_bytes(family, step, &self.data, &self.settings, state);
        crate::io::write_atomic(path, &bytes)?;
        *self.saved.lock().expect("not poisoned") += 1;
        Ok(())
    }
}

/// A learner's state as checkpoint bytes (JSON; floats read back to the same bits). A
/// non-finite number is refused, naming where it is (JSON would hold `null`, which no
/// resume can read).
pub(crate) fn encode<T: Serialize>(state: &T) -> Result<Vec<u8>> {
    if let Some((path, v)) = finite::first_non_finite(state) {
        return Err(Error::Numerical(format!(
            "cannot save a checkpoint: the learner's state holds {v} at {path} (a checkpoint \
             stores finite numbers only)"
        )));
    }
    serde_json::to_vec(state).map_err(|e| Error::data(format!("cannot save a checkpoint: {e}")))
}

/// A learner's state from checkpoint bytes. A `null` where a number belongs (a non-finite
/// number saved before checkpoints refused them) is reported with the field it is in.
pub(crate) fn decode<T: serde::de::DeserializeOwned>(family: &str, bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes).map_err(|e| {
        let field = e
            .to_string()
            .starts_with("invalid type: null")
            .then(|| field_before(bytes, e.line(), e.column()))
            .flatten();
        match field {
            Some(f) => Error::data(format!(
                "the checkpoint's state has null in field `{f}` where a number belongs (a NaN \
                 or infinity saved by an older version): it cannot be resumed ({e})"
            )),
            None => Error::data(format!(
                "the checkpoint's state is not a state of the {family} learner: {e}"
            )),
        }
    })
}

/// The name of the last JSON key before `line`:`column` (1-based) of `bytes`.
fn field_before(bytes: &[u8], line: usize, column: usize) -> Option<String> {
    let start: usize = bytes
        .split_inclusive(|&b| b == b'\n')
        .take(line.saturating_sub(1))
        .map(<[u8]>::len)
        .sum();
    let text = std::str::from_utf8(&bytes[..(start + column).min(bytes.len())]).ok()?;
    let colon = text.rfind("\":")?;
    let key_start = text[..colon].rfind('"')? + 1;
    Some(text[key_start..colon].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_reads_back_and_any_altered_byte_is_refused() {
        let bytes = to_bytes("online", 3, "aa", "bb", br#"{"x":[1.5,2]}"#);
        let path = Path::new("ck");
        let ck = from_bytes(&bytes, path).unwrap();
        assert_eq!(ck.header.family, "online");
        assert_eq!(ck.header.step, 3);
        assert_eq!(ck.state, br#"{"x":[1.5,2]}"#);
        // Every truncation and every change of a byte of the state (or of the newline
        // after the header) is refused; a changed header byte never panics.
        let nl = bytes.iter().position(|&b| b == b'\n').unwrap();
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x01;
            let read = from_bytes(&b, path);
            assert!(
                i < nl || read.is_err(),
                "byte {i} altered, read back {read:?}"
            );
            assert!(from_bytes(&bytes[..i], path).is_err(), "truncated at {i}");
        }
    }

    #[test]
    fn other_versions_and_formats_are_refused_by_name() {
        let bytes = to_bytes("mtl", 1, "aa", "bb", b"{}");
        let text = String::from_utf8(bytes).unwrap();
        let v2 = text.replace("\"version\":1", "\"version\":2");
        let e = from_bytes(v2.as_bytes(), Path::new("f")).unwrap_err();
        assert!(e.to_string().contains("version 2 is not supported"), "{e}");
        // Another crate version: refused at line 1, naming both versions.
        let other = text.replace(
            &format!("\"crate_version\":\"{}\"", env!("CARGO_PKG_VERSION")),
            "\"crate_version\":\"9.9.9\"",
        );
        assert_ne!(other, text);
        let e = from_bytes(other.as_bytes(), Path::new("f")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("f:1: this checkpoint was written by multikernel 9.9.9")
                && e.to_string().contains(env!("CARGO_PKG_VERSION")),
            "{e}"
        );
        let e = from_bytes(b"{\"format\":\"multikernel-model\"}\n", Path::new("f")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("f:1: not a multikernel checkpoint"),
            "{e}"
        );
    }

    /// The header's step is checked against the step the learner restores: an edited step
    /// is refused (naming both) and never announced; the right one is announced once.
    #[test]
    fn a_resumed_step_is_checked_against_the_state() {
        use std::sync::atomic::{AtomicU64, Ordering};
        static ANNOUNCED: AtomicU64 = AtomicU64::new(0);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ck");
        let bytes = to_bytes("online", 3, "aa", "bb", b"{}");
        std::fs::write(&path, &bytes).unwrap();
        let store = |p: &Path| {
            FileCheckpoints::new(None, 1, "aa".into(), "bb".into())
                .on_resume(|s| ANNOUNCED.store(s, Ordering::SeqCst))
                .resuming(p)
                .unwrap()
        };
        let ok = store(&path);
        assert_eq!(ok.resume("online").unwrap().as_deref(), Some(&b"{}"[..]));
        assert_eq!(ANNOUNCED.load(Ordering::SeqCst), 0);
        let e = ok.resumed_at(2).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "{}:1: the header says step 3, but the saved state is after step 2",
                path.display()
            )),
            "{e}"
        );
        assert_eq!(ANNOUNCED.load(Ordering::SeqCst), 0);
        ok.resumed_at(3).unwrap();
        assert_eq!(ANNOUNCED.load(Ordering::SeqCst), 3);
        // A store that resumes nothing accepts any step.
        let fresh = FileCheckpoints::new(None, 1, "aa".into(), "bb".into());
        assert!(fresh.resumed_at(7).is_ok());
    }

    #[test]
    fn fingerprints_separate_their_parts() {
        let a = Fingerprint::new()
            .bytes("x", b"ab")
            .bytes("y", b"c")
            .finish();
        let b = Fingerprint::new()
            .bytes("x", b"a")
            .bytes("y", b"bc")
            .finish();
        assert_ne!(a, b);
        assert_eq!(
            a,
            Fingerprint::new()
                .bytes("x", b"ab")
                .bytes("y", b"c")
                .finish()
        );
        assert_eq!(a.len(), 64);
    }
}

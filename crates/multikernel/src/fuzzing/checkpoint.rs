//! Checkpoint files from bytes.

use crate::checkpoint::{decode, from_bytes, to_bytes};
use crate::solver::adagrad::AdagradSnapshot;
use crate::solver::cutting_plane::checkpoint::LoopState;
use crate::solver::online::engine::EngineSnapshot;
use std::path::Path;

/// Checkpoint bytes: a file that reads writes back (with its own header's fields) to bytes
/// that read to the same header and state; its state, read as the online engine's or
/// AdaGrad's snapshot, gives a generator (or an error), never a panic; read as the
/// cutting plane's state, it is checked against its own number of parameters (at most
/// 2^16) without a panic.
pub fn checkpoint_bytes(data: &[u8]) {
    let path = Path::new("fuzz.ckpt");
    let Ok(ck) = from_bytes(data, path) else {
        return;
    };
    let h = &ck.header;
    let again = to_bytes(&h.family, h.step, &h.data, &h.settings, &ck.state);
    let back = from_bytes(&again, path).expect("a checkpoint's own bytes read");
    assert_eq!(back.state, ck.state);
    assert_eq!(
        (&back.header.family, back.header.step, &back.header.data),
        (&h.family, h.step, &h.data)
    );
    assert_eq!(back.header.settings, h.settings);
    if let Ok(s) = decode::<EngineSnapshot>("online", &ck.state) {
        let _ = s.rng.rng();
    }
    if let Ok(s) = decode::<AdagradSnapshot>("tagger", &ck.state) {
        let _ = s.rng.rng();
    }
    if let Ok(s) = decode::<LoopState>("mtl", &ck.state) {
        if s.dim <= 1 << 16 {
            let _ = s.check(s.dim, 1000);
        }
    }
}

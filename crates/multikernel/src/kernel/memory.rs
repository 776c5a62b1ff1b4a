//! A memory guard: every Gram computation estimates its bytes before allocating and refuses
//! clearly when the estimate exceeds a user-set limit (ARCHITECTURE.md, "Performance notes").

use crate::error::{Error, Result};

const GIB: f64 = (1u64 << 30) as f64;

/// Upper bound on the bytes one allocation request (a Gram matrix, a scratch block) may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryLimit {
    pub bytes: usize,
}

impl Default for MemoryLimit {
    /// 8 GiB.
    fn default() -> Self {
        MemoryLimit::gib(8.0)
    }
}

impl MemoryLimit {
    /// A limit of `g` GiB (2^30 bytes). Negative or NaN gives 0; `f64::INFINITY` gives no limit.
    pub fn gib(g: f64) -> Self {
        let bytes = if g.is_nan() || g <= 0.0 {
            0
        } else {
            // `as` saturates at usize::MAX for huge values and infinity.
            (g * GIB) as usize
        };
        MemoryLimit { bytes }
    }

    /// No limit at all.
    pub fn unlimited() -> Self {
        MemoryLimit { bytes: usize::MAX }
    }

    /// `Ok` when `bytes` fit under the limit; otherwise [`Error::Memory`] saying what needed
    /// how much and the limit.
    pub fn check(&self, bytes: usize, what: &str) -> Result<()> {
        if bytes <= self.bytes {
            Ok(())
        } else {
            Err(Error::Memory {
                what: what.to_string(),
                needed: bytes,
                limit: self.bytes,
            })
        }
    }
}

/// Checked `a * b * c` in bytes; saturates (so that the check refuses) instead of overflowing.
pub(crate) fn bytes_of(a: usize, b: usize, elem: usize) -> usize {
    a.saturating_mul(b).saturating_mul(elem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_limit_check_and_message() {
        let l = MemoryLimit::gib(1.0);
        assert_eq!(l.bytes, 1 << 30);
        assert!(l.check(1 << 30, "x").is_ok());
        let err = l
            .check((1 << 30) + 1, "a 20000 x 20000 Gram matrix")
            .unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, Error::Memory { needed, .. } if needed == (1 << 30) + 1));
        assert!(msg.contains("a 20000 x 20000 Gram matrix"), "{msg}");
        assert!(msg.contains("to 2 GiB"), "{msg}");
        assert!(msg.contains("1.00 GiB"), "{msg}");
        assert_eq!(MemoryLimit::default().bytes, 8 << 30);
        assert_eq!(MemoryLimit::gib(-1.0).bytes, 0);
        assert_eq!(MemoryLimit::gib(f64::INFINITY).bytes, usize::MAX);
        assert_eq!(bytes_of(usize::MAX, 2, 8), usize::MAX);
    }
}

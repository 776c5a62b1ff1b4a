//! A memory guard: every Gram computation estimates its bytes before allocating and refuses
//! clearly when the estimate exceeds a user-set limit (DESIGN.md, "Performance notes").

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
    /// how much, the limit, and how to raise it.
    pub fn check(&self, bytes: usize, what: &str) -> Result<()> {
        if bytes <= self.bytes {
            Ok(())
        } else {
            Err(Error::Memory(format!(
                "{what} needs {} but the memory limit is {}; raise it with \
                 --memory-limit-gb {} (or use fewer/smaller inputs)",
                fmt_bytes(bytes),
                fmt_bytes(self.bytes),
                suggest_gib(bytes),
            )))
        }
    }
}

/// Checked `a * b * c` in bytes; saturates (so that the check refuses) instead of overflowing.
pub(crate) fn bytes_of(a: usize, b: usize, elem: usize) -> usize {
    a.saturating_mul(b).saturating_mul(elem)
}

fn fmt_bytes(b: usize) -> String {
    let g = b as f64 / GIB;
    if g >= 0.1 {
        format!("{g:.2} GiB")
    } else {
        format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
    }
}

/// The smallest whole number of GiB (with 10% headroom) that accepts `bytes`.
fn suggest_gib(bytes: usize) -> u64 {
    ((bytes as f64 * 1.1 / GIB).ceil() as u64).max(1)
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
        assert!(matches!(err, Error::Memory(_)));
        assert!(msg.contains("a 20000 x 20000 Gram matrix"), "{msg}");
        assert!(msg.contains("--memory-limit-gb 2"), "{msg}");
        assert!(msg.contains("1.00 GiB"), "{msg}");
        assert_eq!(MemoryLimit::default().bytes, 8 << 30);
        assert_eq!(MemoryLimit::gib(-1.0).bytes, 0);
        assert_eq!(MemoryLimit::gib(f64::INFINITY).bytes, usize::MAX);
        assert_eq!(bytes_of(usize::MAX, 2, 8), usize::MAX);
    }
}

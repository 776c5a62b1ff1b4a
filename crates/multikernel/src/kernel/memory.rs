//! A memory guard: every Gram computation, and every structure of a tagger sized by its
//! labels (label-pair parts, weights, per-sentence buffers), estimates its bytes before
//! allocating and refuses clearly when the estimate exceeds a user-set limit (ARCHITECTURE.md,
//! "Performance notes").

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
    /// What a limit in GiB must be (the text of [`MemoryLimit::try_gib`]'s refusal).
    pub const EXPECTED: &'static str = "a positive number of GiB (inf: no limit)";

    /// A limit of `g` GiB (2^30 bytes), checked: `g` must be a positive number, and
    /// `f64::INFINITY` means no limit; zero, a negative number or NaN is refused
    /// ([`Error::InvalidParameter`] named `memory_limit_gb`). The constructor for a limit a
    /// user gives (the command line's `--memory-limit-gb`, the Python binding's
    /// `memory_limit_gb`).
    pub fn try_gib(g: f64) -> Result<Self> {
        if g.is_nan() || g <= 0.0 {
            return Err(Error::param("memory_limit_gb", g, Self::EXPECTED));
        }
        Ok(MemoryLimit::gib(g))
    }

    /// A limit of `g` GiB (2^30 bytes), unchecked: negative or NaN gives 0 (every request
    /// refused); `f64::INFINITY` gives no limit. For limits the program sets; a user's goes
    /// through [`MemoryLimit::try_gib`].
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
    #[cfg(test)]
    pub(crate) fn unlimited() -> Self {
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

    #[test]
    fn a_users_limit_is_a_positive_number_or_inf() {
        for bad in [0.0, -0.0, -1.0, f64::NAN, f64::NEG_INFINITY] {
            let e = MemoryLimit::try_gib(bad).unwrap_err();
            assert!(
                matches!(&e, Error::InvalidParameter { name, .. } if name == "memory_limit_gb"),
                "{bad}: {e}"
            );
            assert!(e.to_string().contains("positive number of GiB"), "{e}");
        }
        assert_eq!(MemoryLimit::try_gib(1.0).unwrap(), MemoryLimit::gib(1.0));
        assert_eq!(
            MemoryLimit::try_gib(0.05).unwrap().bytes,
            (0.05 * GIB) as usize
        );
        assert_eq!(
            MemoryLimit::try_gib(f64::INFINITY).unwrap(),
            MemoryLimit::unlimited()
        );
    }
}

//! Parsers of the short settings strings.

use crate::kernel::KernelSpec;

/// Kernel spec strings (`rbf:gamma=0.5`, `poly:degree=3,norm=trace`, ...): parse; a parsed
/// spec prints as text that parses back to the same text.
pub fn kernel_spec(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(spec) = text.parse::<KernelSpec>() {
        let again: KernelSpec = spec.to_string().parse().expect("a printed spec parses");
        assert_eq!(again.to_string(), spec.to_string());
    }
}

//! Kernel spec strings (`rbf:gamma=0.5`, `poly:degree=3,norm=trace`, ...): parse, and a
//! parsed spec prints as text that parses back to the same spec.
#![no_main]
use libfuzzer_sys::fuzz_target;
use multikernel::kernel::KernelSpec;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(spec) = text.parse::<KernelSpec>() {
            let again: KernelSpec = spec.to_string().parse().expect("printed spec parses");
            assert_eq!(again.to_string(), spec.to_string());
        }
    }
});

#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| multikernel::fuzzing::online_parts(data));

#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| multikernel::fuzzing::table_stream(data));

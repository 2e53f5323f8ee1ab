//! Shared by the fuzz targets (`fuzz_targets/*.rs`) and by the regression test
//! `tests/fuzz_regressions.rs` of the main crate, which includes `checks.rs` by path
//! and replays every input kept under `fuzz/regressions/<target>/`.
pub mod checks;

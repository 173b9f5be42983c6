//! `malachite-bigint` 0.9.2, whole, under the version gotopy's manifest patches in (see
//! `Cargo.toml`).

pub use bigint::*;

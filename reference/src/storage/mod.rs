//! Everything at rest: sealing (§3), the SQLite store (§3.2, §5.2), the tombstone log and the sealed snapshots (§7.4).
//!
//! Nothing leaves this folder unsealed: a cell is sealed by [`seal`] before
//! [`store`] writes it, and the index reaches disk only through [`snapshot`].

pub mod roster_mark;
pub mod schema;
pub mod seal;
pub mod snapshot;
pub mod store;
pub mod tombstone;

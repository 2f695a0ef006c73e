//! Runs the reference memoria against fake siblings in simulated time, one seed per run.
//!
//! Nothing inside a simulated run reads the wall clock or opens a real socket:
//! every host is a turmoil host, every connection a turmoil connection, and
//! every timer tokio's paused clock, which turmoil advances.

pub mod corpus;
pub mod fake;
pub mod fake_connector;
pub mod net;
pub mod scenario;
pub mod tour;
pub mod world;

//! Decisions that are rules rather than storage: what leaves the instance (§3.6, §8.3) and when a breaker fires (§8.1).

pub mod breaker;
pub mod egress;

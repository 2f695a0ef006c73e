//! Fake siblings: real implementations of the contract over a state model, with fault knobs (§4.1, §6).

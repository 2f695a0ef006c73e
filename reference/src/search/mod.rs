//! Finding passages: the chunker that cuts documents into them, the query language, the in-memory lexical index and its snippets (§7.1, §7.2, §8.1).
//!
//! The dense half (§7.3) lands here beside [`index`]. Ruling what is found
//! is not search's job: every result passes `sibling::ruled` first, and the
//! fact box ([`facts`], §8.8) reads only what that ruling let through.

pub mod bm25;
pub mod chunk;
pub mod facts;
pub mod highlight;
pub mod index;
pub mod markdown;
pub mod phrase;
pub mod query;
pub mod result;
pub mod text;

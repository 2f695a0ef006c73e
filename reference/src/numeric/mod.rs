//! Numeric and aggregate questions (§8.7, §8.2's numeric route): spreadsheets chunked with a structure catalogue, units certified by a fixed table, and Sheets' S6 doing the arithmetic.
//!
//! [`sheet`] chunks a sheet's S3 body and builds its catalogue, [`units`]
//! is §8.7's certification table, [`question`] reads a question into
//! slots, and [`answer`] is what the route shows. The route itself, which
//! resolves the slots, rules the operands through S2 and calls S6 once, or
//! shows the slot table and no number, is a use-case above the instance:
//! `sibling::numeric`. Nothing here makes a call. memoria never
//! does arithmetic (decision 10) and calls no model here.

pub mod answer;
pub mod question;
pub mod sheet;
pub mod units;

pub use answer::NumericAnswer;

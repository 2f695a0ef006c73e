//! Eircodes: a routing key from An Post's published table and a four-character identifier from the Eircode alphabet, matched case-sensitively (§8.8).
//!
//! §8.8's table: "a letter from ACDEFHKNPRTVWXY, a digit, then a digit or
//! W — plus four characters from that set and the digits". This layer is
//! stricter on the routing key: it must be one of the 139 keys in use
//! ([`ROUTING_KEYS`]), so `N11 then` and `P45 THEN` are refused twice over.
//!
//! Case-sensitively, and that is not fussiness: the identifier alphabet is
//! most of the consonants, so case-insensitively "Take the N11 then exit at
//! Bray" boxed `N11 then`. Eircodes are written uppercase; a lowercase one
//! going unrecognised is the cost, and it is the right way round. The
//! residual §8.8 states survives for a routing key that is in the table: an
//! ALL-CAPS heading such as `SEE D02 THEN` still reads as an eircode.

use super::{Budget, Kind, Span, char_before, closes_before, opens_after};

/// The letters an eircode may use (§8.8): no B, G, I, J, L, M, O, Q, S, U, Z.
pub const EIRCODE_LETTERS: &str = "ACDEFHKNPRTVWXY";

/// The routing keys in use: 139, as An Post's Eircode routing-key list
/// gives them. Sorted, for a binary search.
pub const ROUTING_KEYS: [&str; 139] = [
    "A41", "A42", "A45", "A63", "A67", "A75", "A81", "A82", "A83", "A84", "A85", "A86", "A91",
    "A92", "A94", "A96", "A98", "C15", "D01", "D02", "D03", "D04", "D05", "D06", "D07", "D08",
    "D09", "D10", "D11", "D12", "D13", "D14", "D15", "D16", "D17", "D18", "D20", "D22", "D24",
    "D6W", "E21", "E25", "E32", "E34", "E41", "E45", "E53", "E91", "F12", "F23", "F26", "F28",
    "F31", "F35", "F42", "F45", "F52", "F56", "F91", "F92", "F93", "F94", "H12", "H14", "H16",
    "H18", "H23", "H53", "H54", "H62", "H65", "H71", "H91", "K32", "K34", "K36", "K45", "K56",
    "K67", "K78", "N37", "N39", "N41", "N91", "P12", "P14", "P17", "P24", "P25", "P31", "P32",
    "P36", "P43", "P47", "P51", "P56", "P61", "P67", "P72", "P75", "P81", "P85", "R14", "R21",
    "R32", "R35", "R42", "R45", "R51", "R56", "R93", "R95", "T12", "T23", "T34", "T45", "T56",
    "V14", "V15", "V23", "V31", "V35", "V42", "V92", "V93", "V94", "V95", "W12", "W23", "W34",
    "W91", "X35", "X42", "X91", "Y14", "Y21", "Y25", "Y34", "Y35",
];

fn letter(c: u8) -> bool {
    EIRCODE_LETTERS.as_bytes().contains(&c)
}

/// Why a string is not an eircode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Not three routing-key characters of the right classes.
    Shape,
    /// The routing key is well formed but not one in use.
    UnknownRoutingKey,
    /// The identifier is not four characters of the alphabet and the digits.
    Identifier,
    /// Glued to the text around it.
    NoBoundary,
}

/// Reads an eircode at `at`: its end and canonical form (no space), or why not.
fn read(text: &str, at: usize) -> Result<(usize, String), Refusal> {
    let b = text.as_bytes();
    let key = b.get(at..at + 3).ok_or(Refusal::Shape)?;
    if !(letter(key[0]) && key[1].is_ascii_digit() && (key[2].is_ascii_digit() || key[2] == b'W')) {
        return Err(Refusal::Shape);
    }
    let key = &text[at..at + 3];
    let mut pos = at + 3;
    for sep in [" ", "\u{a0}"] {
        if text[pos..].starts_with(sep) {
            pos += sep.len();
            break;
        }
    }
    let id = b.get(pos..pos + 4).ok_or(Refusal::Identifier)?;
    if !id.iter().all(|c| letter(*c) || c.is_ascii_digit()) {
        return Err(Refusal::Identifier);
    }
    let end = pos + 4;
    if !closes_before(&text[end..]) {
        return Err(Refusal::NoBoundary);
    }
    if ROUTING_KEYS.binary_search(&key).is_err() {
        return Err(Refusal::UnknownRoutingKey);
    }
    Ok((end, format!("{key}{}", &text[pos..end])))
}

/// Checks one candidate string as a whole: the canonical form, or why not.
///
/// # Errors
/// The [`Refusal`]; [`Refusal::NoBoundary`] if more follows it.
pub fn check(candidate: &str) -> Result<String, Refusal> {
    let (end, canonical) = read(candidate, 0)?;
    if end != candidate.len() {
        return Err(Refusal::NoBoundary);
    }
    Ok(canonical)
}

/// Appends every eircode in `text` to `out`.
pub fn find(text: &str, budget: &mut Budget, out: &mut Vec<Span>) {
    let b = text.as_bytes();
    for (start, c) in b.iter().enumerate() {
        if !letter(*c) || !opens_after(char_before(text, start)) {
            continue;
        }
        if let Ok((end, canonical)) = read(text, start) {
            if !budget.spend() {
                return;
            }
            out.push(Span {
                kind: Kind::Eircode,
                start,
                end,
                canonical,
            });
        }
    }
}

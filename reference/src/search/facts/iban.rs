//! IBANs: two country letters, two check digits and a BBAN, validated by the `iban_validate` crate against the SWIFT registry's length and structure per country and mod-97 (§8.8).
//!
//! Recognised in the electronic form (`IE29AIBK93115212345678`) and the
//! paper form (groups of four, `IE29 AIBK 9311 5212 3456 78`), uppercase
//! only. The crate checks the country is in the registry, the length and
//! BBAN structure for that country, and the ISO 7064 mod-97 check (and
//! refuses check digits `00` and `01`). This layer refuses `99` on top:
//! ISO 13616 computes check digits as 98 minus a remainder, so they lie in
//! 02..=98, and a `99` that passes mod-97 is a `02` spelt wrongly.
//!
//! The crate's registry (iban_validate 5.0.1) lacks two countries the SWIFT
//! registry lists, Pakistan and Honduras, so their IBANs were refused as an
//! unknown country; the differential test against python-stdnum's vectors
//! (`vectors.rs`) found Pakistan's registry example refused.
//! [`REGISTRY_ADDITIONS`] holds those two entries and checks them here.
//!
//! Mod-97 is arithmetic, and decision 10 says memoria never does any. It is
//! a predicate deciding whether a string is an IBAN at all, never a number
//! memoria reports (§8.8, filed in §13 beside decision 15).

use iban::IbanLike as _;

use super::{Budget, Kind, Span, char_before, closes_before, opens_after};

/// The longest IBAN, in characters without spaces (ISO 13616).
pub const IBAN_CHARS_MAX: usize = 34;
/// Characters per group in the paper form.
pub const IBAN_GROUP_CHARS: usize = 4;

/// SWIFT IBAN registry entries the `iban_validate` crate lacks, as
/// (country, IBAN length, leading BBAN letters, then the rest of the BBAN
/// digits only (`true`) or letters and digits (`false`)). From the
/// registry's BBAN structures, as python-stdnum 2.2's `iban.dat` gives
/// them: Honduras `4!a20!n`, Pakistan `4!a16!c`.
pub const REGISTRY_ADDITIONS: [(&str, usize, usize, bool); 2] =
    [("HN", 28, 4, true), ("PK", 24, 4, false)];

/// Why a string is not an IBAN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Not two uppercase letters, two digits, then uppercase letters and digits.
    Shape,
    /// Check digits outside 02..=98.
    CheckDigits,
    /// The registry's rules for the country fail, or mod-97 does.
    Invalid,
    /// Glued to the text around it.
    NoBoundary,
}

fn alnum(c: u8) -> bool {
    c.is_ascii_uppercase() || c.is_ascii_digit()
}

/// Reads the generous form at `at`: the electronic string and the end.
fn read(text: &str, at: usize) -> Option<(String, usize)> {
    let b = text.as_bytes();
    let head = b.get(at..at + 4)?;
    if !(head[0].is_ascii_uppercase()
        && head[1].is_ascii_uppercase()
        && head[2].is_ascii_digit()
        && head[3].is_ascii_digit())
    {
        return None;
    }
    let mut pos = at;
    let mut electronic = String::new();
    // The first run: the electronic form whole, or the paper form's first group.
    while pos < b.len() && alnum(b[pos]) && electronic.len() <= IBAN_CHARS_MAX {
        electronic.push(b[pos] as char);
        pos += 1;
    }
    if electronic.len() == IBAN_GROUP_CHARS {
        // Paper form: groups of four separated by one space, the last shorter or equal.
        loop {
            let sep = [" ", "\u{a0}"]
                .into_iter()
                .find(|s| text[pos..].starts_with(s));
            let Some(sep) = sep else { break };
            let g = pos + sep.len();
            let mut e = g;
            while e < b.len() && alnum(b[e]) && e - g <= IBAN_GROUP_CHARS {
                e += 1;
            }
            if e == g || e - g > IBAN_GROUP_CHARS || electronic.len() + (e - g) > IBAN_CHARS_MAX {
                break;
            }
            electronic.push_str(&text[g..e]);
            pos = e;
            if e - g < IBAN_GROUP_CHARS {
                break;
            }
        }
    }
    Some((electronic, pos))
}

/// The registry's and mod-97's verdict on an electronic string, and §8.8's check digits.
fn validate(electronic: &str) -> Result<String, Refusal> {
    if electronic.len() > IBAN_CHARS_MAX {
        return Err(Refusal::Shape);
    }
    let check = &electronic[2..4];
    if matches!(check, "00" | "01" | "99") {
        return Err(Refusal::CheckDigits);
    }
    electronic
        .parse::<iban::Iban>()
        .map(|i| i.electronic_str().to_string())
        .or_else(registry_addition)
}

/// The crate's unknown country, if it is one of [`REGISTRY_ADDITIONS`] and
/// its length and BBAN follow that entry (mod-97 has passed already).
fn registry_addition(e: iban::ParseIbanError) -> Result<String, Refusal> {
    let iban::ParseIbanError::UnknownCountry(base) = e else {
        return Err(Refusal::Invalid);
    };
    let s = base.electronic_str();
    let (_, len, letters, digits_only) = REGISTRY_ADDITIONS
        .into_iter()
        .find(|(country, ..)| s.starts_with(country))
        .ok_or(Refusal::Invalid)?;
    let bban = s.as_bytes().get(4..).unwrap_or_default();
    let fits = s.len() == len
        && bban.iter().enumerate().all(|(i, c)| {
            if i < letters {
                c.is_ascii_uppercase()
            } else if digits_only {
                c.is_ascii_digit()
            } else {
                alnum(*c)
            }
        });
    if fits {
        Ok(s.to_string())
    } else {
        Err(Refusal::Invalid)
    }
}

/// Checks one candidate string as a whole: the electronic form, or why not.
///
/// # Errors
/// The [`Refusal`].
pub fn check(candidate: &str) -> Result<String, Refusal> {
    let (electronic, end) = read(candidate, 0).ok_or(Refusal::Shape)?;
    if end != candidate.len() {
        return Err(Refusal::NoBoundary);
    }
    validate(&electronic)
}

/// Appends every IBAN in `text` to `out`.
pub fn find(text: &str, budget: &mut Budget, out: &mut Vec<Span>) {
    let b = text.as_bytes();
    let mut start = 0;
    while start + 4 <= b.len() {
        if !b[start].is_ascii_uppercase() || !opens_after(char_before(text, start)) {
            start += 1;
            continue;
        }
        let Some((electronic, end)) = read(text, start) else {
            start += 1;
            continue;
        };
        if !closes_before(&text[end..]) {
            start = end;
            continue;
        }
        if !budget.spend() {
            return;
        }
        if let Ok(canonical) = validate(&electronic) {
            out.push(Span {
                kind: Kind::Iban,
                start,
                end,
                canonical,
            });
        }
        start = end;
    }
}

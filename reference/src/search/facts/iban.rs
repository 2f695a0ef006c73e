//! IBANs: two country letters, two check digits and a BBAN, validated by the `iban_validate` crate against the SWIFT registry's length and structure per country and mod-97 (§8.8).
//!
//! Recognised in the electronic form (`IE29AIBK93115212345678`), the
//! paper form (groups of four, `IE29 AIBK 9311 5212 3456 78`) and the
//! layouts national account numbers are written in, which python-stdnum's
//! test set carries (`ES72 2013-0692-81-0201150993`, `NO 19 4920 06 96270`,
//! `NO07.8380.08.06006`, `MK072 5012 …`): two uppercase letters, one
//! optional space, two check digits, then groups of letters and digits
//! separated by one space, no-break space, hyphen or dot
//! ([`IBAN_GROUP_SEPARATORS`]). A group may carry lowercase letters only
//! beside a digit (`1000 h79`), so an English word is never a group. The
//! recogniser reads the groups to their natural end and the IBAN ends at
//! the group boundary where the registry's length for the country is met
//! (at most one boundary can meet it); it is refused, never shortened, when
//! digits run on past that boundary (`… 3456 78 90`). The crate normalises
//! case; the canonical form is uppercase.
//!
//! The crate checks the country is in the registry, the length and
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
/// The shortest IBAN, in characters without separators (Norway's, in the
/// SWIFT registry).
pub const IBAN_CHARS_MIN: usize = 15;
/// What may separate two groups: the paper form's space, the no-break space
/// pasted text carries, and the hyphen and dot of national layouts.
pub const IBAN_GROUP_SEPARATORS: [char; 4] = [' ', '\u{a0}', '-', '.'];

/// SWIFT IBAN registry entries the `iban_validate` crate lacks, as
/// (country, IBAN length, leading BBAN letters, then the rest of the BBAN
/// digits only (`true`) or letters and digits (`false`)). From the
/// registry's BBAN structures, as python-stdnum 2.2's `iban.dat` gives
/// them: Honduras `4!a20!n`, Pakistan `4!a16!c`.
pub const REGISTRY_ADDITIONS: [(&str, usize, usize, bool); 2] =
    [("HN", 28, 4, true), ("PK", 24, 4, false)];

/// Why a string is not an IBAN, least specific first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Refusal {
    /// Not two uppercase letters, two digits, then uppercase letters and digits.
    Shape,
    /// Check digits outside 02..=98.
    CheckDigits,
    /// The registry's rules for the country fail, or mod-97 does.
    Invalid,
    /// Glued to the text around it.
    NoBoundary,
    /// Valid at a group boundary, and digits run on after it: the document
    /// wrote a longer string, and shortening it is never done.
    RunsOn,
}

fn alnum(c: u8) -> bool {
    c.is_ascii_uppercase() || c.is_ascii_digit()
}

/// What the generous recogniser read at one position: the characters
/// without separators, and after each group how many there were and where
/// the group ended.
#[derive(Debug, Default)]
struct Reading {
    electronic: String,
    /// (characters so far, byte offset after the group), ascending.
    boundaries: Vec<(usize, usize)>,
}

/// The group of letters and digits at `at`, and its end: uppercase letters
/// and digits, or lowercase letters too when the group holds a digit.
fn group(text: &str, at: usize) -> Option<usize> {
    let b = text.as_bytes();
    let len = b[at..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric())
        .count();
    let g = &b[at..at + len];
    let cased = g.iter().all(|c| alnum(*c)) || g.iter().any(u8::is_ascii_digit);
    (len > 0 && cased).then_some(at + len)
}

/// Reads the generous form at `at`: the country and check digits, then
/// every group to the natural end, up to [`IBAN_CHARS_MAX`] characters.
fn read(text: &str, at: usize) -> Option<Reading> {
    let b = text.as_bytes();
    let letters = b.get(at..at + 2)?;
    if !letters.iter().all(u8::is_ascii_uppercase) {
        return None;
    }
    let mut pos = at + 2;
    if let Some(sp) = [" ", "\u{a0}"]
        .into_iter()
        .find(|s| text[pos..].starts_with(s))
    {
        pos += sp.len();
    }
    let check = b.get(pos..pos + 2)?;
    if !check.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut r = Reading {
        electronic: format!("{}{}", &text[at..at + 2], &text[pos..pos + 2]),
        boundaries: vec![],
    };
    pos += 2;
    // The rest of the first group, glued to the check digits (`MK072 …`).
    if let Some(end) = group(text, pos) {
        r.electronic.push_str(&text[pos..end]);
        pos = end;
    }
    r.boundaries.push((r.electronic.len(), pos));
    while r.electronic.len() < IBAN_CHARS_MAX {
        let Some(sep) = text[pos..]
            .chars()
            .next()
            .filter(|c| IBAN_GROUP_SEPARATORS.contains(c))
        else {
            break;
        };
        let g = pos + sep.len_utf8();
        let Some(end) = group(text, g) else {
            break;
        };
        r.electronic.push_str(&text[g..end]);
        pos = end;
        r.boundaries.push((r.electronic.len(), pos));
    }
    Some(r)
}

/// The IBAN a reading holds: the one group boundary whose characters pass
/// the registry and mod-97, closing the text and with no digits running on
/// after it; its canonical form and end, or why not.
fn settle(text: &str, r: &Reading) -> Result<(String, usize), Refusal> {
    let mut refusal = Refusal::Shape;
    for (chars, end) in &r.boundaries {
        if !(IBAN_CHARS_MIN..=IBAN_CHARS_MAX).contains(chars) {
            continue;
        }
        let mut after = text[*end..].chars();
        let runs_on = after
            .next()
            .is_some_and(|c| IBAN_GROUP_SEPARATORS.contains(&c))
            && after.next().is_some_and(|c| c.is_ascii_digit());
        match validate(&r.electronic[..*chars]) {
            Ok(_) if runs_on => refusal = Refusal::RunsOn,
            Ok(_) if !closes_before(&text[*end..]) => refusal = Refusal::NoBoundary,
            Ok(canonical) => return Ok((canonical, *end)),
            Err(e) => refusal = refusal.max(e),
        }
    }
    Err(refusal)
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
    let r = read(candidate, 0).ok_or(Refusal::Shape)?;
    match settle(candidate, &r) {
        Ok((canonical, end)) if end == candidate.len() => Ok(canonical),
        Ok(_) => Err(Refusal::NoBoundary),
        Err(e) => Err(e),
    }
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
        let Some(r) = read(text, start) else {
            start += 1;
            continue;
        };
        let end = r.boundaries.last().map_or(start + 1, |(_, e)| *e);
        // Only a reading long enough to be an IBAN costs a validator call.
        if r.electronic.len() < IBAN_CHARS_MIN {
            start = end;
            continue;
        }
        if !budget.spend() {
            return;
        }
        match settle(text, &r) {
            Ok((canonical, end)) => {
                out.push(Span {
                    kind: Kind::Iban,
                    start,
                    end,
                    canonical,
                });
                start = end;
            }
            Err(_) => start = end,
        }
    }
}

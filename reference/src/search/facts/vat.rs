//! Irish VAT numbers in the modern format: `IE`, seven digits, a check letter, and an optional second letter, with the check letter verified (§8.8).
//!
//! The check letter is the weighted sum of the seven digits (weights 8
//! down to 2), plus nine times the second letter's value (A = 1 … I = 9,
//! W = 0) when there is one, modulo 23, mapped onto `WABCDEFGHIJKLMNOPQRSTUV`.
//! A wrong one is refused.
//!
//! The `IE` prefix is required, and that is stricter than the format: a
//! PPS number (a person's social-security number) is written in exactly the
//! bare format, and boxing one as "our VAT number" is the wrong way round.
//! The pre-2013 format (`IE8Z49289F`, a letter or symbol in second place)
//! is not modern and is refused.
//!
//! Recognised in the layouts python-stdnum's test set writes (issue 32):
//! `IE6433435F`; a space or hyphen after the prefix (`IE 6433435F`,
//! `IE-9696131F`); the seven digits in groups separated by single spaces,
//! and then the check letter glued or apart (`IE 632 3420 C`,
//! `IE 635 430 5C`); and a lowercase check letter glued to the digits
//! (`IE 8223200u`). The prefix is uppercase, and a letter standing apart is
//! uppercase and follows grouped digits only: `IE 6433435 a` is a number
//! and an English word. The canonical form is uppercase.

use super::{Budget, Kind, Span, char_before, closes_before, opens_after};

/// Digits in the modern format.
pub const VAT_DIGITS: usize = 7;
/// The check letter for a weighted sum modulo 23.
pub const VAT_CHECK_LETTERS: &[u8; 23] = b"WABCDEFGHIJKLMNOPQRSTUV";
/// The modulus of the check letter.
pub const VAT_MODULUS: u32 = 23;

/// What may follow the `IE` prefix before the digits.
pub const VAT_PREFIX_SEPARATORS: [char; 3] = [' ', '\u{a0}', '-'];

/// Why a string is not an Irish VAT number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Not `IE`, seven digits and one or two uppercase letters.
    Shape,
    /// The check letter does not match the digits.
    CheckLetter,
    /// Glued to the text around it.
    NoBoundary,
}

/// The second letter's value: A = 1 … I = 9, W = 0; other letters none.
fn second_value(c: u8) -> Option<u32> {
    match c {
        b'A'..=b'I' => Some(u32::from(c - b'A') + 1),
        b'W' => Some(0),
        _ => None,
    }
}

/// Reads `IE`, an optional separator, seven digits (unbroken, or in
/// groups apart by single spaces) and the letters at `at`: (digits, check
/// letter, second letter, end), the letters uppercased.
fn read(text: &str, at: usize) -> Option<(String, u8, Option<u8>, usize)> {
    if !text[at..].starts_with("IE") {
        return None;
    }
    let mut pos = at + 2;
    if let Some(c) = text[pos..]
        .chars()
        .next()
        .filter(|c| VAT_PREFIX_SEPARATORS.contains(c))
    {
        pos += c.len_utf8();
    }
    let space = |at: usize| {
        [" ", "\u{a0}"]
            .into_iter()
            .find(|s| text[at..].starts_with(s))
    };
    let mut digits = String::new();
    let mut grouped = false;
    while digits.len() < VAT_DIGITS {
        let c = *text.as_bytes().get(pos)?;
        if c.is_ascii_digit() {
            digits.push(c as char);
            pos += 1;
        } else {
            // A space between two groups of digits, never before the first.
            let sp = space(pos).filter(|_| !digits.is_empty())?;
            text.as_bytes()
                .get(pos + sp.len())
                .filter(|c| c.is_ascii_digit())?;
            grouped = true;
            pos += sp.len();
        }
    }
    // A letter apart from the digits only when the digits are grouped.
    let apart = space(pos).filter(|_| grouped);
    let b = text.as_bytes();
    let (check, glued) = match b.get(pos).copied() {
        Some(c) if c.is_ascii_alphabetic() => (c, true),
        _ => {
            let sp = apart?;
            let c = *b.get(pos + sp.len()).filter(|c| c.is_ascii_uppercase())?;
            pos += sp.len();
            (c, false)
        }
    };
    pos += 1;
    // Lowercase only glued to the digits, and a second letter in the same case.
    if check.is_ascii_lowercase() && !glued {
        return None;
    }
    let second = b.get(pos).copied().filter(|c| {
        c.is_ascii_alphabetic() && c.is_ascii_lowercase() == check.is_ascii_lowercase()
    });
    if second.is_some() {
        pos += 1;
    }
    Some((
        digits,
        check.to_ascii_uppercase(),
        second.map(|c| c.to_ascii_uppercase()),
        pos,
    ))
}

fn validate(digits: &str, check: u8, second: Option<u8>) -> Result<String, Refusal> {
    let mut sum: u32 = digits
        .bytes()
        .zip((2..=8).rev())
        .map(|(d, w)| u32::from(d - b'0') * w)
        .sum();
    if let Some(s) = second {
        sum += 9 * second_value(s).ok_or(Refusal::Shape)?;
    }
    if VAT_CHECK_LETTERS[(sum % VAT_MODULUS) as usize] != check {
        return Err(Refusal::CheckLetter);
    }
    let mut canonical = format!("IE{digits}{}", check as char);
    if let Some(s) = second {
        canonical.push(s as char);
    }
    Ok(canonical)
}

/// Checks one candidate string as a whole: the canonical form, or why not.
///
/// # Errors
/// The [`Refusal`].
pub fn check(candidate: &str) -> Result<String, Refusal> {
    let (digits, check, second, end) = read(candidate, 0).ok_or(Refusal::Shape)?;
    if end != candidate.len() {
        return Err(Refusal::NoBoundary);
    }
    validate(&digits, check, second)
}

/// Appends every Irish VAT number in `text` to `out`.
pub fn find(text: &str, budget: &mut Budget, out: &mut Vec<Span>) {
    let mut from = 0;
    while let Some(off) = text[from..].find("IE") {
        let start = from + off;
        from = start + 2;
        if !opens_after(char_before(text, start)) {
            continue;
        }
        let Some((digits, check, second, end)) = read(text, start) else {
            continue;
        };
        if !closes_before(&text[end..]) {
            continue;
        }
        if !budget.spend() {
            return;
        }
        if let Ok(canonical) = validate(&digits, check, second) {
            out.push(Span {
                kind: Kind::Vat,
                start,
                end,
                canonical,
            });
        }
        from = end;
    }
}

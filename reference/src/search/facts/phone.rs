//! Telephone numbers: a generous recogniser, §8.8's structural refusals, then libphonenumber (the `phonenumber` crate) as the validator (§8.8).
//!
//! phone has no checksum, so §8.8 states its structure instead of leaving
//! it to the code, and every rule below is there because ordinary document
//! text was boxed without it:
//!
//! - a bare run of digits is never a phone number: the span carries a `+`,
//!   or separators grouping it (`DUNS 985632364` is nine digits and a
//!   plausible Irish mobile);
//! - one separator style throughout (space, hyphen or dot; U+00A0 is a
//!   space, because pasted text carries it): `01-02-2024 10:30` was boxed;
//! - four digit groups, or five with a country code, refused by count and
//!   never truncated: `01 05 12 23 34` is a lottery draw, and shortening
//!   `+353 87 1234567` to fit a pattern boxed a number the document never
//!   wrote;
//! - the international floor is ten digits, not E.164's eight
//!   (`+10 000 000 users`);
//! - a national number is Irish: it starts with the trunk `0` and has 9 or
//!   10 digits, or it is one of the ranges Ireland dials without the trunk
//!   `0` (freephone 1800, shared-cost 1850 and 1890, premium 15xx, ten
//!   digits in all: libphonenumber's `tollFree`, `sharedCost` and
//!   `premiumRate` for IE), written with those four digits as a group of
//!   their own and the six after them in groups of at most three, or as one
//!   group of six (`1800 123 456`, `1850 20 30 40`, `1890-123456`), which is
//!   libphonenumber's own layout and its common variants; a list of years
//!   (`1800 1850 19`) is not one. It canonicalises to E.164 for identity
//!   only, so `01 547 7854` and `+353 (0)1 547 7854` are one candidate, and
//!   `1800 123 456` and `+353 1800 123 456` are one;
//! - the span ends on a word boundary or an extension (`ext. 12`, `x12`).
//!
//! What survives those is handed to libphonenumber, which must call it a
//! valid number for its country. Its verdict is a further refusal, never a
//! licence: nothing libphonenumber accepts overrides a rule above.

use phonenumber::country::Id;
use phonenumber::metadata::DATABASE;
use phonenumber::{Mode, Type, parse};

use super::{Budget, Kind, Span, char_before, closes_before, opens_after};

/// Most digit groups without a country code (§8.8: "Four digit groups").
pub const PHONE_GROUPS_NATIONAL_MAX: usize = 4;
/// Most digit groups with a country code (§8.8: "or five with a country code").
pub const PHONE_GROUPS_INTERNATIONAL_MAX: usize = 5;
/// Fewest digits of an international number, country code included
/// (§8.8: "The international floor is ten digits, not E.164's eight").
pub const PHONE_DIGITS_INTERNATIONAL_MIN: usize = 10;
/// Most digits of an international number (E.164's fifteen).
pub const PHONE_DIGITS_INTERNATIONAL_MAX: usize = 15;
/// Fewest digits of an Irish national number, the trunk `0` included (`01 547 7854`).
pub const PHONE_DIGITS_NATIONAL_MIN: usize = 9;
/// Most digits of an Irish national number, the trunk `0` included (`087 120 4455`).
pub const PHONE_DIGITS_NATIONAL_MAX: usize = 10;
/// Digits of an Irish number dialled without the trunk `0` (`1800 123 456`):
/// libphonenumber's IE metadata gives `tollFree`, `sharedCost` and
/// `premiumRate` ten national digits and no national prefix.
pub const PHONE_DIGITS_NON_GEOGRAPHIC: usize = 10;
/// The range's own digits, written as the first group (`1800`, `1850`,
/// `1890`, `15xx`).
pub const PHONE_RANGE_DIGITS: usize = 4;
/// The longest group of the six digits after the range, unless they are
/// written as one group of six (`1800 123 456`, `1800 123456`).
pub const PHONE_SUBSCRIBER_GROUP_DIGITS_MAX: usize = 3;
/// Most digits the recogniser reads in one group before it stops reading:
/// a longer run is no phone number, and reading on is wasted work.
pub const PHONE_GROUP_DIGITS_MAX: usize = 15;
/// Most digits of an extension.
pub const PHONE_EXTENSION_DIGITS_MAX: usize = 6;

/// A separator between two digit groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// A space or U+00A0 NO-BREAK SPACE.
    Space,
    /// `-`.
    Hyphen,
    /// `.`.
    Dot,
}

fn style(c: char) -> Option<Style> {
    match c {
        ' ' | '\u{a0}' => Some(Style::Space),
        '-' => Some(Style::Hyphen),
        '.' => Some(Style::Dot),
        _ => None,
    }
}

/// What the generous recogniser read at one position.
#[derive(Debug, Default)]
struct Reading {
    plus: bool,
    groups: Vec<String>,
    /// True for a group written in parentheses, e.g. the `(0)` of `+353 (0)1`.
    parenthesised: Vec<bool>,
    styles: Vec<Style>,
    extension: Option<String>,
    end: usize,
}

/// Reads digits from `at`; returns them and the offset after them.
fn digits(text: &str, at: usize) -> (String, usize) {
    let mut out = String::new();
    let mut end = at;
    for c in text[at..].chars() {
        if !c.is_ascii_digit() || out.len() > PHONE_GROUP_DIGITS_MAX {
            break;
        }
        out.push(c);
        end += 1;
    }
    (out, end)
}

/// Reads one group at `at`: `547`, `(01)`, `(0)1` (two groups). Returns the
/// groups (with their parenthesis flags) and the offset after them.
fn group(text: &str, at: usize) -> Option<(Vec<(String, bool)>, usize)> {
    if text[at..].starts_with('(') {
        let (inner, after) = digits(text, at + 1);
        if inner.is_empty() || !text[after..].starts_with(')') {
            return None;
        }
        let mut out = vec![(inner, true)];
        let (tail, end) = digits(text, after + 1);
        if !tail.is_empty() {
            out.push((tail, false));
        }
        return Some((out, end.max(after + 1)));
    }
    let (d, end) = digits(text, at);
    (!d.is_empty()).then_some((vec![(d, false)], end))
}

/// An extension right after the number: ` ext. 12`, ` ext 12`, ` x12`,
/// ` extension 12`. Returns its digits and the offset after them.
fn extension(text: &str, at: usize) -> Option<(String, usize)> {
    let rest = &text[at..];
    let trimmed = rest.trim_start_matches([' ', '\u{a0}']);
    if trimmed.len() == rest.len() {
        return None;
    }
    let mut pos = at + (rest.len() - trimmed.len());
    let word = ["extension", "ext.", "ext", "x"]
        .into_iter()
        .find(|w| trimmed.starts_with(w))?;
    pos += word.len();
    pos += text[pos..].len() - text[pos..].trim_start_matches([' ', '\u{a0}']).len();
    let (d, end) = digits(text, pos);
    (!d.is_empty() && d.len() <= PHONE_EXTENSION_DIGITS_MAX).then_some((d, end))
}

/// The generous recogniser: everything at `start` that looks like digit
/// groups with separators, read to its natural end whatever the rules say.
fn read(text: &str, start: usize) -> Option<Reading> {
    let mut r = Reading::default();
    let mut pos = start;
    if text[pos..].starts_with('+') {
        r.plus = true;
        pos += 1;
    }
    loop {
        let (gs, after) = group(text, pos)?;
        for (g, p) in gs {
            r.groups.push(g);
            r.parenthesised.push(p);
        }
        pos = after;
        r.end = pos;
        let mut it = text[pos..].chars();
        let (Some(sep), Some(next)) = (it.next(), it.next()) else {
            break;
        };
        match style(sep) {
            Some(s) if next.is_ascii_digit() || next == '(' => {
                r.styles.push(s);
                pos += sep.len_utf8();
            }
            _ => break,
        }
    }
    if let Some((ext, end)) = extension(text, r.end) {
        r.extension = Some(ext);
        r.end = end;
    }
    Some(r)
}

/// Why a reading is not a phone number; each is one of §8.8's rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No `+` and no separator: a bare run of digits.
    Bare,
    /// More than one separator style.
    MixedSeparators,
    /// Over [`PHONE_GROUPS_NATIONAL_MAX`] or [`PHONE_GROUPS_INTERNATIONAL_MAX`] groups.
    GroupCount,
    /// An international number under [`PHONE_DIGITS_INTERNATIONAL_MIN`] digits (or over E.164's 15).
    InternationalDigits,
    /// A national number that is not an Irish one: neither the trunk `0`
    /// and 9 or 10 digits, nor a range dialled without it in its layout.
    NationalDigits,
    /// The number does not end on a word boundary or an extension.
    NoBoundary,
    /// libphonenumber does not call it a valid number.
    Invalid,
}

/// Applies §8.8's rules and then libphonenumber to a reading; the canonical
/// form (E.164, plus `;ext=N`) on success.
fn validate(text: &str, r: &Reading) -> Result<String, Refusal> {
    if !closes_before(&text[r.end..]) {
        return Err(Refusal::NoBoundary);
    }
    if !r.plus && r.groups.len() == 1 {
        return Err(Refusal::Bare);
    }
    if r.styles.windows(2).any(|w| w[0] != w[1]) {
        return Err(Refusal::MixedSeparators);
    }
    // Groups as written: the country code is one when written apart
    // ("+353 87 …"), and a `(0)` is one.
    let groups = r.groups.len();
    let max = if r.plus {
        PHONE_GROUPS_INTERNATIONAL_MAX
    } else {
        PHONE_GROUPS_NATIONAL_MAX
    };
    if groups > max {
        return Err(Refusal::GroupCount);
    }
    let number = if r.plus {
        // The `(0)` of `+353 (0)1 …` is the national trunk prefix, written
        // for callers at home; it is not part of the international number.
        let digits: String = r
            .groups
            .iter()
            .zip(&r.parenthesised)
            .filter(|(g, p)| !(**p && g.as_str() == "0"))
            .map(|(g, _)| g.as_str())
            .collect();
        if !(PHONE_DIGITS_INTERNATIONAL_MIN..=PHONE_DIGITS_INTERNATIONAL_MAX)
            .contains(&digits.len())
        {
            return Err(Refusal::InternationalDigits);
        }
        parse(None, format!("+{digits}")).map_err(|_| Refusal::Invalid)?
    } else {
        let digits: String = r.groups.concat();
        let trunk = digits.starts_with('0')
            && (PHONE_DIGITS_NATIONAL_MIN..=PHONE_DIGITS_NATIONAL_MAX).contains(&digits.len());
        if !trunk && !non_geographic(r) {
            return Err(Refusal::NationalDigits);
        }
        let number = parse(Some(Id::IE), &digits).map_err(|_| Refusal::Invalid)?;
        // Without the trunk, only the ranges Ireland dials that way.
        let ranges = [Type::TollFree, Type::SharedCost, Type::PremiumRate];
        if !trunk && !ranges.contains(&number.number_type(&DATABASE)) {
            return Err(Refusal::Invalid);
        }
        number
    };
    if !phonenumber::is_valid(&number) {
        return Err(Refusal::Invalid);
    }
    let mut canonical = number.format().mode(Mode::E164).to_string();
    if let Some(ext) = &r.extension {
        canonical.push_str(";ext=");
        canonical.push_str(ext);
    }
    Ok(canonical)
}

/// True if a national reading is laid out as an Irish number dialled
/// without the trunk `0`: ten digits, the first group the range's four
/// starting with `1`, the six after it one group or groups of at most three.
/// libphonenumber then decides whether the range is one: the number must
/// be valid and of type toll-free, shared-cost or premium-rate for IE
/// (1800, 1850, 1890, 15xx), so `1234 567 890` is not.
fn non_geographic(r: &Reading) -> bool {
    let Some((range, rest)) = r.groups.split_first() else {
        return false;
    };
    let rest_digits: usize = rest.iter().map(String::len).sum();
    range.len() == PHONE_RANGE_DIGITS
        && range.starts_with('1')
        && !r.parenthesised.iter().any(|p| *p)
        && range.len() + rest_digits == PHONE_DIGITS_NON_GEOGRAPHIC
        && (rest.len() == 1
            || rest
                .iter()
                .all(|g| g.len() <= PHONE_SUBSCRIBER_GROUP_DIGITS_MAX))
}

/// Checks one candidate string as a whole: the canonical form, or why not.
/// For tests and the differential check; [`find`] is the recogniser.
///
/// # Errors
/// The [`Refusal`], or [`Refusal::Bare`] when nothing number-shaped starts it.
pub fn check(candidate: &str) -> Result<String, Refusal> {
    let r = read(candidate, 0).ok_or(Refusal::Bare)?;
    validate(candidate, &r)
}

/// Appends every phone number in `text` to `out`.
pub fn find(text: &str, budget: &mut Budget, out: &mut Vec<Span>) {
    let mut pos = 0;
    while let Some(off) = text[pos..].find(|c: char| c.is_ascii_digit() || c == '+' || c == '(') {
        let start = pos + off;
        let c = text[start..].chars().next().unwrap_or(' ');
        let opens = opens_after(char_before(text, start));
        let Some(r) = opens.then(|| read(text, start)).flatten() else {
            // Skip the whole run of digits, so a million digits is read once.
            pos = start + c.len_utf8();
            pos += text[pos..].len()
                - text[pos..]
                    .trim_start_matches(|c: char| c.is_ascii_digit())
                    .len();
            continue;
        };
        pos = r.end.max(start + 1);
        // Only a reading that passes the cheap structural rules costs a
        // validator call, and counts against the passage's budget.
        // Fewer digits than any number this layer accepts is no candidate:
        // a table of decimals (`0.808 ns`) must not spend the passage's budget.
        let digits: usize = r.groups.iter().map(String::len).sum();
        let structural = closes_before(&text[r.end..])
            && digits >= PHONE_DIGITS_NATIONAL_MIN
            && (r.plus || r.groups.len() > 1)
            && !r.styles.windows(2).any(|w| w[0] != w[1]);
        if !structural || !budget.spend() {
            continue;
        }
        if let Ok(canonical) = validate(text, &r) {
            out.push(Span {
                kind: Kind::Phone,
                start,
                end: r.end,
                canonical,
            });
        }
    }
}

//! Unit certification, §8.7's fixed table: a unit is certified, never inferred from a contradiction's absence.
//!
//! An operand's unit comes from exactly two places: its format code (a
//! currency symbol, a percent, a scaling comma or a literal `k`) and an
//! explicit unit word in its column header or row label (`€k`, `thousands`,
//! `$m`, `%`). Both canonicalise to one token (`€`, `€k`, `%`, `k`, ...):
//!
//! | signal | token |
//! |---|---|
//! | format code only | its token |
//! | unit word only | its token |
//! | both, equal | that token |
//! | both, different | none: uncertified |
//! | neither (`General`, no word) | none: uncertified |
//!
//! Tokens are compared for equality and nothing else: `€k` and `€` are two
//! units, and memoria never scales, converts or reconciles them (decision
//! 10: no unit algebra of any kind).

use serde::Serialize;

/// The currency symbols a format code or a header word may carry.
const CURRENCIES: [char; 4] = ['€', '$', '£', '¥'];

fn token(currency: Option<char>, scale: Option<char>) -> Option<String> {
    match (currency, scale) {
        (None, None) => None,
        (c, s) => Some(format!(
            "{}{}",
            c.map(String::from).unwrap_or_default(),
            s.map(String::from).unwrap_or_default()
        )),
    }
}

/// The unit token a format code carries, or `None` (`General`, `#,##0`,
/// `0.00`: a number with no unit). Only the first section (before `;`) is
/// read. `€#,##0` is `€`, `k€#,##0` and `€#,##0,` are `€k`, `#,##0,,` is
/// `m`, `0.0%` is `%`.
pub fn format_token(code: &str) -> Option<String> {
    let section = code.split(';').next().unwrap_or("");
    if section.eq_ignore_ascii_case("general") {
        return None;
    }
    // Literal text: quoted runs, backslash escapes and `[$€-407]` locales.
    let mut literal = String::new();
    let mut pattern = String::new();
    let mut chars = section.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                for q in chars.by_ref() {
                    if q == '"' {
                        break;
                    }
                    literal.push(q);
                }
            }
            '\\' => {
                if let Some(q) = chars.next() {
                    literal.push(q);
                }
            }
            '[' => {
                let mut inner = String::new();
                for q in chars.by_ref() {
                    if q == ']' {
                        break;
                    }
                    inner.push(q);
                }
                if let Some(sym) = inner.strip_prefix('$') {
                    literal.push_str(sym.split('-').next().unwrap_or(""));
                }
            }
            _ => pattern.push(c),
        }
    }
    if pattern.contains('%') || literal.contains('%') {
        return Some("%".into());
    }
    let all = format!("{literal}{pattern}");
    let currency = all.chars().find(|c| CURRENCIES.contains(c));
    // Scaling commas: the commas right after the last digit placeholder.
    let last = pattern.rfind(['0', '#']);
    let commas = last.map_or(0, |i| {
        pattern[i + 1..].chars().take_while(|c| *c == ',').count()
    });
    let literal_scale = all.chars().find(|c| matches!(c, 'k' | 'K' | 'M'));
    let scale = match (commas, literal_scale) {
        (1, _) => Some('k'),
        (n, _) if n >= 2 => Some('m'),
        (_, Some('k' | 'K')) => Some('k'),
        (_, Some('M')) => Some('m'),
        _ => None,
    };
    token(currency, scale)
}

/// The explicit unit word a header or row label carries (§8.7: `€k`,
/// thousands, `$m`, `%`): `Some(Ok(token, word))`, `None` for none, and
/// `Some(Err(words))` when it carries two that differ.
pub fn word_token(text: &str) -> Option<Result<(String, String), Vec<String>>> {
    let mut found: Vec<(String, String)> = vec![];
    for raw in text.split(|c: char| c.is_whitespace() || "()[],;:/".contains(c)) {
        let w = raw.trim_matches(|c: char| c == '.' || c == '-');
        if w.is_empty() {
            continue;
        }
        let lower = w.to_lowercase();
        let t = match lower.as_str() {
            "thousand" | "thousands" | "k" => Some("k".to_string()),
            "million" | "millions" | "mn" => Some("m".to_string()),
            "%" | "percent" | "pct" => Some("%".to_string()),
            "eur" | "euro" | "euros" => Some("€".to_string()),
            _ => {
                let currency = w.chars().find(|c| CURRENCIES.contains(c));
                let rest: String = w.chars().filter(|c| !CURRENCIES.contains(c)).collect();
                match (currency, rest.as_str()) {
                    (Some(c), "") => token(Some(c), None),
                    (Some(c), "k" | "K") => token(Some(c), Some('k')),
                    (Some(c), "m" | "M") => token(Some(c), Some('m')),
                    _ if w.ends_with('%') && w.len() > 1 => None,
                    _ => None,
                }
            }
        };
        if let Some(t) = t {
            found.push((t, w.to_string()));
        }
    }
    // "€ thousands" is one unit: a currency word and a scale word together.
    if found.len() == 2 {
        let (a, b) = (&found[0].0, &found[1].0);
        let one = |cur: &str, sc: &str| {
            cur.chars().all(|c| CURRENCIES.contains(&c)) && (sc == "k" || sc == "m")
        };
        if one(a, b) || one(b, a) {
            let (cur, sc) = if one(a, b) { (a, b) } else { (b, a) };
            let words = format!("{} {}", found[0].1, found[1].1);
            return Some(Ok((format!("{cur}{sc}"), words)));
        }
    }
    let mut tokens: Vec<&String> = found.iter().map(|(t, _)| t).collect();
    tokens.sort();
    tokens.dedup();
    match tokens.len() {
        0 => None,
        1 => Some(Ok(found.swap_remove(0))),
        _ => Some(Err(found.into_iter().map(|(_, w)| w).collect())),
    }
}

/// A token named in words, e.g. `€k` is "thousands of euros".
pub fn token_in_words(token: &str) -> String {
    let (cur, scale): (String, String) = token.chars().partition(|c| CURRENCIES.contains(c));
    let cur = match cur.as_str() {
        "€" => "euros",
        "$" => "dollars",
        "£" => "pounds",
        "¥" => "yen",
        _ => "",
    };
    let scale = match scale.as_str() {
        "k" => "thousands",
        "m" => "millions",
        "%" => "percent",
        _ => "",
    };
    match (scale, cur) {
        ("", c) => c.to_string(),
        (s, "") => s.to_string(),
        (s, c) => format!("{s} of {c}"),
    }
}

/// Where a certified unit came from, named beside the number (§8.7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum UnitSource {
    /// The cell's format code, e.g. `€#,##0`.
    FormatCode {
        /// The code.
        code: String,
    },
    /// A unit word in the column header: a weaker provenance, said so.
    ColumnHeader {
        /// The header as displayed.
        header: String,
    },
    /// A unit word in the row label.
    RowLabel {
        /// The label as displayed.
        label: String,
    },
}

impl UnitSource {
    /// How the page names it: `the format code €#,##0`, `the column header "Jun 2024 €k"`.
    pub fn phrase(&self) -> String {
        match self {
            UnitSource::FormatCode { code } => format!("the format code {code}"),
            UnitSource::ColumnHeader { header } => format!("the column header \"{header}\""),
            UnitSource::RowLabel { label } => format!("the row label \"{label}\""),
        }
    }
}

/// One operand's certification (§8.7's table).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Certification {
    /// Certified to `token`.
    Certified {
        /// The canonical token, e.g. `€k`.
        token: String,
        /// Where it came from.
        source: UnitSource,
    },
    /// No token: General with no unit word, or two signals that disagree.
    Uncertified {
        /// Why, in a sentence the page shows.
        why: String,
    },
}

impl Certification {
    /// The token, when certified.
    pub fn token(&self) -> Option<&str> {
        match self {
            Certification::Certified { token, .. } => Some(token),
            Certification::Uncertified { .. } => None,
        }
    }
}

/// Certifies one operand from its indexed format code, its column header
/// and its row label (§8.7's fixed table).
pub fn certify(format_code: &str, column_header: &str, row_label: &str) -> Certification {
    let fmt = format_token(format_code);
    let header = word_token(column_header);
    let label = word_token(row_label);
    let word = match (header, label) {
        (Some(Err(ws)), _) | (_, Some(Err(ws))) => {
            return Certification::Uncertified {
                why: format!(
                    "its headers carry two different unit words ({})",
                    ws.join(", ")
                ),
            };
        }
        (Some(Ok((h, hw))), Some(Ok((l, lw)))) if h != l => {
            return Certification::Uncertified {
                why: format!("its column header says {hw} and its row label says {lw}"),
            };
        }
        (Some(Ok((t, _))), _) => Some((
            t,
            UnitSource::ColumnHeader {
                header: column_header.to_string(),
            },
        )),
        (None, Some(Ok((t, _)))) => Some((
            t,
            UnitSource::RowLabel {
                label: row_label.to_string(),
            },
        )),
        (None, None) => None,
    };
    match (fmt, word) {
        (Some(f), Some((w, _))) if f != w => Certification::Uncertified {
            why: format!("its format code {format_code} says {f} and its header says {w}"),
        },
        (Some(f), _) => Certification::Certified {
            token: f,
            source: UnitSource::FormatCode {
                code: format_code.to_string(),
            },
        },
        (None, Some((w, source))) => Certification::Certified { token: w, source },
        (None, None) => Certification::Uncertified {
            why: format!(
                "its format code is {format_code} and neither its column header nor its row label names a unit"
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_codes_give_the_tokens_of_the_fixed_table() {
        let rows = [
            ("€#,##0", Some("€")),
            ("k€#,##0", Some("€k")),
            ("€#,##0,", Some("€k")),
            ("\"k€\"#,##0", Some("€k")),
            ("[$€-407]#,##0.00", Some("€")),
            ("$#,##0,,\"M\"", Some("$m")),
            ("#,##0,", Some("k")),
            ("0.0%", Some("%")),
            ("#,##0", None),
            ("0.00", None),
            ("General", None),
        ];
        for (code, want) in rows {
            assert_eq!(format_token(code).as_deref(), want, "{code}");
        }
    }

    #[test]
    fn header_words_give_the_tokens_of_the_fixed_table() {
        let rows = [
            ("Jun 2024 €k", Some(Ok("€k"))),
            ("Revenue (thousands)", Some(Ok("k"))),
            ("Revenue $m", Some(Ok("$m"))),
            ("Margin %", Some(Ok("%"))),
            ("€ thousands", Some(Ok("€k"))),
            ("Jun 2024", None),
            ("Revenue", None),
            ("€k and %", Some(Err(()))),
        ];
        for (text, want) in rows {
            let got = word_token(text).map(|r| r.map(|(t, _)| t).map_err(|_| ()));
            assert_eq!(
                got.as_ref()
                    .map(|r| r.as_ref().map(String::as_str).map_err(|_| ())),
                want,
                "{text}"
            );
        }
    }

    #[test]
    fn certification_follows_the_five_rows_of_the_table() {
        let c = |f, h, l| certify(f, h, l).token().map(str::to_string);
        assert_eq!(c("€#,##0", "Jun 2024", "Revenue").as_deref(), Some("€"));
        assert_eq!(
            c("General", "Jun 2024 €k", "Revenue").as_deref(),
            Some("€k")
        );
        assert_eq!(
            c("k€#,##0", "Jun 2024 €k", "Revenue").as_deref(),
            Some("€k")
        );
        assert_eq!(c("€#,##0", "Jun 2024 €k", "Revenue"), None);
        assert_eq!(c("General", "Jun 2024", "Revenue"), None);
    }
}

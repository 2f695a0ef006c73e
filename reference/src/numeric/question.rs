//! Reading a numeric question (§8.2's numeric route, §8.7): the aggregate it asks for, the measure's words, and the periods, with the basis named.
//!
//! Deterministic and model-free. A question is numeric when it holds one of
//! the aggregate words ("average", "total", "sum", "highest", "lowest",
//! "how many", ...); its periods are the months and years it names, and
//! "the last N years" counts back from the year on the instance's clock,
//! which the answer names (§8.7: "which years 'last three' meant").

use serde::Serialize;

use super::sheet::{month_of, year_of};
use crate::net::s6::Aggregate;

/// Most periods one question may name; more is not a numeric question
/// this route answers. Bounded by S6's cap (§6.1: 64 cells per call).
pub const PERIODS_MAX: usize = crate::net::s6::S6_CELLS_PER_CALL_MAX;

/// One period a slot names: canonical (`2024-06`, `2024`) and as shown (`Jun 2024`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Period {
    /// `2024-06` or `2024`.
    pub canonical: String,
    /// `Jun 2024` or `2024`.
    pub label: String,
}

/// A numeric question, read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Question {
    /// The function S6 will be asked for.
    pub function: Aggregate,
    /// The measure's words, lowercased, in the order typed (`revenue`).
    pub measure: Vec<String>,
    /// The periods, one slot each, in time order.
    pub periods: Vec<Period>,
    /// Which periods the question meant and why, e.g. "the last 3 years
    /// counted back from this year on memoria's clock: 2024, 2025, 2026".
    pub basis: String,
}

const MONTH_LABELS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Words that say nothing about the measure.
const FILLER: [&str; 38] = [
    "what", "whats", "what's", "s", "is", "was", "were", "the", "a", "an", "in", "of", "for",
    "over", "last", "past", "year", "years", "this", "how", "many", "our", "my", "across", "per",
    "on", "during", "show", "me", "tell", "from", "to", "and", "by", "each", "did", "we", "month",
];

fn count_word(w: &str) -> Option<u32> {
    let n = match w {
        "one" => 1,
        "two" => 2,
        "three" => 3,
        "four" => 4,
        "five" => 5,
        "six" => 6,
        "seven" => 7,
        "eight" => 8,
        "nine" => 9,
        "ten" => 10,
        _ => w.parse().ok()?,
    };
    (1..=10).contains(&n).then_some(n)
}

fn aggregate_of(words: &[String]) -> Option<Aggregate> {
    let has = |w: &str| words.iter().any(|x| x == w);
    if has("average") || has("mean") {
        Some(Aggregate::Average)
    } else if has("total") || has("sum") {
        Some(Aggregate::Sum)
    } else if has("highest") || has("maximum") || has("max") || has("largest") {
        Some(Aggregate::Max)
    } else if has("lowest") || has("minimum") || has("min") || has("smallest") {
        Some(Aggregate::Min)
    } else if words.windows(2).any(|w| w[0] == "how" && w[1] == "many") || has("count") {
        Some(Aggregate::Count)
    } else {
        None
    }
}

/// Reads `q` as a numeric question, on the date `today` (`YYYY-MM-DD`,
/// from the instance's clock). `None` when it names no aggregate word, or
/// more than [`PERIODS_MAX`] periods.
pub fn parse(q: &str, today: &str) -> Option<Question> {
    let words: Vec<String> = q
        .split(|c: char| c.is_whitespace() || ",.?!;:()\"".contains(c))
        .map(|w| w.trim_matches('\'').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect();
    let function = aggregate_of(&words)?;
    let this_year: u32 = today.get(..4)?.parse().ok()?;
    let mut months: Vec<u32> = vec![];
    let mut years: Vec<u32> = vec![];
    let mut measure = vec![];
    let mut basis = vec![];
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        // "last 3 years", "past three years"
        if matches!(w, "last" | "past")
            && let Some(n) = words.get(i + 1).and_then(|n| count_word(n))
            && words
                .get(i + 2)
                .is_some_and(|y| y == "years" || y == "year")
        {
            let from = this_year + 1 - n;
            let span: Vec<u32> = (from..=this_year).collect();
            basis.push(format!(
                "\"{} {} {}\" is taken as {}, counted back from this year on memoria's clock",
                w,
                words[i + 1],
                words[i + 2],
                span.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            years.extend(span);
            i += 3;
            continue;
        }
        if matches!(w, "last" | "this") && words.get(i + 1).is_some_and(|y| y == "year") {
            let y = if w == "last" {
                this_year - 1
            } else {
                this_year
            };
            basis.push(format!("\"{w} year\" is taken as {y}"));
            years.push(y);
            i += 2;
            continue;
        }
        if let Some(y) = year_of(w) {
            years.push(y);
        } else if let Some(m) = month_of(w).filter(|_| w.len() >= 3) {
            months.push(m);
        } else if aggregate_of(std::slice::from_ref(&words[i])).is_none()
            && !FILLER.contains(&w)
            && !crate::search::query::is_stop_word(w)
            && w.chars().any(char::is_alphabetic)
        {
            measure.push(w.to_string());
        }
        i += 1;
    }
    years.sort_unstable();
    years.dedup();
    months.sort_unstable();
    months.dedup();
    if !months.is_empty() && years.is_empty() {
        basis.push(format!(
            "no year was named, so {this_year}, this year on memoria's clock, is taken"
        ));
        years.push(this_year);
    }
    let periods: Vec<Period> = if months.is_empty() {
        years
            .iter()
            .map(|y| Period {
                canonical: format!("{y:04}"),
                label: y.to_string(),
            })
            .collect()
    } else {
        years
            .iter()
            .flat_map(|y| {
                months.iter().map(move |m| Period {
                    canonical: format!("{y:04}-{m:02}"),
                    label: format!("{} {y}", MONTH_LABELS[*m as usize - 1]),
                })
            })
            .collect()
    };
    if periods.len() > PERIODS_MAX {
        return None;
    }
    if basis.is_empty() {
        basis.push("the periods are the ones the question names".into());
    }
    Some(Question {
        function,
        measure,
        periods,
        basis: basis.join("; "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauls_question_names_three_slots_and_says_which_years_it_meant() {
        let q = parse(
            "what's average revenue in June the last 3 years",
            "2026-12-05",
        )
        .unwrap();
        assert_eq!(q.function, Aggregate::Average);
        assert_eq!(q.measure, ["revenue"]);
        let labels: Vec<&str> = q.periods.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, ["Jun 2024", "Jun 2025", "Jun 2026"]);
        assert_eq!(
            q.basis,
            "\"last 3 years\" is taken as 2024, 2025, 2026, counted back from this year on memoria's clock"
        );
    }

    /// A question, and the function and canonical periods it reads as.
    type Row<'a> = (&'a str, Option<(Aggregate, &'a [&'a str])>);

    #[test]
    fn questions_are_read_as_a_table_says() {
        let rows: [Row<'_>; 6] = [
            (
                "total costs 2024",
                Some((Aggregate::Sum, &["2024"] as &[&str])),
            ),
            (
                "highest revenue in march and june 2025",
                Some((Aggregate::Max, &["2025-03", "2025-06"])),
            ),
            (
                "lowest margin in June",
                Some((Aggregate::Min, &["2026-06"])),
            ),
            (
                "how many invoices last year",
                Some((Aggregate::Count, &["2025"])),
            ),
            ("where is the Q3 budget", None),
            ("revenue june 2024", None),
        ];
        for (text, want) in rows {
            let got = parse(text, "2026-12-05").map(|q| {
                (
                    q.function,
                    q.periods
                        .into_iter()
                        .map(|p| p.canonical)
                        .collect::<Vec<_>>(),
                )
            });
            let want = want.map(|(f, p)| (f, p.iter().map(|s| s.to_string()).collect()));
            assert_eq!(got, want, "{text}");
        }
    }
}

//! Gate 36 (§8.8): a fact's label is taken from the document and never composed.
//!
//! Requirement: the label is the run back to the start of the enclosing
//! sentence or line, starting after any earlier recognised span of any
//! kind; less one leading list marker; ending in a separator (`:`, `—`,
//! `–`, `-`, `=`, tab) and non-empty after removing it; at most 60
//! characters, and a longer one silences the kind rather than falling back;
//! an empty one falls through to the heading trail, then the title, never
//! the empty string. A value in a Markdown table row is labelled from the
//! row's own cells, never with table syntax (issue 32). Each case quotes
//! the sentence of §8.8 it holds; the
//! worked examples (the two office numbers in one chunk, the CEO's line)
//! are cases.

use memoria::facts::{self, Kind, LABEL_CHARS_MAX};

use crate::rigs::facts::{boxes_for, rows};
use crate::{Case, Ctx, Failure, Gate, ensure};

/// Gate 36.
pub static GATE: Gate = Gate {
    id: "36",
    title: "Fact box: the label rules",
    gates_md: &["Fact box: recognisers and validators, label rules, cap / collision / narrowing"],
    sections: &["§8.8"],
    requirement: "Every label is the document's own words before the value (sentence- or line-anchored, after any earlier span of any kind, list marker stripped, ending in a separator, 1 to 60 characters; in a Markdown table row, from the row's own cells without table syntax), or the heading trail, or the title; never composed and never empty; an over-long own label silences its kind.",
    cases: &[
        Case {
            id: "36/earlier-span-starts-the-run",
            desc: "\"If that run contains another recognised span, start after it — in Phone: 01 547 7854 - 01 598 1234 the second number's run would otherwise be Phone: 01 547 7854 -\". The first is labelled Phone (own); the second falls to the trail.",
            run: earlier_span,
        },
        Case {
            id: "36/spans-of-every-kind-are-skipped",
            desc: "\"The spans it skips are of every kind, not only the kinds the query named … \"Email paul@tito.io or phone: 01 547 7854\" came back labelled Email paul@tito.io or phone\". The phone's label holds no email address.",
            run: every_kind,
        },
        Case {
            id: "36/separator-ends-the-label",
            desc: "\"If what remains ends in a separator — :, —, –, -, =, tab — and is non-empty after removing it and trimming … that is the label.\" Each of the six gives Reception, marked the document's own.",
            run: separators,
        },
        Case {
            id: "36/empty-falls-through",
            desc: "\"Empty after the separator → fall through. A markdown bullet is the case\": two bare - +353 … bullets are labelled by the trail, not the empty string, and not marked the document's own.",
            run: empty_falls_through,
        },
        Case {
            id: "36/over-sixty-silences-the-kind",
            desc: "\"Longer than 60 → no box for that kind. Not the trail instead.\" The CEO's line with a 61-character label beside Reception renders no phone box; the same line at 60 characters renders both rows, the long label verbatim; and the limit is in characters, so a 60-character label written with fadas (more than 60 bytes) is not over-long.",
            run: over_sixty,
        },
        Case {
            id: "36/list-marker-is-markup",
            desc: "\"the run … loses its leading indentation and one leading marker: -, *, + or •, each followed by a space; N. or N) followed by a space; either of those followed by [ ] or [x]; or > followed by a space.\" Each gives Office.",
            run: list_marker,
        },
        Case {
            id: "36/abbreviations-do-not-end-a-sentence",
            desc: "\"Dr. Smith's direct line: 01 … yields Smith's direct line … A short fixed exception list — Dr. Mr. Mrs. Ms. St. No. ext. Ltd. Co.\" The labels keep Dr. and St., and each of the nine keeps its full stop inside the label; and \"Take the run back to the start of the enclosing sentence\": a sentence ended by ? or ! ends the run as a full stop does.",
            run: abbreviations,
        },
        Case {
            id: "36/trail-then-title-never-empty",
            desc: "\"Otherwise the chunk's heading trail, and if there is none … the document title, never the empty string.\"",
            run: trail_then_title,
        },
        Case {
            id: "36/table-rows-label-from-their-own-cells",
            desc: "A value in a Markdown table row is labelled from the row's own cells, never with table syntax in it (issue 32: \"Take the label from the row's own cells (the cell before the value, or the row's first cell)\"): the words before it in its cell ending in a separator, else the cell before, else the first cell; a cell holding another value is skipped; a table cut before its header reads the same; and a phone search over a two-row table renders both rows under their own labels, where both used to collide on the trail.",
            run: table_rows,
        },
        Case {
            id: "36/two-office-numbers-in-one-chunk",
            desc: "The motivating fixture: \"Turn the knob. The office phone number is: +353 (0)1 547 7854. We also have the following unused phone numbers: +353 (0)1 598 1234.\" The labels become \"The office phone number is\" and \"We also have the following unused phone numbers\" (47 characters), and a phone query renders both.",
            run: two_office_numbers,
        },
    ],
};

/// Every fact in `text` as (span, label, own, over-long).
fn labels(
    text: &str,
    trail: &[&str],
    title: &str,
) -> Result<Vec<(String, String, bool, bool)>, Failure> {
    let trail: Vec<String> = trail.iter().map(|s| s.to_string()).collect();
    let found = facts::scan(text, &trail, title)
        .map_err(|e| Failure::new("the passage is within the bounds", format!("{e:?}")))?;
    Ok(found
        .into_iter()
        .map(|f| (f.span, f.label.text, f.label.own, f.label.over_long))
        .collect())
}

/// Requires the `i`th fact of `text` to be labelled `want`, own or not.
fn label_is(
    text: &str,
    trail: &[&str],
    title: &str,
    i: usize,
    want: &str,
    own: bool,
) -> Result<(), Failure> {
    let l = labels(text, trail, title)?;
    let got = l.get(i).map(|(_, t, o, _)| (t.as_str(), *o));
    ensure(
        got == Some((want, own)),
        format!("fact {i} of {text:?} is labelled {want:?} (own: {own})"),
        format!("{l:?}"),
    )
}

fn earlier_span(_: &mut Ctx) -> Result<(), Failure> {
    let text = "Phone: 01 547 7854 - 01 598 1234";
    label_is(
        text,
        &["Office", "Phone numbers"],
        "Office",
        0,
        "Phone",
        true,
    )?;
    label_is(
        text,
        &["Office", "Phone numbers"],
        "Office",
        1,
        "Phone numbers",
        false,
    )
}

fn every_kind(_: &mut Ctx) -> Result<(), Failure> {
    let text = "Email paul@tito.io or phone: 01 547 7854";
    let l = labels(text, &[], "Tito")?;
    let phone = l.iter().find(|(s, ..)| s == "01 547 7854");
    ensure(
        phone.is_some_and(|(_, t, own, _)| !t.contains('@') && t == "or phone" && *own),
        "the phone is labelled \"or phone\", after the email address",
        format!("{l:?}"),
    )
}

fn separators(_: &mut Ctx) -> Result<(), Failure> {
    for sep in [":", " —", " –", " -", " =", "\t"] {
        let text = format!("Reception{sep} +353 1 547 7854");
        label_is(&text, &[], "T", 0, "Reception", true)?;
    }
    label_is(
        "Call Reception on +353 1 547 7854",
        &["Desk"],
        "T",
        0,
        "Desk",
        false,
    )
}

fn empty_falls_through(_: &mut Ctx) -> Result<(), Failure> {
    let text = "- +353 1 547 7854\n- +353 1 598 1234";
    label_is(text, &["Contacts"], "Office", 0, "Contacts", false)?;
    label_is(text, &["Contacts"], "Office", 1, "Contacts", false)?;
    label_is(
        "  -  01 547 7854",
        &["Contacts"],
        "Office",
        0,
        "Contacts",
        false,
    )
}

fn over_sixty(ctx: &mut Ctx) -> Result<(), Failure> {
    let label61 = "The number you must never give out as it rings the CEO direct";
    ensure(
        label61.chars().count() == LABEL_CHARS_MAX + 1,
        "the fixture's label is 61 characters",
        format!("{}", label61.chars().count()),
    )?;
    let body = |label: &str| {
        format!("# Contacts\n\nPhone list.\n\nReception: 01 547 7854\n\n{label}: 01 598 1234\n")
    };
    let long = body(label61);
    let l = labels(&long, &["Contacts"], "Contacts")?;
    ensure(
        l.iter()
            .any(|(_, t, own, over)| t == label61 && *own && *over),
        "the 61-character label is kept, marked over-long",
        format!("{l:?}"),
    )?;
    let b = boxes_for(ctx, &[("Contacts", &long)], "phone")?;
    ensure(
        b.is_empty(),
        "a 61-character label silences the phone box (not the trail instead, and not one row)",
        format!("{:?}", b.iter().map(rows).collect::<Vec<_>>()),
    )?;
    // Characters, not bytes: 60 characters with fadas are not over-long.
    let fada60: String = "Uimhir fóin na fáiltithe in oifig Bhaile Átha Cliath, Éire"
        .chars()
        .chain(std::iter::repeat('á'))
        .take(LABEL_CHARS_MAX)
        .collect();
    ensure(
        fada60.chars().count() == LABEL_CHARS_MAX && fada60.len() > LABEL_CHARS_MAX,
        "the fada fixture is 60 characters and more than 60 bytes",
        format!(
            "{} characters, {} bytes",
            fada60.chars().count(),
            fada60.len()
        ),
    )?;
    let l = labels(&body(&fada60), &["Contacts"], "Contacts")?;
    ensure(
        l.iter()
            .any(|(_, t, own, over)| t == &fada60 && *own && !*over),
        "the 60-character label with fadas is the document's own and not over-long",
        format!("{l:?}"),
    )?;
    let label60: String = label61.chars().take(LABEL_CHARS_MAX).collect();
    let ok = body(&label60);
    let b = boxes_for(ctx, &[("Contacts", &ok)], "phone")?;
    let got: Vec<_> = b.iter().map(rows).collect();
    ensure(
        b.len() == 1
            && b[0].kind == Kind::Phone
            && rows(&b[0])
                .iter()
                .any(|(l, v)| l == &label60 && v == "01 598 1234")
            && b[0].rows.len() == 2,
        "a 60-character label renders, verbatim, beside Reception",
        format!("{got:?}"),
    )
}

fn list_marker(_: &mut Ctx) -> Result<(), Failure> {
    for line in [
        "- Office: 01 547 7854",
        "  * Office: 01 547 7854",
        "+ Office: 01 547 7854",
        "• Office: 01 547 7854",
        "3) Office: 01 547 7854",
        "- [ ] Office: 01 547 7854",
        "- [x] Office: 01 547 7854",
        "> Office: 01 547 7854",
    ] {
        label_is(line, &[], "T", 0, "Office", true)?;
    }
    Ok(())
}

fn abbreviations(_: &mut Ctx) -> Result<(), Failure> {
    label_is(
        "Dr. Smith's direct line: 01 547 7854",
        &[],
        "T",
        0,
        "Dr. Smith's direct line",
        true,
    )?;
    label_is(
        "St. Stephen's Green office: 01 547 7854",
        &[],
        "T",
        0,
        "St. Stephen's Green office",
        true,
    )?;
    label_is(
        "Closed. Front desk: 01 547 7854",
        &[],
        "T",
        0,
        "Front desk",
        true,
    )?;
    // Every entry of §8.8's list, not only the ones its examples name.
    for abbr in ["Dr", "Mr", "Mrs", "Ms", "St", "No", "ext", "Ltd", "Co"] {
        let want = format!("Almendra {abbr}. front desk");
        label_is(&format!("{want}: 01 547 7854"), &[], "T", 0, &want, true)?;
    }
    // The presence that makes the list mean something: a sentence does end.
    label_is(
        "Any questions? Front desk: 01 547 7854",
        &[],
        "T",
        0,
        "Front desk",
        true,
    )?;
    label_is(
        "Welcome! Front desk: 01 547 7854",
        &[],
        "T",
        0,
        "Front desk",
        true,
    )
}

fn trail_then_title(_: &mut Ctx) -> Result<(), Failure> {
    let text = "Call 01 547 7854 today";
    label_is(text, &["Office", "Phones"], "Office", 0, "Phones", false)?;
    label_is(text, &[], "Office", 0, "Office", false)?;
    let l = labels(text, &[], "")?;
    ensure(
        l.first().is_some_and(|(_, t, ..)| !t.trim().is_empty()),
        "with no trail and no title the label is still not empty",
        format!("{l:?}"),
    )
}

fn table_rows(ctx: &mut Ctx) -> Result<(), Failure> {
    let table = "| Office | Line | Number |\n|---|---|---|\n| Dublin | Reception | 01 547 7854 |\n| Cork |  | 021 490 1234 |\n| Galway | Fax: 091 123 456 | Main: 091 567 890 |";
    for (text, what) in [
        (table.to_string(), "the whole table"),
        (
            table.lines().skip(2).collect::<Vec<_>>().join("\n"),
            "the table cut before its header",
        ),
    ] {
        let l = labels(&text, &["Offices"], "Contacts")?;
        let got: Vec<(&str, &str, bool)> = l
            .iter()
            .map(|(s, t, own, _)| (s.as_str(), t.as_str(), *own))
            .collect();
        ensure(
            got == [
                ("01 547 7854", "Reception", true),
                ("021 490 1234", "Cork", true),
                ("091 123 456", "Fax", true),
                ("091 567 890", "Main", true),
            ],
            format!("in {what}, each value is labelled from its row's own cells"),
            format!("{l:?}"),
        )?;
    }
    // A cell holding another value is skipped for the row's first cell.
    label_is(
        "| Galway | 091 123 456 | 091 567 890 |",
        &["Offices"],
        "Contacts",
        1,
        "Galway",
        true,
    )?;
    let doc = "# Contacts\n\n## Offices\n\n| Office | Phone |\n|---|---|\n| Dublin | 01 547 7854 |\n| Cork | 021 490 1234 |\n";
    let b = boxes_for(ctx, &[("Contacts", doc)], "phone")?;
    let got: Vec<_> = b.iter().map(rows).collect();
    ensure(
        got == [vec![
            ("Dublin".to_string(), "01 547 7854".to_string()),
            ("Cork".to_string(), "021 490 1234".to_string()),
        ]],
        "a phone search over a two-row table renders both rows under their own labels",
        format!("{got:?}"),
    )
}

fn two_office_numbers(ctx: &mut Ctx) -> Result<(), Failure> {
    let chunk = "Turn the knob. The office phone number is: +353 (0)1 547 7854. We also have the following unused phone numbers: +353 (0)1 598 1234.";
    label_is(
        chunk,
        &["Office Address"],
        "Office",
        0,
        "The office phone number is",
        true,
    )?;
    let second = "We also have the following unused phone numbers";
    ensure(
        second.chars().count() == 47,
        "the longer label is 47",
        "it is not",
    )?;
    label_is(chunk, &["Office Address"], "Office", 1, second, true)?;
    let body = format!("# Office\n\n## Office Address\n\n{chunk}\n");
    let b = boxes_for(
        ctx,
        &[("Office", &body)],
        "what is the office phone number?",
    )?;
    let got: Vec<_> = b.iter().map(rows).collect();
    ensure(
        got == [vec![
            (
                "The office phone number is".to_string(),
                "+353 (0)1 547 7854".to_string(),
            ),
            (second.to_string(), "+353 (0)1 598 1234".to_string()),
        ]],
        "one phone box with both numbers, each in the document's words",
        format!("{got:?}"),
    )
}

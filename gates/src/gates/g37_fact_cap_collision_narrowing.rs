//! Gate 37 (§8.8): one candidate per value, and per kind the cap of three, the citation-line collision and narrowing by the reader's own words; one box per kind.
//!
//! Requirement: a candidate is one canonical value, cited to the
//! best-ranked passage carrying it. Per kind: three candidates render, four
//! render nothing; two whose whole citation line (title, trail, label)
//! collides render nothing; over the cap, exactly one candidate whose own
//! label holds every qualifier as a whole token renders alone with the line
//! "Matched “q”. N other … are in these results.", and none or two render
//! nothing. The lexicon matches the longest phrase first and `number` alone
//! primes nothing; the qualifiers are §8.8's pinned examples. Every case
//! searches a real instance and asserts the page's boxes.

use memoria::facts::{FactQuery, Kind};

use crate::rigs::facts::{boxes_for, instance_with, page_for, rows, search};
use crate::{Case, Ctx, Failure, Gate, ensure};

/// Gate 37.
pub static GATE: Gate = Gate {
    id: "37",
    title: "Fact box: cap, collision and narrowing",
    gates_md: &["Fact box: recognisers and validators, label rules, cap / collision / narrowing"],
    sections: &["§8.8"],
    requirement: "One candidate per canonical value, cited to its best-ranked passage; per kind, at most three render and four render nothing, a colliding citation line renders nothing, and over the cap exactly one own label holding every qualifier renders alone with its count line; one box per kind; the lexicon and the qualifiers are §8.8's.",
    cases: &[
        Case {
            id: "37/one-candidate-per-value",
            desc: "\"The same number in five forwarded signatures is one candidate, cited to the best-ranked passage carrying it.\" 01 547 7854 in one document and +353 (0)1 547 7854 in another are one row, cited to whichever ranks first, in that passage's spelling.",
            run: one_per_value,
        },
        Case {
            id: "37/three-render-four-do-not",
            desc: "\"Capped at three inclusive: three renders, four renders nothing.\"",
            run: cap_of_three,
        },
        Case {
            id: "37/colliding-line-renders-nothing",
            desc: "\"Two candidates whose whole citation line collides — same title, same trail, same label — render no box.\" Two trail-labelled numbers under one heading render nothing; the same under two titles render both; one title's Dublin and Cork sections, each labelling its number Reception phone, render both, the trail telling them apart.",
            run: collision,
        },
        Case {
            id: "37/one-box-per-kind",
            desc: "\"Every rule below is applied per kind, and a multi-kind query renders one box per kind.\" Two phones and two emails render two boxes of two; four phones beside one email leave the email's box.",
            run: per_kind,
        },
        Case {
            id: "37/narrowing-exactly-one",
            desc: "\"Exactly one candidate matches: that candidate renders, alone.\" The Office page holding the office number and three unused ones answers \"what is the office phone number?\" with the office row and \"Matched “office”. 3 other phone numbers are in these results.\"",
            run: narrowing_exactly_one,
        },
        Case {
            id: "37/narrowing-never-picks",
            desc: "\"None, or two or more: nothing renders, as before.\" Two labels holding office, no label holding dublin, and no qualifier at all each render nothing.",
            run: narrowing_never_picks,
        },
        Case {
            id: "37/narrowing-only-over-the-cap",
            desc: "\"When it applies: only when the cap has fired.\" Two candidates and a qualifier matching one render both, with no count line.",
            run: narrowing_only_over_cap,
        },
        Case {
            id: "37/narrowing-own-labels-whole-tokens-every-qualifier",
            desc: "\"A rule 5 label (the heading trail, or the title) never matches\"; \"office does not match offices or backoffice\"; \"Every qualifier, not any.\"",
            run: narrowing_matching,
        },
        Case {
            id: "37/narrowed-over-long-renders-nothing",
            desc: "\"If its label is over-long (rule 4), the kind renders nothing: the document's own words are the answer, and they cannot be shown.\"",
            run: narrowed_over_long,
        },
        Case {
            id: "37/lexicon-longest-phrase-first",
            desc: "\"email address primes email — longest phrase first\"; \"number on its own primes nothing\"; bank details primes IBAN, post code eircode, e-mail email; \"main office landline\" primes nothing.",
            run: lexicon,
        },
        Case {
            id: "37/qualifiers-as-pinned",
            desc: "The pinned examples: \"what is the office phone number?\" → {office}; \"office phone\" → {office}; \"office mobile\" → {office}; \"what's Tito's phone number\" → {tito}; \"phone number for the Dublin office\" → {dublin, office}; \"support email\" → {support}; \"phone number\" → none; and \"every token of every lexicon phrase, for every kind\" is removed even where the phrase did not match: \"post office phone\" → {office}, \"phone details\" → none.",
            run: qualifiers,
        },
        Case {
            id: "37/box-is-text-its-only-links-citations",
            desc: "\"Nothing in the box is ever an anchor. The value is text; the only link the box carries is its citation, to /documents/{id}#p{n}. No mailto:, no href built from a document's bytes.\" On the rendered page, a phone and an email box each hold their value as text, a label holding a literal <a href=…> shows as those characters, and every href in the box is a citation.",
            run: box_is_text,
        },
    ],
};

/// The boxes' rows, for messages.
fn shown(b: &[memoria::facts::FactBox]) -> String {
    format!(
        "{:?}",
        b.iter()
            .map(|x| (x.kind, rows(x), x.narrowed.clone()))
            .collect::<Vec<_>>()
    )
}

fn one_per_value(ctx: &mut Ctx) -> Result<(), Failure> {
    let docs = [
        ("Signature", "# Signature\n\nAna, phone: 01 547 7854\n"),
        (
            "Office",
            "# Office\n\nReception phone: +353 (0)1 547 7854\n",
        ),
    ];
    let m = instance_with(ctx, &docs)?;
    let page = search(&m, "phone")?;
    ensure(
        page.results.len() == 2,
        "both documents are results",
        format!("{}", page.results.len()),
    )?;
    let b = &page.facts;
    ensure(
        b.len() == 1 && b[0].rows.len() == 1,
        "one phone box with one row: one value",
        shown(b),
    )?;
    let first = &page.results[0];
    let row = &b[0].rows[0];
    ensure(
        row.link == first.link && first.text.contains(&row.value),
        "the row cites the best-ranked passage, in its spelling",
        format!(
            "row {} {:?}, first result {}",
            row.link, row.value, first.link
        ),
    )
}

fn four_numbers() -> &'static str {
    "# Office\n\nPhone list.\n\nA: 01 547 7854\nB: 01 598 1234\nC: 01 547 7860\nD: +353 87 120 4455\n"
}

fn cap_of_three(ctx: &mut Ctx) -> Result<(), Failure> {
    let three = "# Office\n\nPhone list.\n\nA: 01 547 7854\nB: 01 598 1234\nC: 01 547 7860\n";
    let b = boxes_for(ctx, &[("Office", three)], "phone")?;
    ensure(
        b.len() == 1 && b[0].rows.len() == 3,
        "three candidates render",
        shown(&b),
    )?;
    let b = boxes_for(ctx, &[("Office", four_numbers())], "phone")?;
    ensure(b.is_empty(), "four candidates render nothing", shown(&b))
}

fn collision(ctx: &mut Ctx) -> Result<(), Failure> {
    let one = "# Office\n\n## Contact\n\nPhone 01 547 7854 or 01 598 1234 today.\n";
    let b = boxes_for(ctx, &[("Office", one)], "phone")?;
    ensure(
        b.is_empty(),
        "two rows with one citation line render nothing",
        shown(&b),
    )?;
    let docs = [
        (
            "Office",
            "# Office\n\n## Contact\n\nPhone 01 547 7854 today.\n",
        ),
        (
            "Supplier",
            "# Supplier\n\n## Contact\n\nPhone 01 598 1234 today.\n",
        ),
    ];
    let b = boxes_for(ctx, &docs, "phone")?;
    ensure(
        b.len() == 1 && b[0].rows.len() == 2,
        "the same trail and label under two titles render both",
        shown(&b),
    )?;
    let sections = "# Office\n\n## Dublin\n\nReception phone: 01 547 7854\n\n## Cork\n\nReception phone: 021 427 1234\n";
    let b = boxes_for(ctx, &[("Office", sections)], "phone")?;
    let trails: Vec<Vec<String>> = b
        .iter()
        .flat_map(|x| x.rows.iter().map(|r| r.trail.clone()))
        .collect();
    ensure(
        b.len() == 1 && b[0].rows.len() == 2 && trails[0] != trails[1],
        "one title, one label, two trails: both render",
        format!("{} {trails:?}", shown(&b)),
    )
}

fn per_kind(ctx: &mut Ctx) -> Result<(), Failure> {
    let doc = "# Office\n\nA phone: 01 547 7854\nB phone: 01 598 1234\nA email: ana@almendra.example\nB email: bea@almendra.example\n";
    let b = boxes_for(ctx, &[("Office", doc)], "phone and email")?;
    let kinds: Vec<(Kind, usize)> = b.iter().map(|x| (x.kind, x.rows.len())).collect();
    ensure(
        kinds == [(Kind::Phone, 2), (Kind::Email, 2)],
        "one box per kind, in the order named, two rows each",
        shown(&b),
    )?;
    let doc = format!("{}Email: ana@almendra.example\n", four_numbers());
    let b = boxes_for(ctx, &[("Office", &doc)], "phone and email")?;
    let kinds: Vec<(Kind, usize)> = b.iter().map(|x| (x.kind, x.rows.len())).collect();
    ensure(
        kinds == [(Kind::Email, 1)],
        "the phone cap does not suppress the email",
        shown(&b),
    )
}

fn office_page() -> &'static str {
    "# Office\n\n## Office Address\n\nOffice phone: 01 547 7854\n\nUnused: 01 598 1234\n\nUnused: 01 547 7860\n\nUnused: +353 87 120 4455\n"
}

fn narrowing_exactly_one(ctx: &mut Ctx) -> Result<(), Failure> {
    let b = boxes_for(
        ctx,
        &[("Office", office_page())],
        "what is the office phone number?",
    )?;
    let line = b
        .first()
        .and_then(|x| x.narrowed.as_ref().map(|n| n.sentence(x.kind)));
    ensure(
        b.len() == 1 && rows(&b[0]) == [("Office phone".to_string(), "01 547 7854".to_string())],
        "one row: the office number, in the document's words",
        shown(&b),
    )?;
    ensure(
        line.as_deref() == Some("Matched “office”. 3 other phone numbers are in these results."),
        "the count line names the qualifier and the three others",
        format!("{line:?}"),
    )
}

fn narrowing_never_picks(ctx: &mut Ctx) -> Result<(), Failure> {
    let two = format!("{}\nOffice fax: 01 547 7869\n", office_page());
    for (doc, q, why) in [
        (two.as_str(), "office phone", "two labels hold office"),
        (office_page(), "dublin phone", "no label holds dublin"),
        (office_page(), "phone number", "no qualifier"),
    ] {
        let b = boxes_for(ctx, &[("Office", doc)], q)?;
        ensure(b.is_empty(), format!("nothing renders: {why}"), shown(&b))?;
    }
    Ok(())
}

fn narrowing_only_over_cap(ctx: &mut Ctx) -> Result<(), Failure> {
    let doc = "# Office\n\nOffice phone: 01 547 7854\n\nWarehouse phone: 01 598 1234\n";
    let b = boxes_for(ctx, &[("Office", doc)], "office phone")?;
    ensure(
        b.len() == 1 && b[0].rows.len() == 2 && b[0].narrowed.is_none(),
        "under the cap both render and nothing is narrowed",
        shown(&b),
    )
}

fn narrowing_matching(ctx: &mut Ctx) -> Result<(), Failure> {
    let trail_only = "# Office\n\n## Office Address\n\n- +353 1 547 7854\n- +353 1 598 1234\n- +353 1 547 7860\n- +353 87 120 4455\n";
    let b = boxes_for(ctx, &[("Office", trail_only)], "office phone")?;
    ensure(
        b.is_empty(),
        "trail labels never match a qualifier",
        shown(&b),
    )?;
    // One trail label holds the qualifier and no own label does: a match on
    // the trail would be exactly one, and it must not count.
    let one_trail = "# Phones

## Office

Phone 01 547 7854 today.

## Warehouse

A: 01 598 1234

B: 01 547 7860

C: +353 87 120 4455
";
    let b = boxes_for(ctx, &[("Phones", one_trail)], "office phone")?;
    ensure(
        b.is_empty(),
        "the one trail label holding office does not match",
        shown(&b),
    )?;
    let tokens = "# Phones\n\nOffices: 01 547 7854\n\nBackoffice: 01 598 1234\n\nOffice phone: 01 547 7860\n\nCork: +353 87 120 4455\n";
    let b = boxes_for(ctx, &[("Phones", tokens)], "office phone")?;
    ensure(
        b.len() == 1 && rows(&b[0]) == [("Office phone".to_string(), "01 547 7860".to_string())],
        "office matches the whole token only",
        shown(&b),
    )?;
    // Office phone holds office and not dublin: with "any" it would be the
    // one match.
    let b = boxes_for(ctx, &[("Phones", tokens)], "phone for the dublin office")?;
    ensure(
        b.is_empty(),
        "every qualifier must match, not any",
        shown(&b),
    )
}

fn narrowed_over_long(ctx: &mut Ctx) -> Result<(), Failure> {
    let long = "The office number you must never give out as it rings the CEO";
    let doc = format!(
        "# Office\n\n{long}: 01 547 7854\n\nA: 01 598 1234\n\nB: 01 547 7860\n\nC: +353 87 120 4455\n"
    );
    let b = boxes_for(ctx, &[("Office", &doc)], "office phone")?;
    ensure(
        b.is_empty(),
        "the one match's over-long label renders nothing",
        shown(&b),
    )
}

fn lexicon(_: &mut Ctx) -> Result<(), Failure> {
    for (q, want) in [
        ("support email address", vec![Kind::Email]),
        ("postal address", vec![]),
        ("office address", vec![]),
        ("e-mail", vec![Kind::Email]),
        ("bank details", vec![Kind::Iban]),
        ("post code", vec![Kind::Eircode]),
        ("our VAT number", vec![Kind::Vat]),
        ("number", vec![]),
        ("what is the number", vec![]),
        ("main office landline", vec![]),
        ("mobile app", vec![Kind::Phone]),
        ("phone and IBAN", vec![Kind::Phone, Kind::Iban]),
    ] {
        let got = FactQuery::parse(q).kinds;
        ensure(
            got == want,
            format!("{q:?} primes {want:?}"),
            format!("{got:?}"),
        )?;
    }
    Ok(())
}

fn qualifiers(_: &mut Ctx) -> Result<(), Failure> {
    for (q, want) in [
        ("what is the office phone number?", vec!["office"]),
        ("office phone", vec!["office"]),
        ("office mobile", vec!["office"]),
        ("what's Tito's phone number", vec!["tito"]),
        (
            "phone number for the Dublin office",
            vec!["dublin", "office"],
        ),
        ("support email", vec!["support"]),
        ("phone number", vec![]),
        ("post office phone", vec!["office"]),
        ("phone details", vec![]),
    ] {
        let got = FactQuery::parse(q).qualifiers;
        ensure(got == want, format!("{q:?} → {want:?}"), format!("{got:?}"))?;
    }
    Ok(())
}

fn box_is_text(ctx: &mut Ctx) -> Result<(), Failure> {
    let anchor = "<a href=\"https://evil.example/x\">Support</a> email";
    let doc =
        format!("# Help\n\n{anchor}: support@almendra.example\n\nSupport phone: 01 547 7854\n");
    let q = "support email phone";
    let b = boxes_for(ctx, &[("Help", &doc)], q)?;
    ensure(
        b.iter().map(|x| (x.kind, x.rows.len())).collect::<Vec<_>>()
            == [(Kind::Email, 1), (Kind::Phone, 1)],
        "an email box and a phone box, one row each (presence)",
        shown(&b),
    )?;
    let page = page_for(ctx, &[("Help", &doc)], q)?;
    let values = page.texts("section.facts .fact-value");
    ensure(
        values == ["support@almendra.example", "01 547 7854"],
        "the page's boxes show both values as text",
        format!("{values:?}"),
    )?;
    let labels = page.texts("section.facts .fact-label");
    ensure(
        labels.first().map(String::as_str) == Some(anchor),
        "the label holding <a href=…> reads as those characters: text, not markup",
        format!("{labels:?}"),
    )?;
    let links: Vec<String> = page
        .tags("section.facts [href], section.facts [src], section.facts [action]")
        .iter()
        .map(ToString::to_string)
        .collect();
    let citation = |t: &crate::Tag| {
        t.name == "a"
            && t.attrs.len() == 2
            && t.attrs.iter().any(|(k, v)| {
                k == "href"
                    && v.strip_prefix("/documents/")
                        .and_then(|rest| rest.split_once("#p"))
                        .is_some_and(|(id, n)| {
                            !id.is_empty() && !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit())
                        })
            })
    };
    let tags = page.tags("section.facts [href], section.facts [src], section.facts [action]");
    ensure(
        tags.len() == 2 && tags.iter().all(citation),
        "the box's only links are its two citations, to /documents/{id}#p{n}",
        format!("{links:?}"),
    )?;
    let active = page.tags(
        "section.facts script, section.facts form, section.facts input, section.facts button",
    );
    ensure(
        active.is_empty(),
        "the box is scriptless and holds no form",
        format!(
            "{:?}",
            active.iter().map(ToString::to_string).collect::<Vec<_>>()
        ),
    )
}

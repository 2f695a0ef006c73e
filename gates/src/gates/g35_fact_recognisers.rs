//! Gate 35 (§8.8): the fact box's recognisers and validators refuse what looks like a fact and is not, and never truncate what is one.
//!
//! Requirement: a candidate is in the box only when its kind's validator
//! accepts it: phone by §8.8's structural rules (a `+` or separators, one
//! separator style, four groups or five with a country code refused by
//! count and never truncated, the ten-digit international floor, U+00A0 a
//! separator, a word boundary or an extension at the end) with Irish
//! national numbers canonicalised to E.164 for identity only; eircode
//! case-sensitively from the routing-key table and the identifier alphabet;
//! IBAN by the registry's length and structure and mod-97, with check
//! digits outside 02..=98 refused; VAT by the modern Irish format and its
//! check letter; email as local@domain, stated as weak. The span is the
//! document's bytes exactly, and the work per passage is bounded. Each case
//! quotes the sentence of §8.8 it holds.
//!
//! Issue 32 grew the claim: each kind is recognised in the layouts
//! documents write (IBANs in national groupings, VAT numbers grouped or
//! with a lowercase check letter, Irish 1800/1850/1890/15xx numbers in
//! national form), an SSH-style remote is no email, and a value inside
//! another kind's value is that value's part (the enclosing span stands;
//! DECISIONS.md, "Nested fact spans").

use memoria::facts::{self, Incomplete, Kind, eircode, email, iban, phone, vat};

use crate::rigs::facts::{boxes_for, instance_with, rows, search};
use crate::{Case, Ctx, Failure, Gate, ensure};

/// Gate 35.
pub static GATE: Gate = Gate {
    id: "35",
    title: "Fact box: recognisers and validators",
    gates_md: &["Fact box: recognisers and validators, label rules, cap / collision / narrowing"],
    sections: &["§8.8"],
    requirement: "Every fact kind is recognised generously and validated strictly as §8.8 rules, in the layouts documents write it; text that looks like a fact and is not (dates, times, versions, IP addresses, GUIDs, order and invoice numbers, image names with an @, SSH-style remotes, mixed separators, disallowed IBAN check digits, lowercase English in the eircode alphabet) yields no candidate; a value inside another kind's value is not one; a span is the document's bytes exactly; the work per passage is bounded.",
    cases: &[
        Case {
            id: "35/bare-digits-are-no-phone",
            desc: "\"a bare run of digits is never a phone number. The span must carry a +, or separators grouping it.\" DUNS 985632364 and 0871234567 yield nothing; +35315477854 is a phone.",
            run: bare_digits,
        },
        Case {
            id: "35/one-separator-style",
            desc: "\"A phone number uses one separator style throughout.\" The deadline 01-02-2024 10:30 yields nothing; 01-547-7869 and 01.547.7854 are phones.",
            run: one_style,
        },
        Case {
            id: "35/group-count-never-truncation",
            desc: "\"Four digit groups, or five with a country code — refused by count, never truncated.\" The lottery draw 01 05 12 23 34 and +49 30 12 34 56 78 yield nothing; Mobile: +353 87 1234567 yields exactly +353 87 1234567.",
            run: group_count,
        },
        Case {
            id: "35/international-floor",
            desc: "\"The international floor is ten digits, not E.164's eight.\" Growth of +10 000 000 users yields nothing; so does a nine-digit number libphonenumber calls valid, +298 201234 (Faroe), refused by the floor itself; +354 410 1234 (Iceland, ten digits) is a phone.",
            run: international_floor,
        },
        Case {
            id: "35/national-number-one-identity",
            desc: "\"An Irish national number canonicalises to E.164 so that 01 547 7854 and +353 (0)1 547 7854 are recognised as one number\"; each span is what the document wrote, byte for byte.",
            run: one_identity,
        },
        Case {
            id: "35/no-break-space-separates",
            desc: "\"Separators inside a span include U+00A0\" and \"The span is what the document wrote, byte for byte … It is what the box displays\": 01<NBSP>547<NBSP>7854 is found, its span keeping the no-break spaces, and the box on a real search shows those bytes, not a plain-space copy.",
            run: no_break_space,
        },
        Case {
            id: "35/word-boundary-or-extension",
            desc: "\"it must end on a word boundary or an extension\": 01 547 7854 ext. 212 is one span with its extension; digits glued to a letter, a colon and digits, or an @ yield nothing.",
            run: boundary_or_extension,
        },
        Case {
            id: "35/eircode-case-sensitive",
            desc: "\"eircodes are matched case-sensitively … \"Take the N11 then exit at Bray\" boxed N11 then, and \"Form P45 then P60\" boxed P45 then.\" Both, D02 then and d02 x7k4 yield nothing; D02 X7K4 is an eircode.",
            run: eircode_case,
        },
        Case {
            id: "35/eircode-routing-key-and-alphabet",
            desc: "\"routing key — a letter from ACDEFHKNPRTVWXY, a digit, then a digit or W — plus four characters from that set and the digits\": D6W XY45 passes; B12 3456, A99 1234 (no such routing key) and D02 XB45 (B outside the alphabet) are refused.",
            run: eircode_table,
        },
        Case {
            id: "35/iban-registry-and-mod-97",
            desc: "\"country prefix, length by country, mod-97\": IE29 AIBK 9311 5212 3456 78 passes in both forms; one changed digit, one group short, a country outside the registry that passes mod-97, and check digits 00, 01 and 99 that pass mod-97 are refused.",
            run: iban_rules,
        },
        Case {
            id: "35/vat-check-letter",
            desc: "\"modern Irish format and its check letter\": IE6433435F and IE3628739UA pass; IE6433435E and IE3628739UB (wrong check letter), the old format IE8Z49289F and a bare PPS-shaped 6433435F are refused.",
            run: vat_rules,
        },
        Case {
            id: "35/email-weak-and-no-image-names",
            desc: "\"local@domain, domain carrying a dot, no whitespace — weak\": support@almendra.example is found without its sentence's full stop; a@b, logo@2x.png, hero@1.5x.webp and a URL's user@host/path are not.",
            run: email_rules,
        },
        Case {
            id: "35/an-enclosing-span-stands",
            desc: "A value inside another kind's validated value is that value's part (issue 32; DECISIONS.md, \"Nested fact spans\"): NL91 ABNA 0417 1643 00, a valid IBAN whose last three groups read as a valid Dublin-area number, is one IBAN and no phone, and an iban search boxes it where both used to cancel; a phone search over it renders nothing.",
            run: enclosing_span,
        },
        Case {
            id: "35/an-ssh-remote-is-no-email",
            desc: "\"local@domain … weak\", and weak is no licence to box a remote (issue 32): git@github.com:owner/repo.git (an SSH-style repository address) and user@example.com:8042 yield no email; support@almendra.example: followed by a space still does.",
            run: ssh_remote,
        },
        Case {
            id: "35/irish-numbers-dialled-without-the-trunk",
            desc: "Irish freephone, shared-cost and premium numbers in national form (1800, 1850, 1890, 15xx; libphonenumber's tollFree, sharedCost and premiumRate for IE, no national prefix) are phones, one identity with their international form; a list of years and a 1 number libphonenumber does not list are not.",
            run: no_trunk,
        },
        Case {
            id: "35/iban-and-vat-layouts",
            desc: "\"country prefix, length by country, mod-97\" and \"modern Irish format and its check letter\", in the layouts documents write (issue 32): an IBAN grouped by a national layout, with hyphens or dots, or a space after its country; a VAT number with a separator after IE, its digits grouped, or a lowercase check letter glued on. An IBAN whose digits run on past its length is refused, never shortened.",
            run: layouts,
        },
        Case {
            id: "35/look-alikes-yield-nothing",
            desc: "Dates and times, version numbers, IP addresses, a GUID, invoice and order numbers, image file names with an @, mixed separators and lowercase English yield no candidate of any kind.",
            run: look_alikes,
        },
        Case {
            id: "35/work-is-bounded",
            desc: "A passage of a million digits is refused by FACT_PASSAGE_BYTES_MAX; a passage of 64 KiB of digits scans in well under a search's budget; a passage with more candidates than FACT_SPANS_PER_PASSAGE_MAX is refused whole, never cut; and on a real search such a passage empties the box rather than being skipped, since \"Capped at three inclusive: three renders, four renders nothing\" counts every candidate in the results, and the numbers it holds are candidates the box could not see.",
            run: bounded,
        },
    ],
};

/// The spans of `kind` in `text`, as the document wrote them.
fn found(text: &str, kind: Kind) -> Result<Vec<String>, Failure> {
    let spans = facts::spans(text)
        .map_err(|e| Failure::new("the passage is within the bounds", format!("{e:?}")))?;
    Ok(spans
        .into_iter()
        .filter(|s| s.kind == kind)
        .map(|s| text[s.start..s.end].to_string())
        .collect())
}

/// Requires `text` to yield exactly `want` of `kind`.
fn expect(text: &str, kind: Kind, want: &[&str]) -> Result<(), Failure> {
    let got = found(text, kind)?;
    ensure(
        got == want,
        format!("{text:?} yields {kind:?} {want:?}"),
        format!("{got:?}"),
    )
}

fn bare_digits(_: &mut Ctx) -> Result<(), Failure> {
    expect("DUNS/D-U-N-S number is 985632364", Kind::Phone, &[])?;
    expect("Call 0871234567 today", Kind::Phone, &[])?;
    expect(
        "Without spaces: +35315477854.",
        Kind::Phone,
        &["+35315477854"],
    )
}

fn one_style(_: &mut Ctx) -> Result<(), Failure> {
    expect("The deadline is 01-02-2024 10:30", Kind::Phone, &[])?;
    expect("Mixed 01 547-7854 here", Kind::Phone, &[])?;
    expect("Fax: 01-547-7869", Kind::Phone, &["01-547-7869"])?;
    expect("Dots: 01.547.7854 too", Kind::Phone, &["01.547.7854"])
}

fn group_count(_: &mut Ctx) -> Result<(), Failure> {
    expect("Numbers drawn: 01 05 12 23 34", Kind::Phone, &[])?;
    expect("Berlin: +49 30 12 34 56 78", Kind::Phone, &[])?;
    expect("Mobile: +353 87 1234567", Kind::Phone, &["+353 87 1234567"])?;
    expect(
        "Office: +353 (0)1 547 7854",
        Kind::Phone,
        &["+353 (0)1 547 7854"],
    )?;
    ensure(
        phone::check("+49 30 12 34 56 78") == Err(phone::Refusal::GroupCount),
        "six groups with a country code are refused by count",
        format!("{:?}", phone::check("+49 30 12 34 56 78")),
    )
}

fn international_floor(_: &mut Ctx) -> Result<(), Failure> {
    expect("Growth of +10 000 000 users", Kind::Phone, &[])?;
    expect(
        "Growth of +353 1 547 7854 users",
        Kind::Phone,
        &["+353 1 547 7854"],
    )?;
    // Ten digits is the floor inclusive: Iceland's seven-digit numbers reach it.
    expect("Reykjavik: +354 410 1234", Kind::Phone, &["+354 410 1234"])?;
    // Nine digits that libphonenumber accepts (a Faroese fixed line): only
    // the floor refuses it, so the refusal must be the floor's.
    ensure(
        phone::check("+298 201234") == Err(phone::Refusal::InternationalDigits),
        "nine digits with a country code are refused by the ten-digit floor",
        format!("{:?}", phone::check("+298 201234")),
    )?;
    expect("Tórshavn: +298 201234", Kind::Phone, &[])
}

fn one_identity(_: &mut Ctx) -> Result<(), Failure> {
    let forms = [
        "01 547 7854",
        "+353 (0)1 547 7854",
        "+353 1 547 7854",
        "(01) 547 7854",
        "+35315477854",
    ];
    let canon: Vec<String> = forms
        .iter()
        .map(|f| phone::check(f).unwrap_or_else(|r| format!("refused {r:?}")))
        .collect();
    ensure(
        canon.iter().all(|c| c == &canon[0]) && canon[0].starts_with('+'),
        "every spelling of the Dublin number has one canonical form",
        format!("{canon:?}"),
    )?;
    let text = "Reception: +353 (0)1 547 7854. Or (01) 547 7854.";
    expect(text, Kind::Phone, &["+353 (0)1 547 7854", "(01) 547 7854"])
}

fn no_break_space(ctx: &mut Ctx) -> Result<(), Failure> {
    let pasted = "01\u{a0}547\u{a0}7854";
    expect(&format!("Reception: {pasted}"), Kind::Phone, &[pasted])?;
    let doc = format!("# Office\n\nReception phone: {pasted}\n");
    let b = boxes_for(ctx, &[("Office", &doc)], "phone")?;
    let got: Vec<_> = b.iter().map(rows).collect();
    ensure(
        got == [vec![("Reception phone".to_string(), pasted.to_string())]],
        "the box shows the pasted number byte for byte, its no-break spaces kept",
        format!("{got:?}"),
    )
}

fn boundary_or_extension(_: &mut Ctx) -> Result<(), Failure> {
    expect(
        "Desk: 01 547 7854 ext. 212, ask for Ana",
        Kind::Phone,
        &["01 547 7854 ext. 212"],
    )?;
    ensure(
        phone::check("01 547 7854 ext. 212").ok() != phone::check("01 547 7854").ok(),
        "an extension is part of the value's identity",
        "the two canonicalise alike",
    )?;
    expect("Serial 01 547 7854X9", Kind::Phone, &[])?;
    expect("At 01 547 7854:30", Kind::Phone, &[])?;
    expect("Tag 01 547 7854@host", Kind::Phone, &[])
}

fn eircode_case(_: &mut Ctx) -> Result<(), Failure> {
    for t in [
        "Take the N11 then exit at Bray",
        "Form P45 then P60",
        "Go to D02 then left",
        "post it to d02 x7k4",
    ] {
        expect(t, Kind::Eircode, &[])?;
    }
    expect("Dublin 2, D02 X7K4", Kind::Eircode, &["D02 X7K4"])?;
    expect("Code D02X7K4.", Kind::Eircode, &["D02X7K4"])
}

fn eircode_table(_: &mut Ctx) -> Result<(), Failure> {
    let cases = [
        ("D6W XY45", Ok("D6WXY45".to_string())),
        ("B12 3456", Err(eircode::Refusal::Shape)),
        ("A99 1234", Err(eircode::Refusal::UnknownRoutingKey)),
        ("D02 XB45", Err(eircode::Refusal::Identifier)),
    ];
    for (s, want) in cases {
        let got = eircode::check(s);
        ensure(got == want, format!("{s}: {want:?}"), format!("{got:?}"))?;
    }
    ensure(
        eircode::ROUTING_KEYS.len() == 139,
        "the routing-key table holds the 139 keys in use",
        format!("{}", eircode::ROUTING_KEYS.len()),
    )
}

/// An IBAN of `country` with check digits `check` whose mod-97 passes.
fn mod97_passing(country: &str, check: &str) -> String {
    (0u64..)
        .map(|n| format!("AIBK931152{n:08}"))
        .find(|bban| {
            let rearranged = format!("{bban}{country}{check}");
            rearranged.bytes().fold(0u32, |acc, c| {
                if c.is_ascii_digit() {
                    (acc * 10 + u32::from(c - b'0')) % 97
                } else {
                    (acc * 100 + u32::from(c - b'A' + 10)) % 97
                }
            }) == 1
        })
        .map(|bban| format!("{country}{check}{bban}"))
        .unwrap_or_default()
}

fn iban_rules(_: &mut Ctx) -> Result<(), Failure> {
    let good = "IE29AIBK93115212345678";
    for s in ["IE29 AIBK 9311 5212 3456 78", good] {
        let got = iban::check(s);
        ensure(
            got.as_deref() == Ok(good),
            format!("{s} is an IBAN"),
            format!("{got:?}"),
        )?;
    }
    expect(
        "Pay to IE29 AIBK 9311 5212 3456 78.",
        Kind::Iban,
        &["IE29 AIBK 9311 5212 3456 78"],
    )?;
    let mut refused = vec![
        "IE29 AIBK 9311 5212 3456 79".to_string(),
        "IE29 AIBK 9311 5212 3456".to_string(),
        mod97_passing("XX", "42"),
    ];
    refused.extend(["00", "01", "99"].map(|c| mod97_passing("IE", c)));
    for s in refused {
        let got = iban::check(&s);
        ensure(got.is_err(), format!("{s} is refused"), format!("{got:?}"))?;
        expect(&format!("IBAN: {s}"), Kind::Iban, &[])?;
    }
    Ok(())
}

fn vat_rules(_: &mut Ctx) -> Result<(), Failure> {
    for s in ["IE6433435F", "IE3628739UA", "IE 6433435F"] {
        let got = vat::check(s);
        ensure(
            got.is_ok(),
            format!("{s} is a VAT number"),
            format!("{got:?}"),
        )?;
    }
    for s in ["IE6433435E", "IE3628739UB", "IE8Z49289F"] {
        let got = vat::check(s);
        ensure(got.is_err(), format!("{s} is refused"), format!("{got:?}"))?;
    }
    expect("PPS 6433435F", Kind::Vat, &[])?;
    expect("VAT: IE6433435F.", Kind::Vat, &["IE6433435F"])
}

fn email_rules(_: &mut Ctx) -> Result<(), Failure> {
    expect(
        "Write to support@almendra.example.",
        Kind::Email,
        &["support@almendra.example"],
    )?;
    ensure(
        email::check("a@b").is_err(),
        "a domain without a dot is refused",
        "a@b passes",
    )?;
    for t in [
        "logo@2x.png",
        "hero@1.5x.webp",
        "photo@home.jpeg",
        "https://ana@almendra.example/path",
    ] {
        expect(t, Kind::Email, &[])?;
    }
    Ok(())
}

fn enclosing_span(ctx: &mut Ctx) -> Result<(), Failure> {
    let tail = "0417 1643 00";
    ensure(
        phone::check(tail).is_ok(),
        "the IBAN's last groups alone are a valid phone number (presence)",
        format!("{:?}", phone::check(tail)),
    )?;
    let text = "IBAN for invoices: NL91 ABNA 0417 1643 00, quoted on every one.";
    expect(text, Kind::Iban, &["NL91 ABNA 0417 1643 00"])?;
    expect(text, Kind::Phone, &[])?;
    let doc = format!("# Payments\n\n{text}\n\nQuestions by phone go to the office.\n");
    let b = boxes_for(ctx, &[("Payments", &doc)], "iban")?;
    let got: Vec<_> = b.iter().map(|b| (b.kind, rows(b))).collect();
    ensure(
        got == [(
            Kind::Iban,
            vec![(
                "IBAN for invoices".to_string(),
                "NL91 ABNA 0417 1643 00".to_string(),
            )],
        )],
        "an iban search boxes the IBAN, labelled by the document",
        format!("{got:?}"),
    )?;
    let b = boxes_for(ctx, &[("Payments", &doc)], "phone")?;
    ensure(
        b.is_empty(),
        "a phone search boxes nothing from inside the IBAN",
        format!("{:?}", b.iter().map(rows).collect::<Vec<_>>()),
    )
}

fn ssh_remote(_: &mut Ctx) -> Result<(), Failure> {
    expect(
        "Write to support@almendra.example: we answer daily.",
        Kind::Email,
        &["support@almendra.example"],
    )?;
    for t in [
        "git clone git@github.com:almendra/handbook.git",
        "Remote: git@gitlab.example.org:team/site.git (push here)",
        "rsync -a ana@build.example.net:~/out/ .",
        "Proxy user@example.com:8042 for the office",
    ] {
        expect(t, Kind::Email, &[])?;
    }
    let got = email::check("git@github.com:almendra/handbook.git");
    ensure(
        got.is_err(),
        "an SSH-style repository address is refused as a whole",
        format!("{got:?}"),
    )
}

fn no_trunk(_: &mut Ctx) -> Result<(), Failure> {
    for (national, international) in [
        ("1800 123 456", "+353 1800 123 456"),
        ("1850 20 30 40", "+353 1850 20 30 40"),
        ("1890-123-456", "+353 1890 123 456"),
        ("1520 123456", "+353 1520 123 456"),
    ] {
        expect(
            &format!("Freephone: {national} today"),
            Kind::Phone,
            &[national],
        )?;
        let (n, i) = (phone::check(national), phone::check(international));
        ensure(
            n.is_ok() && n == i,
            format!("{national} and {international} are one number"),
            format!("{n:?} and {i:?}"),
        )?;
    }
    for t in [
        "Founded between 1800 1850 19 and later",
        "Reference 1234 567 890 here",
        "Call 1800123456 today",
    ] {
        expect(t, Kind::Phone, &[])?;
    }
    Ok(())
}

fn layouts(_: &mut Ctx) -> Result<(), Failure> {
    for (written, electronic) in [
        ("ES91 2100 0418 4502 0005 1332", "ES9121000418450200051332"),
        ("ES91-2100-0418-4502-0005-1332", "ES9121000418450200051332"),
        ("ES91 2100 0418 45 0200051332", "ES9121000418450200051332"),
        ("NO 93 8601 1117 947", "NO9386011117947"),
        ("NO93.8601.11.17947", "NO9386011117947"),
        ("NL91 ABNA 0417 1643 00", "NL91ABNA0417164300"),
    ] {
        let got = iban::check(written);
        ensure(
            got.as_deref() == Ok(electronic),
            format!("{written} is the IBAN {electronic}"),
            format!("{got:?}"),
        )?;
        expect(&format!("IBAN: {written}."), Kind::Iban, &[written])?;
    }
    expect("IBAN: NL91 ABNA 0417 1643 00 90, twice", Kind::Iban, &[])?;
    for written in ["IE 643 3435 F", "IE-6433435F", "IE6433435f", "IE 643 3435F"] {
        let got = vat::check(written);
        ensure(
            got.as_deref() == Ok("IE6433435F"),
            format!("{written} is the VAT number IE6433435F"),
            format!("{got:?}"),
        )?;
        expect(&format!("VAT: {written}."), Kind::Vat, &[written])?;
    }
    // A letter apart from unbroken digits is a word, not a check letter.
    expect("VAT IE 6433435 F is ours", Kind::Vat, &[])
}

fn look_alikes(_: &mut Ctx) -> Result<(), Failure> {
    let cases = [
        "Due 2026-03-14 at 10:52, or 14/03/2026 10.52",
        "Upgrade to v1.2.3 or 10.4.22-beta",
        "Hosts 203.0.113.42 and 192.0.2.10 answered",
        "Id 123e4567-e89b-12d3-a456-426614174000",
        "Invoice INV-2026-004217 and order #0214567890",
        "Order no. 0214-567-890-12",
        "IMG_0123@2x.png and logo-01-547@3x.png",
        "Mixed 01 547-7854 and 087.120 4455",
        "then they went there with the cat",
    ];
    for t in cases {
        let got = facts::spans(t).map(|s| s.len());
        ensure(
            got == Ok(0),
            format!("{t:?} yields no candidate"),
            format!("{got:?}"),
        )?;
    }
    Ok(())
}

fn bounded(ctx: &mut Ctx) -> Result<(), Failure> {
    let million = "7".repeat(1_000_000);
    ensure(
        facts::spans(&million) == Err(Incomplete::TooLong),
        "a million digits is over the passage bound",
        format!("{:?}", facts::spans(&million).map(|s| s.len())),
    )?;
    let within = "7".repeat(facts::FACT_PASSAGE_BYTES_MAX);
    let t = std::time::Instant::now();
    let got = facts::spans(&within).map(|s| s.len());
    let took = t.elapsed();
    ensure(
        got == Ok(0),
        "64 KiB of digits yields nothing",
        format!("{got:?}"),
    )?;
    ensure(
        took < std::time::Duration::from_millis(100),
        "64 KiB of digits scans in under 100 ms (debug build)",
        format!("{took:?}"),
    )?;
    let many: String = (0..=facts::FACT_SPANS_PER_PASSAGE_MAX)
        .map(|i| format!("Line {i}: 01 547 {:04}\n", 1000 + i))
        .collect();
    ensure(
        facts::spans(&many) == Err(Incomplete::TooManySpans),
        "a passage over the span bound is refused whole",
        format!("{:?}", facts::spans(&many).map(|s| s.len())),
    )?;
    over_bound_passage_empties_the_box(ctx)
}

/// On a real search: one passage holding a reception number renders it
/// (presence), and beside a passage over the span bound nothing renders.
fn over_bound_passage_empties_the_box(ctx: &mut Ctx) -> Result<(), Failure> {
    let reception = ("Reception", "# Reception\n\nReception phone: 01 547 7854\n");
    let b = boxes_for(ctx, &[reception], "phone")?;
    ensure(
        b.len() == 1 && b[0].rows.len() == 1,
        "the reception number alone renders (presence)",
        format!("{:?}", b.iter().map(rows).collect::<Vec<_>>()),
    )?;
    let lines: String = (0..=facts::FACT_SPANS_PER_PASSAGE_MAX)
        .map(|i| format!("Desk {i} phone: 01 547 {:04}\n", 2000 + i))
        .collect();
    let export = format!("# Export\n\n{lines}");
    let docs = [reception, ("Export", export.as_str())];
    let m = instance_with(ctx, &docs)?;
    let page = search(&m, "phone")?;
    let export_passages = page.results.iter().filter(|r| r.title == "Export").count();
    ensure(
        page.results.len() == 2 && export_passages == 1,
        "both documents are results, the export one passage over the span bound",
        format!(
            "{} results, {export_passages} from the export",
            page.results.len()
        ),
    )?;
    ensure(
        page.facts.is_empty(),
        "a passage the box could not read whole empties the box; the reception number is not a confident single answer",
        format!("{:?}", page.facts.iter().map(rows).collect::<Vec<_>>()),
    )
}

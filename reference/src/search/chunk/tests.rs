//! The chunker's tests: the rules of §7.2 one by one, snapshots of typical pages, and properties over generated text.
//!
//! Size: over 800 lines because each property's generator and oracle sit
//! beside the rule they check; split by concern (rules, snapshots,
//! properties) if it grows.

use super::*;
use expect_test::{Expect, expect};
use proptest::prelude::*;

/// One line per chunk: ordinal, trail, words, and the first 40 characters.
fn render(chunks: &[Chunk]) -> String {
    chunks
        .iter()
        .map(|c| {
            let head: String = c.text.chars().take(40).collect();
            format!(
                "#p{} [{}] {}w {:?}\n",
                c.ordinal,
                c.trail.join(" > "),
                c.words,
                head
            )
        })
        .collect()
}

fn check(text: &str, expected: Expect) {
    expected.assert_eq(&render(&chunk(text)));
}

/// `n` distinct words `prefix0 prefix1 …` on one line.
fn words(prefix: &str, n: usize) -> String {
    (0..n)
        .map(|i| format!("{prefix}{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The counted words of `text` ([`word_spans`]): cutting a passage between
/// them and reading the parts again gives the same list, so "no word lost"
/// is checked on these.
fn tokens(text: &str) -> Vec<&str> {
    word_spans(text)
}

fn trails(chunks: &[Chunk]) -> Vec<String> {
    chunks.iter().map(|c| c.trail.join(" > ")).collect()
}

#[test]
fn heading_without_blank_line_still_closes_the_chunk() {
    let chunks = chunk("Intro text.\n## Revenue\nRevenue rose 4%.\n## Costs\nCosts fell.\n");
    assert_eq!(trails(&chunks), ["", "Revenue", "Costs"]);
    assert_eq!(chunks[0].text, "Intro text.");
    assert_eq!(chunks[1].text, "Revenue rose 4%.");
    assert_eq!(chunks[2].text, "Costs fell.");
}

#[test]
fn hash_inside_a_fence_is_not_a_heading() {
    let doc =
        "# Deploy\nRun this:\n```sh\n# build first\nmake\n\n## not a heading\n```\nThen wait.\n";
    let chunks = chunk(doc);
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].trail, ["Deploy"]);
    assert_eq!(
        chunks[0].text,
        "Run this:\n```sh\n# build first\nmake\n\n## not a heading\n```\nThen wait."
    );
}

#[test]
fn tilde_fence_closes_only_on_a_run_at_least_as_long() {
    let doc = "~~~~\n# a\n~~~\n# b\n~~~~~\n# Real\nbody\n";
    let chunks = chunk(doc);
    assert_eq!(trails(&chunks), ["", "Real"]);
    assert_eq!(chunks[0].text, "~~~~\n# a\n~~~\n# b\n~~~~~");
}

#[test]
fn inline_code_at_the_start_of_a_line_opens_no_fence() {
    let chunks = chunk("```x``` is inline\n# Heading\nbody\n");
    assert_eq!(trails(&chunks), ["", "Heading"]);
}

#[test]
fn unclosed_fence_runs_to_the_end_of_the_document() {
    let chunks = chunk("# Script\n```\n# step one\nls\n\n# step two\n\n\n");
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].trail, ["Script"]);
    assert_eq!(chunks[0].text, "```\n# step one\nls\n\n# step two");
}

#[test]
fn file_with_no_blank_lines_is_cut_at_the_word_ceiling() {
    // A CSV: 3000 lines of 1 word, no blank line. Three pieces of 1000.
    let csv: String = (0..3000).map(|i| format!("row{i},{i},x\n")).collect();
    let chunks = chunk(&csv);
    let sizes: Vec<u32> = chunks.iter().map(|c| c.words).collect();
    assert_eq!(sizes, [1000, 1000, 1000]);
    assert!(chunks[1].text.starts_with("row1000,1000,x\nrow1001,"));
    // Hard-wrapped prose of 1500 words in lines of 10: two pieces near 750.
    let prose: String = (0..150)
        .map(|i| words(&format!("l{i}w"), 10) + "\n")
        .collect();
    let sizes: Vec<u32> = chunk(&prose).iter().map(|c| c.words).collect();
    assert_eq!(sizes, [750, 750]);
}

#[test]
fn a_single_line_longer_than_the_ceiling_is_cut_between_words() {
    let line = format!("  {}", words("w", 2500));
    let chunks = chunk(&line);
    let sizes: Vec<u32> = chunks.iter().map(|c| c.words).collect();
    assert_eq!(sizes, [834, 833, 833]);
    assert!(chunks[0].text.starts_with("  w0 w1 "));
    assert!(chunks[0].text.ends_with(" w833"));
    assert!(chunks[1].text.starts_with("w834 "));
    let rejoined: Vec<&str> = chunks.iter().flat_map(|c| tokens(&c.text)).collect();
    assert_eq!(rejoined, tokens(&line));
}

#[test]
fn a_fence_is_kept_whole_when_it_fits_under_the_ceiling() {
    // One paragraph of 1400 words: 700 of prose, a 600-word fence, 100 more.
    // The fence lands whole in one piece rather than being cut at 700.
    let prose: String = (0..70)
        .map(|i| words(&format!("a{i}w"), 10) + "\n")
        .collect();
    let fence: String = (0..60)
        .map(|i| words(&format!("f{i}w"), 10) + "\n")
        .collect();
    let tail: String = (0..10)
        .map(|i| words(&format!("z{i}w"), 10) + "\n")
        .collect();
    let doc = format!("{prose}```\n{fence}```\n{tail}");
    let chunks = chunk(&doc);
    let holding: Vec<&Chunk> = chunks.iter().filter(|c| c.text.contains("```")).collect();
    assert_eq!(holding.len(), 1);
    assert!(holding[0].text.contains(&format!("```\n{fence}```")));
    assert!(chunks.iter().all(|c| c.words as usize <= CHUNK_WORDS_MAX));
}

#[test]
fn a_fence_over_the_ceiling_is_cut_between_its_lines() {
    let body: String = (0..300).map(|i| format!("echo {i} # step\n")).collect();
    let doc = format!("# Log\n```sh\n{body}```\n");
    let chunks = chunk(&doc);
    assert_eq!(chunks.len(), 2);
    assert!(chunks.iter().all(|c| c.words as usize <= CHUNK_WORDS_MAX));
    assert!(chunks.iter().all(|c| c.trail == ["Log"]));
    assert!(chunks[1].text.starts_with("echo "));
    assert!(chunks[1].text.ends_with("# step\n```"));
}

#[test]
fn crlf_and_lf_files_chunk_identically() {
    let lf = format!(
        "Preamble line.\n\n# Budget\nOverview.\n## Q1\n{}\n\n```sh\n# not a heading\n```\n\n## Q2\nTitle\n=====\nLast words.\n",
        words("q", 450)
    );
    let crlf = lf.replace('\n', "\r\n");
    let cr = lf.replace('\n', "\r");
    let expected = chunk(&lf);
    assert_eq!(
        trails(&expected),
        ["", "Budget", "Budget > Q1", "Budget > Q2", "Title"]
    );
    assert_eq!(chunk(&crlf), expected);
    assert_eq!(chunk(&cr), expected);
    assert!(expected.iter().all(|c| !c.text.contains('\r')));
}

#[test]
fn runts_are_folded_but_never_across_a_heading() {
    // 390 + 20 closes at the target; the 20-word runt folds back.
    let doc = format!(
        "# A\n{}\n\n{}\n# B\n{}\n",
        words("a", 390),
        words("r", 20),
        words("b", 5)
    );
    let chunks = chunk(&doc);
    assert_eq!(trails(&chunks), ["A", "B"]);
    assert_eq!(chunks[0].words, 410);
    assert!(chunks[0].text.ends_with(&format!("\n\n{}", words("r", 20))));
    // The 5-word section stays its own chunk: no fold across `# B`.
    assert_eq!(chunks[1].words, 5);
}

#[test]
fn a_runt_that_comes_first_folds_into_the_next_chunk() {
    let doc = format!("# A\n{}\n\n{}\n", words("r", 10), words("b", 600));
    let chunks = chunk(&doc);
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].words, 610);
    assert!(chunks[0].text.starts_with("r0 r1"));
}

#[test]
fn a_runt_stays_when_folding_would_break_the_ceiling() {
    let doc = format!("{}\n\n{}\n", words("a", 990), words("r", 20));
    let sizes: Vec<u32> = chunk(&doc).iter().map(|c| c.words).collect();
    assert_eq!(sizes, [990, 20]);
    // With a chunk after it, the runt folds forward instead.
    let doc = format!(
        "{}\n\n{}\n\n{}\n",
        words("a", 990),
        words("r", 20),
        words("b", 390)
    );
    let chunks = chunk(&doc);
    let sizes: Vec<u32> = chunks.iter().map(|c| c.words).collect();
    assert_eq!(sizes, [990, 410]);
    assert!(
        chunks[1]
            .text
            .starts_with(&format!("{}\n\nb0 ", words("r", 20)))
    );
}

#[test]
fn chunks_fill_toward_the_target_then_close() {
    let paras: Vec<String> = (0..10).map(|i| words(&format!("p{i}w"), 150)).collect();
    let sizes: Vec<u32> = chunk(&paras.join("\n\n")).iter().map(|c| c.words).collect();
    assert_eq!(sizes, [300, 300, 300, 300, 300]);
}

#[test]
fn trail_nests_and_pops_by_level() {
    let doc = "# Budget\na\n### Deep\nb\n## Q3\nc\n#### Q3 detail\nd\n## Q4\ne\n# Other\nf\n";
    let chunks = chunk(doc);
    assert_eq!(
        trails(&chunks),
        [
            "Budget",
            "Budget > Deep",
            "Budget > Q3",
            "Budget > Q3 > Q3 detail",
            "Budget > Q4",
            "Other"
        ]
    );
}

#[test]
fn an_empty_heading_pops_the_trail_without_adding_to_it() {
    let chunks = chunk("# A\n## B\nb\n##\nafter\n");
    assert_eq!(trails(&chunks), ["A > B", "A"]);
}

#[test]
fn closing_hashes_of_an_atx_heading_are_stripped() {
    let chunks = chunk("## Revenue ##\nx\n# C# #\ny\n#   Spaced   #####   \nz\n### ###\nw\n");
    assert_eq!(trails(&chunks), ["Revenue", "C#", "Spaced", "Spaced"]);
}

#[test]
fn hashtag_without_a_space_is_not_a_heading() {
    let chunks = chunk("#hashtag is body\n####### seven is body\n    # indented is code\n");
    assert_eq!(chunks.len(), 1);
    assert!(chunks[0].trail.is_empty());
    assert_eq!(chunks[0].words, 11);
}

#[test]
fn a_heading_with_no_body_is_a_passage_of_its_own_lines() {
    let chunks = chunk("# Title\n## Empty ##\n\n## Full\nbody\n# Last\n");
    assert_eq!(trails(&chunks), ["Title > Empty", "Title > Full", "Last"]);
    let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(texts, ["## Empty ##", "body", "# Last"]);
    assert_eq!(chunks[0].words, 3);
    let only = chunk("# Only a heading\n\n");
    assert_eq!(trails(&only), ["Only a heading"]);
    assert_eq!(only[0].text, "# Only a heading");
}

#[test]
fn a_heading_straight_above_another_heading_is_still_found() {
    // Issue 11: `## A` then `## B` then text indexed `A` nowhere. A
    // changelog's release with no entries is the common real case.
    let chunks = chunk("## A\n## B\ntext\n");
    assert_eq!(trails(&chunks), ["A", "B"]);
    assert_eq!(chunks[0].text, "## A");
    assert_eq!(chunks[1].text, "text");
    let log = chunk("# Changelog\n## 1.2.1\n## 1.2.0\n### Fixed\n- a crash\n");
    assert_eq!(
        trails(&log),
        ["Changelog > 1.2.1", "Changelog > 1.2.0 > Fixed"]
    );
}

#[test]
fn a_heading_above_a_deeper_heading_lives_in_that_heading_s_trail_only() {
    let chunks = chunk("# A\n## B\ntext\n# C\n### D\n\n## E\nmore\n");
    assert_eq!(trails(&chunks), ["A > B", "C > D", "C > E"]);
    assert_eq!(chunks[1].text, "### D");
}

#[test]
fn a_hash_line_inside_an_html_comment_is_not_a_heading() {
    let doc = "# Public\n<!--\n# Secret draft\n\nnot yet\n-->\nPublic text.\n";
    let chunks = chunk(doc);
    assert_eq!(trails(&chunks), ["Public"]);
    assert_eq!(
        chunks[0].text,
        "<!--\n# Secret draft\n\nnot yet\n-->\nPublic text."
    );
}

#[test]
fn a_hash_line_inside_pre_or_script_is_not_a_heading() {
    let doc = "# Usage\n<pre>\n# run it\n\n## twice\n</pre>\n\n<script>\n# x\n</script>\nafter\n";
    let chunks = chunk(doc);
    assert_eq!(trails(&chunks), ["Usage"]);
    assert_eq!(
        chunks[0].text,
        "<pre>\n# run it\n\n## twice\n</pre>\n\n<script>\n# x\n</script>\nafter"
    );
}

#[test]
fn an_unclosed_html_comment_runs_to_the_end_of_the_document() {
    let chunks = chunk("# Notes\nseen\n<!--\n# hidden\n\n\n");
    assert_eq!(trails(&chunks), ["Notes"]);
    assert_eq!(chunks[0].text, "seen\n<!--\n# hidden");
}

#[test]
fn a_comment_line_in_yaml_front_matter_is_neither_a_heading_nor_the_title() {
    let doc = "---\n# generated, do not edit\ntitle: Budget\n---\n\nIntro.\n# Budget 2026\nbody\n";
    let chunks = chunk(doc);
    assert_eq!(trails(&chunks), ["", "Budget 2026"]);
    assert_eq!(
        chunks[0].text,
        "---\n# generated, do not edit\ntitle: Budget\n---\n\nIntro."
    );
    let toml = chunk("+++\n# draft = true\n+++\nbody\n");
    assert_eq!(trails(&toml), [""]);
}

#[test]
fn a_heading_inside_a_block_quote_is_a_heading() {
    let chunks = chunk("Intro.\n\n> ## Note\n> Quoted text.\n");
    assert_eq!(trails(&chunks), ["", "Note"]);
    assert_eq!(chunks[1].text, "> Quoted text.");
}

#[test]
fn a_heading_inside_a_list_item_is_a_heading() {
    let chunks = chunk("# Steps\n1. ## Install\n   Run the installer.\n2. ## Start\n   Run it.\n");
    assert_eq!(trails(&chunks), ["Steps > Install", "Steps > Start"]);
    assert_eq!(chunks[0].text, "   Run the installer.");
}

#[test]
fn a_setext_heading_may_span_several_lines() {
    let chunks = chunk("Budget for\nthe year\n=====\nbody\n");
    assert_eq!(trails(&chunks), ["Budget for the year"]);
    assert_eq!(chunks[0].text, "body");
}

#[test]
fn a_heading_s_trail_text_is_its_plain_text_without_markup() {
    let chunks = chunk("## The *new* [office](https://example.org) `phone` &amp; fax\nx\n");
    assert_eq!(trails(&chunks), ["The new office phone & fax"]);
    // Inline HTML is the document's own text; the pages escape it.
    let chunks = chunk("# <b>Quokka</b> plan\nx\n");
    assert_eq!(trails(&chunks), ["<b>Quokka</b> plan"]);
}

#[test]
fn empty_and_whitespace_only_input_yield_no_chunks() {
    assert!(chunk("").is_empty());
    assert!(chunk(" \n\t\r\n\u{a0}\r\r\n").is_empty());
}

#[test]
fn text_before_the_first_heading_has_an_empty_trail() {
    let chunks = chunk("Front text.\n# H\nbody\n");
    assert_eq!(chunks[0].trail, Vec::<String>::new());
    assert_eq!(chunks[0].ordinal, 0);
    assert_eq!(chunks[1].ordinal, 1);
}

#[test]
fn paragraphs_join_with_one_blank_line_and_lines_stay_verbatim() {
    let doc = "Phone:   \n- +353 1 547 7854\n  - nested\u{a0}\u{a0}item\t\n\n\n\nNext\u{a0}para.\n";
    let chunks = chunk(doc);
    assert_eq!(chunks.len(), 1);
    assert_eq!(
        chunks[0].text,
        "Phone:\n- +353 1 547 7854\n  - nested\u{a0}\u{a0}item\n\nNext\u{a0}para."
    );
    assert_eq!(chunks[0].words, 11);
}

#[test]
fn a_setext_underline_under_a_list_item_is_a_thematic_break() {
    let doc = "Title\n=====\nbody\n\nSub\n---\nmore\n\n- item\n---\n";
    let chunks = chunk(doc);
    assert_eq!(trails(&chunks), ["Title", "Title > Sub"]);
    assert_eq!(chunks[1].text, "more\n\n- item\n---");
}

#[test]
fn a_thematic_break_pair_in_the_middle_of_a_document_is_not_front_matter() {
    let text = "# Guide\n\nintro\n\n---\n\n## Install\n\nrun it\n\n---\n\n## Use\n\ncall it\n";
    assert_eq!(
        trails(&chunk(text)),
        ["Guide", "Guide > Install", "Guide > Use"]
    );
    // A `---` second line under a paragraph is a setext underline.
    let text = "intro\n---\n# not\n---\nbody\n";
    assert_eq!(trails(&chunk(text)), ["intro", "not"]);
    // Front matter opens only at the first byte, not after a blank line.
    let text = "\n---\ntitle: x\n---\n# Real\nbody\n";
    assert_eq!(trails(&chunk(text)), ["", "title: x", "Real"]);
}

#[test]
fn front_matter_at_the_first_byte_is_body_and_a_later_pair_is_not() {
    let text = "---\n# yaml comment\n---\n# Title\n\ntext\n\n---\n\n## Part\n\nmore\n\n---\n";
    let chunks = chunk(text);
    assert_eq!(trails(&chunks), ["", "Title", "Title > Part"]);
    assert_eq!(chunks[0].text, "---\n# yaml comment\n---");
    let toml = "+++\ntitle = 'x'\n+++\n## A\nbody\n";
    assert_eq!(trails(&chunk(toml)), ["", "A"]);
}

#[test]
fn yaml_front_matter_is_body_not_a_heading() {
    let chunks = chunk("---\ntitle: Budget\n---\n\n# Budget\nbody\n");
    assert_eq!(trails(&chunks), ["", "Budget"]);
    assert_eq!(chunks[0].text, "---\ntitle: Budget\n---");
}

#[test]
fn byte_order_mark_does_not_hide_the_first_heading() {
    let chunks = chunk("\u{feff}# Title\r\nbody\r\n");
    assert_eq!(trails(&chunks), ["Title"]);
    assert_eq!(chunks[0].text, "body");
}

#[test]
fn japanese_prose_without_spaces_is_cut_into_passages_of_at_most_the_ceiling_in_characters() {
    // 40,000 characters of Japanese in one paragraph, no space and no line
    // break: one passage of 40,000 characters before counted words.
    let sentence = "東京で会議を開きました。来週は大阪に行きます。";
    let text = sentence.repeat(40_000 / sentence.chars().count());
    let chunks = chunk(&text);
    assert!(chunks.len() >= 40, "{} passages", chunks.len());
    for c in &chunks {
        assert!(
            c.text.chars().count() <= CHUNK_WORDS_MAX,
            "{} chars",
            c.text.chars().count()
        );
    }
    let rejoined: String = chunks.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(rejoined, text);
}

#[test]
fn a_300_kb_token_is_cut_into_passages_bounded_in_bytes() {
    let token: String = (0..300 * 1024)
        .map(|i| char::from(b'A' + (i % 26) as u8))
        .collect();
    let text = format!("before\n\n{token}\n\nafter");
    let chunks = chunk(&text);
    assert!(chunks.len() >= 300 * 1024 / (CHUNK_WORDS_MAX * WORD_BYTES_MAX));
    for c in &chunks {
        assert!(c.text.len() <= CHUNK_WORDS_MAX * WORD_BYTES_MAX + "before\n\n".len());
    }
    let rejoined: String = chunks
        .iter()
        .flat_map(|c| c.text.split_whitespace())
        .collect();
    assert_eq!(rejoined, format!("before{token}after"));
}

#[test]
fn a_cut_inside_a_token_folds_back_without_a_space() {
    // Just over the ceiling in one token: the last piece is a runt that
    // folds into its predecessor, joined with nothing between.
    let token = "x".repeat((CHUNK_WORDS_MAX + 10) * WORD_BYTES_MAX);
    let chunks = chunk(&token);
    let rejoined: String = chunks.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(rejoined, token);
    assert!(chunks.iter().all(|c| !c.text.contains(' ')));
}

#[test]
fn white_space_alone_cannot_take_a_passage_past_the_byte_ceiling() {
    let padded = format!("a{}b", " ".repeat(3 * CHUNK_BYTES_MAX));
    let fence = format!("```\nx{}y\n```", "\n".repeat(3 * CHUNK_BYTES_MAX));
    for text in [padded, fence] {
        let chunks = chunk(&text);
        assert!(chunks.iter().all(|c| c.text.len() <= CHUNK_BYTES_MAX));
        let rejoined: Vec<&str> = chunks.iter().flat_map(|c| tokens(&c.text)).collect();
        assert_eq!(rejoined, tokens(&text));
    }
}

#[test]
fn counted_words_are_tokens_chinese_and_japanese_characters_and_pieces_of_long_runs() {
    assert_eq!(word_spans("plain words here"), ["plain", "words", "here"]);
    assert_eq!(word_spans("東京で会議"), ["東", "京", "で", "会", "議"]);
    assert_eq!(word_spans("Tokyo東京。"), ["Tokyo", "東", "京", "。"]);
    assert_eq!(
        word_spans("0123456789abcdefXYZ"),
        ["0123456789abcdef", "XYZ"]
    );
    // Never inside a character: 5 × 4-byte emoji is 20 bytes, cut at 16.
    assert_eq!(word_spans("😀😀😀😀😀"), ["😀😀😀😀", "😀"]);
    assert_eq!(count_words("plain 東京 0123456789abcdefXYZ"), 5);
}

#[test]
fn multibyte_text_is_never_split_inside_a_character() {
    // 2100 words of 3- and 4-byte characters, no blank line and no newline.
    let line = (0..2100)
        .map(|i| {
            if i % 2 == 0 {
                "日本語"
            } else {
                "€😀\u{a0}é"
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    let chunks = chunk(&line);
    assert!(chunks.len() >= 3);
    assert!(chunks.iter().all(|c| c.words as usize <= CHUNK_WORDS_MAX));
    let rejoined: Vec<&str> = chunks.iter().flat_map(|c| tokens(&c.text)).collect();
    assert_eq!(rejoined, tokens(&line));
}

#[test]
fn snapshot_of_a_typical_markdown_page() {
    let doc = format!(
        "# Budget 2026\n\
         Owner: Nuala Brennan. All amounts are in euro.\n\
         \n\
         ## Summary by line item\n\
         | Line item | Q1 | Year |\n\
         |-----------|---:|-----:|\n\
         | Salaries | €168,000 | €672,000 |\n\
         \n\
         {}\n\
         \n\
         {}\n\
         ## Q1 (January – March)\n\
         Q1 is the most expensive quarter.\n\
         ```sh\n\
         # export the ledger\n\
         ledger export --q1\n\
         ```\n\
         ### Hardware\n\
         Laptop for the new hire.\n\
         ## Q2\n\
         ## Contacts ##\n\
         - Accountant: +353 1 547 7854\n",
        words("salary", 250),
        words("rent", 300),
    );
    check(
        &doc,
        expect![[r###"
            #p0 [Budget 2026] 8w "Owner: Nuala Brennan. All amounts are in"
            #p1 [Budget 2026 > Summary by line item] 266w "| Line item | Q1 | Year |\n|-----------|-"
            #p2 [Budget 2026 > Summary by line item] 300w "rent0 rent1 rent2 rent3 rent4 rent5 rent"
            #p3 [Budget 2026 > Q1 (January – March)] 15w "Q1 is the most expensive quarter.\n```sh\n"
            #p4 [Budget 2026 > Q1 (January – March) > Hardware] 5w "Laptop for the new hire."
            #p5 [Budget 2026 > Q2] 2w "## Q2"
            #p6 [Budget 2026 > Contacts] 6w "- Accountant: +353 1 547 7854"
        "###]],
    );
}

#[test]
fn snapshot_of_a_log_without_blank_lines() {
    let log: String = (0..260)
        .map(|i| {
            format!(
                "2026-03-14T09:{:02}:{:02}Z INFO deploy step {i} ok\n",
                i / 60,
                i % 60
            )
        })
        .collect();
    check(
        &format!("# Incident log\r\n{}", log.replace('\n', "\r\n")),
        expect![[r##"
            #p0 [Incident log] 780w "2026-03-14T09:00:00Z INFO deploy step 0 "
            #p1 [Incident log] 780w "2026-03-14T09:02:10Z INFO deploy step 13"
        "##]],
    );
}

#[test]
fn snapshot_of_runts_and_long_paragraphs() {
    let doc = format!(
        "Lead-in runt.\n\n{}\n\n{}\n\n{}\n# Section\n{}\n\n{}\n\nTail runt here.\n## Short\nJust this.\n",
        words("a", 380),
        words("b", 30),
        words("c", 1200),
        words("d", 700),
        words("e", 398),
    );
    check(
        &doc,
        expect![[r##"
            #p0 [] 412w "Lead-in runt.\n\na0 a1 a2 a3 a4 a5 a6 a7 a"
            #p1 [] 600w "c0 c1 c2 c3 c4 c5 c6 c7 c8 c9 c10 c11 c1"
            #p2 [] 600w "c600 c601 c602 c603 c604 c605 c606 c607 "
            #p3 [Section] 700w "d0 d1 d2 d3 d4 d5 d6 d7 d8 d9 d10 d11 d1"
            #p4 [Section] 401w "e0 e1 e2 e3 e4 e5 e6 e7 e8 e9 e10 e11 e1"
            #p5 [Section > Short] 2w "Just this."
        "##]],
    );
}

// ---- properties ----

/// The input's lines (BOM dropped, endings normalised, right-trimmed) as
/// word lists, each flagged if the line could have left the body: it is
/// part of a heading, as the CommonMark parser reads the document.
fn input_lines(text: &str) -> Vec<(Vec<String>, bool)> {
    let text = normalize_line_endings(text.strip_prefix('\u{feff}').unwrap_or(text));
    let mut heading = vec![false; text.split('\n').count()];
    for b in blocks(&text).iter().filter(|b| b.heading.is_some()) {
        for flag in heading.iter_mut().take(b.lines.end).skip(b.lines.start) {
            *flag = true;
        }
    }
    text.split('\n')
        .zip(heading)
        .map(|(line, may_vanish)| {
            let words: Vec<String> = word_spans(line).into_iter().map(str::to_owned).collect();
            (words, may_vanish)
        })
        .filter(|(words, _)| !words.is_empty())
        .collect()
}

/// True if `got` is the words of `lines` with some whole lines flagged
/// may-vanish left out (a heading is left out unless it has no body). An NFA walk over positions (line, word), since a
/// heading's words may also appear in the body.
fn is_input_less_heading_lines(lines: &[(Vec<String>, bool)], got: &[&str]) -> bool {
    use std::collections::BTreeSet;
    // Close a set of positions under "skip a whole may-vanish line".
    let close = |mut set: BTreeSet<(usize, usize)>| {
        let mut todo: Vec<_> = set.iter().copied().collect();
        while let Some((line, word)) = todo.pop() {
            if word == 0 && lines.get(line).is_some_and(|(_, v)| *v) && set.insert((line + 1, 0)) {
                todo.push((line + 1, 0));
            }
        }
        set
    };
    let mut states = close(BTreeSet::from([(0, 0)]));
    for want in got {
        let next = states
            .iter()
            .filter(|&&(line, word)| lines.get(line).is_some_and(|(ws, _)| ws[word] == *want))
            .map(|&(line, word)| {
                if word + 1 == lines[line].0.len() {
                    (line + 1, 0)
                } else {
                    (line, word + 1)
                }
            })
            .collect();
        states = close(next);
        if states.is_empty() {
            return false;
        }
    }
    states.contains(&(lines.len(), 0))
}

fn soup() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        12 => "[a-z0-9]{1,8}",
        6 => Just(" ".to_owned()),
        5 => Just("\n".to_owned()),
        1 => Just("\r\n".to_owned()),
        1 => Just("\r".to_owned()),
        2 => Just("\n\n".to_owned()),
        3 => "#{1,7} ?",
        1 => "(```|~~~|````)[a-z`]{0,2}",
        2 => "(===|---|- |> |1. )",
        1 => "[\t\u{a0}\u{3000} ]{1,3}",
        2 => "[é€中😀\u{301}]{1,4}",
        1 => "[a-z東京]{17,60}",
    ];
    prop::collection::vec(piece, 0..400).prop_map(|v| v.concat())
}

/// Soup with long runs, so the ceiling is reached.
fn long_soup() -> impl Strategy<Value = String> {
    (soup(), 0usize..2500, 1usize..40, soup()).prop_map(|(a, n, per_line, b)| {
        let run: String = (0..n)
            .map(|i| {
                if i % per_line == per_line - 1 {
                    format!("é{i}\n")
                } else {
                    format!("w{i} ")
                }
            })
            .collect();
        format!("{a}{run}{b}")
    })
}

fn assert_invariants(input: &str, chunks: &[Chunk]) -> Result<(), TestCaseError> {
    for (i, c) in chunks.iter().enumerate() {
        prop_assert_eq!(c.ordinal as usize, i);
        prop_assert!(c.words > 0);
        prop_assert!(c.words as usize <= CHUNK_WORDS_MAX);
        prop_assert!(count_words(&c.text) <= CHUNK_WORDS_MAX);
        prop_assert!(c.text.len() <= CHUNK_BYTES_MAX);
        prop_assert_eq!(c.words as usize, c.text.split_whitespace().count());
        prop_assert!(!c.text.contains('\r'));
        prop_assert!(!c.text.starts_with('\n'));
        prop_assert!(!c.text.ends_with(char::is_whitespace));
        prop_assert!(c.trail.len() <= HEADING_LEVEL_MAX);
        prop_assert!(c.trail.iter().all(|t| !t.is_empty() && !t.contains('\n')));
    }
    // No word is lost or invented: the chunks' words, in order, are the
    // input's words less some whole lines that could be headings.
    let got: Vec<&str> = chunks.iter().flat_map(|c| tokens(&c.text)).collect();
    prop_assert!(is_input_less_heading_lines(&input_lines(input), &got));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn arbitrary_text_keeps_every_chunk_within_bounds_and_loses_no_body_word(text in soup()) {
        let chunks = chunk(&text);
        assert_invariants(&text, &chunks)?;
        if input_lines(&text).iter().all(|(_, may_vanish)| !may_vanish) {
            let all: Vec<&str> = chunks.iter().flat_map(|c| tokens(&c.text)).collect();
            prop_assert_eq!(all, tokens(&text));
        }
    }

    #[test]
    fn any_string_at_all_is_chunked_within_bounds(text in any::<String>()) {
        assert_invariants(&text, &chunk(&text))?;
    }

    #[test]
    fn long_runs_are_cut_at_the_ceiling_without_losing_words(text in long_soup()) {
        assert_invariants(&text, &chunk(&text))?;
    }
}

/// A generated document whose heading lines are known.
#[derive(Debug, Clone)]
enum Block {
    Heading {
        level: usize,
        indent: usize,
        title: String,
        closed: bool,
    },
    Para(Vec<String>),
    Fence(Vec<String>),
    /// A thematic break, `---` after a blank line: never front matter
    /// (the document's first line is never one), never a setext underline.
    Break,
}

fn word() -> impl Strategy<Value = String> {
    "[a-z0-9é€中😀]{1,6}"
}

fn line_of(max: usize) -> impl Strategy<Value = String> {
    (
        prop::collection::vec(word(), 1..max),
        prop::sample::select(vec![" ", "\u{a0}", " \t "]),
    )
        .prop_map(|(ws, sep)| ws.join(sep))
}

fn block() -> impl Strategy<Value = Block> {
    prop_oneof![
        2 => (1usize..=6, 0usize..=3, prop::collection::vec(word(), 1..4), any::<bool>())
            .prop_map(|(level, indent, ws, closed)| Block::Heading { level, indent, title: ws.join(" "), closed }),
        4 => prop::collection::vec(line_of(12), 1..8).prop_map(Block::Para),
        1 => prop::collection::vec(line_of(1200), 1..3).prop_map(Block::Para),
        1 => prop::collection::vec(line_of(150), 1..20).prop_map(Block::Para),
        1 => prop::collection::vec(
            prop_oneof![line_of(8), Just("# comment".to_owned()), Just("## section?".to_owned()), Just(String::new())],
            0..10,
        ).prop_map(Block::Fence),
        2 => Just(Block::Break),
    ]
}

/// Renders blocks with the given line ending and gaps, returning the text
/// and, for every body word, the trail it must be cited under.
fn render_doc(blocks: &[Block], gaps: &[bool], eol: &str) -> (String, Vec<(String, Vec<String>)>) {
    let mut text = String::new();
    let mut expected = Vec::new();
    // (level, title, in some passage's trail yet)
    let mut trail: Vec<(usize, String, bool)> = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let lines: Vec<String> = match b {
            Block::Heading {
                level,
                indent,
                title,
                closed,
            } => {
                trail.retain(|(l, _, _)| l < level);
                trail.push((*level, title.clone(), false));
                let close = if *closed { " ##" } else { "" };
                vec![format!(
                    "{}{} {title}{close}",
                    " ".repeat(*indent),
                    "#".repeat(*level)
                )]
            }
            Block::Para(lines) => lines.clone(),
            Block::Fence(lines) => {
                let mut all = vec!["```sh".to_owned()];
                all.extend(lines.iter().cloned());
                all.push("```".to_owned());
                all
            }
            Block::Break => vec![String::new(), "---".to_owned()],
        };
        // A heading is a passage of its own lines when its section is
        // empty, the next heading is not deeper, and the trail holds a
        // heading no passage carries yet.
        let bodiless = match (b, blocks.get(i + 1)) {
            (Block::Heading { .. }, None) => true,
            (Block::Heading { level, .. }, Some(Block::Heading { level: next, .. })) => {
                next <= level
            }
            _ => false,
        };
        let is_passage = !matches!(b, Block::Heading { .. })
            || (bodiless && trail.iter().any(|(_, _, cited)| !cited));
        if is_passage {
            let names: Vec<String> = trail.iter().map(|(_, t, _)| t.clone()).collect();
            for entry in &mut trail {
                entry.2 = true;
            }
            for l in &lines {
                expected.extend(tokens(l).into_iter().map(|w| (w.to_owned(), names.clone())));
            }
        }
        for l in lines {
            text.push_str(&l);
            text.push_str(eol);
        }
        if gaps.get(i).copied().unwrap_or(false) {
            text.push_str(eol);
        }
    }
    (text, expected)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn every_body_word_is_kept_in_order_under_its_own_trail(
        blocks in prop::collection::vec(block(), 0..12),
        gaps in prop::collection::vec(any::<bool>(), 12),
    ) {
        let (text, expected) = render_doc(&blocks, &gaps, "\n");
        let chunks = chunk(&text);
        assert_invariants(&text, &chunks)?;
        let got: Vec<(String, Vec<String>)> = chunks
            .iter()
            .flat_map(|c| tokens(&c.text).into_iter().map(|w| (w.to_owned(), c.trail.clone())))
            .collect();
        prop_assert_eq!(got, expected);
        for eol in ["\r\n", "\r"] {
            let (twin, _) = render_doc(&blocks, &gaps, eol);
            prop_assert_eq!(&chunk(&twin), &chunks);
        }
    }
}

/// The index tokens of `text` (runs of letters and digits, as `unicode61`
/// cuts them), in order.
fn index_tokens(text: &str) -> Vec<&str> {
    crate::search::query::words(text).map(|(_, w)| w).collect()
}

/// A line with no white space: words joined by punctuation, as a minified
/// script or a one-line JSON export is.
fn unspaced_line() -> impl Strategy<Value = String> {
    (
        prop::collection::vec("[a-zA-Z0-9é東]{1,14}", 1200..3000),
        prop::collection::vec(
            prop::sample::select(vec![
                ",", ":", "\":\"", "\",\"", "{", "}", ".", "/", "=", "-",
            ]),
            1200..3000,
        ),
    )
        .prop_map(|(words, seps)| {
            words
                .iter()
                .zip(seps.iter().cycle())
                .map(|(w, s)| format!("{w}{s}"))
                .collect()
        })
}

/// Clusters that are several characters each: ZWJ sequences, flags, a
/// letter with combining marks, a skin tone.
fn clusters() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "👨\u{200d}👩\u{200d}👧\u{200d}👦",
            "🇮🇪",
            "🇯🇵",
            "e\u{301}\u{323}",
            "👍🏽",
            "x",
            "字",
            "-",
        ]),
        3000..9000,
    )
    .prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn a_long_line_without_spaces_is_cut_between_tokens_so_every_token_is_whole_in_one_passage(line in unspaced_line()) {
        let chunks = chunk(&line);
        prop_assert!(chunks.len() >= 2, "{} passages", chunks.len());
        assert_invariants(&line, &chunks)?;
        let got: Vec<&str> = chunks.iter().flat_map(|c| index_tokens(&c.text)).collect();
        prop_assert_eq!(got, index_tokens(&line));
    }

    #[test]
    fn no_grapheme_cluster_is_split_across_passages(line in clusters()) {
        use unicode_segmentation::UnicodeSegmentation as _;
        let chunks = chunk(&line);
        prop_assert!(chunks.len() >= 2, "{} passages", chunks.len());
        assert_invariants(&line, &chunks)?;
        let got: Vec<&str> = chunks.iter().flat_map(|c| c.text.graphemes(true)).collect();
        let want: Vec<&str> = line.graphemes(true).collect();
        prop_assert_eq!(got, want);
    }
}

#[test]
fn a_cluster_longer_than_the_word_bytes_is_one_counted_span_of_several_words() {
    let family = "👨\u{200d}👩\u{200d}👧\u{200d}👦";
    assert_eq!(family.len(), 25);
    assert_eq!(word_spans(&format!("ab{family}cd")), ["ab", family, "cd"]);
    assert_eq!(count_words(family), 2);
    // A stack of marks past GRAPHEME_BYTES_MAX is cut between characters.
    let zalgo = format!("a{}", "\u{301}".repeat(GRAPHEME_BYTES_MAX));
    assert!(word_spans(&zalgo).iter().all(|s| s.len() <= WORD_BYTES_MAX));
}

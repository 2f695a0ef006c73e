//! The one form text is indexed and searched in: Unicode NFC, and the scripts written without spaces cut into overlapping pairs (issue 11, §7.2).
//!
//! Two things make the same word look different to a tokenizer:
//!
//! - **Normalisation.** "café" can be written as one code point (`é`,
//!   U+00E9) or two (`e` + U+0301). Everything the index holds and every
//!   query goes through [`nfc`] first, so the decomposed form of a word finds
//!   its composed form. Case and accents are then folded ([`fold`]: Unicode
//!   case folding, accents off Latin, Greek and Cyrillic letters, and a
//!   table for the letters with no accent to strip, such as `ł` and `ø`),
//!   the same for the index, the query and the highlighter, so `polska`
//!   finds and marks `Polską`, `οδος` finds `ΟΔΌΣ` and `lodz` finds `Łódź`.
//!   The index's tokenizer (`unicode61 remove_diacritics 2`) sees the
//!   folded text.
//! - **Text without spaces.** Chinese and Japanese write a sentence as one
//!   run of letters: to `unicode61` `東京で会議を開きました` is one token, so
//!   `東京` would find nothing. A run of such characters ([`is_unspaced`]) is
//!   indexed as its overlapping pairs, `東京 京で で会 会議 …` (the bigram
//!   indexing of Lucene's `CJKBigramFilter`), and a query run becomes the
//!   phrase of its own pairs, so `東京` finds the sentence and `東京都` needs
//!   `東京` and `京都` adjacent. A query of one such character matches the
//!   pairs it starts (an FTS5 prefix): it finds every place the character
//!   stands except the last of a run, which is this scheme's stated gap.
//!
//! Korean is written with spaces between words and is left to `unicode61`.
//! No dictionary is used: pairs find every word a dictionary would, and
//! some that are not words, which ranking then weighs.

use std::borrow::Cow;

use icu_casemap::CaseMapper;
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};
use unicode_script::{Script, UnicodeScript};

/// `text` in Unicode Normalization Form C; borrowed when it already is.
pub fn nfc(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    match is_nfc_quick(text.chars()) {
        IsNormalized::Yes => Cow::Borrowed(text),
        _ => Cow::Owned(text.nfc().collect()),
    }
}

/// The smallest UTF-8 lead byte of an [`is_unspaced`] character: the
/// lowest of them, U+2E80 (the first CJK radical), encodes as `E2 BA 80`.
const UNSPACED_LEAD_BYTE_MIN: u8 = 0xE2;

/// The lowest [`is_unspaced`] character, U+2E80 (the first CJK radical).
const UNSPACED_CHAR_MIN: u32 = 0x2E80;
// The two fast paths agree: U+2E80's UTF-8 lead byte is 0xE2.
const _: () = assert!(0xE0 | (UNSPACED_CHAR_MIN >> 12) == UNSPACED_LEAD_BYTE_MIN as u32);

/// True for a character of a script written without spaces between words:
/// Han, Hiragana and Katakana (Chinese and Japanese).
pub fn is_unspaced(c: char) -> bool {
    // Below U+2E80 no character is unspaced: most text never reaches the
    // script table (a binary search per character, the highlighter's
    // largest cost at 90k chunks before this test).
    if u32::from(c) < UNSPACED_CHAR_MIN {
        return false;
    }
    matches!(c.script(), Script::Han | Script::Hiragana | Script::Katakana)
        // The prolonged sound mark and the iteration marks are Common but
        // stand inside Japanese words.
        || matches!(c, '\u{30FC}' | '\u{3005}' | '\u{309D}' | '\u{309E}' | '\u{30FD}' | '\u{30FE}')
}

/// `text` as the index holds it: [`nfc`], [`fold`]ed, then every run of [`is_unspaced`]
/// characters as its overlapping pairs, space-separated, with a space
/// either side so the run never joins a neighbouring word. A run of one
/// character stays one character. Borrowed when nothing changes.
pub fn index_form(text: &str) -> Cow<'_, str> {
    let normal = nfc(text);
    // ASCII is left to the tokenizer, which lowercases it as `fold` does.
    let normal = if normal.is_ascii() {
        normal
    } else {
        Cow::Owned(fold_runs(&normal))
    };
    // Every unspaced character is U+2E80 or above, so its UTF-8 lead byte
    // is at least 0xE2: most text is passed over by one byte scan.
    if !normal.bytes().any(|b| b >= UNSPACED_LEAD_BYTE_MIN) || !normal.chars().any(is_unspaced) {
        return normal;
    }
    let mut out = String::with_capacity(normal.len() * 2);
    let mut run: Vec<char> = Vec::new();
    for c in normal.chars() {
        if is_unspaced(c) {
            run.push(c);
        } else {
            push_pairs(&mut out, &run);
            run.clear();
            out.push(c);
        }
    }
    push_pairs(&mut out, &run);
    Cow::Owned(out)
}

/// The index tokens of one run of [`is_unspaced`] characters: its pairs, or
/// the character itself for a run of one.
pub fn pairs(run: &str) -> Vec<String> {
    let chars: Vec<char> = run.chars().collect();
    match chars.len() {
        0 => vec![],
        1 => vec![chars[0].to_string()],
        _ => chars.windows(2).map(|w| w.iter().collect()).collect(),
    }
}

fn push_pairs(out: &mut String, run: &[char]) {
    if run.is_empty() {
        return;
    }
    out.push(' ');
    if run.len() == 1 {
        out.push(run[0]);
    } else {
        for (i, w) in run.windows(2).enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push(w[0]);
            out.push(w[1]);
        }
    }
    out.push(' ');
}

/// Letters folded to ASCII though Unicode gives them no decomposition to
/// strip an accent from, sorted by letter: a reader who types `lodz`,
/// `oresund`, `strasse`, `dakar` or `istanbul` plainly finds `Łódź`,
/// `Øresund`, `Straße`, `Đakar` and `Istanbul` written with a dotless `ı`.
///
/// Source: Apache Lucene's `ASCIIFoldingFilter` (which tantivy's
/// `AsciiFoldingFilter` ports), its mappings of the lowercase letters of
/// Latin-1 Supplement, Latin Extended-A and Latin Extended-B that have no
/// canonical decomposition, as the letters appear after Unicode case
/// folding ([`fold`]); `ß` is not here because case folding already makes
/// it `ss`. Only letters: Lucene's table also turns symbols, superscripts
/// and enclosed digits into ASCII, which memoria does not (they are not
/// what a reader types in place of a letter).
pub const FOLD_TABLE: [(char, &str); 32] = [
    ('æ', "ae"),
    ('ð', "d"),
    ('ø', "o"),
    ('þ', "th"),
    ('đ', "d"),
    ('ħ', "h"),
    ('ı', "i"),
    ('ĳ', "ij"),
    ('ĸ', "q"),
    ('ŀ', "l"),
    ('ł', "l"),
    ('ŋ', "n"),
    ('œ', "oe"),
    ('ŧ', "t"),
    ('ƀ', "b"),
    ('ƃ', "b"),
    ('ƈ', "c"),
    ('ƌ', "d"),
    ('ƒ', "f"),
    ('ƙ', "k"),
    ('ƚ', "l"),
    ('ƞ', "n"),
    ('ƥ', "p"),
    ('ƫ', "t"),
    ('ƭ', "t"),
    ('ƴ', "y"),
    ('ƶ', "z"),
    ('ȡ', "d"),
    ('ȥ', "z"),
    ('ȴ', "l"),
    ('ȵ', "n"),
    ('ȶ', "t"),
];

/// `text` with each run of non-ASCII characters [`fold`]ed and its ASCII
/// left as it is, for the tokenizer to lowercase: what [`fold`] of the
/// whole text gives, up to ASCII case, at a fraction of the work when a
/// passage is mostly ASCII with a dash or an accented name in it (the
/// rebuild at 90,000 chunks spent a third of its CPU folding whole
/// passages, issue 30).
///
/// The same because every step of [`fold`] is local to a run between
/// ASCII characters: case folding is context-free; an ASCII character is a
/// starter, so no canonical reordering or composition crosses it, and no
/// composition takes it as its second character; and the state that drops
/// a mark after a Latin, Greek or Cyrillic letter is, after any ASCII
/// character, what it is at the start of a text.
fn fold_runs(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let ascii = rest
            .bytes()
            .position(|b| !b.is_ascii())
            .unwrap_or(rest.len());
        out.push_str(&rest[..ascii]);
        rest = &rest[ascii..];
        let other = rest
            .bytes()
            .position(|b| b.is_ascii())
            .unwrap_or(rest.len());
        out.push_str(&fold(&rest[..other]));
        rest = &rest[other..];
    }
    out
}

/// `word` folded as a search engine folds it, the comparison of the index
/// ([`index_form`]), the query ([`crate::search::query::terms`]) and the
/// highlighter alike (issue 32):
///
/// 1. Unicode full case folding (`CaseFolding.txt`, through ICU4X's
///    `icu_casemap`): `Σ` and the final `ς` become `σ`, `ß` becomes `ss`.
/// 2. Accents removed: in the canonical decomposition (NFD), the combining
///    marks on a Latin, Greek or Cyrillic letter (or on a digit or symbol)
///    are dropped, so `é`, Greek tonos (`ά`) and Cyrillic `ё` lose theirs.
///    Marks of other scripts are kept: a Devanagari vowel sign or the
///    Japanese voicing mark (`が`) is part of the letter, not an accent.
/// 3. [`FOLD_TABLE`]: `ł`, `ø`, `đ`, `æ`, dotless `ı` and the other letters
///    with no decomposition become ASCII.
/// 4. The result recomposed (NFC), so kept marks and Hangul stand as typed.
///
/// Not NFKC: full-width and compatibility forms stay as they are. Not a
/// transliteration (`deunicode`, `any_ascii`): that turns Chinese and
/// Japanese into Latin syllables, which the pairs of [`index_form`] need
/// to see as written. Idempotent; ASCII is only lowercased. Folds a word or
/// a whole text alike: the index and the query fold the whole text before
/// cutting it into words, so the two cut the same words.
pub fn fold(word: &str) -> String {
    // ASCII has no marks to drop and lowercases byte for byte.
    if word.is_ascii() {
        return word.to_ascii_lowercase();
    }
    let cased = CaseMapper::new().fold_string(word);
    let mut out = String::with_capacity(cased.len());
    // A mark with no letter before it in the text belongs to nothing.
    let mut drop_marks = true;
    for c in cased.nfd() {
        if is_combining_mark(c) {
            if !drop_marks {
                out.push(c);
            }
            continue;
        }
        drop_marks = c.is_ascii()
            || matches!(
                c.script(),
                Script::Latin | Script::Greek | Script::Cyrillic | Script::Common
            );
        match FOLD_TABLE.binary_search_by_key(&c, |&(letter, _)| letter) {
            Ok(i) => out.push_str(FOLD_TABLE[i].1),
            Err(_) => out.push(c),
        }
    }
    match is_nfc_quick(out.chars()) {
        IsNormalized::Yes => out,
        _ => out.nfc().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_character_below_the_fast_paths_bound_is_of_an_unspaced_script() {
        let below = (0..UNSPACED_CHAR_MIN).filter_map(char::from_u32);
        let unspaced: Vec<char> = below
            .filter(|c| {
                matches!(
                    c.script(),
                    Script::Han | Script::Hiragana | Script::Katakana
                )
            })
            .collect();
        assert!(unspaced.is_empty(), "{unspaced:?}");
        assert!(is_unspaced('\u{2E80}') && !is_unspaced('z'));
    }

    #[test]
    fn folding_an_ascii_word_lowercases_it_as_the_general_path_does() {
        for w in ["Mutex", "HTTP2", "o'Brien", "a-b_c"] {
            // The general path, reached by one non-ASCII letter that folds
            // to itself.
            let general = fold(&format!("{w}ж"));
            assert_eq!(format!("{}ж", fold(w)), general);
        }
    }

    #[test]
    fn a_decomposed_word_normalises_to_its_composed_form() {
        assert_eq!(nfc("cafe\u{301}"), "café");
        assert!(matches!(nfc("café"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_japanese_sentence_is_indexed_as_overlapping_pairs() {
        assert_eq!(
            index_form("東京で会議を開きました。"),
            " 東京 京で で会 会議 議を を開 開き きま まし した 。"
        );
    }

    #[test]
    fn no_unspaced_character_is_below_the_lead_byte_the_scan_looks_for() {
        let lowest = (0..=0x10FFFFu32)
            .filter_map(char::from_u32)
            .find(|c| is_unspaced(*c))
            .unwrap();
        let mut buf = [0u8; 4];
        assert!(
            lowest.encode_utf8(&mut buf).as_bytes()[0] >= UNSPACED_LEAD_BYTE_MIN,
            "{lowest:?}"
        );
    }

    #[test]
    fn latin_text_is_left_as_it_is() {
        assert!(matches!(index_form("plain words"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_lone_unspaced_character_stays_one_token_apart_from_its_neighbours() {
        assert_eq!(index_form("abc京def"), "abc 京 def");
    }

    #[test]
    fn folding_removes_accents_and_case() {
        assert_eq!(fold("Polską"), "polska");
        assert_eq!(fold("Cafe\u{301}"), "cafe");
    }

    #[test]
    fn folding_reaches_greek_cyrillic_and_letters_with_no_decomposition() {
        // (written, folded)
        let rows = [
            ("ΟΔΌΣ", "οδοσ"),
            ("οδός", "οδοσ"),
            ("Ёлка", "елка"),
            ("Łódź", "lodz"),
            ("Øresund", "oresund"),
            ("Straße", "strasse"),
            ("ẞ", "ss"),
            ("Đakar", "dakar"),
            ("Æsir", "aesir"),
            ("Œuvre", "oeuvre"),
            ("ıstanbul", "istanbul"),
            ("İstanbul", "istanbul"),
            ("Þór", "thor"),
            ("ﬁle", "file"),
        ];
        for (written, folded) in rows {
            assert_eq!(fold(written), folded, "{written}");
        }
    }

    #[test]
    fn folding_keeps_the_marks_that_are_letters_of_other_scripts() {
        // The Japanese voicing mark and Devanagari vowel signs are part of
        // the letter; Hangul and Han are left as they are.
        assert_ne!(fold("が"), fold("か"));
        assert_eq!(fold("ガ"), "ガ");
        assert_eq!(fold("हिन्दी"), "हिन्दी");
        assert_eq!(fold("한국어"), "한국어");
        assert_eq!(fold("東京"), "東京");
    }

    #[test]
    fn every_fold_table_letter_is_sorted_undecomposable_folded_and_maps_to_ascii() {
        assert!(FOLD_TABLE.windows(2).all(|w| w[0].0 < w[1].0));
        for (letter, ascii) in FOLD_TABLE {
            let nfd: String = letter.to_string().nfd().collect();
            assert_eq!(nfd, letter.to_string(), "{letter} decomposes");
            let cased = CaseMapper::new()
                .fold_string(&letter.to_string())
                .into_owned();
            assert_eq!(
                cased,
                letter.to_string(),
                "{letter} is not its own case fold"
            );
            assert!(
                !ascii.is_empty() && ascii.bytes().all(|b| b.is_ascii_lowercase()),
                "{letter} → {ascii}"
            );
        }
    }

    /// Words of Latin, Greek and Cyrillic with and without their accents
    /// and special letters, in any case, with some Japanese and Hangul.
    fn mixed_word() -> impl proptest::strategy::Strategy<Value = String> {
        "[a-zA-ZéÉłŁøØßẞđĐæÆıİœŒςσΣάΆήέΐёЁжЖ\u{301}\u{308}がか한東]{1,12}"
    }

    proptest::proptest! {
        #[test]
        fn folding_run_by_run_is_folding_the_whole_text_up_to_ascii_case(
            text in proptest::collection::vec(
                proptest::prop_oneof![
                    mixed_word(),
                    "[ .,;:!?'()0-9-]{1,3}",
                    "[\u{300}-\u{36f}\u{338}\u{94d}\u{93e}\u{3099}]{1,2}",
                    "[\u{2014}\u{2019}\u{201c}\u{201d}\u{212a}\u{fb01}]{1,2}",
                ],
                1..12,
            )
        ) {
            let text = text.concat();
            proptest::prop_assert_eq!(fold_runs(&text).to_ascii_lowercase(), fold(&text));
        }

        #[test]
        fn folding_is_idempotent(word in mixed_word()) {
            let once = fold(&word);
            proptest::prop_assert_eq!(fold(&once), once);
        }

        #[test]
        fn the_index_holds_the_words_the_query_searches_for(text in proptest::collection::vec(mixed_word(), 1..6)) {
            // What the query side searches for ([`terms`], folded) is what
            // the index side holds ([`index_form`], tokenized as unicode61
            // tokenizes: runs of letters and digits, lowercased), for every
            // spaced-script word; an unspaced run is held as its pairs.
            let text = text.join(" ");
            let held: Vec<String> = crate::search::query::words(&index_form(&text))
                .map(|(_, w)| w.to_lowercase())
                .collect();
            let searched: Vec<String> = crate::search::query::terms(&text)
                .into_iter()
                .flat_map(|t| if t.chars().next().is_some_and(is_unspaced) { pairs(&t) } else { vec![t] })
                .collect();
            proptest::prop_assert_eq!(held, searched);
        }
    }

    #[test]
    fn a_run_of_one_is_its_own_token_and_a_longer_run_its_pairs() {
        assert_eq!(pairs("京"), vec!["京"]);
        assert_eq!(pairs("東京都"), vec!["東京", "京都"]);
        assert!(pairs("").is_empty());
    }
}

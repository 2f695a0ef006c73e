//! Decoding a file or upload into text memoria can chunk: Markdown, plain text, or HTML (§5, §9.1).
//!
//! Text is UTF-8, or UTF-16 with a byte-order mark (issue 32: Windows tools
//! write it, and it was refused as binary for its NUL bytes).
//!
//! Total: any bytes give a [`Decoded`] or a clear [`Error`] whose kind says
//! why ([`ErrorKind::Empty`], [`ErrorKind::Decode`], [`ErrorKind::TooLarge`]).
//! HTML is converted to Markdown by the `htmd` crate, so its headings reach
//! the chunker as headings; scripts, styles and navigation are dropped.

use crate::error::{DecodeError, Error, ErrorKind};
use crate::search::chunk::{self, Chunk};
use crate::search::markdown::extension;
// What a name is read as is the document page's question too, so it is
// answered below both, where a passage's form is.
pub use crate::search::markdown::{SourceKind, source_kind};

/// The largest file `memoria import` reads, in bytes. Uploads have their own,
/// smaller cap ([`crate::web::UPLOAD_BYTES_MAX`]).
pub const IMPORT_FILE_BYTES_MAX: usize = 16 * 1024 * 1024;
/// Share of control characters (per mille) above which text is called binary.
pub const CONTROL_CHARS_PER_MILLE_MAX: usize = 10;
/// The longest title kept, in characters; longer ones are cut at a char boundary.
pub const TITLE_CHARS_MAX: usize = 200;

/// A decoded document.
#[derive(Debug, Clone)]
pub struct Decoded {
    /// How it was read.
    pub kind: SourceKind,
    /// The first heading, else the file's stem.
    pub title: String,
    /// The text to chunk.
    pub body: String,
    /// `body` as the chunker cuts it ([`chunk::chunk`]), in order: the
    /// title is read from these, and an import stores these, so a
    /// document is chunked once (issue 30).
    pub chunks: Vec<Chunk>,
}

/// True if memoria imports files with this name's extension when walking a directory.
pub fn is_importable_name(name: &str) -> bool {
    matches!(
        extension(name).as_deref(),
        Some("md" | "markdown" | "txt" | "html" | "htm")
    )
}

fn stem(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let s = base.rsplit_once('.').map(|(s, _)| s).unwrap_or(base);
    if s.is_empty() {
        base.to_string()
    } else {
        s.to_string()
    }
}

/// Decodes `bytes` named `name` (a path or upload file name).
///
/// # Errors
/// - [`ErrorKind::Empty`]: no bytes, or no words after decoding;
/// - [`ErrorKind::TooLarge`]: over [`IMPORT_FILE_BYTES_MAX`];
/// - [`ErrorKind::Decode`]: not UTF-8 (nor UTF-16 with a byte-order mark),
///   or binary (NUL bytes or control characters), or unconvertible HTML;
///   [`Error::decode_error`] says which.
pub fn decode(name: &str, bytes: &[u8]) -> Result<Decoded, Error> {
    if bytes.is_empty() {
        return Err(Error::new(ErrorKind::Empty, "the file is empty"));
    }
    if bytes.len() > IMPORT_FILE_BYTES_MAX {
        return Err(Error::new(
            ErrorKind::TooLarge,
            format!(
                "the file is larger than {} MiB",
                IMPORT_FILE_BYTES_MAX / (1024 * 1024)
            ),
        ));
    }
    let utf16 = utf16_with_bom(bytes)?;
    let text = match utf16.as_deref() {
        Some(text) => text,
        None => utf8(bytes)?,
    };
    let control = text
        .chars()
        .filter(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t' | '\u{c}'))
        .count();
    let chars = text.chars().count().max(1);
    if control * 1000 / chars > CONTROL_CHARS_PER_MILLE_MAX {
        return Err(Error::with_source(
            ErrorKind::Decode,
            "the file is binary (too many control characters), not text",
            DecodeError::Binary,
        ));
    }
    let kind = source_kind(name);
    let body = match kind {
        SourceKind::Html => html_to_markdown(text)?,
        _ => text.to_string(),
    };
    if !body.chars().any(char::is_alphanumeric) {
        return Err(Error::new(ErrorKind::Empty, "the file holds no words"));
    }
    let chunks = chunk::chunk(&body);
    let title = match kind {
        SourceKind::PlainText => None,
        _ => first_heading(&chunks),
    }
    .unwrap_or_else(|| stem(name));
    Ok(Decoded {
        kind,
        title: cut_chars(title.trim(), TITLE_CHARS_MAX),
        body,
        chunks,
    })
}

/// `bytes` as UTF-8 text, a leading byte-order mark dropped.
///
/// # Errors
/// [`ErrorKind::Decode`]: NUL bytes ([`DecodeError::Binary`]) or invalid
/// UTF-8 ([`DecodeError::NotUtf8`]).
fn utf8(bytes: &[u8]) -> Result<&str, Error> {
    if bytes.contains(&0) {
        return Err(Error::with_source(
            ErrorKind::Decode,
            "the file is binary (it holds NUL bytes), not text",
            DecodeError::Binary,
        ));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        Error::with_source(
            ErrorKind::Decode,
            format!(
                "the file is not UTF-8 text (invalid byte at offset {})",
                e.valid_up_to()
            ),
            DecodeError::NotUtf8,
        )
    })?;
    Ok(text.trim_start_matches('\u{feff}'))
}

/// The text of a file that opens with a UTF-16 byte-order mark (`FF FE`,
/// little-endian, or `FE FF`, big-endian), the mark dropped; `None` for a
/// file without one, which is read as UTF-8. UTF-16 text holds NUL bytes
/// (every ASCII character has one), so it is recognised by its mark before
/// the binary test, and the decoded text then passes the same control
/// character test as UTF-8 does (a NUL character in it is binary).
///
/// # Errors
/// [`ErrorKind::Decode`] ([`DecodeError::NotUtf16`]): an odd number of
/// bytes after the mark, or an unpaired surrogate.
fn utf16_with_bom(bytes: &[u8]) -> Result<Option<String>, Error> {
    let (rest, little) = match bytes {
        [0xFF, 0xFE, rest @ ..] => (rest, true),
        [0xFE, 0xFF, rest @ ..] => (rest, false),
        _ => return Ok(None),
    };
    let unit = |pair: [u8; 2]| {
        if little {
            u16::from_le_bytes(pair)
        } else {
            u16::from_be_bytes(pair)
        }
    };
    let invalid = |what: String| Error::with_source(ErrorKind::Decode, what, DecodeError::NotUtf16);
    if rest.len() % 2 != 0 {
        return Err(invalid(format!(
            "the file is not UTF-16 text (an odd number of bytes, {}, after its byte-order mark)",
            rest.len()
        )));
    }
    let units = rest.chunks_exact(2).map(|pair| unit([pair[0], pair[1]]));
    let text = char::decode_utf16(units)
        .collect::<Result<String, _>>()
        .map_err(|e| {
            invalid(format!(
                "the file is not UTF-16 text (an unpaired surrogate {:#06x})",
                e.unpaired_surrogate()
            ))
        })?;
    if text.contains('\0') {
        return Err(Error::with_source(
            ErrorKind::Decode,
            "the file is binary (it holds NUL characters), not text",
            DecodeError::Binary,
        ));
    }
    Ok(Some(text.trim_start_matches('\u{feff}').to_owned()))
}

fn cut_chars(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

/// The HTML to Markdown converter, built once: building one sets up every
/// element's handler (1.5% of an import's CPU when built per document,
/// issue 30), and converting keeps no state in it (`htmd` keeps a
/// conversion's pending links per thread and clears them as it finishes).
static HTML_CONVERTER: std::sync::LazyLock<htmd::HtmlToMarkdown> = std::sync::LazyLock::new(|| {
    htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "script", "style", "noscript", "nav", "header", "footer", "svg", "button", "form",
            "iframe", "template", "head",
        ])
        .build()
});

fn html_to_markdown(html: &str) -> Result<String, Error> {
    let content = main_element(html).unwrap_or(html);
    HTML_CONVERTER
        .convert(content)
        .map(|md| unlink_headings(&md))
        .map_err(|_| {
            Error::with_source(
                ErrorKind::Decode,
                "the HTML could not be converted to text",
                DecodeError::Html,
            )
        })
}

/// The outermost heading of the first chunk that has one, as the chunker
/// reads headings (§7.2): one rule for titles and trails, not two.
fn first_heading(chunks: &[Chunk]) -> Option<String> {
    chunks
        .iter()
        .find_map(|c| c.trail.iter().find(|t| !t.trim().is_empty()).cloned())
}

/// The page's `<main>` element, if it has exactly one: site chrome (menus,
/// help pop-ups, sidebars) lives outside it in generated documentation.
fn main_element(html: &str) -> Option<&str> {
    let lower = html.to_ascii_lowercase();
    let open = lower.find("<main")?;
    if lower[open + 5..].contains("<main") {
        return None;
    }
    let body_start = open + lower[open..].find('>')? + 1;
    let close = lower.rfind("</main>")?;
    (close > body_start).then(|| &html[body_start..close])
}

/// `[text](target)` → `text` on heading lines, where generated HTML wraps
/// headings in self-links that would otherwise fill titles and trails.
fn unlink_headings(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    for line in markdown.split_inclusive('\n') {
        if !line.trim_start().starts_with('#') {
            out.push_str(line);
            continue;
        }
        let mut rest = line;
        while let Some(open) = rest.find('[') {
            let Some(mid) = rest[open..].find("](").map(|m| open + m) else {
                break;
            };
            let Some(close) = rest[mid..].find(')').map(|c| mid + c) else {
                break;
            };
            out.push_str(&rest[..open]);
            out.push_str(&rest[open + 1..mid]);
            rest = &rest[close + 1..];
        }
        out.push_str(rest);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_takes_its_title_from_the_first_heading() {
        let d = decode("notes/budget.md", b"intro\n\n# Budget 2026\n\nbody").unwrap();
        assert_eq!(d.kind, SourceKind::Markdown);
        assert_eq!(d.title, "Budget 2026");
    }

    #[test]
    fn a_file_with_no_heading_is_titled_by_its_stem() {
        let d = decode("meeting.txt", b"# not a heading in a txt\nhello").unwrap();
        assert_eq!(d.title, "meeting");
    }

    #[test]
    fn html_headings_become_markdown_headings_and_scripts_are_dropped() {
        let d = decode(
            "h.html",
            b"<html><head><title>x</title><script>steal()</script></head><body><h1>Handbook</h1><p>Hello <b>team</b></p></body></html>",
        )
        .unwrap();
        assert_eq!(d.title, "Handbook");
        assert!(d.body.contains("# Handbook"));
        assert!(!d.body.contains("steal"));
    }

    #[test]
    fn empty_binary_and_invalid_utf8_files_are_refused_with_a_kind() {
        assert_eq!(decode("a.md", b"").unwrap_err().kind(), ErrorKind::Empty);
        assert_eq!(
            decode("a.md", b"  \n-- \n").unwrap_err().kind(),
            ErrorKind::Empty
        );
        assert_eq!(
            decode("a.bin", b"ab\0cd").unwrap_err().kind(),
            ErrorKind::Decode
        );
        assert_eq!(
            decode("a.md", b"ab\xffcd").unwrap_err().kind(),
            ErrorKind::Decode
        );
        let noisy: Vec<u8> = (0..200u8)
            .map(|i| if i % 5 == 0 { 1 } else { b'a' })
            .collect();
        assert_eq!(
            decode("a.txt", &noisy).unwrap_err().kind(),
            ErrorKind::Decode
        );
    }

    #[test]
    fn html_chrome_outside_main_is_dropped_and_heading_links_are_unwrapped() {
        let page = b"<html><body><div class=\"help\"><h2>Keyboard shortcuts</h2><p>Press S</p></div>\
<main><h1><a class=\"header\" href=\"#refs\">References and Borrowing</a></h1><p>Borrowing lets you refer.</p></main></body></html>";
        let d = decode("ch04.html", page).unwrap();
        assert_eq!(d.title, "References and Borrowing");
        assert!(!d.body.contains("Keyboard shortcuts"));
        assert!(!d.body.contains("](#refs)"));
    }

    #[test]
    fn a_hash_inside_a_fence_is_not_the_title() {
        let d = decode("r.md", b"```\n# comment\n```\n## Real\nbody text\n").unwrap();
        assert_eq!(d.title, "Real");
    }

    #[test]
    fn a_comment_in_front_matter_or_an_html_comment_is_not_the_title() {
        let d = decode(
            "r.md",
            b"---\n# generated, do not edit\n---\n<!--\n# Draft title\n-->\n# Real\nbody text\n",
        )
        .unwrap();
        assert_eq!(d.title, "Real");
    }

    #[test]
    fn a_heading_with_no_body_above_another_is_the_title() {
        let d = decode(
            "CHANGELOG.md",
            b"# Changelog\n## 1.2.1\n## 1.2.0\n- a fix\n",
        )
        .unwrap();
        assert_eq!(d.title, "Changelog");
        let d = decode("r.md", b"## Unreleased\n## 1.2.0\n- a fix\n").unwrap();
        assert_eq!(d.title, "Unreleased");
    }

    /// `text` as UTF-16 with its byte-order mark, little- or big-endian.
    fn utf16(text: &str, little: bool) -> Vec<u8> {
        let mut out = if little {
            vec![0xFF, 0xFE]
        } else {
            vec![0xFE, 0xFF]
        };
        for unit in text.encode_utf16() {
            out.extend(if little {
                unit.to_le_bytes()
            } else {
                unit.to_be_bytes()
            });
        }
        out
    }

    #[test]
    fn a_utf16_file_with_a_byte_order_mark_reads_as_its_utf8_twin() {
        let text = "# Überblick\r\n\r\nZürich 東京 👨\u{200d}👩\u{200d}👧 text\n";
        for little in [true, false] {
            let d = decode("notes.md", &utf16(text, little)).unwrap();
            assert_eq!(d.title, "Überblick");
            assert_eq!(d.body, text);
        }
    }

    #[test]
    fn broken_utf16_is_refused_with_its_own_detail() {
        let detail = |bytes: &[u8]| decode("a.txt", bytes).unwrap_err().decode_error();
        assert_eq!(
            detail(&[0xFF, 0xFE, b'a', 0, b'b']),
            Some(DecodeError::NotUtf16)
        );
        // An unpaired high surrogate.
        assert_eq!(
            detail(&[0xFF, 0xFE, 0x3D, 0xD8, b'a', 0]),
            Some(DecodeError::NotUtf16)
        );
        // A NUL character is binary in UTF-16 as in UTF-8.
        assert_eq!(
            detail(&[0xFF, 0xFE, b'a', 0, 0, 0]),
            Some(DecodeError::Binary)
        );
    }

    proptest::proptest! {
        #[test]
        fn any_text_decodes_the_same_from_utf16_with_a_byte_order_mark_as_from_utf8(text in "\\PC{1,300}", little in proptest::bool::ANY, html in proptest::bool::ANY) {
            let name = if html { "x.html" } else { "x.md" };
            let from_utf8 = decode(name, text.as_bytes());
            let from_utf16 = decode(name, &utf16(&text, little));
            match (from_utf8, from_utf16) {
                (Ok(a), Ok(b)) => {
                    proptest::prop_assert_eq!(a.body, b.body);
                    proptest::prop_assert_eq!(a.title, b.title);
                }
                (Err(a), Err(b)) => proptest::prop_assert_eq!(a.kind(), b.kind()),
                (a, b) => proptest::prop_assert!(false, "{:?} vs {:?}", a.map(|d| d.body), b.map(|d| d.body)),
            }
        }

        #[test]
        fn any_bytes_decode_or_refuse_without_panicking(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..400), html in proptest::bool::ANY) {
            let name = if html { "x.html" } else { "x.md" };
            let _ = decode(name, &bytes);
        }
    }

    #[test]
    fn a_binary_file_and_an_invalid_utf8_file_carry_different_typed_details() {
        let detail = |name: &str, bytes: &[u8]| decode(name, bytes).unwrap_err().decode_error();
        assert_eq!(detail("a.bin", b"ab\0cd"), Some(DecodeError::Binary));
        assert_eq!(detail("a.md", b"ab\xffcd"), Some(DecodeError::NotUtf8));
        let noisy: Vec<u8> = (0..200u8)
            .map(|i| if i % 5 == 0 { 1 } else { b'a' })
            .collect();
        assert_eq!(detail("a.txt", &noisy), Some(DecodeError::Binary));
    }
}

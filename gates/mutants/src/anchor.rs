//! Item paths: naming a function, method, module or type inside a Rust file, and finding its lines there with `syn`.
//!
//! An item-anchored mutation (`edits.rs`) names the item it changes by a
//! path of segments joined by ` / `, outermost first:
//!
//! ```text
//! fn decode_s2                          a free function
//! impl Puller / fn wake                 a method of an inherent impl
//! impl Display for Outcome / fn fmt     a method of a trait impl
//! mod tests / fn a_case                 a function in an inline module
//! trait Source / fn pull                a trait's provided method
//! struct Limits                         a struct, enum, union, const, static, type
//! macro_rules! route                    a macro by example
//! ```
//!
//! A segment is the item's keyword and name; an impl's is `impl` and its
//! self type, with `TRAIT for` before it for a trait impl, as written in the
//! source with runs of whitespace made one space (generic parameters of the
//! `impl` itself are left out). The item's *lines* are every line from the
//! one its first attribute or doc comment starts on to the one its last
//! token ends on, newlines included: moving the item elsewhere in the file
//! moves its lines with it, so a mutation anchored to it still finds them.
//!
//! A path names an item only if exactly one item in the file has it (two
//! `impl Foo` blocks are fine as long as the method is in one of them).

use std::ops::Range;

use syn::spanned::Spanned as _;

/// One item of a file: its path and its lines (byte range in the source,
/// from the start of its first line to the end of its last, newline included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchor {
    /// Segments joined by ` / `, outermost first (`impl Puller / fn wake`).
    pub path: String,
    /// The item's lines, in bytes of the source.
    pub lines: Range<usize>,
}

/// The separator between the segments of an item path.
pub const PATH_SEPARATOR: &str = " / ";

/// Every anchorable item of `src`, outer items before the items inside them,
/// in source order.
///
/// # Errors
/// The source does not parse as a Rust file, or a span cannot be read back
/// to a byte offset.
pub fn anchors(src: &str) -> Result<Vec<Anchor>, String> {
    let file = syn::parse_file(src).map_err(|e| format!("does not parse as Rust: {e}"))?;
    let cx = Cx {
        src,
        line_starts: line_starts(src),
    };
    let mut out = Vec::new();
    cx.items(&file.items, "", &mut out)?;
    Ok(out)
}

/// The lines of the one item of `src` named `path`.
///
/// # Errors
/// The source does not parse, or no item or more than one has that path.
pub fn find(src: &str, path: &str) -> Result<Range<usize>, String> {
    let want = normalise(path);
    let all = anchors(src)?;
    let hits: Vec<&Anchor> = all.iter().filter(|a| a.path == want).collect();
    match hits.as_slice() {
        [one] => Ok(one.lines.clone()),
        [] => Err(format!("no item `{want}`")),
        many => Err(format!("{} items are `{want}`", many.len())),
    }
}

/// `path` with runs of whitespace made one space and its separators spaced
/// as [`PATH_SEPARATOR`].
pub fn normalise(path: &str) -> String {
    path.split('/')
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join(PATH_SEPARATOR)
}

/// The byte offset each line starts at.
pub fn line_starts(src: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(src.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

/// A span position (line 1-based, column in characters, as proc-macro2
/// gives it) as a byte offset in `src`, whose [`line_starts`] are `lines`.
/// `None` for a line that is not in the text.
pub fn byte_at(src: &str, lines: &[usize], lc: proc_macro2::LineColumn) -> Option<usize> {
    let start = *lines.get(lc.line.checked_sub(1)?)?;
    let line = src.get(start..)?;
    Some(
        start
            + line
                .char_indices()
                .nth(lc.column)
                .map_or(line.len(), |(i, _)| i),
    )
}

/// The source and its line starts, for span-to-byte conversion.
struct Cx<'a> {
    src: &'a str,
    line_starts: Vec<usize>,
}

impl Cx<'_> {
    fn items(
        &self,
        items: &[syn::Item],
        parent: &str,
        out: &mut Vec<Anchor>,
    ) -> Result<(), String> {
        for item in items {
            let Some(seg) = self.segment(item) else {
                continue;
            };
            let path = join(parent, &seg);
            out.push(Anchor {
                path: path.clone(),
                lines: self.lines_of(item.span())?,
            });
            match item {
                syn::Item::Mod(m) => {
                    if let Some((_, inner)) = &m.content {
                        self.items(inner, &path, out)?;
                    }
                }
                syn::Item::Impl(i) => {
                    for it in &i.items {
                        let seg = match it {
                            syn::ImplItem::Fn(f) => format!("fn {}", f.sig.ident),
                            syn::ImplItem::Const(c) => format!("const {}", c.ident),
                            syn::ImplItem::Type(t) => format!("type {}", t.ident),
                            _ => continue,
                        };
                        out.push(Anchor {
                            path: join(&path, &seg),
                            lines: self.lines_of(it.span())?,
                        });
                    }
                }
                syn::Item::Trait(t) => {
                    for it in &t.items {
                        let seg = match it {
                            syn::TraitItem::Fn(f) => format!("fn {}", f.sig.ident),
                            syn::TraitItem::Const(c) => format!("const {}", c.ident),
                            syn::TraitItem::Type(t) => format!("type {}", t.ident),
                            _ => continue,
                        };
                        out.push(Anchor {
                            path: join(&path, &seg),
                            lines: self.lines_of(it.span())?,
                        });
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// An item's own segment, or `None` for an item no path names (`use`,
    /// `extern crate`, a macro call without a name).
    fn segment(&self, item: &syn::Item) -> Option<String> {
        Some(match item {
            syn::Item::Fn(f) => format!("fn {}", f.sig.ident),
            syn::Item::Mod(m) => format!("mod {}", m.ident),
            syn::Item::Struct(s) => format!("struct {}", s.ident),
            syn::Item::Enum(e) => format!("enum {}", e.ident),
            syn::Item::Union(u) => format!("union {}", u.ident),
            syn::Item::Const(c) => format!("const {}", c.ident),
            syn::Item::Static(s) => format!("static {}", s.ident),
            syn::Item::Type(t) => format!("type {}", t.ident),
            syn::Item::Trait(t) => format!("trait {}", t.ident),
            syn::Item::TraitAlias(t) => format!("trait {}", t.ident),
            syn::Item::Macro(m) => format!("macro_rules! {}", m.ident.as_ref()?),
            syn::Item::Impl(i) => {
                let ty = self.text_of(i.self_ty.span())?;
                match &i.trait_ {
                    Some((bang, path, _)) => format!(
                        "impl {}{} for {ty}",
                        if bang.is_some() { "!" } else { "" },
                        self.text_of(path.span())?
                    ),
                    None => format!("impl {ty}"),
                }
            }
            _ => return None,
        })
    }

    /// The source text a span covers, whitespace runs made one space.
    fn text_of(&self, span: proc_macro2::Span) -> Option<String> {
        let s = self.at(span.start())?;
        let e = self.at(span.end())?;
        let t = self.src.get(s..e)?;
        Some(t.split_whitespace().collect::<Vec<_>>().join(" "))
    }

    /// The whole lines a span touches.
    fn lines_of(&self, span: proc_macro2::Span) -> Result<Range<usize>, String> {
        let (start, end) = (span.start(), span.end());
        let first = start.line.checked_sub(1);
        let last = end.line.checked_sub(1);
        match (first, last) {
            (Some(f), Some(l)) if f <= l && l < self.line_starts.len() => {
                let s = self.line_starts[f];
                let e = self
                    .line_starts
                    .get(l + 1)
                    .copied()
                    .unwrap_or(self.src.len());
                Ok(s..e)
            }
            _ => Err("an item's position could not be read".into()),
        }
    }

    /// A line and character column as a byte offset.
    fn at(&self, lc: proc_macro2::LineColumn) -> Option<usize> {
        byte_at(self.src, &self.line_starts, lc)
    }
}

fn join(parent: &str, seg: &str) -> String {
    if parent.is_empty() {
        seg.to_string()
    } else {
        format!("{parent}{PATH_SEPARATOR}{seg}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "//! A file.\n\nuse std::fmt;\n\n/// Decodes.\nfn decode_s2(x: u8) -> u8 {\n    x + 1\n}\n\nstruct Puller;\n\nimpl Puller {\n    fn wake(&self) {}\n}\n\nimpl fmt::Display for Puller {\n    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {\n        f.write_str(\"p\")\n    }\n}\n\nimpl<T> Holder<T> {\n    fn wake(&self) {}\n}\n\n#[cfg(test)]\nmod tests {\n    fn a_case() {}\n}\n";

    #[test]
    fn every_named_item_has_a_path_and_its_whole_lines_doc_comment_included() {
        let got = anchors(SRC).unwrap();
        let paths: Vec<&str> = got.iter().map(|a| a.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "fn decode_s2",
                "struct Puller",
                "impl Puller",
                "impl Puller / fn wake",
                "impl fmt::Display for Puller",
                "impl fmt::Display for Puller / fn fmt",
                "impl Holder<T>",
                "impl Holder<T> / fn wake",
                "mod tests",
                "mod tests / fn a_case",
            ]
        );
        let text = |i: usize| &SRC[got[i].lines.clone()];
        assert_eq!(
            text(0),
            "/// Decodes.\nfn decode_s2(x: u8) -> u8 {\n    x + 1\n}\n"
        );
        assert_eq!(text(3), "    fn wake(&self) {}\n");
        assert_eq!(text(6), "impl<T> Holder<T> {\n    fn wake(&self) {}\n}\n");
        assert_eq!(
            text(8),
            "#[cfg(test)]\nmod tests {\n    fn a_case() {}\n}\n"
        );
    }

    #[test]
    fn a_path_names_one_item_or_none() {
        assert_eq!(
            &SRC[find(SRC, "impl   Puller/fn wake").unwrap()],
            "    fn wake(&self) {}\n"
        );
        assert!(find(SRC, "fn wake").unwrap_err().contains("no item"));
        let twice = format!("{SRC}fn decode_s2() {{}}\n");
        assert!(
            find(&twice, "fn decode_s2")
                .unwrap_err()
                .contains("2 items")
        );
    }
}

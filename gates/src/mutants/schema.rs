//! Mutant schemata: many recorded mutations compiled into one build, each switched on at run time.
//!
//! A recorded mutation is a diff, and running it the plain way costs one
//! build of every crate between the file it touches and the harness binary:
//! about 8 s here and 13 s on CI, for a gate run that takes a second. Most
//! mutations change nothing but the body of one function. For those, this
//! module writes one *schema* tree: each mutated function's body becomes
//!
//! ```text
//! { static MUTANT: OnceLock<u32> = …; match *MUTANT.get_or_init(<MEMORIA_MUTANT_SCHEMA>) {
//!     7 => { <mutation 7's body, byte for byte> }
//!     _ => { <the original body, byte for byte> } } }
//! ```
//!
//! so that one build holds every such mutation, and a run picks one with the
//! environment variable [`SCHEMA_ENV`] (unset: none, the original code).
//!
//! Why a kill seen this way is a kill: the schema tree is one source tree for
//! the baseline and for every mutation, so a gate that reads the source (gate
//! 17 parses the routes; gate 1 greps bytes) sees the same text in both. Each
//! gate a schema mutation names must first pass unmutated on the schema build
//! itself; only the environment variable then differs between that passing
//! run and the mutation's run, and it selects exactly the mutated body. What
//! is not a kill (a survivor, a timeout, a run that errored) is never
//! reported from here: the runner builds that mutation the plain way and
//! judges it again there.
//!
//! A mutation stays out of the schema, and builds on its own, when it touches
//! anything but a `.rs` file, adds or removes an item, changes a signature,
//! an attribute or anything outside a function body, changes a `const fn`, or
//! changes no code at all (a comment). A schema tree that does not compile
//! names the functions its errors fall in; the mutations rewriting those
//! leave the schema and the tree is written again, at most
//! [`SCHEMA_BUILD_ATTEMPTS_MAX`] times.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use super::anchor::line_starts;

/// The environment variable a schema run reads: the number of the mutation
/// whose bodies run; unset, empty or unknown, the original bodies run.
pub const SCHEMA_ENV: &str = "MEMORIA_MUTANT_SCHEMA";

/// Schema trees the runner writes and builds before it gives up and builds
/// every remaining mutation on its own: each failed attempt removes the
/// mutations its errors point at, so a handful suffices (the recorded set's
/// first tree compiled at the second attempt, `benches/RESULTS.md`).
pub const SCHEMA_BUILD_ATTEMPTS_MAX: usize = 6;

/// One function body a mutation rewrites: where the body's braces are in the
/// original file (bytes), and the mutated body, braces included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyChange {
    /// The original body's byte range, `{` to `}` inclusive.
    pub body: Range<usize>,
    /// The mutated body's text, `{` to `}` inclusive.
    pub text: String,
}

/// The function bodies that turn `original` into `mutated`, if nothing else
/// differs between the two (tokens compared, so whitespace and comments do
/// not count).
///
/// # Errors
/// Why the mutation cannot join a schema: either file does not parse, an item
/// was added or removed, something outside a function body changed, a
/// `const fn` changed, or no function body changed at all.
pub fn body_changes(original: &str, mutated: &str) -> Result<Vec<BodyChange>, String> {
    let o = syn::parse_file(original).map_err(|e| format!("the original does not parse: {e}"))?;
    let m = syn::parse_file(mutated).map_err(|e| format!("the mutation does not parse: {e}"))?;
    if attrs(&o.attrs) != attrs(&m.attrs) {
        return Err("a file attribute changed".into());
    }
    let mut out = Vec::new();
    let cx = Cx {
        o_src: original,
        m_src: mutated,
        o_lines: line_starts(original),
        m_lines: line_starts(mutated),
    };
    cx.items(&o.items, &m.items, &mut out)?;
    if out.is_empty() {
        return Err("no function body changed (only whitespace or comments)".into());
    }
    Ok(out)
}

/// The two texts and their line-start offsets, for span-to-byte conversion.
struct Cx<'a> {
    o_src: &'a str,
    m_src: &'a str,
    o_lines: Vec<usize>,
    m_lines: Vec<usize>,
}

impl Cx<'_> {
    fn items(
        &self,
        o: &[syn::Item],
        m: &[syn::Item],
        out: &mut Vec<BodyChange>,
    ) -> Result<(), String> {
        if o.len() != m.len() {
            return Err("an item was added or removed".into());
        }
        for (a, b) in o.iter().zip(m) {
            match (a, b) {
                (syn::Item::Fn(a), syn::Item::Fn(b)) => {
                    self.unit(
                        (&a.attrs, &a.vis, &a.sig, &a.block),
                        (&b.attrs, &b.vis, &b.sig, &b.block),
                        out,
                    )?;
                }
                (syn::Item::Impl(a), syn::Item::Impl(b)) => {
                    let (mut ha, mut hb) = (a.clone(), b.clone());
                    ha.items.clear();
                    hb.items.clear();
                    if tokens(&ha) != tokens(&hb) {
                        return Err("an impl block's header changed".into());
                    }
                    if a.items.len() != b.items.len() {
                        return Err("an associated item was added or removed".into());
                    }
                    for (x, y) in a.items.iter().zip(&b.items) {
                        match (x, y) {
                            (syn::ImplItem::Fn(x), syn::ImplItem::Fn(y)) => self.unit(
                                (&x.attrs, &x.vis, &x.sig, &x.block),
                                (&y.attrs, &y.vis, &y.sig, &y.block),
                                out,
                            )?,
                            _ if tokens(x) == tokens(y) => {}
                            _ => {
                                return Err("an associated item other than a method changed".into());
                            }
                        }
                    }
                }
                (syn::Item::Trait(a), syn::Item::Trait(b)) => {
                    let (mut ha, mut hb) = (a.clone(), b.clone());
                    ha.items.clear();
                    hb.items.clear();
                    if tokens(&ha) != tokens(&hb) || a.items.len() != b.items.len() {
                        return Err("a trait's header or item list changed".into());
                    }
                    for (x, y) in a.items.iter().zip(&b.items) {
                        match (x, y) {
                            (
                                syn::TraitItem::Fn(syn::TraitItemFn {
                                    attrs: xa,
                                    sig: xs,
                                    default: Some(xb),
                                    ..
                                }),
                                syn::TraitItem::Fn(syn::TraitItemFn {
                                    attrs: ya,
                                    sig: ys,
                                    default: Some(yb),
                                    ..
                                }),
                            ) => {
                                let inherited = syn::Visibility::Inherited;
                                self.unit((xa, &inherited, xs, xb), (ya, &inherited, ys, yb), out)?;
                            }
                            _ if tokens(x) == tokens(y) => {}
                            _ => {
                                return Err("a trait item other than a default body changed".into());
                            }
                        }
                    }
                }
                (syn::Item::Mod(a), syn::Item::Mod(b)) => match (&a.content, &b.content) {
                    (Some((_, ai)), Some((_, bi))) => {
                        let (mut ha, mut hb) = (a.clone(), b.clone());
                        ha.content = None;
                        hb.content = None;
                        if tokens(&ha) != tokens(&hb) {
                            return Err("a module's header changed".into());
                        }
                        self.items(ai, bi, out)?;
                    }
                    _ if tokens(a) == tokens(b) => {}
                    _ => return Err("a module declaration changed".into()),
                },
                _ if tokens(a) == tokens(b) => {}
                _ => return Err("an item other than a function changed".into()),
            }
        }
        Ok(())
    }

    /// One function: everything but the body must be equal; a differing
    /// body is one [`BodyChange`].
    fn unit(
        &self,
        (oa, ov, os, ob): (
            &[syn::Attribute],
            &syn::Visibility,
            &syn::Signature,
            &syn::Block,
        ),
        (ma, mv, ms, mb): (
            &[syn::Attribute],
            &syn::Visibility,
            &syn::Signature,
            &syn::Block,
        ),
        out: &mut Vec<BodyChange>,
    ) -> Result<(), String> {
        if attrs(oa) != attrs(ma) || tokens(ov) != tokens(mv) || tokens(os) != tokens(ms) {
            return Err(format!(
                "the signature or attributes of `{}` changed",
                os.ident
            ));
        }
        if tokens(ob) == tokens(mb) {
            return Ok(());
        }
        if os.constness.is_some() {
            return Err(format!("`{}` is a const fn", os.ident));
        }
        let body = block_range(ob, self.o_src, &self.o_lines)?;
        let text = block_range(mb, self.m_src, &self.m_lines).map(|r| self.m_src[r].to_string())?;
        out.push(BodyChange { body, text });
        Ok(())
    }
}

/// Tokens of anything syn prints, as text, for equality.
fn tokens<T: quote::ToTokens>(t: T) -> String {
    t.to_token_stream().to_string()
}

/// Tokens of a list of attributes, as text.
fn attrs(a: &[syn::Attribute]) -> String {
    a.iter().map(tokens).collect::<Vec<_>>().join(" ")
}

/// A block's byte range in `src`, `{` to `}` inclusive, from its spans
/// (line 1-based, column in characters).
fn block_range(b: &syn::Block, src: &str, lines: &[usize]) -> Result<Range<usize>, String> {
    let span = b.brace_token.span.join();
    let at = |lc: proc_macro2::LineColumn| -> Option<usize> {
        let start = *lines.get(lc.line.checked_sub(1)?)?;
        let line = &src[start..];
        let col = line
            .char_indices()
            .nth(lc.column)
            .map_or(line.len(), |(i, _)| i);
        Some(start + col)
    };
    let (s, e) = (at(span.start()), at(span.end()));
    match (s, e) {
        (Some(s), Some(e)) if s < e && src[s..].starts_with('{') && src[..e].ends_with('}') => {
            Ok(s..e)
        }
        _ => Err("a function body's position could not be read".into()),
    }
}

/// One mutation's changes to one file, for [`write_schema`].
#[derive(Debug, Clone)]
pub struct FileVariant {
    /// The mutation's number in the schema (1-based; 0 is the original).
    pub mutant: u32,
    /// Its body changes in this file.
    pub changes: Vec<BodyChange>,
}

/// A schema file, and where each rewritten function sits in it.
#[derive(Debug, Clone)]
pub struct SchemaFile {
    /// The rewritten text.
    pub text: String,
    /// For each rewritten function: its 1-based line range in `text`
    /// (inclusive) and the mutations it holds.
    pub units: Vec<(Range<usize>, BTreeSet<u32>)>,
}

/// Writes `original` with every variant's bodies folded in (see the module
/// docs). Variants that rewrite the same function share one `match`; two
/// variants whose changes overlap without being the same body cannot
/// happen, as each change is a whole function body.
pub fn write_schema(original: &str, variants: &[FileVariant]) -> SchemaFile {
    // The original body range → the mutations' texts for it.
    let mut by_body: BTreeMap<(usize, usize), Vec<(u32, &str)>> = BTreeMap::new();
    for v in variants {
        for c in &v.changes {
            by_body
                .entry((c.body.start, c.body.end))
                .or_default()
                .push((v.mutant, &c.text));
        }
    }
    let mut text = String::with_capacity(original.len() * 2);
    let mut spans = Vec::new();
    let mut at = 0;
    for ((s, e), arms) in &by_body {
        if *s < at {
            continue; // nested in a body already rewritten: cannot happen for whole fn bodies
        }
        text.push_str(&original[at..*s]);
        let begin = text.len();
        text.push_str(&format!(
            "{{ static MEMORIA_MUTANT: ::std::sync::OnceLock<u32> = ::std::sync::OnceLock::new(); \
             match *MEMORIA_MUTANT.get_or_init(|| ::std::env::var({SCHEMA_ENV:?}).ok().and_then(|v| v.parse().ok()).unwrap_or(0)) {{\n"
        ));
        for (k, body) in arms {
            text.push_str(&format!("{k} => "));
            text.push_str(body);
            text.push('\n');
        }
        text.push_str("_ => ");
        text.push_str(&original[*s..*e]);
        text.push_str(" } }");
        let end = text.len();
        spans.push((begin, end, arms.iter().map(|(k, _)| *k).collect()));
        at = *e;
    }
    text.push_str(&original[at..]);
    let line_of = |byte: usize| text[..byte].matches('\n').count() + 1;
    let units = spans
        .into_iter()
        .map(|(b, e, ks)| (line_of(b)..line_of(e), ks))
        .collect();
    SchemaFile { text, units }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORIGINAL: &str = "//! A file.\n\
        /// Doubles.\n\
        pub fn double(x: u32) -> u32 {\n    x * 2\n}\n\n\
        struct S;\n\
        impl S {\n    async fn get(&self, n: usize) -> usize {\n        // é\n        n + 1\n    }\n}\n";

    #[test]
    fn a_changed_function_body_is_found_with_its_byte_range() {
        let mutated = ORIGINAL.replace("x * 2", "x * 3");
        let changes = body_changes(ORIGINAL, &mutated).unwrap();
        assert_eq!(changes.len(), 1);
        assert_eq!(&ORIGINAL[changes[0].body.clone()], "{\n    x * 2\n}");
        assert_eq!(changes[0].text, "{\n    x * 3\n}");
    }

    #[test]
    fn a_method_body_after_a_multibyte_comment_is_found_exactly() {
        let mutated = ORIGINAL.replace("n + 1", "n + 2");
        let changes = body_changes(ORIGINAL, &mutated).unwrap();
        assert_eq!(
            &ORIGINAL[changes[0].body.clone()],
            "{\n        // é\n        n + 1\n    }"
        );
    }

    #[test]
    fn changes_outside_a_body_keep_a_mutation_out_of_the_schema() {
        for (from, to) in [
            ("x: u32", "x: u64"),
            ("struct S;", "struct S(u8);"),
            ("/// Doubles.", "/// Triples."),
            ("pub fn double", "fn double"),
        ] {
            let mutated = ORIGINAL.replace(from, to);
            assert!(body_changes(ORIGINAL, &mutated).is_err(), "{from} → {to}");
        }
        let added = format!("{ORIGINAL}fn extra() {{}}\n");
        assert!(body_changes(ORIGINAL, &added).is_err());
        let comment_only = ORIGINAL.replace("// é", "// e");
        assert!(body_changes(ORIGINAL, &comment_only).is_err());
        let konst = "const fn k() -> u8 { 1 }\n";
        assert!(body_changes(konst, &konst.replace('1', "2")).is_err());
    }

    #[test]
    fn a_schema_folds_two_mutations_of_one_body_and_parses() {
        let m1 = ORIGINAL.replace("x * 2", "x * 3");
        let m2 = ORIGINAL.replace("x * 2", "x + 2");
        let m3 = ORIGINAL.replace("n + 1", "n");
        let v = |k, m: &str| FileVariant {
            mutant: k,
            changes: body_changes(ORIGINAL, m).unwrap(),
        };
        let schema = write_schema(ORIGINAL, &[v(1, &m1), v(2, &m2), v(3, &m3)]);
        syn::parse_file(&schema.text).expect("the schema parses");
        assert!(schema.text.contains("1 => {\n    x * 3\n}"));
        assert!(schema.text.contains("2 => {\n    x + 2\n}"));
        assert!(schema.text.contains("_ => {\n    x * 2\n}"));
        assert_eq!(schema.units.len(), 2);
        assert_eq!(schema.units[0].1, BTreeSet::from([1, 2]));
        assert_eq!(schema.units[1].1, BTreeSet::from([3]));
        let lines: Vec<&str> = schema.text.lines().collect();
        let first = &schema.units[0].0;
        assert!(lines[first.start - 1].contains("pub fn double"));
        assert!(lines[first.end - 1].ends_with("} }"));
    }

    #[test]
    fn a_schema_without_variants_is_the_original() {
        assert_eq!(write_schema(ORIGINAL, &[]).text, ORIGINAL);
    }
}

//! Mutant schemata: many recorded mutations compiled into one build, each switched on at run time.
//!
//! Size: about 1,000 lines, a third of them tests: what may join a schema
//! (one file's items paired and compared) and how a joined file is written
//! are one argument, each refusal beside the case it refuses.
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
//! Why a kill seen this way is a kill: the binary is built once from the
//! schema tree, and then the source on disk goes back to the original; during
//! a mutation's run it is the original plus that mutation's own diff. So a
//! gate that reads the source (gate 17 parses the routes, gate 15 looks for
//! dialers) sees exactly what it would see with the mutation built on its
//! own, and a gate that runs the code runs exactly the mutated bodies. Each
//! gate a schema mutation names must first pass unmutated on the schema build
//! with the original source; only the environment variable and the
//! mutation's own diff then differ between that passing run and the
//! mutation's run. What
//! is not a kill (a survivor, a timeout, a run that errored) is never
//! reported from here: the runner builds that mutation the plain way and
//! judges it again there.
//!
//! Two kinds of change outside a body join too. A changed const's value
//! becomes an arm in every body that reads it (`consts.rs`). An added
//! helper (a function, a method of an inherent impl, a type with its impls)
//! is written into the tree once per mutation as `<name>_mutant_<k>`, and
//! that mutation's arms name it so: nothing else names it, so it cannot act
//! in another run (an added trait impl for an existing type, a `static`, a
//! `use`, a macro, or an item with an attribute such as `#[test]` stays
//! out, as each can act without being named; so does one whose name any
//! original text of the workspace already writes, or that the mutation
//! hands to a macro other than a formatting one).
//!
//! A mutation stays out of the schema, and builds on its own, when it touches
//! anything but a `.rs` file, removes an item, changes a signature, a type,
//! an attribute or anything else outside a function body, changes a `const
//! fn`, or changes no code at all (a comment). A schema tree that does not compile
//! names the functions its errors fall in; the mutations rewriting those
//! leave the schema and the tree is written again, at most
//! [`SCHEMA_BUILD_ATTEMPTS_MAX`] times.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::str::FromStr;

use proc_macro2::{TokenStream, TokenTree};

use super::anchor::{byte_at, line_starts};
pub use super::change::{BodyChange, ConstChange, Refusal, RefusalKind};

/// The environment variable a schema run reads: the number of the mutation
/// whose bodies run; unset, empty or unknown, the original bodies run.
pub const SCHEMA_ENV: &str = "MEMORIA_MUTANT_SCHEMA";

/// Schema trees the runner writes and builds before it gives up and builds
/// every remaining mutation on its own: each failed attempt removes the
/// mutations its errors point at, so a handful suffices (the recorded set's
/// first tree compiled at the second attempt, `benches/RESULTS.md`).
pub const SCHEMA_BUILD_ATTEMPTS_MAX: usize = 6;

/// The function bodies that turn `original` into `mutated`, if nothing else
/// differs between the two (tokens compared, so whitespace and comments do
/// not count).
///
/// # Errors
/// Why the mutation cannot join a schema: either file does not parse, an item
/// was added or removed, something outside a function body changed, a
/// `const fn` changed, or no function body changed at all.
pub fn body_changes(original: &str, mutated: &str) -> Result<Changes, Refusal> {
    let o = syn::parse_file(original).map_err(|e| {
        Refusal::new(
            RefusalKind::Unparsable,
            format!("the original does not parse: {e}"),
        )
    })?;
    let m = syn::parse_file(mutated).map_err(|e| {
        Refusal::new(
            RefusalKind::Unparsable,
            format!("the mutation does not parse: {e}"),
        )
    })?;
    if attrs(&o.attrs) != attrs(&m.attrs) {
        return Err(Refusal::new(
            RefusalKind::Outside,
            "a file attribute changed",
        ));
    }
    let mut out = Changes::default();
    let cx = Cx {
        o_src: original,
        m_src: mutated,
        o_lines: line_starts(original),
        m_lines: line_starts(mutated),
    };
    cx.items(&o.items, &m.items, original.len(), &mut out)?;
    if let Some(ty) = out.impl_of.iter().find(|t| !out.names.contains(t)) {
        return Err(Refusal::new(
            RefusalKind::Added,
            format!("an impl of `{ty}`, a type it does not add, was added"),
        ));
    }
    let texts = out.bodies.iter().map(|b| b.text.as_str());
    for text in texts.chain(out.inserted.iter().map(|i| i.text.as_str())) {
        named_in_macro(text, &out.names)?;
    }
    if out.bodies.is_empty() && out.consts.is_empty() && out.inserted.is_empty() {
        return Err(Refusal::new(
            RefusalKind::NoCode,
            "no function body changed (only whitespace or comments)",
        ));
    }
    Ok(out)
}

/// What [`body_changes`] finds: the function bodies that changed, and the
/// module-level consts whose value changed (which [`super::consts`] turns
/// into body changes wherever they are read).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// Changed function bodies, in the original's byte ranges.
    pub bodies: Vec<BodyChange>,
    /// Consts whose value (and nothing else) changed.
    pub consts: Vec<ConstChange>,
    /// Items the mutation adds (helper functions, methods of an inherent
    /// impl, types and their impls), each to be written at a byte offset of
    /// the original, in every variant, under a name of its mutation's own.
    pub inserted: Vec<Inserted>,
    /// The names those items define, renamed per mutation in the schema.
    pub names: Vec<String>,
    /// The types the added impls are for.
    impl_of: Vec<String>,
}

/// An item a mutation adds: where it goes in the original (a byte offset
/// between items) and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inserted {
    /// The byte offset in the original it is written at.
    pub at: usize,
    /// The item's text, attributes and doc comments included.
    pub text: String,
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
        end: usize,
        out: &mut Changes,
    ) -> Result<(), Refusal> {
        let pairs = align(o, m, item_key, |b| self.added_item(b, end, out))?;
        for (a, b) in pairs {
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
                        return Err(Refusal::new(
                            RefusalKind::Outside,
                            "an impl block's header changed",
                        ));
                    }
                    let close = self.o_at(a.brace_token.span.close().start())?;
                    let inherent = a.trait_.is_none();
                    let pairs = align(&a.items, &b.items, impl_item_key, |y| match y {
                        syn::ImplItem::Fn(f) if inherent => {
                            inert_attributes(&f.attrs)?;
                            out.names.push(f.sig.ident.to_string());
                            out.inserted.push(Inserted {
                                at: close,
                                text: format!("\n{}\n", self.m_text(f)?),
                            });
                            Ok(())
                        }
                        _ => Err(Refusal::new(
                            RefusalKind::Outside,
                            "an associated item was added or removed",
                        )),
                    })?;
                    for (x, y) in pairs {
                        match (x, y) {
                            (syn::ImplItem::Fn(x), syn::ImplItem::Fn(y)) => self.unit(
                                (&x.attrs, &x.vis, &x.sig, &x.block),
                                (&y.attrs, &y.vis, &y.sig, &y.block),
                                out,
                            )?,
                            _ if tokens(x) == tokens(y) => {}
                            _ => {
                                return Err(Refusal::new(
                                    RefusalKind::Outside,
                                    "an associated item other than a method changed",
                                ));
                            }
                        }
                    }
                }
                (syn::Item::Trait(a), syn::Item::Trait(b)) => {
                    let (mut ha, mut hb) = (a.clone(), b.clone());
                    ha.items.clear();
                    hb.items.clear();
                    if tokens(&ha) != tokens(&hb) || a.items.len() != b.items.len() {
                        return Err(Refusal::new(
                            RefusalKind::Outside,
                            "a trait's header or item list changed",
                        ));
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
                                return Err(Refusal::new(
                                    RefusalKind::Outside,
                                    "a trait item other than a default body changed",
                                ));
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
                            return Err(Refusal::new(
                                RefusalKind::Outside,
                                "a module's header changed",
                            ));
                        }
                        let close = self.o_at(a.content.as_ref().map_or_else(
                            || a.ident.span().start(),
                            |(brace, _)| brace.span.close().start(),
                        ))?;
                        self.items(ai, bi, close, out)?;
                    }
                    _ if tokens(a) == tokens(b) => {}
                    _ => {
                        return Err(Refusal::new(
                            RefusalKind::Outside,
                            "a module declaration changed",
                        ));
                    }
                },
                _ if tokens(a) == tokens(b) => {}
                (syn::Item::Const(a), syn::Item::Const(b))
                    if a.ident == b.ident
                        && a.ident != "_"
                        && attrs(&a.attrs) == attrs(&b.attrs)
                        && tokens(&a.vis) == tokens(&b.vis)
                        && tokens(&a.generics) == tokens(&b.generics)
                        && a.generics.params.is_empty()
                        && tokens(&a.ty) == tokens(&b.ty) =>
                {
                    out.consts.push(ConstChange {
                        ident: b.ident.to_string(),
                        decl: format!(
                            "const {}: {} = {};",
                            b.ident,
                            tokens(&b.ty),
                            tokens(&b.expr)
                        ),
                    });
                }
                _ => {
                    return Err(Refusal::new(
                        RefusalKind::Outside,
                        format!("an item other than a function changed ({})", item_name(a)),
                    ));
                }
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
        out: &mut Changes,
    ) -> Result<(), Refusal> {
        if attrs(oa) != attrs(ma) || tokens(ov) != tokens(mv) || tokens(os) != tokens(ms) {
            return Err(Refusal::new(
                RefusalKind::Signature,
                format!("the signature or attributes of `{}` changed", os.ident),
            ));
        }
        if tokens(ob) == tokens(mb) {
            return Ok(());
        }
        if os.constness.is_some() {
            return Err(Refusal::new(
                RefusalKind::ConstFn,
                format!("`{}` is a const fn", os.ident),
            ));
        }
        let body = block_range(ob, self.o_src, &self.o_lines)?;
        let text = block_range(mb, self.m_src, &self.m_lines).map(|r| self.m_src[r].to_string())?;
        out.bodies.push(BodyChange { body, text });
        Ok(())
    }
}

/// An item's kind and name for a refusal: `struct S1Row`, `const CAP_MAX`.
fn item_name(item: &syn::Item) -> String {
    let (kind, name) = match item {
        syn::Item::Const(i) => ("const", i.ident.to_string()),
        syn::Item::Static(i) => ("static", i.ident.to_string()),
        syn::Item::Struct(i) => ("struct", i.ident.to_string()),
        syn::Item::Enum(i) => ("enum", i.ident.to_string()),
        syn::Item::Union(i) => ("union", i.ident.to_string()),
        syn::Item::Type(i) => ("type", i.ident.to_string()),
        syn::Item::Trait(i) => ("trait", i.ident.to_string()),
        syn::Item::Mod(i) => ("mod", i.ident.to_string()),
        syn::Item::Use(_) => ("use", String::new()),
        syn::Item::Macro(i) => (
            "macro",
            i.ident
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
        ),
        _ => ("item", String::new()),
    };
    if name.is_empty() {
        kind.to_string()
    } else {
        format!("{kind} {name}")
    }
}

impl Cx<'_> {
    /// A byte offset in the original from a span's line and column.
    fn o_at(&self, lc: proc_macro2::LineColumn) -> Result<usize, Refusal> {
        byte_at(self.o_src, &self.o_lines, lc)
            .ok_or_else(|| Refusal::new(RefusalKind::Unparsable, "a position could not be read"))
    }

    /// A node's text in the mutated file, attributes included.
    fn m_text<T: syn::spanned::Spanned + quote::ToTokens>(
        &self,
        node: &T,
    ) -> Result<String, Refusal> {
        let span = node.span();
        let at = |lc| byte_at(self.m_src, &self.m_lines, lc);
        match (at(span.start()), at(span.end())) {
            (Some(s), Some(e)) if s < e => Ok(self.m_src[s..e].to_string()),
            _ => Err(Refusal::new(
                RefusalKind::Unparsable,
                "an added item's position could not be read",
            )),
        }
    }

    /// An item the mutation adds at module level: a function, a type, or an
    /// impl of a type it adds too; written at `end` (the module's end).
    fn added_item(&self, b: &syn::Item, end: usize, out: &mut Changes) -> Result<(), Refusal> {
        let attributes = match b {
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Struct(x) => &x.attrs,
            syn::Item::Enum(x) => &x.attrs,
            syn::Item::Impl(i) => &i.attrs,
            _ => &Vec::new(),
        };
        inert_attributes(attributes)?;
        let name = match b {
            syn::Item::Fn(f) => f.sig.ident.to_string(),
            syn::Item::Struct(x) => x.ident.to_string(),
            syn::Item::Enum(x) => x.ident.to_string(),
            syn::Item::Impl(i) => {
                // Only for a type this mutation adds too (checked once all
                // items are read): an impl of an existing type, a trait's
                // above all (`Drop`), acts without being named.
                let syn::Type::Path(p) = &*i.self_ty else {
                    return Err(Refusal::new(
                        RefusalKind::Added,
                        "an impl of a type that is not a path was added",
                    ));
                };
                let ty = p
                    .path
                    .segments
                    .last()
                    .map(|s| s.ident.to_string())
                    .unwrap_or_default();
                out.impl_of.push(ty);
                String::new()
            }
            _ => {
                return Err(Refusal::new(
                    RefusalKind::Outside,
                    format!("an item was added or removed ({})", item_name(b)),
                ));
            }
        };
        if !name.is_empty() {
            out.names.push(name);
        }
        out.inserted.push(Inserted {
            at: end,
            text: format!("\n{}\n", self.m_text(b)?),
        });
        Ok(())
    }
}

/// Attributes an added item may carry: none of them makes it act without
/// being named (`#[test]`, `#[no_mangle]`, `#[export_name]` or a
/// `#[cfg_attr]` wrapping one would, in every run of the schema).
const INERT_ATTRIBUTES: &[&str] = &[
    "doc",
    "allow",
    "expect",
    "warn",
    "deny",
    "inline",
    "must_use",
    "cold",
    "track_caller",
    "derive",
    "cfg",
    "serde",
];

/// Refuses an added item whose attributes are not all [`INERT_ATTRIBUTES`].
///
/// # Errors
/// The first other attribute's path.
fn inert_attributes(attributes: &[syn::Attribute]) -> Result<(), Refusal> {
    match attributes.iter().find(|a| {
        !a.path()
            .get_ident()
            .is_some_and(|i| INERT_ATTRIBUTES.iter().any(|n| i == n))
    }) {
        Some(a) => Err(Refusal::new(
            RefusalKind::Added,
            format!(
                "an added item carries `#[{}]`, which may make it act without being named",
                tokens(a.path())
            ),
        )),
        None => Ok(()),
    }
}

/// Pairs the original's items with the mutated file's by key, in order;
/// every mutated item with no original partner goes to `added`.
///
/// # Errors
/// An original item has no partner (removed, or its key changed), or
/// `added` refuses one.
fn align<'a, T>(
    o: &'a [T],
    m: &'a [T],
    key: fn(&T) -> String,
    mut added: impl FnMut(&'a T) -> Result<(), Refusal>,
) -> Result<Vec<(&'a T, &'a T)>, Refusal> {
    let mut pairs = Vec::with_capacity(o.len());
    let mut j = 0;
    for a in o {
        let k = key(a);
        let Some(off) = m[j..].iter().position(|b| key(b) == k) else {
            return Err(Refusal::new(
                RefusalKind::Outside,
                "an item was added or removed",
            ));
        };
        for b in &m[j..j + off] {
            added(b)?;
        }
        pairs.push((a, &m[j + off]));
        j += off + 1;
    }
    for b in &m[j..] {
        added(b)?;
    }
    Ok(pairs)
}

/// What pairs an item with its mutated self: its kind and name (an impl's
/// header, a `use`'s tokens).
fn item_key(item: &syn::Item) -> String {
    match item {
        syn::Item::Impl(i) => {
            let mut h = i.clone();
            h.items.clear();
            format!("impl {}", tokens(&h))
        }
        syn::Item::Use(_) | syn::Item::ExternCrate(_) | syn::Item::ForeignMod(_) => tokens(item),
        syn::Item::Macro(m) => format!(
            "macro {} {:?}",
            tokens(&m.mac.path),
            m.ident.as_ref().map(ToString::to_string)
        ),
        syn::Item::Fn(f) => format!("fn {}", f.sig.ident),
        _ => item_name(item),
    }
}

/// An impl item's kind and name.
fn impl_item_key(item: &syn::ImplItem) -> String {
    match item {
        syn::ImplItem::Fn(f) => format!("fn {}", f.sig.ident),
        syn::ImplItem::Const(c) => format!("const {}", c.ident),
        syn::ImplItem::Type(t) => format!("type {}", t.ident),
        other => tokens(other),
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
fn block_range(b: &syn::Block, src: &str, lines: &[usize]) -> Result<Range<usize>, Refusal> {
    let span = b.brace_token.span.join();
    let (s, e) = (
        byte_at(src, lines, span.start()),
        byte_at(src, lines, span.end()),
    );
    match (s, e) {
        (Some(s), Some(e)) if s < e && src[s..].starts_with('{') && src[..e].ends_with('}') => {
            Ok(s..e)
        }
        _ => Err(Refusal::new(
            RefusalKind::Unparsable,
            "a function body's position could not be read",
        )),
    }
}

/// One mutation's changes to one file, for [`write_schema`].
#[derive(Debug, Clone)]
pub struct FileVariant {
    /// The mutation's number in the schema (1-based; 0 is the original).
    pub mutant: u32,
    /// Its body changes in this file.
    pub changes: Vec<BodyChange>,
    /// The items it adds to this file.
    pub inserted: Vec<Inserted>,
    /// The names its added items define (in any file), each written
    /// `<name>_mutant_<k>` wherever this variant's texts name it.
    pub names: Vec<String>,
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
    // The original body range → the mutations' texts for it; an offset →
    // the items added there. Each variant's added names are its own.
    let mut by_body: BTreeMap<(usize, usize), Vec<(u32, String)>> = BTreeMap::new();
    let mut inserts: BTreeMap<usize, Vec<(u32, String)>> = BTreeMap::new();
    for v in variants {
        for c in &v.changes {
            by_body
                .entry((c.body.start, c.body.end))
                .or_default()
                .push((v.mutant, renamed(&c.text, &v.names, v.mutant)));
        }
        for i in &v.inserted {
            inserts
                .entry(i.at)
                .or_default()
                .push((v.mutant, renamed(&i.text, &v.names, v.mutant)));
        }
    }
    let mut text = String::with_capacity(original.len() * 2);
    let mut spans = Vec::new();
    let mut at = 0;
    // Bodies and insertions in order of their place in the original; an
    // insertion sits between items, never inside a body.
    let mut places: Vec<(usize, usize, bool)> = by_body
        .keys()
        .map(|&(s, e)| (s, e, true))
        .chain(inserts.keys().map(|&i| (i, i, false)))
        .collect();
    places.sort_unstable();
    for (s, e, is_body) in places {
        if s < at {
            continue; // nested in a body already rewritten: cannot happen for whole fn bodies
        }
        text.push_str(&original[at..s]);
        if !is_body {
            for (k, item) in &inserts[&s] {
                let begin = text.len();
                text.push_str(item);
                spans.push((begin, text.len(), BTreeSet::from([*k])));
            }
            at = s;
            continue;
        }
        let arms = &by_body[&(s, e)];
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
        text.push_str(&original[s..e]);
        text.push_str(" } }");
        let end = text.len();
        spans.push((begin, end, arms.iter().map(|(k, _)| *k).collect()));
        at = e;
    }
    text.push_str(&original[at..]);
    let line_of = |byte: usize| text[..byte].matches('\n').count() + 1;
    let units = spans
        .into_iter()
        .map(|(b, e, ks)| (line_of(b)..line_of(e), ks))
        .collect();
    SchemaFile { text, units }
}

/// Macros that read their arguments only as expressions (and format
/// strings): an added name renamed inside one is still the same call, or a
/// compile error.
const EXPRESSION_MACROS: &[&str] = &[
    "format",
    "format_args",
    "write",
    "writeln",
    "print",
    "println",
    "eprint",
    "eprintln",
    "panic",
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "vec",
    "matches",
    "unreachable",
    "todo",
];

/// Refuses an added name that `text` writes inside a macro's arguments,
/// unless the macro is one of [`EXPRESSION_MACROS`]: a macro may read it as
/// a word (`stringify!`, an `html!` tag, a `tracing` field), and renamed
/// per mutation ([`renamed`]) the word changes.
///
/// # Errors
/// The macro and the name.
pub(super) fn named_in_macro(text: &str, names: &[String]) -> Result<(), Refusal> {
    fn walk(stream: TokenStream, names: &[String], inside: Option<&str>) -> Result<(), Refusal> {
        let trees: Vec<TokenTree> = stream.into_iter().collect();
        for (i, tt) in trees.iter().enumerate() {
            match tt {
                TokenTree::Ident(id) => {
                    if let Some(mac) = inside
                        && names.iter().any(|n| id == n)
                    {
                        return Err(Refusal::new(
                            RefusalKind::Added,
                            format!(
                                "an added item's name `{id}` is written inside the macro `{mac}!`, which may read it as a word"
                            ),
                        ));
                    }
                }
                TokenTree::Group(g) => {
                    // `name ! (…)`: the group is the macro's input.
                    let mac = match (
                        i.checked_sub(2).map(|j| &trees[j]),
                        i.checked_sub(1).map(|j| &trees[j]),
                    ) {
                        (Some(TokenTree::Ident(m)), Some(TokenTree::Punct(p)))
                            if p.as_char() == '!' =>
                        {
                            Some(m.to_string())
                        }
                        _ => None,
                    };
                    let inner = match (&mac, inside) {
                        (Some(m), _) if !EXPRESSION_MACROS.contains(&m.as_str()) => {
                            Some(m.as_str())
                        }
                        (Some(_), outer) => outer,
                        (None, outer) => outer,
                    };
                    walk(g.stream(), names, inner)?;
                }
                _ => {}
            }
        }
        Ok(())
    }
    if names.is_empty() {
        return Ok(());
    }
    let stream = TokenStream::from_str(text)
        .map_err(|e| Refusal::new(RefusalKind::Unparsable, format!("tokens: {e}")))?;
    walk(stream, names, None)
}

/// `text` with every identifier in `names` written `<name>_mutant_<k>`, so
/// that the items two mutations add never meet. Unchanged if `names` is
/// empty or the text does not tokenize.
pub fn renamed(text: &str, names: &[String], k: u32) -> String {
    if names.is_empty() {
        return text.to_string();
    }
    let Ok(tokens) = super::consts::flat_tokens(text) else {
        return text.to_string();
    };
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0;
    for t in tokens.iter().filter(|t| t.ident && names.contains(&t.text)) {
        out.push_str(&text[at..t.start]);
        out.push_str(&format!("{}_mutant_{k}", t.text));
        at = t.start + t.text.len();
    }
    out.push_str(&text[at..]);
    out
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
        let changes = body_changes(ORIGINAL, &mutated).unwrap().bodies;
        assert_eq!(changes.len(), 1);
        assert_eq!(&ORIGINAL[changes[0].body.clone()], "{\n    x * 2\n}");
        assert_eq!(changes[0].text, "{\n    x * 3\n}");
    }

    #[test]
    fn a_method_body_after_a_multibyte_comment_is_found_exactly() {
        let mutated = ORIGINAL.replace("n + 1", "n + 2");
        let changes = body_changes(ORIGINAL, &mutated).unwrap().bodies;
        assert_eq!(
            &ORIGINAL[changes[0].body.clone()],
            "{\n        // é\n        n + 1\n    }"
        );
    }

    #[test]
    fn changes_outside_a_body_keep_a_mutation_out_of_the_schema_with_their_kind() {
        use RefusalKind::{ConstFn, NoCode, Outside, Signature};
        let konst = "const fn k() -> u8 { 1 }\n";
        let typed = "const K: u8 = 1;\n";
        for (original, mutated, kind) in [
            (ORIGINAL, ORIGINAL.replace("x: u32", "x: u64"), Signature),
            (
                ORIGINAL,
                ORIGINAL.replace("/// Doubles.", "/// Triples."),
                Signature,
            ),
            (
                ORIGINAL,
                ORIGINAL.replace("pub fn double", "fn double"),
                Signature,
            ),
            (
                ORIGINAL,
                ORIGINAL.replace("struct S;", "struct S(u8);"),
                Outside,
            ),
            (ORIGINAL, ORIGINAL.replace("struct S;\n", ""), Outside),
            (ORIGINAL, ORIGINAL.replace("// é", "// e"), NoCode),
            (konst, konst.replace('1', "2"), ConstFn),
            (typed, "const K: u16 = 1;\n".to_string(), Outside),
        ] {
            let refused = body_changes(original, &mutated).unwrap_err();
            assert_eq!(refused.kind, kind, "{mutated}: {refused}");
        }
    }

    #[test]
    fn a_consts_value_alone_changing_is_a_const_change_with_its_mutated_declaration() {
        let original = "//! F.\npub const CAP_MAX: usize = 3;\nfn f() -> usize { CAP_MAX }\n";
        let found = body_changes(original, &original.replace("= 3", "= 4")).unwrap();
        assert!(found.bodies.is_empty());
        assert_eq!(
            found.consts,
            vec![ConstChange {
                ident: "CAP_MAX".into(),
                decl: "const CAP_MAX: usize = 4;".into()
            }]
        );
    }

    #[test]
    fn a_schema_folds_two_mutations_of_one_body_and_parses() {
        let m1 = ORIGINAL.replace("x * 2", "x * 3");
        let m2 = ORIGINAL.replace("x * 2", "x + 2");
        let m3 = ORIGINAL.replace("n + 1", "n");
        let v = |k, m: &str| FileVariant {
            mutant: k,
            changes: body_changes(ORIGINAL, m).unwrap().bodies,
            inserted: Vec::new(),
            names: Vec::new(),
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
    fn an_added_helper_is_written_once_per_mutation_under_its_own_name() {
        let variant = |k: u32, factor: &str| {
            let mutated = ORIGINAL
                .replace("x * 2", "helper(x)")
                .replace(
                    "    }\n}\n",
                    &format!("    }}\n    fn peek(&self) -> u8 {{ {factor} }}\n}}\nfn helper(x: u32) -> u32 {{ x * {factor} }}\n"),
                );
            let found = body_changes(ORIGINAL, &mutated).unwrap();
            assert_eq!(found.names, ["helper", "peek"]);
            FileVariant {
                mutant: k,
                changes: found.bodies,
                inserted: found.inserted,
                names: found.names,
            }
        };
        let schema = write_schema(ORIGINAL, &[variant(1, "3"), variant(2, "4")]);
        syn::parse_file(&schema.text).expect("the schema parses");
        for k in [1, 2] {
            assert!(
                schema
                    .text
                    .contains(&format!("{k} => {{\n    helper_mutant_{k}(x)\n}}"))
            );
            assert!(
                schema
                    .text
                    .contains(&format!("fn helper_mutant_{k}(x: u32)"))
            );
            assert!(schema.text.contains(&format!("fn peek_mutant_{k}(&self)")));
        }
        // One unit per rewritten body and per added item, each blaming its own.
        assert_eq!(schema.units.len(), 5);
    }

    #[test]
    fn an_added_item_that_acts_without_being_named_stays_out() {
        for added in [
            "impl Drop for S { fn drop(&mut self) {} }\n",
            "static HOOK: u8 = 0;\n",
            "macro_rules! m { () => {} }\n",
            "use std::fmt::Write;\n",
        ] {
            let mutated = format!("{ORIGINAL}{added}");
            let refused = body_changes(ORIGINAL, &mutated).unwrap_err();
            assert!(
                matches!(refused.kind, RefusalKind::Added | RefusalKind::Outside),
                "{added}: {refused}"
            );
        }
        for attribute in ["#[test]", "#[no_mangle]", "#[cfg_attr(test, test)]"] {
            let mutated = ORIGINAL.replace(
                "struct S;",
                &format!("{attribute}\nfn boot() {{ std::process::abort() }}\nstruct S;"),
            );
            let err = body_changes(ORIGINAL, &mutated).unwrap_err();
            assert_eq!(err.kind, RefusalKind::Added, "{attribute}: {err}");
            let method = ORIGINAL.replace(
                "    }\n}\n",
                &format!("    }}\n    {attribute}\n    fn boot() {{}}\n}}\n"),
            );
            assert!(body_changes(ORIGINAL, &method).is_err(), "{attribute}");
        }
        let trait_method = ORIGINAL.replace(
            "struct S;",
            "struct S;\nimpl Clone for S { fn clone(&self) -> S { S } }",
        );
        let more = trait_method.replace(
            "fn clone(&self) -> S { S } }",
            "fn clone(&self) -> S { S }\n fn clone_from(&mut self, _: &S) {} }",
        );
        assert!(body_changes(&trait_method, &more).is_err());
    }

    #[test]
    fn an_added_name_a_macro_reads_as_words_stays_out() {
        // Renamed, the tag would be `<helper_mutant_1>` and the string
        // "helper_mutant_1": built alone, neither is.
        for body in [
            "html! { helper { (helper(x)) } }",
            "stringify!(helper).len() as u32",
            "{ tracing::info!(helper = x); helper(x) }",
        ] {
            let mutated = ORIGINAL
                .replace("x * 2", body)
                .replace("struct S;", "fn helper(x: u32) -> u32 { x }\nstruct S;");
            let err = body_changes(ORIGINAL, &mutated).unwrap_err();
            assert_eq!(err.kind, RefusalKind::Added, "{body}: {err}");
            assert!(err.detail.contains("macro"), "{body}: {err}");
        }
        // A formatting macro only ever reads it as an expression.
        let mutated = ORIGINAL
            .replace("x * 2", "format!(\"{}\", helper(x)).len() as u32")
            .replace("struct S;", "fn helper(x: u32) -> u32 { x }\nstruct S;");
        assert!(body_changes(ORIGINAL, &mutated).is_ok());
    }

    #[test]
    fn a_schema_without_variants_is_the_original() {
        assert_eq!(write_schema(ORIGINAL, &[]).text, ORIGINAL);
    }
}

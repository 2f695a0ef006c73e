//! Const mutations in the schema: a changed module-level `const` becomes a block-local `const` of the same name in every function body of the workspace that names it.
//!
//! Size: about 1120 lines, a quarter of them tests: which item a path
//! names, and every refusal that follows from not knowing, is one argument
//! read top to bottom, with the syn walk that lays a file out beneath it.
//!
//! A mutation that changes the value of `const X: T = v;` cannot be switched
//! at run time as it stands: a const has one value per build. But the value
//! is only ever read where the name is written, and a block's own items
//! shadow every outer name inside that block. So the schema gives each
//! function body that names `X` a variant that begins with the mutated
//! declaration,
//!
//! ```text
//! 7 => { #[allow(unused)] const X: T = <the mutated value>; <the body, with `a::b::X` written `X`> }
//! ```
//!
//! and the mutation becomes what the schema already holds: bodies selected
//! by number. The rewrite is the same program as the mutation built on its
//! own only if every read of `X` is inside a rewritten body, so a const
//! stays out of the schema (and builds on its own) when any of these holds,
//! anywhere in the workspace's Rust sources:
//!
//! - `X` is named outside a function body: in another const or static, a
//!   type, an attribute, a `macro_rules!`, an associated const, a `const fn`
//!   (only `use` items that name it by a path of this workspace and the
//!   const's own definition may name it: a `const _` assertion has no value
//!   at run time, but the mutated value may fail it, and then the mutation
//!   built alone is `unviable`, not killed);
//! - another item of the workspace is named `X`, or a `use` renames it, or
//!   imports it from outside the workspace;
//! - a body names it through a path that does not start at `crate`,
//!   `self`, `super` or a crate of this workspace (`memoria…`);
//! - another file names it unqualified without importing it by name (a glob
//!   import could bring a different `X`).
//!
//! What this module cannot see, the compiler does: a declaration whose type
//! or value does not resolve in a far body is an error in a rewritten
//! function, and the schema pass sends that mutation out as it does any
//! other.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use std::str::FromStr;

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

use super::anchor::{byte_at, line_starts};
use super::change::{BodyChange, ConstChange};

/// Folders of the workspace whose Rust sources are read for names.
const SOURCE_ROOTS: &[&str] = &["reference", "simulator", "gates", "benches", "fixtures"];

/// The first segment of a path that names something of this workspace:
/// these, or a crate whose name starts with [`WORKSPACE_CRATE_PREFIX`].
const PATH_ROOTS: &[&str] = &["crate", "self", "super"];
/// The prefix every crate of this workspace's name starts with.
const WORKSPACE_CRATE_PREFIX: &str = "memoria";

/// The workspace's Rust sources, read once: workspace-relative path → text.
pub struct Sources {
    files: BTreeMap<String, String>,
}

impl Sources {
    /// Reads every `.rs` file under [`SOURCE_ROOTS`] of `root`, skipping
    /// `target` folders.
    ///
    /// # Errors
    /// A file cannot be read (the message names it).
    pub fn read(root: &Path) -> Result<Self, String> {
        let mut files = BTreeMap::new();
        for top in SOURCE_ROOTS {
            let walk = walkdir::WalkDir::new(root.join(top))
                .into_iter()
                .filter_entry(|e| e.file_name() != "target");
            for e in walk.flatten() {
                if !e.file_type().is_file() || e.path().extension().is_none_or(|x| x != "rs") {
                    continue;
                }
                let text = std::fs::read_to_string(e.path())
                    .map_err(|err| format!("reading {}: {err}", e.path().display()))?;
                let rel = e
                    .path()
                    .strip_prefix(root)
                    .unwrap_or(e.path())
                    .to_string_lossy()
                    .replace('\\', "/");
                files.insert(rel, text);
            }
        }
        Ok(Self { files })
    }

    /// Sources from memory (tests).
    pub fn from_files(files: impl IntoIterator<Item = (String, String)>) -> Self {
        Self {
            files: files.into_iter().collect(),
        }
    }

    /// Every file: its workspace-relative path and its text.
    pub fn files(&self) -> impl Iterator<Item = (&str, &str)> {
        self.files.iter().map(|(r, t)| (r.as_str(), t.as_str()))
    }

    /// A file's text.
    pub fn get(&self, rel: &str) -> Option<&str> {
        self.files.get(rel).map(String::as_str)
    }
}

/// The body changes that give `consts` (all defined in `defining`) their
/// mutated values everywhere they are read, merged with the mutation's own
/// body changes (`own`, per workspace-relative file, in original byte
/// ranges). Returns the changes per file, original texts from `sources`.
///
/// # Errors
/// Why the const cannot be rewritten this way (see the module docs); the
/// mutation then builds on its own.
pub fn spread(
    sources: &Sources,
    defining: &str,
    consts: &[ConstChange],
    own: &BTreeMap<String, Vec<BodyChange>>,
) -> Result<BTreeMap<String, Vec<BodyChange>>, String> {
    for rel in own.keys() {
        if !sources.files.contains_key(rel) {
            return Err(format!("{rel} is not among the workspace's sources"));
        }
    }
    // Every file that names a const, laid out once.
    let mut laid: BTreeMap<&str, (&str, Layout)> = BTreeMap::new();
    for (rel, src) in &sources.files {
        let mine = own.get(rel).map_or(&[][..], Vec::as_slice);
        let named = consts.iter().any(|c| mentions_word(src, &c.ident))
            || mine
                .iter()
                .any(|b| consts.iter().any(|c| mentions_word(&b.text, &c.ident)));
        if named {
            let file = syn::parse_file(src).map_err(|e| format!("{rel} does not parse: {e}"))?;
            let mut layout = Layout::default();
            items(&file.items, src, &line_starts(src), &mut layout);
            laid.insert(rel.as_str(), (src.as_str(), layout));
        }
    }
    let module = module_name(defining);
    let mut unique: BTreeMap<&str, bool> = BTreeMap::new();
    for c in consts {
        let mut defs = 0;
        for (rel, (src, layout)) in &laid {
            for (name, at) in layout.defined.iter().filter(|(n, _)| *n == c.ident) {
                defs += 1;
                let here = *rel == defining;
                if here && defs_in(layout, name) > 1 {
                    return Err(format!(
                        "`{name}` is defined twice in its own file ({rel}:{})",
                        line_of(src, at.start)
                    ));
                }
                if !here && module_name(rel) == module {
                    return Err(format!(
                        "another module named `{module}` defines `{name}` ({rel}:{})",
                        line_of(src, at.start)
                    ));
                }
            }
        }
        unique.insert(c.ident.as_str(), defs == 1);
    }
    let cx = Resolve {
        consts,
        module,
        unique,
        modules: module_names(sources),
    };

    let mut out: BTreeMap<String, Vec<BodyChange>> = BTreeMap::new();
    for (rel, src) in &sources.files {
        let mine = own.get(rel).map_or(&[][..], Vec::as_slice);
        let changes = match laid.get(rel.as_str()) {
            Some((_, layout)) => cx.file(rel, src, layout, rel == defining, mine)?,
            None => mine.to_vec(),
        };
        if !changes.is_empty() {
            out.insert(rel.clone(), changes);
        }
    }
    Ok(out)
}

/// How many items of a file are named `name`.
fn defs_in(layout: &Layout, name: &str) -> usize {
    layout.defined.iter().filter(|(n, _)| n == name).count()
}

/// The 1-based line of a byte offset.
fn line_of(src: &str, byte: usize) -> usize {
    src[..byte.min(src.len())].matches('\n').count() + 1
}

/// The name a file's module goes by in a path: its stem, or its folder's
/// name for `mod.rs`; empty for a crate root (`lib.rs`, `main.rs`), which
/// no `a::b::X` below can be told apart by.
fn module_name(rel: &str) -> String {
    let path = Path::new(rel);
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    match stem {
        "lib" | "main" => String::new(),
        "mod" => path
            .parent()
            .and_then(Path::file_name)
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string(),
        _ => stem.to_string(),
    }
}

/// Every `mod NAME` the sources declare: a path starting at one of these is
/// a path inside the workspace.
fn module_names(sources: &Sources) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for text in sources.files.values() {
        for line in text.lines() {
            let l = line.trim_start();
            let l = l
                .strip_prefix("pub(crate) ")
                .or_else(|| l.strip_prefix("pub(super) "))
                .or_else(|| l.strip_prefix("pub "))
                .unwrap_or(l);
            if let Some(rest) = l.strip_prefix("mod ") {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        }
    }
    out
}

/// Whether `text` holds `word` with no identifier character either side.
fn mentions_word(text: &str, word: &str) -> bool {
    let is_id = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        !text[..i].chars().next_back().is_some_and(is_id)
            && !text[i + word.len()..].chars().next().is_some_and(is_id)
    })
}

/// A name a `use` imports.
struct Imported {
    /// The name as the path ends.
    name: String,
    /// The path's first segment.
    first: String,
    /// The segment before the name (the module it is taken from).
    last: String,
    /// Whether the `use` renames it (`as`).
    renamed: bool,
    /// Whether the `use` is `pub` (a re-export).
    public: bool,
}

/// Where a file's items sit, by byte range.
#[derive(Default)]
struct Layout {
    /// Outermost function bodies (`{` to `}`), and whether the fn is `const`.
    bodies: Vec<(Range<usize>, bool)>,
    /// `use` items: their range and the names they import.
    uses: Vec<(Range<usize>, Vec<Imported>)>,
    /// `const _` assertions: no value at run time, but checked when built.
    inert: Vec<Range<usize>>,
    /// Every item and variant name the file defines, with the name's range.
    defined: Vec<(String, Range<usize>)>,
    /// Inline modules (`mod m { … }`), and whether a bare name inside reads
    /// what it reads outside: the module's only glob import is `super::*`.
    /// Otherwise a glob may bring another item of the name, or a parameter
    /// may bind it, and a block-local const would hide either.
    mods: Vec<(Range<usize>, bool)>,
}

/// What the resolution of a name needs to know about the mutation.
struct Resolve<'a> {
    consts: &'a [ConstChange],
    /// The defining file's module name ([`module_name`]).
    module: String,
    /// Whether each const's name is defined once in the whole workspace.
    unique: BTreeMap<&'a str, bool>,
    /// Every module name the workspace declares.
    modules: std::collections::BTreeSet<String>,
}

/// Whether one occurrence of a const's name reads the mutated const.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reads {
    /// It does, and this is where the qualifying path starts (the name's
    /// own offset when bare).
    Ours(usize),
    /// It names something else; if bare, a block-local const would hide it.
    Other { bare: bool },
}

/// How a file imports one const's name by `use`.
#[derive(Debug, Default, Clone, Copy)]
struct Imports {
    ours: bool,
    other: bool,
}

impl Resolve<'_> {
    /// Whether a path's first segment stays inside this workspace.
    fn in_workspace(&self, first: &str) -> bool {
        PATH_ROOTS.contains(&first)
            || first.starts_with(WORKSPACE_CRATE_PREFIX)
            || self.modules.contains(first)
    }

    /// Whether a path `first::…::last::X` reads the mutated `X`: `Ok(None)`
    /// when it reads another `X`.
    fn path_is_ours(
        &self,
        ident: &str,
        first: &str,
        last: &str,
        defines: bool,
    ) -> Result<bool, String> {
        if !self.in_workspace(first) {
            return Ok(false);
        }
        if self.unique.get(ident).copied().unwrap_or(false) {
            return Ok(true);
        }
        if last == self.module && !self.module.is_empty() {
            return Ok(true);
        }
        if last == "self" {
            // This file's own module: the mutated const only in its own file.
            return Ok(defines);
        }
        if PATH_ROOTS.contains(&last) || last.starts_with(WORKSPACE_CRATE_PREFIX) {
            return Err(format!(
                "`{ident}` is not unique and `{last}::{ident}` cannot be told apart"
            ));
        }
        Ok(false)
    }

    fn file(
        &self,
        rel: &str,
        src: &str,
        layout: &Layout,
        defines: bool,
        own: &[BodyChange],
    ) -> Result<Vec<BodyChange>, String> {
        // How this file imports each name, and that nothing outside a body
        // reads one.
        let mut imports: BTreeMap<&str, Imports> = BTreeMap::new();
        for (at, ident) in occurrences(src, self.consts)? {
            if layout.bodies.iter().any(|(r, _)| r.contains(&at)) {
                if let Some((_, true)) = layout.bodies.iter().find(|(r, _)| r.contains(&at)) {
                    return Err(format!(
                        "`{ident}` is named in a const fn ({rel}:{})",
                        line_of(src, at)
                    ));
                }
                continue;
            }
            if let Some((_, names)) = layout.uses.iter().find(|(r, _)| r.contains(&at)) {
                for u in names.iter().filter(|n| n.name == ident) {
                    let name = &u.name;
                    let ours = self.path_is_ours(ident, &u.first, &u.last, defines)?;
                    if ours && u.renamed {
                        return Err(format!(
                            "a `use` renames `{name}` ({rel}:{})",
                            line_of(src, at)
                        ));
                    }
                    if ours && u.public && !self.unique.get(ident).copied().unwrap_or(false) {
                        return Err(format!(
                            "`{name}` is not unique and is re-exported ({rel}:{})",
                            line_of(src, at)
                        ));
                    }
                    let e = imports.entry(ident).or_default();
                    if ours {
                        e.ours = true;
                    } else {
                        e.other = true;
                    }
                }
                continue;
            }
            if layout.inert.iter().any(|r| r.contains(&at)) {
                return Err(format!(
                    "`{ident}` is checked by a `const _` assertion, which the mutated value may fail at build time ({rel}:{})",
                    line_of(src, at)
                ));
            }
            if layout
                .defined
                .iter()
                .any(|(n, r)| n == ident && r.contains(&at))
            {
                continue;
            }
            return Err(format!(
                "`{ident}` is named outside a function body ({rel}:{})",
                line_of(src, at)
            ));
        }
        // What a bare name reads in this file.
        let mut bare: BTreeMap<&str, Option<bool>> = BTreeMap::new();
        for c in self.consts {
            let x = c.ident.as_str();
            let i = imports.get(x).copied().unwrap_or_default();
            let own_def = !defines && defs_in(layout, x) > 0;
            let reads = match (defines || i.ours, own_def || i.other) {
                (true, true) => {
                    return Err(format!("`{x}` names two items in {rel}"));
                }
                (true, false) => Some(true),
                (false, true) => Some(false),
                (false, false) => None,
            };
            bare.insert(x, reads);
        }

        // Names this file imports from outside the workspace: a path that
        // starts at one leaves it, whatever module of ours it is named like.
        let foreign: std::collections::BTreeSet<&str> = layout
            .uses
            .iter()
            .flat_map(|(_, names)| names)
            .filter(|u| !self.in_workspace(&u.first))
            .map(|u| u.name.as_str())
            .collect();
        let mut out: Vec<BodyChange> = Vec::new();
        for (range, _) in &layout.bodies {
            let own_text = own
                .iter()
                .find(|c| c.body == *range)
                .map(|c| c.text.as_str());
            let text = own_text.unwrap_or(&src[range.clone()]);
            let open = !layout
                .mods
                .iter()
                .any(|(m, plain)| !plain && m.contains(&range.start));
            match self.body(text, &bare, defines, open, &foreign)? {
                Some(t) => out.push(BodyChange {
                    body: range.clone(),
                    text: t,
                }),
                None => {
                    if let Some(t) = own_text {
                        out.push(BodyChange {
                            body: range.clone(),
                            text: t.to_string(),
                        });
                    }
                }
            }
        }
        for c in own {
            if !layout.bodies.iter().any(|(r, _)| *r == c.body) {
                return Err(format!(
                    "a changed body in {rel} is not an outermost function body"
                ));
            }
        }
        Ok(out)
    }

    /// `body` (`{` to `}`) with the declarations of the consts after its
    /// `{` and every path to one of them written as its bare name, if it
    /// reads any. `open`: whether a bare name in it reads what the file's
    /// top level reads (not so inside an inline module with other globs).
    /// `foreign`: the names the file imports from outside the workspace.
    fn body(
        &self,
        body: &str,
        bare: &BTreeMap<&str, Option<bool>>,
        defines: bool,
        open: bool,
        foreign: &std::collections::BTreeSet<&str>,
    ) -> Result<Option<String>, String> {
        let hits = occurrences(body, self.consts)?;
        if hits.is_empty() {
            return Ok(None);
        }
        let tokens = flat_tokens(body)?;
        let mut reads: Vec<(usize, Reads)> = Vec::new();
        for (at, ident) in &hits {
            let k = tokens
                .iter()
                .position(|t| t.start == *at)
                .ok_or_else(|| format!("`{ident}` could not be placed in a body"))?;
            let prev = |j: usize| k.checked_sub(j).map(|i| &tokens[i]);
            if matches!(prev(1), Some(t) if t.text == ".") {
                continue; // a field or a method, not the const
            }
            let colons_before = |i: usize| {
                i >= 2
                    && tokens[i - 2].text == ":"
                    && tokens[i - 2].joint
                    && tokens[i - 1].text == ":"
            };
            if !colons_before(k) {
                if !open {
                    return Err(format!(
                        "`{ident}` is named bare inside an inline module that may read another of its name"
                    ));
                }
                match bare.get(ident).copied().flatten() {
                    Some(true) => reads.push((*at, Reads::Ours(*at))),
                    Some(false) => reads.push((*at, Reads::Other { bare: true })),
                    None => {
                        return Err(format!(
                            "`{ident}` is named bare in a file that does not import it by name"
                        ));
                    }
                }
                continue;
            }
            // Walk back over `seg ::` pairs to the path's first segment.
            let last = k - 3;
            let mut first = last;
            while colons_before(first) && first >= 3 && tokens[first - 3].ident {
                first -= 3;
            }
            if !tokens[last].ident || !tokens[first].ident || colons_before(first) {
                return Err(format!(
                    "`{ident}` is named through a path that is not plain"
                ));
            }
            if matches!(first.checked_sub(1).map(|i| &tokens[i]), Some(t) if t.text == ">" || t.text == "$")
            {
                return Err(format!(
                    "`{ident}` is named through a path that is not plain"
                ));
            }
            if foreign.contains(tokens[first].text.as_str()) {
                return Err(format!(
                    "`{}::…::{ident}` starts at a name imported from outside the workspace",
                    tokens[first].text
                ));
            }
            let ours =
                self.path_is_ours(ident, &tokens[first].text, &tokens[last].text, defines)?;
            reads.push((
                *at,
                if ours {
                    Reads::Ours(tokens[first].start)
                } else {
                    Reads::Other { bare: false }
                },
            ));
        }
        if !reads.iter().any(|(_, r)| matches!(r, Reads::Ours(_))) {
            return Ok(None);
        }
        if reads.iter().any(|(_, r)| *r == Reads::Other { bare: true }) {
            return Err("a body reads both the mutated const and another of its name bare".into());
        }
        let open = body
            .find('{')
            .ok_or_else(|| "a function body without `{`".to_string())?;
        let mut text = String::with_capacity(body.len() + 256);
        text.push_str(&body[..=open]);
        for c in self.consts {
            text.push_str(" #[allow(unused)] ");
            text.push_str(&c.decl);
        }
        let mut at = open + 1;
        for (name_at, r) in &reads {
            if let Reads::Ours(path_at) = r {
                text.push_str(&body[at..*path_at]);
                at = *name_at;
            }
        }
        text.push_str(&body[at..]);
        Ok(Some(text))
    }
}

/// One token of a text, flattened out of its groups, with its byte start.
pub(super) struct Flat {
    /// Its first byte in the text.
    pub start: usize,
    /// An identifier's, a punctuation's or a literal's text.
    pub text: String,
    /// Whether it is an identifier (keywords included).
    pub ident: bool,
    /// A punctuation joined to the next (the first `:` of `::`).
    pub joint: bool,
}

/// Every token of `src`, groups opened in place, in order.
pub(super) fn flat_tokens(src: &str) -> Result<Vec<Flat>, String> {
    let stream = TokenStream::from_str(src).map_err(|e| format!("tokens: {e}"))?;
    let lines = line_starts(src);
    let byte = |lc| byte_at(src, &lines, lc).unwrap_or(0);
    let mut out = Vec::new();
    let mut stack = vec![stream.into_iter()];
    while let Some(top) = stack.last_mut() {
        let Some(tt) = top.next() else {
            stack.pop();
            continue;
        };
        match tt {
            TokenTree::Group(g) => {
                let open = match g.delimiter() {
                    Delimiter::Parenthesis => "(",
                    Delimiter::Brace => "{",
                    Delimiter::Bracket => "[",
                    Delimiter::None => "",
                };
                out.push(Flat {
                    start: byte(g.span_open().start()),
                    text: open.into(),
                    ident: false,
                    joint: false,
                });
                stack.push(g.stream().into_iter());
            }
            TokenTree::Ident(i) => out.push(Flat {
                start: byte(i.span().start()),
                text: i.to_string(),
                ident: true,
                joint: false,
            }),
            TokenTree::Punct(p) => out.push(Flat {
                start: byte(p.span().start()),
                text: p.as_char().to_string(),
                ident: false,
                joint: p.spacing() == Spacing::Joint,
            }),
            TokenTree::Literal(l) => out.push(Flat {
                start: byte(l.span().start()),
                text: l.to_string(),
                ident: false,
                joint: false,
            }),
        }
    }
    Ok(out)
}

/// Every identifier token of `src` that is one of the consts' names, and
/// every literal that captures one as a format string does (`"{CAP_MAX}"`,
/// which reads it as a bare name would): its byte offset and the name.
fn occurrences<'c>(src: &str, consts: &'c [ConstChange]) -> Result<Vec<(usize, &'c str)>, String> {
    let mut out = Vec::new();
    for t in flat_tokens(src)? {
        for c in consts {
            let hit = if t.ident {
                c.ident == t.text
            } else {
                captures(&t.text, &c.ident)
            };
            if hit {
                out.push((t.start, c.ident.as_str()));
            }
        }
    }
    Ok(out)
}

/// Whether a literal's text holds `{name}` or `{name:…}`: a format string's
/// inline capture of `name` (an escaped `{{name}}` counts too, which only
/// keeps a const out or gives a body a declaration it does not read).
pub(super) fn captures(literal: &str, name: &str) -> bool {
    literal.match_indices(name).any(|(i, _)| {
        literal[..i].ends_with('{')
            && matches!(literal[i + name.len()..].chars().next(), Some('}' | ':'))
    })
}

/// A syn node's byte range in `src`.
fn range_of(span: proc_macro2::Span, src: &str, lines: &[usize]) -> Range<usize> {
    let at = |lc| byte_at(src, lines, lc).unwrap_or(0);
    at(span.start())..at(span.end())
}

impl Layout {
    /// A name the file defines.
    fn name(&mut self, i: &syn::Ident, src: &str, lines: &[usize]) {
        self.defined
            .push((i.to_string(), range_of(i.span(), src, lines)));
    }

    /// A function: its name, and its body if it has one.
    fn function(
        &mut self,
        sig: &syn::Signature,
        body: Option<&syn::Block>,
        src: &str,
        lines: &[usize],
    ) {
        self.name(&sig.ident, src, lines);
        if let Some(b) = body {
            self.bodies.push((
                range_of(b.brace_token.span.join(), src, lines),
                sig.constness.is_some(),
            ));
        }
    }
}

fn items(list: &[syn::Item], src: &str, lines: &[usize], out: &mut Layout) {
    use syn::spanned::Spanned;
    for item in list {
        let whole = range_of(item.span(), src, lines);
        match item {
            syn::Item::Fn(f) => out.function(&f.sig, Some(&f.block), src, lines),
            syn::Item::Impl(i) => {
                for it in &i.items {
                    match it {
                        syn::ImplItem::Fn(f) => out.function(&f.sig, Some(&f.block), src, lines),
                        syn::ImplItem::Const(c) => out.name(&c.ident, src, lines),
                        syn::ImplItem::Type(t) => out.name(&t.ident, src, lines),
                        _ => {}
                    }
                }
            }
            syn::Item::Trait(t) => {
                out.name(&t.ident, src, lines);
                for it in &t.items {
                    match it {
                        syn::TraitItem::Fn(f) => {
                            out.function(&f.sig, f.default.as_ref(), src, lines)
                        }
                        syn::TraitItem::Const(c) => out.name(&c.ident, src, lines),
                        syn::TraitItem::Type(t) => out.name(&t.ident, src, lines),
                        _ => {}
                    }
                }
            }
            syn::Item::Mod(m) => {
                out.name(&m.ident, src, lines);
                if let Some((_, inner)) = &m.content {
                    let mut globs = Vec::new();
                    for it in inner {
                        if let syn::Item::Use(u) = it {
                            glob_paths(&u.tree, &mut Vec::new(), &mut globs);
                        }
                    }
                    out.mods.push((whole, globs == ["super"]));
                    items(inner, src, lines, out);
                }
            }
            syn::Item::Use(u) => {
                let mut names = Vec::new();
                let public = !matches!(u.vis, syn::Visibility::Inherited);
                use_names(&u.tree, &mut Vec::new(), public, &mut names);
                out.uses.push((whole, names));
            }
            syn::Item::Const(c) if c.ident == "_" => out.inert.push(whole),
            syn::Item::Const(c) => out.name(&c.ident, src, lines),
            syn::Item::Static(x) => out.name(&x.ident, src, lines),
            syn::Item::Struct(x) => out.name(&x.ident, src, lines),
            syn::Item::Union(x) => out.name(&x.ident, src, lines),
            syn::Item::Type(x) => out.name(&x.ident, src, lines),
            syn::Item::Enum(e) => {
                out.name(&e.ident, src, lines);
                for v in &e.variants {
                    out.name(&v.ident, src, lines);
                }
            }
            syn::Item::Macro(m) => {
                if let Some(i) = &m.ident {
                    out.name(i, src, lines);
                }
            }
            _ => {}
        }
    }
}

/// The paths a `use` imports by glob (`a::b::*` is `a::b`).
fn glob_paths(tree: &syn::UseTree, path: &mut Vec<String>, out: &mut Vec<String>) {
    match tree {
        syn::UseTree::Path(p) => {
            path.push(p.ident.to_string());
            glob_paths(&p.tree, path, out);
            path.pop();
        }
        syn::UseTree::Glob(_) => out.push(path.join("::")),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                glob_paths(t, path, out);
            }
        }
        syn::UseTree::Name(_) | syn::UseTree::Rename(_) => {}
    }
}

fn use_names(tree: &syn::UseTree, path: &mut Vec<String>, public: bool, out: &mut Vec<Imported>) {
    let first = |path: &[String], own: &str| path.first().map_or(own.to_string(), Clone::clone);
    let last = |path: &[String]| path.last().cloned().unwrap_or_default();
    match tree {
        syn::UseTree::Path(p) => {
            path.push(p.ident.to_string());
            use_names(&p.tree, path, public, out);
            path.pop();
        }
        syn::UseTree::Name(n) => out.push(Imported {
            name: n.ident.to_string(),
            first: first(path, &n.ident.to_string()),
            last: last(path),
            renamed: false,
            public,
        }),
        syn::UseTree::Rename(r) => {
            out.push(Imported {
                name: r.ident.to_string(),
                first: first(path, &r.ident.to_string()),
                last: last(path),
                renamed: true,
                public,
            });
            // The new name reads something else by another name.
            out.push(Imported {
                name: r.rename.to_string(),
                first: String::new(),
                last: String::new(),
                renamed: true,
                public,
            });
        }
        syn::UseTree::Glob(_) => {}
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_names(t, path, public, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn konst(ident: &str, ty: &str, value: &str) -> ConstChange {
        ConstChange {
            ident: ident.into(),
            decl: format!("const {ident}: {ty} = {value};"),
        }
    }

    fn spread_over(
        files: &[(&str, &str)],
        c: &ConstChange,
    ) -> Result<BTreeMap<String, String>, String> {
        let sources =
            Sources::from_files(files.iter().map(|(p, t)| (p.to_string(), t.to_string())));
        let changes = spread(
            &sources,
            files[0].0,
            std::slice::from_ref(c),
            &BTreeMap::new(),
        )?;
        Ok(changes
            .into_iter()
            .map(|(rel, cs)| {
                let src = sources.get(&rel).unwrap();
                let mut text = src.to_string();
                for c in cs.iter().rev() {
                    text.replace_range(c.body.clone(), &c.text);
                }
                (rel, text)
            })
            .collect())
    }

    const LIMITS: &str = "//! Limits.\npub const CAP_MAX: usize = 3;\n\
        pub fn capped(n: usize) -> usize { n.min(CAP_MAX) }\n";

    #[test]
    fn every_body_that_reads_the_const_gets_its_mutated_declaration_and_no_other_does() {
        let user = "//! User.\nuse crate::limits::CAP_MAX;\npub fn cap() -> usize { CAP_MAX }\n\
            pub fn far() -> usize { crate::limits::CAP_MAX + 1 }\npub fn none() -> u8 { 0 }\n";
        let out = spread_over(
            &[
                ("r/src/limits.rs", LIMITS),
                ("r/src/user.rs", user),
                ("r/src/other.rs", "//! O.\nfn x() {}\n"),
            ],
            &konst("CAP_MAX", "usize", "4"),
        )
        .unwrap();
        assert_eq!(out.len(), 2, "{out:?}");
        let decl = "#[allow(unused)] const CAP_MAX: usize = 4;";
        assert!(out["r/src/limits.rs"].contains(&format!("{{ {decl} n.min(CAP_MAX) }}")));
        assert!(out["r/src/user.rs"].contains(&format!("{{ {decl} CAP_MAX }}")));
        assert!(out["r/src/user.rs"].contains(&format!("{{ {decl} CAP_MAX + 1 }}")));
        assert!(out["r/src/user.rs"].contains("fn none() -> u8 { 0 }"));
        for text in out.values() {
            syn::parse_file(text).expect("the rewritten file parses");
        }
    }

    #[test]
    fn a_const_read_where_a_block_cannot_shadow_it_stays_out() {
        let c = konst("CAP_MAX", "usize", "4");
        for (path, other, why) in [
            (
                "r/src/a.rs",
                "//! A.\npub const TWICE: usize = crate::limits::CAP_MAX * 2;\n",
                "outside a function body",
            ),
            (
                "r/src/a.rs",
                "//! A.\npub struct S([u8; crate::limits::CAP_MAX]);\n",
                "outside a function body",
            ),
            (
                "r/src/a.rs",
                "//! A.\npub const fn k() -> usize { crate::limits::CAP_MAX }\n",
                "const fn",
            ),
            (
                "r/src/a.rs",
                "//! A.\nuse crate::limits::CAP_MAX as C;\nfn f() -> usize { C }\n",
                "renames",
            ),
            (
                "r/src/a.rs",
                "//! A.\nuse crate::limits::*;\nfn f() -> usize { CAP_MAX }\n",
                "bare",
            ),
            (
                "r/src/a.rs",
                "//! A.\npub const CAP_MAX: usize = 9;\nfn f() -> usize { CAP_MAX + crate::limits::CAP_MAX }\n",
                "another of its name bare",
            ),
            (
                "r/src/a.rs",
                "//! A.\nconst _: () = assert!(crate::limits::CAP_MAX > 0);\n",
                "assertion",
            ),
            (
                "r/src/x/limits.rs",
                "//! A.\npub const CAP_MAX: usize = 9;\n",
                "another module named `limits`",
            ),
            (
                "r/src/a.rs",
                "//! A.\npub const CAP_MAX: usize = 9;\nfn f() -> usize { crate::CAP_MAX }\n",
                "cannot be told apart",
            ),
        ] {
            let err = spread_over(&[("r/src/limits.rs", LIMITS), (path, other)], &c).unwrap_err();
            assert!(err.contains(why), "{other}: {err}");
        }
    }

    #[test]
    fn a_name_that_reads_another_item_is_left_alone() {
        let c = konst("CAP_MAX", "usize", "4");
        for other in [
            "//! A.\nuse other_crate::CAP_MAX;\nfn f() -> usize { CAP_MAX }\n",
            "//! A.\nfn f() -> usize { dep::CAP_MAX }\n",
            "//! A.\npub const CAP_MAX: usize = 9;\nfn f() -> usize { CAP_MAX + self::CAP_MAX }\n",
        ] {
            let out =
                spread_over(&[("r/src/limits.rs", LIMITS), ("r/src/a.rs", other)], &c).unwrap();
            assert!(!out.contains_key("r/src/a.rs"), "{other}: {out:?}");
            assert!(out.contains_key("r/src/limits.rs"));
        }
        // Two consts of one name: the one imported from the defining module is ours.
        let store = "//! S.\nuse super::limits::CAP_MAX;\nfn g() -> usize { CAP_MAX }\n";
        let index = "//! I.\nconst CAP_MAX: usize = 7;\nfn h() -> usize { CAP_MAX }\n";
        let out = spread_over(
            &[
                ("r/src/limits.rs", LIMITS),
                ("r/src/store.rs", store),
                ("r/src/index.rs", index),
            ],
            &c,
        )
        .unwrap();
        assert!(out["r/src/store.rs"].contains("const CAP_MAX: usize = 4; CAP_MAX }"));
        assert!(!out.contains_key("r/src/index.rs"));
    }

    #[test]
    fn the_mutations_own_body_changes_are_kept_and_given_the_declaration_too() {
        let body_at = LIMITS.find("{ n.min").unwrap();
        let body_end = LIMITS[body_at..].find('}').unwrap() + body_at + 1;
        let own = BTreeMap::from([(
            "r/src/limits.rs".to_string(),
            vec![BodyChange {
                body: body_at..body_end,
                text: "{ n.max(CAP_MAX) }".into(),
            }],
        )]);
        let sources = Sources::from_files([("r/src/limits.rs".to_string(), LIMITS.to_string())]);
        let out = spread(
            &sources,
            "r/src/limits.rs",
            &[konst("CAP_MAX", "usize", "4")],
            &own,
        )
        .unwrap();
        assert_eq!(
            out["r/src/limits.rs"][0].text,
            "{ #[allow(unused)] const CAP_MAX: usize = 4; n.max(CAP_MAX) }"
        );
    }

    #[test]
    fn a_format_string_that_captures_the_const_reads_it_too() {
        let c = konst("CAP_MAX", "usize", "4");
        let user = "//! U.\nuse crate::limits::CAP_MAX;\n\
            pub fn msg() -> String { format!(\"at most {CAP_MAX} pairs\") }\n";
        let out = spread_over(&[("r/src/limits.rs", LIMITS), ("r/src/user.rs", user)], &c).unwrap();
        assert!(
            out.get("r/src/user.rs").is_some_and(|t| t.contains(
                "{ #[allow(unused)] const CAP_MAX: usize = 4; format!(\"at most {CAP_MAX} pairs\") }"
            )),
            "{out:?}"
        );
        let attr = "//! E.\nuse crate::limits::CAP_MAX;\n\
            pub enum E {\n    #[error(\"over {CAP_MAX:?}\")]\n    Over,\n}\n";
        let err =
            spread_over(&[("r/src/limits.rs", LIMITS), ("r/src/e.rs", attr)], &c).unwrap_err();
        assert!(err.contains("outside a function body"), "{err}");
    }

    #[test]
    fn a_bare_name_inside_an_inline_module_that_may_read_another_stays_out() {
        let c = konst("CAP_MAX", "usize", "4");
        // Built alone, each `f` reads `dep`'s `CAP_MAX`; a block-local const
        // would hide it.
        for (files, module) in [
            (
                vec![(
                    "r/src/limits.rs",
                    format!(
                        "{LIMITS}mod m {{\n    use dep::*;\n    pub fn f() -> usize {{ CAP_MAX }}\n}}\n"
                    ),
                )],
                "r/src/limits.rs",
            ),
            (
                vec![
                    ("r/src/limits.rs", LIMITS.to_string()),
                    (
                        "r/src/a.rs",
                        "//! A.\nuse crate::limits::CAP_MAX;\nfn a() -> usize { CAP_MAX }\n\
                         mod m {\n    use dep::*;\n    fn f() -> usize { CAP_MAX }\n}\n"
                            .to_string(),
                    ),
                ],
                "r/src/a.rs",
            ),
        ] {
            let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
            match spread_over(&files, &c) {
                Ok(out) => panic!("{module}: accepted: {out:?}"),
                Err(e) => assert!(e.contains("inline module"), "{e}"),
            }
        }
        // `use super::*` alone reads the const of the file around it.
        let tests = format!(
            "{LIMITS}#[cfg(test)]\nmod tests {{\n    use super::*;\n    fn t() -> usize {{ CAP_MAX }}\n}}\n"
        );
        let out = spread_over(&[("r/src/limits.rs", tests.as_str())], &c).unwrap();
        assert!(
            out["r/src/limits.rs"]
                .contains("{ #[allow(unused)] const CAP_MAX: usize = 4; CAP_MAX }")
        );
    }

    #[test]
    fn a_path_that_starts_at_an_imported_foreign_module_stays_out() {
        // `limits` here is `dep::limits`, named like the defining module.
        let c = konst("CAP_MAX", "usize", "4");
        let lib = "//! L.\nmod limits;\nmod a;\n";
        for other in [
            "//! A.\nuse dep::limits;\nfn f() -> usize { limits::CAP_MAX }\n",
            "//! A.\nuse dep::other as limits;\nfn f() -> usize { limits::CAP_MAX }\n",
        ] {
            let files = [
                ("r/src/limits.rs", LIMITS),
                ("r/src/lib.rs", lib),
                ("r/src/a.rs", other),
            ];
            match spread_over(&files, &c) {
                Ok(out) => panic!("{other}: accepted: {out:?}"),
                Err(e) => assert!(e.contains("outside the workspace"), "{e}"),
            }
        }
    }

    #[test]
    fn a_word_is_found_only_whole() {
        assert!(mentions_word("a CAP_MAX b", "CAP_MAX"));
        assert!(!mentions_word("a CAP_MAXIMUM b", "CAP_MAX"));
        assert!(!mentions_word("MY_CAP_MAX", "CAP_MAX"));
    }
}

//! What a mutation changes, as the schema build reads it, and why a change cannot join that build.
//!
//! The vocabulary the schema (`schema.rs`) and the const spreader
//! (`consts.rs`) share, below both: a rewritten function body, a const's new
//! declaration, and a [`Refusal`], whose [`RefusalKind`] is what the runner
//! counts and reports on its progress line. The runner decides on the kind,
//! never on a refusal's words.

use std::fmt;
use std::ops::Range;

/// One function body a mutation rewrites: where the body's braces are in the
/// original file (bytes), and the mutated body, braces included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyChange {
    /// The original body's byte range, `{` to `}` inclusive.
    pub body: Range<usize>,
    /// The mutated body's text, `{` to `}` inclusive.
    pub text: String,
}

/// One changed const: its name and its mutated declaration as Rust tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConstChange {
    /// The const's name.
    pub ident: String,
    /// `const X: T = <mutated value>;`, printed from tokens.
    pub decl: String,
}

/// Why a mutation stays out of the schema build and is built on its own.
/// Its kind is what a caller branches on and counts; its detail names the
/// file and the item, for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// What kind of change keeps it out.
    pub kind: RefusalKind,
    /// The whole reason, with the file and the item it is about.
    pub detail: String,
}

/// The kinds of change a schema build cannot hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RefusalKind {
    /// It touches a file that is not Rust, or adds or removes a file.
    NotRust,
    /// Its diff does not apply to the workspace.
    Stale,
    /// A file, original or mutated, does not parse, tokenize or map its
    /// spans back to bytes.
    Unparsable,
    /// A function's signature, visibility or attributes changed.
    Signature,
    /// The body of a `const fn` changed (a const context cannot branch on a
    /// run-time selector).
    ConstFn,
    /// Something outside a function body changed: an item's header, a type,
    /// a field, an attribute, a module, or an item was removed.
    Outside,
    /// An added item could act without being named (an attribute, an impl
    /// of a type it does not add), or its name is taken or handed to a macro.
    Added,
    /// A changed const cannot be spread into the bodies that read it.
    Const,
    /// Nothing but whitespace or comments changed.
    NoCode,
    /// It joined, and the schema tree's compiler errors fell in its bodies.
    DoesNotCompile,
}

impl RefusalKind {
    /// The kind in a few words, as the progress line counts it.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::NotRust => "a file that is not Rust, or one added or removed",
            Self::Stale => "a diff that does not apply",
            Self::Unparsable => "a file does not parse",
            Self::Signature => "a signature or attribute changed",
            Self::ConstFn => "a const fn changed",
            Self::Outside => "an item other than a function body changed",
            Self::Added => "an added item that could act unnamed",
            Self::Const => "a const that cannot be spread",
            Self::NoCode => "no code changed",
            Self::DoesNotCompile => "does not compile in the schema",
        }
    }
}

impl Refusal {
    /// A refusal of `kind` for the reason `detail`.
    pub fn new(kind: RefusalKind, detail: impl Into<String>) -> Self {
        Self {
            kind,
            detail: detail.into(),
        }
    }

    /// The same refusal, its detail prefixed with `context` (a file).
    #[must_use]
    pub fn within(self, context: &str) -> Self {
        Self {
            kind: self.kind,
            detail: format!("{context}: {}", self.detail),
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.detail)
    }
}

impl std::error::Error for Refusal {}

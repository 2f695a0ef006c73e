//! Gate 17 (§10, §9.1, §1.9): no undeclared route — method and path together, read from the code's syntax tree.
//!
//! Requirement: every router registration in the reference's source is
//! named, method and path together, in `memoria::DECLARED_ROUTES`, and
//! every declared route is registered. Registrations the gate cannot read
//! (a path that is not a literal, a method router held in a variable,
//! `on(MethodFilter…)`, `any`) fail rather than pass, and so do `nest`,
//! `merge` and the `*_service` forms, which would serve paths the table
//! cannot name. Exactly one `fallback` exists and it answers the 404 page.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use memoria::DECLARED_ROUTES;
use syn::visit::Visit;

use crate::rigs::app::app;
use crate::rigs::support::block_on;
use crate::{Case, Ctx, Failure, Gate, ensure};

/// The reference crate's source directory, as compiled into this gate.
pub const REFERENCE_SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../reference/src");

/// Method-router constructors axum offers, by function name.
const METHODS: &[&str] = &[
    "get", "post", "put", "delete", "patch", "head", "options", "trace", "connect",
];
/// Router calls that register something.
const REGISTRATIONS: &[&str] = &[
    "route",
    "route_service",
    "nest",
    "nest_service",
    "merge",
    "fallback",
    "fallback_service",
    "method_not_allowed_fallback",
];

/// Gate 17.
pub static GATE: Gate = Gate {
    id: "17",
    title: "No undeclared route",
    gates_md: &[
        "No undeclared route: method and path together, read from the code, not from memory",
    ],
    sections: &["§10", "§9.1", "§1.9"],
    requirement: "Every router registration in reference/src, keyed by method and path together, is in DECLARED_ROUTES, and every declared route is registered; unreadable registrations, nest, merge and service routes fail; one fallback, answering 404.",
    cases: &[
        Case {
            id: "17/registrations-readable",
            desc: "Parse every .rs file under reference/src with syn and collect each .route/.nest/.merge/.fallback/*_service call; require every one readable (literal path, known method constructors) and at least as many as are declared.",
            run: readable,
        },
        Case {
            id: "17/no-undeclared",
            desc: "Require every registered (method, path) to be in DECLARED_ROUTES.",
            run: no_undeclared,
        },
        Case {
            id: "17/no-unregistered-declaration",
            desc: "Require every (method, path) in DECLARED_ROUTES to be registered, so the table cannot drift from the code.",
            run: no_unregistered,
        },
        Case {
            id: "17/undeclared-paths-answer-404",
            desc: "Send every method to a list of plausible undeclared paths (/healthz, /metrics, /export.json, /feed, /ingest, /query, /chat, /admin …) signed in and out; require each to answer the 404 or 405 page, never a 2xx or 3xx.",
            run: undeclared_paths,
        },
        Case {
            id: "17/no-nest-merge-or-service",
            desc: "Require no nest, merge or *_service registration and exactly one fallback, and require the live router to answer an unknown path with the 404 page.",
            run: no_nest_merge,
        },
    ],
};

/// One registration found in the source.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Registration {
    /// The call: `route`, `nest`, `fallback`, ...
    pub call: String,
    /// Methods, upper case (empty for non-route calls).
    pub methods: Vec<String>,
    /// The literal path, if any.
    pub path: Option<String>,
    /// Why the gate could not read it, if it could not.
    pub unreadable: Option<String>,
    /// File and line.
    pub at: String,
}

struct Collector<'a> {
    file: &'a Path,
    found: Vec<Registration>,
}

fn methods_of(expr: &syn::Expr) -> Result<Vec<String>, String> {
    match expr {
        syn::Expr::Call(c) => {
            let syn::Expr::Path(p) = &*c.func else {
                return Err("a method router built by a non-path call".into());
            };
            let name = p
                .path
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default();
            if METHODS.contains(&name.as_str()) {
                Ok(vec![name.to_uppercase()])
            } else {
                Err(format!(
                    "method router `{name}(…)` serves methods the gate cannot name"
                ))
            }
        }
        syn::Expr::MethodCall(m) => {
            let name = m.method.to_string();
            let mut inner = methods_of(&m.receiver)?;
            if METHODS.contains(&name.as_str()) {
                inner.push(name.to_uppercase());
                Ok(inner)
            } else if matches!(name.as_str(), "layer" | "route_layer" | "with_state") {
                Ok(inner)
            } else {
                Err(format!(
                    "method router `.{name}(…)` serves methods the gate cannot name"
                ))
            }
        }
        syn::Expr::Paren(p) => methods_of(&p.expr),
        syn::Expr::Group(g) => methods_of(&g.expr),
        _ => Err("a method router the gate cannot read (a variable or helper?)".into()),
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // syn does not expand macros: a registration inside one is unreadable, never absent.
        // Only the method-call shape `.route(` counts, so a field named `route`
        // in a log macro is not mistaken for a registration.
        let tokens: Vec<proc_macro2::TokenTree> =
            m.tokens.clone().into_iter().flat_map(flatten).collect();
        let hidden = tokens.windows(2).find_map(|w| match (&w[0], &w[1]) {
            (proc_macro2::TokenTree::Punct(p), proc_macro2::TokenTree::Ident(i))
                if p.as_char() == '.' && REGISTRATIONS.contains(&i.to_string().as_str()) =>
            {
                Some(w[1].clone())
            }
            _ => None,
        });
        if let Some(t) = hidden {
            let line = t.span().start().line;
            self.found.push(Registration {
                call: t.to_string(),
                methods: vec![],
                path: None,
                unreadable: Some(
                    "a registration inside a macro, which the gate cannot expand".into(),
                ),
                at: format!("{}:{line}", self.file.display()),
            });
        }
        syn::visit::visit_macro(self, m);
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        let call = m.method.to_string();
        if call == "uri" && m.args.is_empty() && !self.file.ends_with("testkit.rs") {
            // Reading the request URI is how a route hides outside the router (a
            // middleware answering a path); only the router may dispatch on paths.
            // `.uri(x)` with an argument sets an outbound request's URI (the
            // sibling client's `http::request::Builder`) and reads nothing.
            let line = m.method.span().start().line;
            self.found.push(Registration {
                call: "uri".into(),
                methods: vec![],
                path: None,
                unreadable: Some("the request URI is read outside the router, where a path could be answered unseen".into()),
                at: format!("{}:{line}", self.file.display()),
            });
        }
        if REGISTRATIONS.contains(&call.as_str()) {
            let line = m.method.span().start().line;
            let at = format!("{}:{line}", self.file.display());
            let mut reg = Registration {
                call: call.clone(),
                methods: vec![],
                path: None,
                unreadable: None,
                at,
            };
            if call == "route" {
                let mut args = m.args.iter();
                match args.next() {
                    Some(syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    })) => reg.path = Some(s.value()),
                    _ => reg.unreadable = Some("the path is not a string literal".into()),
                }
                match args.next().map(methods_of) {
                    Some(Ok(ms)) => reg.methods = ms,
                    Some(Err(why)) => reg.unreadable = Some(why),
                    None => reg.unreadable = Some("no method router".into()),
                }
            }
            self.found.push(reg);
        }
        syn::visit::visit_expr_method_call(self, m);
    }
}

fn flatten(t: proc_macro2::TokenTree) -> Vec<proc_macro2::TokenTree> {
    match t {
        proc_macro2::TokenTree::Group(g) => g.stream().into_iter().flat_map(flatten).collect(),
        other => vec![other],
    }
}

/// Every registration in every `.rs` file under `src`.
///
/// # Errors
/// A [`Failure`] if a file cannot be read or parsed: an unparsed file is not a file with no routes.
pub fn registrations(src: &Path) -> Result<Vec<Registration>, Failure> {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(src)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
        .map(|e| e.into_path())
        .collect();
    files.sort();
    ensure(
        !files.is_empty(),
        "reference/src holds Rust files",
        format!("none under {}", src.display()),
    )?;
    let mut all = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f)
            .map_err(|e| Failure::new(format!("{} is readable", f.display()), e.to_string()))?;
        let ast = syn::parse_file(&text)
            .map_err(|e| Failure::new(format!("{} parses", f.display()), e.to_string()))?;
        let rel = f.strip_prefix(src).unwrap_or(&f).to_path_buf();
        let mut c = Collector {
            file: &rel,
            found: vec![],
        };
        c.visit_file(&ast);
        all.extend(c.found);
    }
    Ok(all)
}

fn registered_pairs(regs: &[Registration]) -> BTreeSet<(String, String)> {
    regs.iter()
        .filter(|r| r.call == "route")
        .flat_map(|r| {
            let path = r.path.clone().unwrap_or_default();
            r.methods.iter().map(move |m| (m.clone(), path.clone()))
        })
        .collect()
}

fn declared_pairs() -> BTreeSet<(String, String)> {
    DECLARED_ROUTES
        .iter()
        .map(|r| (r.method.to_string(), r.path.to_string()))
        .collect()
}

fn readable(_: &mut Ctx) -> Result<(), Failure> {
    let regs = registrations(Path::new(REFERENCE_SRC))?;
    let bad: Vec<String> = regs
        .iter()
        .filter_map(|r| {
            r.unreadable
                .as_ref()
                .map(|w| format!("{} at {}: {w}", r.call, r.at))
        })
        .collect();
    ensure(
        bad.is_empty(),
        "every registration is readable",
        bad.join("; "),
    )?;
    let n = registered_pairs(&regs).len();
    ensure(
        n >= DECLARED_ROUTES.len(),
        format!(
            "at least {} (method, path) registrations found",
            DECLARED_ROUTES.len()
        ),
        format!("{n} found"),
    )
}

fn no_undeclared(_: &mut Ctx) -> Result<(), Failure> {
    let regs = registrations(Path::new(REFERENCE_SRC))?;
    let registered = registered_pairs(&regs);
    ensure(
        !registered.is_empty(),
        "the source registers routes",
        "none found",
    )?;
    let extra: Vec<String> = registered
        .difference(&declared_pairs())
        .map(|(m, p)| format!("{m} {p}"))
        .collect();
    ensure(
        extra.is_empty(),
        "no registration outside DECLARED_ROUTES",
        format!("undeclared: {}", extra.join(", ")),
    )
}

fn no_unregistered(_: &mut Ctx) -> Result<(), Failure> {
    let regs = registrations(Path::new(REFERENCE_SRC))?;
    let missing: Vec<String> = declared_pairs()
        .difference(&registered_pairs(&regs))
        .map(|(m, p)| format!("{m} {p}"))
        .collect();
    ensure(
        missing.is_empty(),
        "every declared route is registered",
        format!("declared but not registered: {}", missing.join(", ")),
    )
}

fn no_nest_merge(ctx: &mut Ctx) -> Result<(), Failure> {
    let regs = registrations(Path::new(REFERENCE_SRC))?;
    let other: Vec<String> = regs
        .iter()
        .filter(|r| r.call != "route" && r.call != "fallback")
        .map(|r| format!("{} at {}", r.call, r.at))
        .collect();
    ensure(
        other.is_empty(),
        "no nest, merge or service registration",
        other.join("; "),
    )?;
    let fallbacks = regs.iter().filter(|r| r.call == "fallback").count();
    ensure(
        fallbacks == 1,
        "exactly one fallback",
        format!("{fallbacks}"),
    )?;
    let app = app(ctx, "ana@example.org")?;
    let resp = block_on(app.get("/no/such/route"));
    ensure(
        resp.status.as_u16() == 404 && resp.body.contains("There is nothing at this address"),
        "the fallback answers the 404 page",
        format!("status {}", resp.status),
    )
}

/// Paths a future change might plausibly serve without declaring them.
const PROBE_PATHS: &[&str] = &[
    "/healthz",
    "/health",
    "/metrics",
    "/status",
    "/admin",
    "/api",
    "/api/search",
    "/export",
    "/export.json",
    "/debug",
    "/feed",
    "/ingest",
    "/query",
    "/chat",
    "/documents",
    "/static/credits.css",
    "/help/open-source",
    "/signin",
    "/auth/verify",
];
const PROBE_METHODS: &[&str] = &["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"];

fn undeclared_paths(ctx: &mut Ctx) -> Result<(), Failure> {
    let declared = declared_pairs();
    let mut app = app(ctx, "ana@example.org")?;
    let mut answered = Vec::new();
    let mut probes = 0;
    for signed_in in [false, true] {
        if signed_in {
            block_on(app.sign_in("ana@example.org"));
        }
        for path in PROBE_PATHS {
            for method in PROBE_METHODS {
                if declared.contains(&(method.to_string(), path.to_string())) {
                    continue;
                }
                probes += 1;
                let r = block_on(app.send(memoria::testkit::request(method, path)));
                let s = r.status.as_u16();
                if !(s == 404 || s == 405) {
                    answered.push(format!("{method} {path} answered {s}"));
                }
            }
        }
    }
    ensure(
        probes > 100,
        "the probe sent over a hundred requests",
        format!("{probes}"),
    )?;
    ensure(
        answered.is_empty(),
        "every undeclared (method, path) answers 404 or 405",
        answered.join("; "),
    )
}

//! JUnit XML for a run's report, valid against the Jenkins/Surefire XSD: `name` on every element, `tests`/`failures`/`errors`/`skipped`/`time` on every suite.
//!
//! The kit's own writer (over `quick-xml`), so that the kit builds without
//! the harness; the harness renders its gate, mutation and conformance runs
//! with this one too.

use std::io::Cursor;

use quick_xml::Writer;
use quick_xml::events::{BytesCData, BytesDecl, BytesEnd, BytesStart, Event};

/// A JUnit suite to render.
#[derive(Debug, Clone)]
pub struct JunitSuite {
    /// Suite name.
    pub name: String,
    /// Package attribute.
    pub package: String,
    /// name/value properties.
    pub properties: Vec<(String, String)>,
    /// Cases.
    pub cases: Vec<JunitCase>,
}

/// A JUnit case to render.
#[derive(Debug, Clone)]
pub struct JunitCase {
    /// Case name (the stable id).
    pub name: String,
    /// Class name (the gate).
    pub classname: String,
    /// Wall time in milliseconds.
    pub time_ms: u64,
    /// (message, body) if it failed.
    pub failure: Option<(String, String)>,
    /// Reason if it was skipped.
    pub skipped: Option<String>,
}

fn secs(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// Renders suites as JUnit XML, valid against the Jenkins/Surefire XSD.
///
/// # Panics
/// Never in practice: writing XML to memory cannot fail.
pub fn junit(name: &str, suites: &[JunitSuite]) -> String {
    let mut w = Writer::new_with_indent(Cursor::new(Vec::new()), b' ', 2);
    let tests: usize = suites.iter().map(|s| s.cases.len()).sum();
    let failures: usize = suites
        .iter()
        .flat_map(|s| s.cases.iter())
        .filter(|c| c.failure.is_some())
        .count();
    let total_ms: u64 = suites
        .iter()
        .flat_map(|s| s.cases.iter())
        .map(|c| c.time_ms)
        .sum();
    let ok = "writing XML to memory";
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))
        .expect(ok);
    let mut root = BytesStart::new("testsuites");
    root.push_attribute(("name", name));
    root.push_attribute(("tests", tests.to_string().as_str()));
    root.push_attribute(("failures", failures.to_string().as_str()));
    root.push_attribute(("errors", "0"));
    root.push_attribute(("time", secs(total_ms).as_str()));
    w.write_event(Event::Start(root)).expect(ok);
    for (i, s) in suites.iter().enumerate() {
        let f = s.cases.iter().filter(|c| c.failure.is_some()).count();
        let sk = s.cases.iter().filter(|c| c.skipped.is_some()).count();
        let ms: u64 = s.cases.iter().map(|c| c.time_ms).sum();
        let mut e = BytesStart::new("testsuite");
        e.push_attribute(("name", s.name.as_str()));
        e.push_attribute(("tests", s.cases.len().to_string().as_str()));
        e.push_attribute(("failures", f.to_string().as_str()));
        e.push_attribute(("errors", "0"));
        e.push_attribute(("skipped", sk.to_string().as_str()));
        e.push_attribute(("time", secs(ms).as_str()));
        e.push_attribute(("id", i.to_string().as_str()));
        e.push_attribute(("package", s.package.as_str()));
        w.write_event(Event::Start(e)).expect(ok);
        w.write_event(Event::Start(BytesStart::new("properties")))
            .expect(ok);
        for (k, v) in &s.properties {
            let mut p = BytesStart::new("property");
            p.push_attribute(("name", k.as_str()));
            p.push_attribute(("value", v.as_str()));
            w.write_event(Event::Empty(p)).expect(ok);
        }
        w.write_event(Event::End(BytesEnd::new("properties")))
            .expect(ok);
        for c in &s.cases {
            let mut e = BytesStart::new("testcase");
            e.push_attribute(("name", c.name.as_str()));
            e.push_attribute(("classname", c.classname.as_str()));
            e.push_attribute(("time", secs(c.time_ms).as_str()));
            if c.failure.is_none() && c.skipped.is_none() {
                w.write_event(Event::Empty(e)).expect(ok);
                continue;
            }
            w.write_event(Event::Start(e)).expect(ok);
            if let Some((msg, body)) = &c.failure {
                let mut f = BytesStart::new("failure");
                f.push_attribute(("message", msg.as_str()));
                f.push_attribute(("type", "assertion"));
                w.write_event(Event::Start(f)).expect(ok);
                w.write_event(Event::CData(BytesCData::new(
                    body.replace("]]>", "]]]]><![CDATA[>"),
                )))
                .expect(ok);
                w.write_event(Event::End(BytesEnd::new("failure")))
                    .expect(ok);
            }
            if let Some(why) = &c.skipped {
                let mut sk = BytesStart::new("skipped");
                sk.push_attribute(("message", why.as_str()));
                w.write_event(Event::Empty(sk)).expect(ok);
            }
            w.write_event(Event::End(BytesEnd::new("testcase")))
                .expect(ok);
        }
        w.write_event(Event::End(BytesEnd::new("testsuite")))
            .expect(ok);
    }
    w.write_event(Event::End(BytesEnd::new("testsuites")))
        .expect(ok);
    let mut out = String::from_utf8(w.into_inner().into_inner()).expect("UTF-8 XML");
    out.push('\n');
    out
}

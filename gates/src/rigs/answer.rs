//! What the answer gates share (14, 31, 32; §8.2, §8.4, §8.5): a world whose memoria runs with AI on against the stub provider, Sheets items of known text, and the answer and the recorded prompts as a gate reads them.
//!
//! Each item is its own document, so [`ITEMS`] items on one topic make a
//! synthesis page (≥ 3 documents) for a question, and one item alone a
//! single-source page. Every item's body carries the case's canary (so one
//! query finds them all), a marker word of its own (so a prompt's body
//! can be searched for exactly that passage) and a number of its own.

use std::collections::BTreeMap;

use memoria_simulator::{FakeSibling, Rung, SiblingSpec, StubProvider, World};

use super::page::Page;

/// Items the rig stocks unless a case asks for more.
pub const ITEMS: usize = 4;

/// The id of item `i` at Sheets.
pub fn item_id(i: usize) -> String {
    format!("sh-{i}")
}

/// The title of item `i`: unique, so a citation's title names its item.
pub fn title(i: usize) -> String {
    format!("Plan note {i}")
}

/// Item `i`'s marker word: in its body and nowhere else.
pub fn marker(canary: &str, i: usize) -> String {
    format!("mk{i}x{canary}")
}

/// Item `i`'s number, written as a person would: in its body only.
pub fn number(i: usize) -> String {
    format!("{},{:03}", i + 1, 100 + 37 * i)
}

/// Item `i`'s body: the canary, its marker and its number.
pub fn body(canary: &str, i: usize) -> String {
    format!(
        "# {}\n\nThe {canary} plan changed because of {} and a budget of {} euro.\n",
        title(i),
        marker(canary, i),
        number(i)
    )
}

/// A question over every item: a synthesis route once the page holds
/// three documents or more.
pub fn question(canary: &str) -> String {
    format!("why did the {canary} plan change?")
}

/// A world with Sheets holding `n` items ([`body`]), the stub provider
/// serving, and memoria with AI on ([`World::use_provider`]). Returns the
/// world, Sheets' fake and the stub.
pub fn world(seed: u64, canary: &str, n: usize) -> (World, FakeSibling, StubProvider) {
    let mut world = World::new(seed, vec![SiblingSpec::own("sheets")]);
    let sheets = world.fake("sheets").clone();
    sheets.model().with(|m| {
        for i in 0..n {
            m.add_item(&item_id(i), Rung::Team, &title(i), &body(canary, i))
                .expect("a fresh item is accepted");
        }
    });
    let stub = StubProvider::new();
    world.use_provider(&stub);
    (world, sheets, stub)
}

/// The citation list's rank of each item on `page`, by the item's number
/// `i` (read from its title).
pub fn ranks(page: &Page, n: usize) -> BTreeMap<usize, usize> {
    let mut out = BTreeMap::new();
    for (k, c) in page.citations().iter().enumerate() {
        if let Some(i) = (0..n).find(|i| c.title.trim() == title(*i)) {
            out.insert(i, k + 1);
        }
    }
    out
}

/// A provider fault a case sets: its name and the knob.
pub type Fault = (&'static str, fn(&StubProvider));

/// A provider fault, and the words the loud line must name it by.
pub type NamedFault = (&'static str, fn(&StubProvider), &'static str);

/// Every recorded chat request body, as text.
pub fn prompts(stub: &StubProvider) -> Vec<String> {
    stub.chat_requests()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect()
}

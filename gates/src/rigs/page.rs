//! Pages as the gates read them: the workspace's one page reader (`memoria-page`, `fixtures/page/`), and a response read as a page.

pub use memoria_page::{Citation, FactRowSeen, Form, Page, ResultItem, Tag};

use memoria::testkit::TestResponse;

/// Parses a response's body as a [`Page`] and keeps the status it was
/// served with.
pub fn of(response: &TestResponse) -> Page {
    Page::served(response.status.as_u16(), &response.body)
}

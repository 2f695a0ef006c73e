//! Getting memoria-owned content in: decode a file, import it (chunked by [`crate::search::chunk`]), keep a folder in sync (§5, §5.1, §7.2).

pub mod connector;
pub mod decode;
pub mod import;

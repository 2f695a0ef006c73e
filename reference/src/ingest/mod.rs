//! Getting memoria-owned content in: decode a file, chunk it, import it, keep a folder in sync (§5, §5.1, §7.2).

pub mod chunk;
pub mod connector;
pub mod decode;
pub mod import;

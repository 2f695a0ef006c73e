//! Fuzzes the S1, S1a and S3 decoders (§6.1, gate 3): any bytes give a value or a typed refusal, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memoria::wire::{AnnounceAssembler, Pair, decode_s1, decode_s1a_page, decode_s3};

fuzz_target!(|data: &[u8]| {
    let _ = decode_s1(200, data);
    if let Ok(page) = decode_s1a_page(200, data) {
        let mut a = AnnounceAssembler::default();
        if let Ok(None) = a.feed(page) {
            let _ = a.finish();
        }
    }
    let asked = Pair {
        item_id: "a".into(),
        revision: "1".into(),
    };
    let _ = decode_s3(&asked, 200, data);
});

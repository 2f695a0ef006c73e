//! Fuzzes the S2 decoder (§4.1, gate 6): any status and any bytes give exactly one verdict per requested pair.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memoria::wire::{Pair, S2Answer, SubjectKind, Verdict, decode_s2};

fuzz_target!(|data: &[u8]| {
    let (head, body) = data.split_at(data.len().min(3));
    let status = head.first().map_or(200, |b| 100 + u16::from(*b) * 2);
    let n = head.get(1).map_or(1, |b| usize::from(*b % 8) + 1);
    let kind = if head.get(2).is_some_and(|b| b % 2 == 1) {
        SubjectKind::PersonRef
    } else {
        SubjectKind::Address
    };
    let pairs: Vec<Pair> = (0..n)
        .map(|i| Pair {
            item_id: ["a", "b", "c", "d", "e", "f", "g", "h"][i].to_string(),
            revision: "1".to_string(),
        })
        .collect();
    for status in [status, 200] {
        let d = decode_s2(
            &pairs,
            kind,
            &S2Answer::Http {
                status,
                body: body.to_vec(),
            },
        );
        assert_eq!(d.verdicts.len(), n);
        if status != 200 {
            assert!(d.verdicts.iter().all(|v| *v == Verdict::Unknown));
        }
    }
});

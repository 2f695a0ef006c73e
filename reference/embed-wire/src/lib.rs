//! The embedding provider's response body read into numbers: each item's index and its values, a JSON null as NaN.
//!
//! One plain function, [`decode`], over `serde_json`, so that its generic
//! parser is compiled here, optimised even in the dev profile (the root
//! `Cargo.toml` says so), rather than inside `memoria`. The body is the
//! OpenAI-compatible `POST /v1/embeddings` answer (§7.2 of the design):
//! `{"data": [{"index": 0, "embedding": [0.1, ...]}, ...]}`, other fields
//! ignored. Whether it answers the request (one vector per input, each of
//! the right length, finite, not all zero) is the caller's business
//! (memoria's `ai/embed.rs`, `decode_response`).

use serde::Deserialize;

/// A response body's items, in the order the provider wrote them.
#[derive(Debug, Deserialize)]
pub struct Response {
    /// The `data` array.
    pub data: Vec<Item>,
}

/// One item of `data`: the input it answers, by position, and its vector.
#[derive(Debug, Deserialize)]
pub struct Item {
    /// The `index` of the input this vector embeds, as written.
    pub index: u64,
    /// The vector's values, as many as written.
    pub embedding: Vec<Value>,
}

/// One value: a JSON number as `f32` (an `f32` overflow becomes infinite),
/// or `null`, which serialisers write for NaN and infinity, as NaN. The
/// caller refuses both.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Value(pub f32);

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Value;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a number or null")
            }
            fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
                Ok(Value(v as f32))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
                Ok(Value(v as f32))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
                Ok(Value(v as f32))
            }
            fn visit_unit<E>(self) -> Result<Value, E> {
                Ok(Value(f32::NAN))
            }
        }
        d.deserialize_any(V)
    }
}

/// Reads `body` (a whole response body, decompressed) into its items.
///
/// # Errors
/// `serde_json`'s error, unchanged, for a body that is not JSON, is cut
/// short, or has no `data` array of items each with an integer `index` and
/// an `embedding` array of numbers or nulls: the caller reads its category,
/// line and column, never its message, which can quote the body.
pub fn decode(body: &[u8]) -> Result<Response, serde_json::Error> {
    serde_json::from_slice(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_reads_into_its_items_in_the_order_written_with_null_as_nan() {
        let r = decode(br#"{"object":"list","data":[{"index":1,"embedding":[0.5,-2,3,null]},{"index":0,"embedding":[]}],"model":"m"}"#)
            .unwrap();
        assert_eq!(r.data.len(), 2);
        assert_eq!(r.data[0].index, 1);
        let v: Vec<f32> = r.data[0].embedding.iter().map(|v| v.0).collect();
        assert_eq!(&v[..3], &[0.5, -2.0, 3.0]);
        assert!(v[3].is_nan());
        assert!(r.data[1].embedding.is_empty());
    }

    #[test]
    fn a_value_past_f32_becomes_infinite_and_a_string_is_refused() {
        let r = decode(br#"{"data":[{"index":0,"embedding":[1e300]}]}"#).unwrap();
        assert!(r.data[0].embedding[0].0.is_infinite());
        let e = decode(br#"{"data":[{"index":0,"embedding":["1"]}]}"#).unwrap_err();
        assert_eq!(e.classify(), serde_json::error::Category::Data);
        let e = decode(br#"{"data":[{"index":0,"embedding":[1"#).unwrap_err();
        assert_eq!(e.classify(), serde_json::error::Category::Eof);
    }
}

//! S6 on the fake: `POST /s6/aggregate` decoded, refused over 64 cells or none, answered from the model's cells, and bent by the S6 fault knobs (§6.1 S6, §8.7, this project's wire).
//!
//! A child of `server`, sharing its answer helpers. The model decides the
//! answer ([`crate::fake::Model::aggregate`]); this module checks the
//! request, applies `forced_s6` and `malformed_s6`, and records the call's
//! cells and result type (never a value, a display or a tab name).

use axum::response::Response;
use bytes::Bytes;

use super::{FakeSibling, S6_CELLS_PER_CALL_MAX, TAB_NAME_BYTES_MAX, error, ok};
use crate::fake::faults::{Faults, ForcedS6, MalformedS6};
use crate::fake::trace::{CallDetail, TracedCell};
use crate::fake::wire::{
    ErrorCode, S6Request, S6Response, S6Result, SUBJECT_VALUE_BYTES_MAX, is_token, to_compact,
};

impl FakeSibling {
    pub(super) fn s6(
        &self,
        body: &Bytes,
        faults: &Faults,
    ) -> (Response, CallDetail, Vec<&'static str>) {
        let detail = |request: Option<&S6Request>, label: Option<String>, result: Option<&str>| {
            CallDetail::S6 {
                subject_kind: request.map(|r| r.subject.kind.as_str().to_owned()),
                subject: label,
                function: request.map(|r| r.function.as_str().to_owned()),
                cells: request
                    .map(|r| {
                        r.cells
                            .iter()
                            .map(|c| TracedCell {
                                sheet: c.sheet.clone(),
                                row: c.row,
                                col: c.col,
                                revision: c.revision.clone(),
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                result: result.map(str::to_owned),
            }
        };
        let Ok(request) = serde_json::from_slice::<S6Request>(body) else {
            return (
                error(400, ErrorCode::BadRequest),
                detail(None, None, None),
                vec![],
            );
        };
        let refused = |code| (error(400, code), detail(Some(&request), None, None), vec![]);
        if request.cells.len() > S6_CELLS_PER_CALL_MAX {
            return refused(ErrorCode::TooManyCells);
        }
        if request.cells.is_empty() {
            return refused(ErrorCode::NoCells);
        }
        let value_len = request.subject.value.len();
        if !(1..=SUBJECT_VALUE_BYTES_MAX).contains(&value_len)
            || request.cells.iter().any(|c| {
                !is_token(&c.sheet)
                    || !is_token(&c.revision)
                    || !(1..=TAB_NAME_BYTES_MAX).contains(&c.tab.len())
                    || c.row == 0
                    || c.col == 0
            })
        {
            return refused(ErrorCode::BadRequest);
        }
        let (label, mut result) = self.0.model.with(|m| {
            m.aggregate(
                self.0.keys_on,
                request.subject.kind,
                &request.subject.value,
                request.function,
                &request.cells,
            )
        });
        let mut extra = vec![];
        if let (Some(forced), S6Result::Value { .. }, Some(first)) =
            (faults.forced_s6, &result, request.cells.first())
        {
            let cell = first.cell();
            result = match forced {
                ForcedS6::Stale => S6Result::Stale { cell },
                ForcedS6::NonNumeric => S6Result::NonNumeric { cell },
            };
            extra.push("forced_s6");
        }
        let detail = detail(Some(&request), Some(label), Some(result.type_str()));
        let answer = S6Response {
            subject_kind: self.0.keys_on,
            result,
        };
        let response = match faults.malformed_s6 {
            None => ok(to_compact(&answer)),
            Some(malformed) => {
                extra.push("malformed_s6");
                malformed_s6(malformed, &answer)
            }
        };
        (response, detail, extra)
    }
}

fn malformed_s6(malformed: MalformedS6, answer: &S6Response) -> Response {
    let whole = || String::from_utf8(to_compact(answer)).expect("rendered JSON is UTF-8");
    let body = match malformed {
        MalformedS6::NotJson => "<html>ok</html>".to_owned(),
        MalformedS6::Empty => String::new(),
        MalformedS6::Truncated => {
            let mut w = whole().into_bytes();
            w.truncate(w.len() / 2);
            return ok(w);
        }
        MalformedS6::TrailingBytes => format!("{}{{}}", whole()),
        MalformedS6::UnknownType => whole().replacen(
            &format!(r#""type":"{}""#, answer.result.type_str()),
            r#""type":"PERHAPS""#,
            1,
        ),
        MalformedS6::KindMismatch => String::from_utf8(to_compact(&S6Response {
            subject_kind: answer.subject_kind.other(),
            result: answer.result.clone(),
        }))
        .expect("rendered JSON is UTF-8"),
        MalformedS6::ValueAsNumber => match &answer.result {
            S6Result::Value { value, .. } => whole().replacen(
                &format!(r#""value":"{value}""#),
                &format!(r#""value":{value}"#),
                1,
            ),
            _ => whole(),
        },
        MalformedS6::ExtraField => {
            let mut w = whole();
            // `…}}` → `…,"formula":"=SUM()"}}`: one field beyond the result's schema.
            w.truncate(w.len().saturating_sub(2));
            format!(r#"{w},"formula":"=SUM()"}}}}"#)
        }
        MalformedS6::Non2xx(code) => return error(code, ErrorCode::Unavailable),
    };
    ok(body.into_bytes())
}

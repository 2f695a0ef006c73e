//! Spreadsheets in the fake's model: adding a sheet, changing its cells with or without a new revision (the design card's "reformat cells" fault), and S6 over the custody intersection and the grants join exactly as S2 (§6.1 S6, §8.7, §4.1).
//!
//! A child of `model`, so that S6 asks the very predicate S2 asks: an item
//! is readable by a subject iff it is team-visible AND the grants join
//! admits them.

use crate::fake::sheet::{self, Content, Sheet, SheetError};
use crate::fake::wire::{MediaType, S6Cell, S6Fn, S6Result, SubjectKind};

use super::{Asker, Item, Model, ModelError, Revision, Rung};

/// Whether a sheet change makes a new revision or rewrites the current one
/// in place (a sibling that reformats without bumping the revision: the
/// harder half of the design card's fault, §8.7's re-certification).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revise {
    /// A new revision (S1 row, S2 and S6 answer STALE for the old one).
    New,
    /// The current revision changes under its own token: nothing on S1.
    InPlace,
}

impl Model {
    /// Adds a spreadsheet at its first revision (`r1`), media type
    /// [`MediaType::Sheet`], its body the cells' S3 rendering, titled as
    /// the sheet. Returns the revision.
    ///
    /// # Errors
    /// [`ModelError::DuplicateItem`] if `item_id` exists.
    pub fn add_sheet(
        &mut self,
        item_id: &str,
        rung: Rung,
        sheet: Sheet,
    ) -> Result<String, ModelError> {
        let revision = self.add_item(item_id, rung, &sheet.title, &sheet.body_json())?;
        let item = self
            .state
            .items
            .get_mut(item_id)
            .ok_or(ModelError::UnknownItem)?;
        if let Some(current) = item.log.last_mut() {
            current.media_type = MediaType::Sheet;
            current.sheet = Some(sheet);
        }
        Ok(revision)
    }

    /// Changes a sheet's cells with `change`, at a new revision or in place
    /// (see [`Revise`]); returns the revision the sheet is at afterwards.
    ///
    /// # Errors
    /// [`ModelError::UnknownItem`], [`ModelError::NotASheet`], or
    /// [`ModelError::Sheet`] when `change` refuses (nothing is changed then).
    pub fn change_sheet(
        &mut self,
        item_id: &str,
        revise: Revise,
        change: impl FnOnce(&mut Sheet) -> Result<(), SheetError>,
    ) -> Result<String, ModelError> {
        let item = self
            .state
            .items
            .get(item_id)
            .ok_or(ModelError::UnknownItem)?;
        let mut sheet = item.current().sheet.clone().ok_or(ModelError::NotASheet)?;
        change(&mut sheet)?;
        match revise {
            Revise::New => self.mutate(item_id, |item| {
                let revision = item.mint_revision();
                let title = item.current().title.clone();
                item.log.push(Revision {
                    revision,
                    title,
                    body: sheet.body_json(),
                    media_type: MediaType::Sheet,
                    sheet: Some(sheet),
                });
            }),
            Revise::InPlace => {
                let item = self
                    .state
                    .items
                    .get_mut(item_id)
                    .ok_or(ModelError::UnknownItem)?;
                let current = item.log.last_mut().ok_or(ModelError::UnknownItem)?;
                current.body = sheet.body_json();
                current.sheet = Some(sheet);
                Ok(current.revision.clone())
            }
        }
    }

    /// Reformats one cell: its format code becomes `format_code` (`None`:
    /// General). See [`Model::change_sheet`].
    ///
    /// # Errors
    /// As [`Model::change_sheet`].
    pub fn reformat_cell(
        &mut self,
        item_id: &str,
        tab: &str,
        (row, col): (u32, u32),
        format_code: Option<&str>,
        revise: Revise,
    ) -> Result<String, ModelError> {
        self.change_sheet(item_id, revise, |s| {
            s.tab_mut(tab)?.cell_mut(row, col)?.format_code = format_code.map(str::to_owned);
            Ok(())
        })
    }

    /// Reformats a column: every non-text cell of `col` takes `format_code`.
    /// See [`Model::change_sheet`].
    ///
    /// # Errors
    /// As [`Model::change_sheet`]; [`SheetError::OutOfGrid`] when no cell
    /// of the column changed.
    pub fn reformat_column(
        &mut self,
        item_id: &str,
        tab: &str,
        col: u32,
        format_code: Option<&str>,
        revise: Revise,
    ) -> Result<String, ModelError> {
        self.change_sheet(item_id, revise, |s| {
            if s.tab_mut(tab)?.format_column(col, format_code) == 0 {
                return Err(SheetError::OutOfGrid { row: 1, col });
            }
            Ok(())
        })
    }

    /// Sets one cell's value from a decimal string (`""` empties it, any
    /// other non-decimal makes it text), keeping its format code, at a new
    /// revision. See [`Model::change_sheet`].
    ///
    /// # Errors
    /// As [`Model::change_sheet`].
    pub fn set_cell(
        &mut self,
        item_id: &str,
        tab: &str,
        (row, col): (u32, u32),
        value: &str,
    ) -> Result<String, ModelError> {
        self.change_sheet(item_id, Revise::New, |s| {
            let cell = s.tab_mut(tab)?.cell_mut(row, col)?;
            cell.content = if value.is_empty() {
                Content::Empty
            } else {
                sheet::parse_decimal(value)
                    .map_or_else(|| Content::Text(value.to_owned()), Content::Number)
            };
            Ok(())
        })
    }

    /// Adds §8.7's worked example ([`sheet::worked_example`]) as three team
    /// sheets, `sh-fy2024` … `sh-fy2026`. Returns their ids.
    ///
    /// # Errors
    /// [`ModelError::DuplicateItem`] if one exists.
    pub fn add_worked_example(&mut self) -> Result<Vec<String>, ModelError> {
        let mut ids = Vec::new();
        for (id, sheet) in sheet::worked_example() {
            self.add_sheet(&id, Rung::Team, sheet)?;
            ids.push(id);
        }
        Ok(ids)
    }

    /// S6 (§6.1, this project's wire) for one subject, and the asker's trace
    /// label as [`Model::check`] gives it. In order: a subject of the kind
    /// this sibling does not key on → `UNKNOWN`; any cell whose sheet the
    /// subject may not read now (custody ∩ grants join, exactly as S2's
    /// `VISIBLE`; no row at all included) → `NOT_VISIBLE`, one answer
    /// whichever cell; the first cell whose sheet is not at its asked
    /// revision → `STALE(cell)`; the first cell that is text, empty, off the
    /// grid or not in a sheet → `NON_NUMERIC(cell)`; otherwise the value,
    /// evaluated over the current cells (never cached).
    #[must_use]
    pub fn aggregate(
        &self,
        keys_on: SubjectKind,
        kind: SubjectKind,
        value: &str,
        function: S6Fn,
        cells: &[S6Cell],
    ) -> (String, S6Result) {
        if kind != keys_on {
            return ("not-keyed".to_owned(), S6Result::Unknown);
        }
        let asker = self.resolve(kind, value);
        let label = match &asker {
            Asker::Known(p) => p.label.clone(),
            Asker::Stranger => "stranger".to_owned(),
        };
        let readable = |cell: &S6Cell| -> Option<&Item> {
            self.state
                .items
                .get(&cell.sheet)
                .filter(|item| item.team_visible() && Self::grants_join(item, &asker))
        };
        if cells.iter().any(|c| readable(c).is_none()) {
            return (label, S6Result::NotVisible);
        }
        if let Some(stale) = cells
            .iter()
            .find(|c| readable(c).is_some_and(|item| item.current().revision != c.revision))
        {
            return (label, S6Result::Stale { cell: stale.cell() });
        }
        let mut operands = Vec::with_capacity(cells.len());
        for c in cells {
            let found = readable(c)
                .and_then(|item| item.current().sheet.as_ref())
                .and_then(|s| s.cell(&c.tab, c.row, c.col));
            match found.and_then(|cell| cell.value().map(|v| (v, cell.format_code.as_deref()))) {
                Some(operand) => operands.push(operand),
                None => return (label, S6Result::NonNumeric { cell: c.cell() }),
            }
        }
        (label, sheet::aggregate(function, &operands))
    }
}

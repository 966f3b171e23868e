//! The 12-column grid of a board: positions as clients send them (checked with exact field
//! paths), overlaps, and the first free slot for a pin placed without coordinates.

use schemars::Schema;
use serde_json::{json, Value};

use crate::{
    error::{Error, Result},
    store::{Placement, Position},
    wire::body::non_null,
};

/// Columns of every board.
pub const COLUMNS: i64 = 12;
/// Lowest row a pin may start on (rows are unbounded in principle; this keeps pages sane).
pub const MAX_Y: i64 = 999;
/// Tallest pin, in rows.
pub const MAX_H: i64 = 100;
/// Size of a pin placed without `w` and `h`.
pub const DEFAULT_W: i64 = 3;
pub const DEFAULT_H: i64 = 2;
/// Most pins on one board (a board read returns them all, with their records).
pub const MAX_PLACEMENTS: usize = 200;

/// A `position` as sent: any of `x`, `y`, `w`, `h`, each already range-checked. A pin
/// must also fit the grid: `x + w <= 12` (else 400), and not overlap a placed pin (else
/// 409).
#[derive(Debug, Clone, Copy, Default, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PositionInput {
    #[schemars(range(min = 0, max = COLUMNS - 1), transform = non_null)]
    x: Option<i64>,
    #[schemars(range(min = 0, max = MAX_Y), transform = non_null)]
    y: Option<i64>,
    #[schemars(range(min = 1, max = COLUMNS), transform = non_null)]
    w: Option<i64>,
    #[schemars(range(min = 1, max = MAX_H), transform = non_null)]
    h: Option<i64>,
}

/// `x + w <= 12` as JSON Schema, for each `x`: a `w` that is sent fits beside it. What a
/// `w` that is not sent stands for is the caller's to add ([`placed_in_the_grid`]); on a
/// move it is the stored one, which no schema can see (400 at `position.x`).
fn width_rule(schema: &mut Schema, default_w: Option<i64>) {
    let rules: Vec<Value> = (0..COLUMNS)
        .map(|x| {
            let mut then = json!({ "properties": { "w": { "maximum": COLUMNS - x } } });
            if default_w.is_some_and(|w| x + w > COLUMNS) {
                then["required"] = json!(["w"]);
            }
            json!({ "if": { "properties": { "x": { "const": x } }, "required": ["x"] }, "then": then })
        })
        .collect();
    schema.insert("allOf".into(), rules.into());
}

/// The schema rules of a new placement's `position`: `x` and `y` come together, and
/// `x + w <= 12` where a `w` not sent is [`DEFAULT_W`].
pub fn placed_in_the_grid(schema: &mut Schema) {
    schema.insert(
        "dependentRequired".into(),
        json!({ "x": ["y"], "y": ["x"] }),
    );
    width_rule(schema, Some(DEFAULT_W));
}

/// The schema rules of a move's `position`: at least one coordinate, and `x + w <= 12`
/// when both are sent.
pub fn moved_in_the_grid(schema: &mut Schema) {
    schema.insert("minProperties".into(), 1.into());
    width_rule(schema, None);
}

fn coordinate(value: &Value, field: &str, min: i64, max: i64) -> Result<i64> {
    value
        .as_i64()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| Error::validation(field, format!("an integer from {min} to {max}")))
}

impl PositionInput {
    /// Parses the object at `field` (`position`): integers only, no other keys.
    pub fn parse(value: &Value, field: &str) -> Result<Self> {
        let object = value
            .as_object()
            .ok_or_else(|| Error::validation(field, "an object {x, y, w, h} of integers"))?;
        let mut input = PositionInput::default();
        for (key, value) in object {
            let path = format!("{field}.{key}");
            let (slot, min, max) = match key.as_str() {
                "x" => (&mut input.x, 0, COLUMNS - 1),
                "y" => (&mut input.y, 0, MAX_Y),
                "w" => (&mut input.w, 1, COLUMNS),
                "h" => (&mut input.h, 1, MAX_H),
                _ => return Err(Error::validation(path, "no such key (only x, y, w and h)")),
            };
            *slot = Some(coordinate(value, &path, min, max)?);
        }
        Ok(input)
    }

    fn is_empty(&self) -> bool {
        self.x.is_none() && self.y.is_none() && self.w.is_none() && self.h.is_none()
    }
}

/// Refuses a rectangle that leaves the grid on the right, naming the field that was sent.
fn check_width(at: Position, input: &PositionInput, field: &str) -> Result<()> {
    if at.x + at.w <= COLUMNS {
        return Ok(());
    }
    let (name, expected) = if input.w.is_some() {
        (
            "w",
            format!("an integer from 1 to {} (x + w <= 12)", COLUMNS - at.x),
        )
    } else {
        (
            "x",
            format!("an integer from 0 to {} (x + w <= 12)", COLUMNS - at.w),
        )
    };
    Err(Error::validation(format!("{field}.{name}"), expected))
}

fn overlaps(a: Position, b: Position) -> bool {
    a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h
}

/// 409 when `at` overlaps any of `others`.
fn check_free(at: Position, others: &[Placement]) -> Result<()> {
    match others.iter().find(|p| overlaps(at, p.position)) {
        None => Ok(()),
        Some(p) => {
            let q = p.position;
            Err(Error::Conflict(format!(
                "position overlaps pin {} at x={}, y={}, w={}, h={}",
                p.pin_id, q.x, q.y, q.w, q.h
            )))
        }
    }
}

/// The first slot of size `w` x `h` that overlaps nothing, scanning rows top to bottom and,
/// in each row, columns left to right.
fn first_free(w: i64, h: i64, others: &[Placement]) -> Option<Position> {
    let bottom = others
        .iter()
        .map(|p| p.position.y + p.position.h)
        .max()
        .unwrap_or(0);
    (0..=bottom.min(MAX_Y))
        .flat_map(|y| (0..=COLUMNS - w).map(move |x| Position { x, y, w, h }))
        .find(|at| others.iter().all(|p| !overlaps(*at, p.position)))
}

/// Where a new placement asks to go: a full position, or only a size (or nothing) for the
/// first free slot.
#[derive(Debug, Clone, Copy)]
pub struct Wanted {
    at: Option<(i64, i64)>,
    w: i64,
    h: i64,
}

impl Wanted {
    /// Checks a new placement's position (`None`: first free slot, default size).
    pub fn new(input: Option<PositionInput>, field: &str) -> Result<Self> {
        let input = input.unwrap_or_default();
        let at = match (input.x, input.y) {
            (Some(x), Some(y)) => Some((x, y)),
            (None, None) => None,
            (Some(_), None) => {
                return Err(Error::validation(
                    format!("{field}.y"),
                    "an integer from 0 to 999 (x and y come together, or neither for the first free slot)",
                ))
            }
            (None, Some(_)) => {
                return Err(Error::validation(
                    format!("{field}.x"),
                    "an integer from 0 to 11 (x and y come together, or neither for the first free slot)",
                ))
            }
        };
        let wanted = Wanted {
            at,
            w: input.w.unwrap_or(DEFAULT_W),
            h: input.h.unwrap_or(DEFAULT_H),
        };
        let (x, y) = at.unwrap_or((0, 0));
        let probe = Position {
            x,
            y,
            w: wanted.w,
            h: wanted.h,
        };
        check_width(probe, &input, field)?;
        Ok(wanted)
    }

    /// Runs inside the store's transaction, given every other placement of the board.
    pub fn place(&self, others: &[Placement]) -> Result<Position> {
        if others.len() >= MAX_PLACEMENTS {
            return Err(Error::Conflict(format!(
                "the pinboard is full ({MAX_PLACEMENTS} pins)"
            )));
        }
        match self.at {
            Some((x, y)) => {
                let at = Position {
                    x,
                    y,
                    w: self.w,
                    h: self.h,
                };
                check_free(at, others)?;
                Ok(at)
            }
            None => first_free(self.w, self.h, others)
                .ok_or_else(|| Error::Conflict(format!("no free slot left above row {MAX_Y}"))),
        }
    }
}

/// A move or resize: the sent coordinates over the current ones.
#[derive(Debug, Clone, Copy)]
pub struct Move {
    input: PositionInput,
}

impl Move {
    /// An empty `position` changes nothing and is refused.
    pub fn new(input: PositionInput, field: &str) -> Result<Self> {
        if input.is_empty() {
            return Err(Error::validation(field, "at least one of x, y, w and h"));
        }
        Ok(Move { input })
    }

    /// Runs inside the store's transaction with the pin's current position.
    pub fn place(&self, current: Position, others: &[Placement], field: &str) -> Result<Position> {
        let i = self.input;
        let at = Position {
            x: i.x.unwrap_or(current.x),
            y: i.y.unwrap_or(current.y),
            w: i.w.unwrap_or(current.w),
            h: i.h.unwrap_or(current.h),
        };
        check_width(at, &i, field)?;
        check_free(at, others)?;
        Ok(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn placed(x: i64, y: i64, w: i64, h: i64) -> Placement {
        Placement {
            pin_id: format!("p-{x}-{y}"),
            position: Position { x, y, w, h },
        }
    }

    #[test]
    fn auto_placement_fills_a_row_then_goes_below() {
        let mut board = Vec::new();
        for expected_x in [0, 3, 6, 9] {
            let at = Wanted::new(None, "position")
                .unwrap()
                .place(&board)
                .unwrap();
            assert_eq!((at.x, at.y), (expected_x, 0));
            board.push(placed(at.x, at.y, at.w, at.h));
        }
        let at = Wanted::new(None, "position")
            .unwrap()
            .place(&board)
            .unwrap();
        assert_eq!((at.x, at.y, at.w, at.h), (0, 2, 3, 2));
    }

    #[test]
    fn edges_and_field_paths() {
        let ok = PositionInput::parse(&json!({"x": 9, "y": 0, "w": 3, "h": 1}), "position");
        assert!(Wanted::new(ok.ok(), "position").is_ok());
        let wide = PositionInput::parse(&json!({"x": 10, "y": 0, "w": 3, "h": 1}), "position");
        let err = Wanted::new(wide.ok(), "position").unwrap_err();
        assert!(matches!(err, Error::Validation { ref field, .. } if field == "position.w"));
        for bad in [json!(-1), json!(1.5), json!("1"), json!(null)] {
            let err = PositionInput::parse(&json!({"x": bad}), "position").unwrap_err();
            assert!(matches!(err, Error::Validation { ref field, .. } if field == "position.x"));
        }
    }
}

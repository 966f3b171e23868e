//! Numbers written for reading, the one place every chart, table and figure formats them:
//! thousands separators, no float noise (`0.1 + 0.2` is `0.3`), large values compacted
//! (`1.2M`) where the full figure would not fit, and axis ticks at round values.

/// Most ticks on any axis (CONTRACT.md 17).
pub const MAX_TICKS: usize = 8;

/// A number for display: thousands separators, at most 2 decimals from 1,000 up, 4 from 1
/// up, 3 significant digits below 1 (but at least 4 decimals), trailing zeros dropped.
/// Empty for NaN and infinities, which have nothing to show.
pub fn readable(value: f64) -> String {
    if !value.is_finite() {
        return String::new();
    }
    let magnitude = value.abs();
    let decimals = if magnitude >= 1000.0 {
        2
    } else if magnitude >= 1.0 || magnitude == 0.0 {
        4
    } else {
        // 0.000123456 has its first digit at decimal 4: keep three.
        let first = (-magnitude.log10()).ceil() as usize;
        (first + 2).clamp(4, 15)
    };
    fixed(value, decimals, true)
}

/// `value` as [`readable`] when that takes at most `max_chars` characters, else compacted
/// to three significant digits (`12,345,678` in 6 characters is `12.3M`).
pub fn fit(value: f64, max_chars: usize) -> String {
    let full = readable(value);
    if full.chars().count() <= max_chars || value.abs() < 1000.0 {
        return full;
    }
    let (unit, suffix) = unit_of(value.abs());
    let scaled = value / unit;
    let decimals = 2usize.saturating_sub(scaled.abs().log10().floor().max(0.0) as usize);
    format!("{}{suffix}", fixed(scaled, decimals, true))
}

/// A plain number for attributes and machines: no separators, no float noise.
pub fn plain(value: f64) -> String {
    if !value.is_finite() {
        return String::new();
    }
    fixed(value, 6, false)
}

/// The largest of thousand, million, billion, trillion not above `magnitude` (1 below a
/// thousand), with its suffix.
fn unit_of(magnitude: f64) -> (f64, &'static str) {
    [(1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|(unit, _)| magnitude >= *unit)
        .unwrap_or((1.0, ""))
}

/// `value` rounded to `decimals`, trailing zeros (and a lone point) dropped, `-0` as `0`,
/// with the integer part grouped by thousands when `grouped`.
fn fixed(value: f64, decimals: usize, grouped: bool) -> String {
    let text = format!("{value:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        &text
    };
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) if rest.bytes().any(|b| b.is_ascii_digit() && b != b'0') => ("-", rest),
        Some(_) => ("", "0"),
        None => ("", text),
    };
    if !grouped {
        return format!("{sign}{digits}");
    }
    let (int, frac) = digits.split_once('.').map_or((digits, ""), |(i, f)| (i, f));
    let mut out = String::with_capacity(text.len() + int.len() / 3 + 1);
    out.push_str(sign);
    for (i, digit) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    if !frac.is_empty() {
        out.push('.');
        out.push_str(frac);
    }
    out
}

/// Round values along an axis: `count` ticks from `first`, `step` apart, where `step` is 1,
/// 2, 2.5 or 5 times a power of ten; they cover the data (the first at or below its
/// minimum, the last at or above its maximum).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ticks {
    /// The first tick, in steps (the first value is `first * step`): whole numbers of
    /// steps keep every tick exact up to the step's decimals.
    first: i64,
    pub count: usize,
    pub step: f64,
    /// Decimals the step needs (0.25 needs 2), so labels show no float noise.
    decimals: usize,
}

impl Ticks {
    /// The fewest round ticks, at most `max_count` (3 to [`MAX_TICKS`]: a range across zero needs three), covering
    /// `min..=max` with the smallest step that fits. A single value (or all values equal)
    /// gets a range around it; a range that isn't finite is taken as 0 to 1.
    pub fn new(min: f64, max: f64, max_count: usize) -> Ticks {
        let max_count = max_count.clamp(3, MAX_TICKS);
        let (mut min, mut max) = if min.is_finite() && max.is_finite() && min <= max {
            (min, max)
        } else {
            (0.0, 1.0)
        };
        if max - min <= max.abs().max(min.abs()) * 1e-12 {
            let pad = if min == 0.0 { 1.0 } else { min.abs() / 10.0 };
            (min, max) = (min - pad, max + pad);
        }
        let raw = (max - min) / (max_count - 1) as f64;
        let exponent = raw.log10().floor() as i32;
        for power in exponent - 1..=exponent + 2 {
            for (mantissa, extra) in [(1.0, 0), (2.0, 0), (2.5, 1), (5.0, 0)] {
                let step = mantissa * 10f64.powi(power);
                // A whisker of tolerance: 0.3 / 0.1 is 2.9999999999999996.
                let first = (min / step + 1e-9).floor();
                let last = (max / step - 1e-9).ceil();
                let count = (last - first) as usize + 1;
                if count <= max_count && first.abs() < 1e15 {
                    let decimals = (extra - power).max(0) as usize;
                    return Ticks {
                        first: first as i64,
                        count,
                        step,
                        decimals,
                    };
                }
            }
        }
        // Unreachable for finite input (the last candidates are coarser than the range);
        // two ticks at the ends are still a truthful axis.
        Ticks {
            first: 0,
            count: 2,
            step: max - min,
            decimals: 15,
        }
    }

    /// The tick values, lowest first.
    pub fn values(&self) -> impl Iterator<Item = f64> + '_ {
        (0..self.count).map(|i| (self.first + i as i64) as f64 * self.step)
    }

    /// The lowest tick: where the axis starts.
    pub fn low(&self) -> f64 {
        self.first as f64 * self.step
    }

    /// The highest tick: where the axis ends.
    pub fn high(&self) -> f64 {
        (self.first + self.count as i64 - 1) as f64 * self.step
    }

    /// The label of each tick, with the step's decimals and thousands separators; every
    /// label compacted (`250k`, `1.25M`) when the longest would take more than `max_chars`.
    pub fn labels(&self, max_chars: usize) -> Vec<String> {
        let full: Vec<String> = self
            .values()
            .map(|v| fixed(v, self.decimals, true))
            .collect();
        if full.iter().all(|l| l.chars().count() <= max_chars) {
            return full;
        }
        self.values().map(|v| self.compact(v)).collect()
    }

    /// `v` in its own unit (k, M, B, T) with the decimals the step needs in that unit.
    fn compact(&self, v: f64) -> String {
        let (unit, suffix) = unit_of(v.abs());
        let step = self.step / unit;
        let decimals = (0..=3usize)
            .find(|d| {
                let scaled = step * 10f64.powi(*d as i32);
                (scaled - scaled.round()).abs() < 1e-6
            })
            .unwrap_or(3);
        format!("{}{suffix}", fixed(v / unit, decimals, true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(min: f64, max: f64, count: usize) -> Vec<String> {
        Ticks::new(min, max, count).labels(7)
    }

    #[test]
    fn readable_numbers() {
        assert_eq!(readable(0.1 + 0.2), "0.3");
        assert_eq!(readable(1250.0), "1,250");
        assert_eq!(readable(-1234567.891), "-1,234,567.89");
        assert_eq!(readable(72.5), "72.5");
        assert_eq!(readable(3.0), "3");
        assert_eq!(readable(1.0 / 3.0), "0.3333");
        assert_eq!(readable(0.000123456), "0.000123");
        assert_eq!(readable(-0.0), "0");
        assert_eq!(readable(-0.00001), "-0.00001");
        assert_eq!(readable(999.99999), "1,000");
        assert_eq!(readable(f64::NAN), "");
        assert_eq!(readable(1e21), "1,000,000,000,000,000,000,000");
    }

    #[test]
    fn compacted_where_it_would_not_fit() {
        assert_eq!(fit(1250.0, 8), "1,250");
        assert_eq!(fit(1_234_567.0, 8), "1.23M");
        assert_eq!(fit(12_345_678.0, 6), "12.3M");
        assert_eq!(fit(-3_400.0, 4), "-3.4k");
        assert_eq!(fit(987_654_321_000.0, 6), "988B");
        assert_eq!(
            fit(0.000123456, 4),
            "0.000123",
            "small numbers are never compacted"
        );
        assert_eq!(plain(0.1 + 0.2), "0.3");
        assert_eq!(plain(-1234567.0), "-1234567");
    }

    #[test]
    fn ticks_at_round_values_covering_the_data() {
        assert_eq!(
            labels(4.0, 6300.0, 8),
            ["0", "1,000", "2,000", "3,000", "4,000", "5,000", "6,000", "7,000"]
        );
        assert_eq!(
            labels(0.0, 6300.0, 5),
            ["0", "2,000", "4,000", "6,000", "8,000"]
        );
        assert_eq!(labels(0.0, 9.0, 5), ["0", "2.5", "5", "7.5", "10"]);
        assert_eq!(
            labels(-42.0, 17.0, 8),
            ["-50", "-40", "-30", "-20", "-10", "0", "10", "20"]
        );
        assert_eq!(labels(-3.0, -1.0, 8), ["-3", "-2.5", "-2", "-1.5", "-1"]);
        assert_eq!(labels(0.1, 0.3, 8), ["0.1", "0.15", "0.2", "0.25", "0.3"]);
        assert_eq!(
            labels(0.0001, 0.0007, 8),
            ["0.0001", "0.0002", "0.0003", "0.0004", "0.0005", "0.0006", "0.0007"]
        );
    }

    #[test]
    fn every_range_gets_at_most_the_ticks_asked_and_covers_its_data() {
        let ranges = [
            (4.0, 6300.0),
            (-1e9, 3.0),
            (0.0, 1e-7),
            (17.0, 17.000001),
            (-0.5, 0.5),
            (1e14, 1e15),
            (3.0, 1e6),
        ];
        for (min, max) in ranges {
            for count in 3..=MAX_TICKS {
                let ticks = Ticks::new(min, max, count);
                assert!(ticks.count <= count, "{min}..{max} in {count}: {ticks:?}");
                let slack = ticks.step * 1e-6;
                assert!(
                    ticks.low() <= min + slack && ticks.high() >= max - slack,
                    "{min}..{max}: {ticks:?}"
                );
                let mantissa = ticks.step / 10f64.powf(ticks.step.log10().floor());
                assert!(
                    [1.0, 2.0, 2.5, 5.0]
                        .iter()
                        .any(|m| (m - mantissa).abs() < 1e-9),
                    "round step: {ticks:?}"
                );
            }
        }
    }

    #[test]
    fn one_value_and_equal_values_get_a_range_around_them() {
        assert_eq!(labels(0.0, 0.0, 8), ["-1", "-0.5", "0", "0.5", "1"]);
        assert_eq!(
            labels(42.0, 42.0, 8),
            ["36", "38", "40", "42", "44", "46", "48"]
        );
        assert_eq!(labels(-5.0, -5.0, 3), ["-5.5", "-5", "-4.5"]);
        assert_eq!(labels(f64::NAN, 1.0, 3), ["0", "0.5", "1"]);
    }

    #[test]
    fn wide_labels_are_compacted_with_the_step_s_decimals() {
        let ticks = Ticks::new(0.0, 1_600_000.0, 8);
        assert_eq!(ticks.labels(9)[1], "250,000");
        assert_eq!(
            ticks.labels(6),
            ["0", "250k", "500k", "750k", "1M", "1.25M", "1.5M", "1.75M"]
        );
        assert_eq!(Ticks::new(0.0, 6300.0, 8).labels(4)[7], "7k");
    }
}

//! OTEP's `clock` and how much of a clock one move may spend.
//!
//! `clock <att ms>[*] <def ms>[*] [<overtime s> <att periods> <def periods>]`: each side's
//! main time in milliseconds, `*` once main time is spent (the number is then what is left of
//! the current overtime period), then the length of an overtime period in seconds and each
//! side's periods left. OpenTafl 0.4.8 sends all five numbers and ends the line with a space.
//!
//! The budget is the engines' (OTEP's `clock`, HTP's `time_settings fischer`): a thirtieth of
//! the main time plus half an overtime period, so that an engine never loses on time by
//! spending a whole clock on one move, with a margin kept back for the pipes and the host's
//! own bookkeeping.

use crate::rules::Side;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// Time kept back on every move for the pipes and the host's own bookkeeping.
pub const MARGIN: Duration = Duration::from_millis(100);
/// The least time a move is given, whatever the clock says.
pub const LEAST: Duration = Duration::from_millis(10);
/// The most time a move is given, whatever the clock says.
pub const MOST: Duration = Duration::from_secs(60);
/// Main time is spent as if this many moves were still to come.
pub const MOVES_TO_COME: f64 = 30.0;

/// One side's time as a `clock` line gives it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SideClock {
    /// Milliseconds of main time left, or of the current overtime period when `overtime`.
    pub millis: f64,
    /// The host marked the number with `*`: main time is spent.
    pub overtime: bool,
    /// Overtime periods left.
    pub periods: u32,
}

/// A `clock` line's numbers: every one finite and >= 0 once parsed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clock {
    pub attackers: SideClock,
    pub defenders: SideClock,
    /// Length of one overtime period, in seconds (as the line gives it).
    pub period_secs: f64,
}

impl Clock {
    /// `side`'s time.
    pub fn of(&self, side: Side) -> SideClock {
        match side {
            Side::Attackers => self.attackers,
            Side::Defenders => self.defenders,
        }
    }

    /// Time for one move of `side`: a thirtieth of the main time plus half an overtime period
    /// when periods are left, or half of what is left of the current period once in overtime;
    /// less [`MARGIN`], within [`LEAST`]..=[`MOST`].
    pub fn budget(&self, side: Side) -> Duration {
        let c = self.of(side);
        let period_millis = self.period_secs * 1000.0;
        let millis = if c.overtime { c.millis * 0.5 } else { c.millis / MOVES_TO_COME + if c.periods > 0 { period_millis * 0.5 } else { 0.0 } };
        // Parsing admits only finite numbers >= 0, so `millis` is never NaN or negative; it
        // may be huge (`clock 1e300 ...`), so it is capped before it becomes a `Duration`.
        let secs = (millis / 1000.0).min(MOST.as_secs_f64() + MARGIN.as_secs_f64());
        Duration::from_secs_f64(secs).saturating_sub(MARGIN).clamp(LEAST, MOST)
    }
}

/// Time for one move on a Fischer clock (`left` now, `increment` added after the move), the
/// same share [`Clock::budget`] gives: the increment counts as one overtime period (HTP's
/// `time_settings fischer`).
pub fn fischer_budget(left: Duration, increment: Duration) -> Duration {
    let side = SideClock { millis: left.as_secs_f64() * 1000.0, overtime: false, periods: u32::from(!increment.is_zero()) };
    Clock { attackers: side, defenders: side, period_secs: increment.as_secs_f64() }.budget(Side::Attackers)
}

impl FromStr for Clock {
    type Err = String;

    /// Parses a `clock` line's arguments: `<att ms>[*] <def ms>[*] [<overtime s> <att
    /// periods> <def periods>]` (two numbers: no overtime). The error is one line.
    fn from_str(text: &str) -> Result<Clock, String> {
        let usage = "expected: attacker-ms[*] defender-ms[*] [overtime-seconds attacker-periods defender-periods]";
        let toks: Vec<&str> = text.split_whitespace().collect();
        if !(toks.len() == 2 || toks.len() == 5) {
            return Err(format!("clock {text:?}: {usage}"));
        }
        let num = |t: &str| -> Result<f64, String> {
            match t.parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
                _ => Err(format!("clock {text:?}: {t:?} is not a finite number >= 0; {usage}")),
            }
        };
        let side = |t: &str| -> Result<(f64, bool), String> {
            match t.strip_suffix('*') {
                Some(n) => Ok((num(n)?, true)),
                None => Ok((num(t)?, false)),
            }
        };
        let (att, att_ot) = side(toks[0])?;
        let (def, def_ot) = side(toks[1])?;
        let (period, att_p, def_p) = if toks.len() == 5 { (num(toks[2])?, num(toks[3])?, num(toks[4])?) } else { (0.0, 0.0, 0.0) };
        Ok(Clock {
            attackers: SideClock { millis: att, overtime: att_ot, periods: att_p.min(u32::MAX as f64) as u32 },
            defenders: SideClock { millis: def, overtime: def_ot, periods: def_p.min(u32::MAX as f64) as u32 },
            period_secs: period,
        })
    }
}

/// The five numbers, as OTEP writes them (no trailing space): `9487 10000* 5 1 0`.
impl fmt::Display for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let star = |c: &SideClock| if c.overtime { "*" } else { "" };
        let (a, d) = (&self.attackers, &self.defenders);
        write!(f, "{}{} {}{} {} {} {}", a.millis, star(a), d.millis, star(d), self.period_secs, a.periods, d.periods)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Clock, String> {
        s.parse()
    }

    #[test]
    fn clock_numbers_are_milliseconds_and_overtime_is_starred() {
        let c = parse("9487 10000 5 1 1").unwrap();
        assert_eq!(c.attackers, SideClock { millis: 9487.0, overtime: false, periods: 1 });
        assert_eq!(c.period_secs, 5.0);
        let c = parse("0* 10000 5 0 1").unwrap();
        assert_eq!(c.attackers, SideClock { millis: 0.0, overtime: true, periods: 0 });
        // OpenTafl ends the line with a space.
        assert!(parse("60000 60000 0 0 0 ").is_ok());
        for bad in ["", "1", "1 2 3", "x 2", "1** 2", "-1 2", "nan 2", "1 2 3 4 5 6"] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_clock_formats_to_what_parses_back() {
        for text in ["9487 10000 5 1 1", "0* 10000 5 0 1", "2000* 1500.5* 0.25 3 0", "120000 120000", "1e300 0 0 4294967295 0"] {
            let c = parse(text).unwrap();
            assert_eq!(parse(&c.to_string()).unwrap(), c, "{text} -> {c}");
        }
        // What the OTEP client sends: whole milliseconds, no overtime.
        let side = SideClock { millis: 30000.0, overtime: false, periods: 0 };
        assert_eq!(Clock { attackers: side, defenders: side, period_secs: 0.0 }.to_string(), "30000 30000 0 0 0");
    }

    #[test]
    fn the_budget_is_a_share_of_the_clock() {
        let budget = |s: &str, side| parse(s).unwrap().budget(side);
        // 9.487 s of main time, no overtime: about a thirtieth, not 9487 / 20 seconds.
        let b = budget("9487 60000 0 0 0", Side::Attackers);
        assert!(b > Duration::from_millis(150) && b < Duration::from_millis(400), "{b:?}");
        assert!(budget("9487 60000 0 0 0", Side::Defenders) > b, "each side's own clock");
        // Out of main time with a 5 s period: half the time left in it, less the margin.
        assert_eq!(budget("2000* 10000 5 0 1", Side::Attackers), Duration::from_millis(900));
        // Nothing left: the least time, never zero.
        assert_eq!(budget("0* 10000 5 0 1", Side::Attackers), LEAST);
        assert_eq!(budget("0 0 0 0 0", Side::Defenders), LEAST);
        assert!(budget("3600000000 0 0 0 0", Side::Attackers) <= MOST);
        assert_eq!(budget("1e300 1e300* 1e300 1 1", Side::Attackers), MOST, "huge numbers are capped, not a panic");
        assert_eq!(budget("1e300 1e300* 1e300 1 1", Side::Defenders), MOST);
    }

    #[test]
    fn a_fischer_clock_counts_its_increment_as_one_period() {
        // One minute and no increment: a thirtieth, less the margin.
        assert_eq!(fischer_budget(Duration::from_secs(60), Duration::ZERO), Duration::from_millis(1900));
        // Plus half the increment.
        assert_eq!(fischer_budget(Duration::from_secs(60), Duration::from_secs(2)), Duration::from_millis(2900));
    }
}

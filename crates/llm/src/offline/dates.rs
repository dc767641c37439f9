//! Reading the date a question starts from ("since November 1", "after Oct 15th", "1 November
//! 2026", "2026-11-01", "yesterday", "last week", "in the past 3 days", "two weeks ago") as an
//! ISO date for `since`-like parameters.
//!
//! Its own module because the tokens a date uses must not be read again as something else: the
//! day number is not a result limit and the month name is not an object's name. So it answers
//! with the date *and* the positions of the tokens it used. It knows calendars, not tools.

use chrono::{Datelike, Duration, Months, NaiveDate};

use super::tokens::Token;

/// A date found in a question and the token positions it was read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct DateMention {
    pub date: NaiveDate,
    pub positions: Vec<usize>,
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];
const NUMBER_WORDS: [&str; 12] = [
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve",
];
/// Words before a period that make it "the last N units up to today".
const LOOKING_BACK: &[&str] = &["last", "past", "previous", "recent"];

/// The first date the question names, if any.
pub(super) fn read_date(tokens: &[Token], today: NaiveDate) -> Option<DateMention> {
    (0..tokens.len()).find_map(|position| {
        iso_date(tokens, position)
            .or_else(|| month_and_day(tokens, position, today))
            .or_else(|| day_and_month(tokens, position, today))
            .or_else(|| relative_period(tokens, position, today))
            .or_else(|| named_day(tokens, position, today))
    })
}

/// The month a word names: "November", "nov", "Sept." → 11, 11, 9.
pub(super) fn month_number(word: &str) -> Option<u32> {
    let lower = word.to_lowercase();
    let lower = lower.trim_end_matches('.');
    if lower.len() < 3 {
        return None;
    }
    MONTHS
        .iter()
        .position(|month| *month == lower || (lower.len() <= 4 && month.starts_with(lower)))
        .map(|index| index as u32 + 1)
}

/// A small count written as digits or a word ("3", "three", "a").
pub(super) fn count_word(word: &str) -> Option<u32> {
    let lower = word.to_lowercase();
    if let Ok(number) = lower.parse::<u32>() {
        return Some(number);
    }
    if lower == "a" || lower == "an" {
        return Some(1);
    }
    NUMBER_WORDS
        .iter()
        .position(|name| *name == lower)
        .map(|index| index as u32 + 1)
}

fn text(tokens: &[Token], position: usize) -> Option<String> {
    tokens
        .get(position)
        .filter(|token| !token.quoted)
        .map(|token| token.text.to_lowercase())
}

fn iso_date(tokens: &[Token], position: usize) -> Option<DateMention> {
    let word = text(tokens, position)?;
    let date = NaiveDate::parse_from_str(word.get(..10)?, "%Y-%m-%d").ok()?;
    Some(DateMention {
        date,
        positions: vec![position],
    })
}

/// "1", "1st", "22nd", "10th" → the day of the month.
fn day_number(word: &str) -> Option<u32> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &word[digits.len()..];
    let day: u32 = digits.parse().ok()?;
    (["", "st", "nd", "rd", "th"].contains(&suffix) && (1..=31).contains(&day)).then_some(day)
}

fn year_at(tokens: &[Token], position: usize) -> Option<i32> {
    let year: i32 = text(tokens, position)?.parse().ok()?;
    (1900..=2200).contains(&year).then_some(year)
}

/// A day of a month without a year is the latest one not after today.
fn dated(
    year: Option<i32>,
    month: u32,
    day: u32,
    today: NaiveDate,
    positions: Vec<usize>,
) -> Option<DateMention> {
    let date = match year {
        Some(year) => NaiveDate::from_ymd_opt(year, month, day)?,
        None => {
            let this_year = NaiveDate::from_ymd_opt(today.year(), month, day)?;
            if this_year > today {
                NaiveDate::from_ymd_opt(today.year() - 1, month, day)?
            } else {
                this_year
            }
        }
    };
    Some(DateMention { date, positions })
}

/// "November 1", "Nov 10th, 2026", "since November" (the month's first day).
fn month_and_day(tokens: &[Token], position: usize, today: NaiveDate) -> Option<DateMention> {
    let month = month_number(&text(tokens, position)?)?;
    if let Some(day) = text(tokens, position + 1).and_then(|word| day_number(&word)) {
        let year = year_at(tokens, position + 2);
        let mut positions = vec![position, position + 1];
        positions.extend(year.map(|_| position + 2));
        return dated(year, month, day, today, positions);
    }
    let previous = position
        .checked_sub(1)
        .and_then(|before| text(tokens, before));
    let starts_period = previous
        .as_deref()
        .is_some_and(|word| ["since", "after", "from", "in"].contains(&word));
    // "may" alone is a verb far more often than a month.
    if !starts_period || month == 5 && !tokens[position].text.starts_with('M') {
        return None;
    }
    let year = year_at(tokens, position + 1);
    let mut positions = vec![position];
    positions.extend(year.map(|_| position + 1));
    dated(year, month, 1, today, positions)
}

/// "1 November", "1st of November 2026".
fn day_and_month(tokens: &[Token], position: usize, today: NaiveDate) -> Option<DateMention> {
    let day = day_number(&text(tokens, position)?)?;
    let of = text(tokens, position + 1).is_some_and(|word| word == "of");
    let month_position = position + 1 + usize::from(of);
    let month = month_number(&text(tokens, month_position)?)?;
    let year = year_at(tokens, month_position + 1);
    let mut positions: Vec<usize> = (position..=month_position).collect();
    positions.extend(year.map(|_| month_position + 1));
    dated(year, month, day, today, positions)
}

/// "last week", "past 3 days", "the last two weeks", "3 days ago", "this month".
fn relative_period(tokens: &[Token], position: usize, today: NaiveDate) -> Option<DateMention> {
    let unit = text(tokens, position)?;
    let unit = unit.trim_end_matches('s');
    if !["day", "week", "month", "year"].contains(&unit) {
        return None;
    }
    let before = |offset: usize| {
        position
            .checked_sub(offset)
            .and_then(|index| text(tokens, index))
    };
    let ago = text(tokens, position + 1).is_some_and(|word| word == "ago");
    let (count, first) = match before(1).as_deref().and_then(count_word) {
        Some(count) if before(1).as_deref() != Some("a") || ago => (count, position - 1),
        _ => (1, position),
    };
    let lead = first.checked_sub(1).and_then(|index| text(tokens, index));
    let looking_back = lead
        .as_deref()
        .is_some_and(|word| LOOKING_BACK.contains(&word));
    let mut positions: Vec<usize> = (first..=position).collect();
    let date = if lead.as_deref() == Some("this") && count == 1 {
        match unit {
            "week" => today - Duration::days(today.weekday().num_days_from_monday() as i64),
            "month" => today.with_day(1)?,
            "year" => NaiveDate::from_ymd_opt(today.year(), 1, 1)?,
            _ => today,
        }
    } else if looking_back || ago {
        back_from(today, unit, count)?
    } else {
        return None;
    };
    if let Some(lead_position) = first.checked_sub(1).filter(|_| lead.is_some() && !ago) {
        positions.insert(0, lead_position);
    }
    if ago {
        positions.push(position + 1);
    }
    Some(DateMention { date, positions })
}

fn back_from(today: NaiveDate, unit: &str, count: u32) -> Option<NaiveDate> {
    match unit {
        "day" => Some(today - Duration::days(count as i64)),
        "week" => Some(today - Duration::days(7 * count as i64)),
        "month" => today.checked_sub_months(Months::new(count)),
        _ => today.checked_sub_months(Months::new(12 * count)),
    }
}

/// "yesterday", "today".
fn named_day(tokens: &[Token], position: usize, today: NaiveDate) -> Option<DateMention> {
    let date = match text(tokens, position)?.as_str() {
        "yesterday" => today - Duration::days(1),
        "today" => today,
        _ => return None,
    };
    Some(DateMention {
        date,
        positions: vec![position],
    })
}

#[cfg(test)]
mod tests {
    use super::super::tokens::tokenize;
    use super::*;

    fn date_in(question: &str) -> Option<String> {
        let today = NaiveDate::from_ymd_opt(2026, 11, 25).unwrap();
        read_date(&tokenize(question), today).map(|mention| mention.date.to_string())
    }

    #[test]
    fn reads_dates_in_common_forms() {
        for (question, expected) in [
            ("changes since November 1", "2026-11-01"),
            ("since Nov 10th?", "2026-11-10"),
            ("after 1st of October 2025", "2025-10-01"),
            ("since 15 December", "2025-12-15"),
            ("since 2026-11-01", "2026-11-01"),
            ("anything yesterday", "2026-11-24"),
            ("what changed last week", "2026-11-18"),
            ("in the past 3 days", "2026-11-22"),
            ("in the last two weeks", "2026-11-11"),
            ("changes 10 days ago", "2026-11-15"),
            ("since the last month", "2026-10-25"),
            ("changes this month", "2026-11-01"),
            ("since October", "2026-10-01"),
        ] {
            assert_eq!(date_in(question).as_deref(), Some(expected), "{question}");
        }
    }

    #[test]
    fn ordinary_numbers_and_words_are_not_dates() {
        for question in [
            "show the last 3 changes",
            "may I see the types",
            "list 10 documents",
            "add 3 and 4",
        ] {
            assert_eq!(date_in(question), None, "{question}");
        }
    }

    #[test]
    fn the_positions_cover_the_day_number() {
        let tokens = tokenize("show the schema changes since November 1");
        let today = NaiveDate::from_ymd_opt(2026, 11, 25).unwrap();
        let mention = read_date(&tokens, today).unwrap();
        assert_eq!(mention.positions, vec![5, 6]);
    }
}

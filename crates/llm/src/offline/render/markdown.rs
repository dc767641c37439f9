//! Markdown building blocks for answers: tables with escaped, bounded cells and "… and N
//! more" rows, and inline rendering of JSON scalars.

use serde_json::Value;

const MAX_CELL_CHARS: usize = 90;

/// A Markdown table; rows beyond `max_rows` are summarised in a final line.
pub(crate) fn table(headers: &[&str], rows: &[Vec<String>], max_rows: usize) -> String {
    let mut out = String::new();
    out.push_str(&format!("| {} |\n", headers.join(" | ")));
    out.push_str(&format!(
        "|{}\n",
        headers.iter().map(|_| "---|").collect::<String>()
    ));
    for row in rows.iter().take(max_rows) {
        let cells: Vec<String> = row.iter().map(|cell| escape_cell(cell)).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    if rows.len() > max_rows {
        out.push_str(&format!("\n… and {} more.\n", rows.len() - max_rows));
    }
    out
}

fn escape_cell(cell: &str) -> String {
    let flat = cell.replace(['\n', '\r'], " ").replace('|', "\\|");
    truncate(&flat, MAX_CELL_CHARS)
}

pub(crate) fn truncate(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max_chars - 1).collect();
    cut.push('…');
    cut
}

/// A JSON value as inline text: strings bare, arrays of scalars comma-joined, objects compact.
pub(crate) fn inline(value: &Value) -> String {
    match value {
        Value::Null => "—".to_owned(),
        Value::Bool(true) => "yes".to_owned(),
        Value::Bool(false) => "no".to_owned(),
        Value::Number(number) => number.to_string(),
        Value::String(text) => text.clone(),
        Value::Array(items) if items.iter().all(is_scalar) => {
            items.iter().map(inline).collect::<Vec<_>>().join(", ")
        }
        other => other.to_string(),
    }
}

pub(crate) fn is_scalar(value: &Value) -> bool {
    !matches!(value, Value::Object(_) | Value::Array(_))
}

/// "2026-11-15T14:02:11Z" → "2026-11-15 14:02 UTC"; anything else unchanged.
pub(crate) fn friendly_time(text: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(text) {
        Ok(time) => time
            .with_timezone(&chrono::Utc)
            .format("%Y-%m-%d %H:%M UTC")
            .to_string(),
        Err(_) => text.to_owned(),
    }
}

/// "object_type" → "object type".
pub(crate) fn humanize_key(key: &str) -> String {
    key.replace(['_', '-'], " ")
}

/// "1 project" / "3 projects".
pub(crate) fn count_noun(count: usize, singular: &str) -> String {
    if count == 1 {
        format!("1 {singular}")
    } else if singular.ends_with('y') && !singular.ends_with("ey") {
        format!("{count} {}ies", &singular[..singular.len() - 1])
    } else if singular.ends_with('s') {
        format!("{count} {singular}es")
    } else {
        format!("{count} {singular}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_escape_and_summarise() {
        let rows = vec![
            vec!["a|b".to_owned(), "line\nbreak".to_owned()],
            vec!["c".to_owned(), "d".to_owned()],
            vec!["e".to_owned(), "f".to_owned()],
        ];
        assert_eq!(
            table(&["X", "Y"], &rows, 2),
            "| X | Y |\n|---|---|\n| a\\|b | line break |\n| c | d |\n\n… and 1 more.\n"
        );
    }

    #[test]
    fn small_words() {
        assert_eq!(count_noun(1, "project"), "1 project");
        assert_eq!(count_noun(2, "entry"), "2 entries");
        assert_eq!(count_noun(0, "type"), "0 types");
        assert_eq!(
            friendly_time("2026-11-15T14:02:11Z"),
            "2026-11-15 14:02 UTC"
        );
        assert_eq!(inline(&serde_json::json!(["a", 1])), "a, 1");
    }
}

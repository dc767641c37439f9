//! How `switchboard servers` prints answers: aligned tables and short summaries, or the JSON
//! exactly as the API returned it.

use serde_json::Value;

pub fn print(json: bool, value: &Value, human: fn(&Value) -> String) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(value)?);
    } else {
        print!("{}", human(value));
    }
    Ok(())
}

pub fn text(value: &Value) -> String {
    match value {
        Value::Null => "-".to_owned(),
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Columns padded to the widest cell; the last column is not padded.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|cell| cell.chars().count()).collect();
    for row in rows {
        for (index, cell) in row.iter().enumerate() {
            widths[index] = widths[index].max(cell.chars().count());
        }
    }
    let line = |cells: Vec<String>| -> String {
        let last = cells.len() - 1;
        let mut out = String::new();
        for (index, cell) in cells.into_iter().enumerate() {
            if index == last {
                out.push_str(&cell);
            } else {
                out.push_str(&format!("{cell:<width$}  ", width = widths[index]));
            }
        }
        out.trim_end().to_owned() + "\n"
    };
    let mut out = line(header.iter().map(|cell| (*cell).to_owned()).collect());
    for row in rows {
        out.push_str(&line(row.clone()));
    }
    out
}

fn endpoint(server: &Value) -> String {
    if server["transport"] == "stdio" {
        let mut parts = vec![text(&server["command"])];
        parts.extend(server["args"].as_array().into_iter().flatten().map(text));
        parts.join(" ")
    } else {
        text(&server["url"])
    }
}

pub fn server_table(listed: &Value) -> String {
    let rows: Vec<Vec<String>> = listed["servers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|server| {
            vec![
                text(&server["name"]),
                text(&server["transport"]),
                if server["is_active"] == false {
                    "DISABLED".to_owned()
                } else {
                    text(&server["status"])
                },
                text(&server["sync_status"]),
                text(&server["tool_count"]),
                endpoint(server),
            ]
        })
        .collect();
    if rows.is_empty() {
        return "no servers\n".to_owned();
    }
    table(
        &["NAME", "TRANSPORT", "STATUS", "SYNC", "TOOLS", "ENDPOINT"],
        &rows,
    )
}

pub fn server_details(server: &Value) -> String {
    let mut out = String::new();
    let fields = [
        ("name", "name"),
        ("id", "id"),
        ("transport", "transport"),
        ("status", "status"),
        ("sync", "sync_status"),
        ("tools", "tool_count"),
        ("protocol", "protocol_version"),
        ("scope", "session_scope"),
        ("timeout_ms", "timeout_ms"),
        ("init_ms", "init_timeout_ms"),
        ("active", "is_active"),
        ("version", "version"),
        ("last synced", "last_synced_at"),
        ("last error", "last_error"),
    ];
    out.push_str(&format!("{:<12} {}\n", "endpoint", endpoint(server)));
    for (label, key) in fields {
        out.push_str(&format!("{label:<12} {}\n", text(&server[key])));
    }
    if let Some(info) = server["server_info"].as_object() {
        out.push_str(&format!(
            "{:<12} {} {}\n",
            "server",
            text(&info["name"]),
            text(&info["version"])
        ));
    }
    let sessions: Vec<Vec<String>> = server["sessions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|session| {
            vec![
                text(&session["scope"]["kind"]),
                text(&session["state"]),
                text(&session["in_flight"]),
                text(&session["pid"]),
                text(&session["last_error"]),
            ]
        })
        .collect();
    if !sessions.is_empty() {
        out.push('\n');
        out.push_str(&table(
            &["SESSION", "STATE", "IN FLIGHT", "PID", "LAST ERROR"],
            &sessions,
        ));
    }
    out
}

pub fn test_outcome(tested: &Value) -> String {
    if tested["ok"] == true {
        format!(
            "connected to {} {} in {} ms (protocol {}), {} tools\n",
            text(&tested["server_info"]["name"]),
            text(&tested["server_info"]["version"]),
            text(&tested["latency_ms"]),
            text(&tested["protocol_version"]),
            text(&tested["tool_count"]),
        )
    } else {
        format!(
            "connection failed ({}): {}\n",
            text(&tested["error"]["code"]),
            text(&tested["error"]["message"])
        )
    }
}

pub fn sync_outcome(synced: &Value) -> String {
    format!(
        "{}: {} tools, {} resources, {} prompts\n",
        text(&synced["sync_status"]),
        text(&synced["tool_count"]),
        text(&synced["resource_count"]),
        text(&synced["prompt_count"]),
    )
}

pub fn tool_table(capabilities: &Value) -> String {
    let rows: Vec<Vec<String>> = capabilities["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|tool| {
            let description: String = text(&tool["description"]).chars().take(80).collect();
            vec![
                text(&tool["name"]),
                if tool["is_enabled"] == true {
                    "yes"
                } else {
                    "no"
                }
                .to_owned(),
                description,
            ]
        })
        .collect();
    let mut out = format!("sync: {}\n", text(&capabilities["sync_status"]));
    out.push_str(&table(&["TOOL", "ENABLED", "DESCRIPTION"], &rows));
    out
}

pub fn tool_result(result: &Value) -> String {
    let mut out = String::new();
    for block in result["content"].as_array().into_iter().flatten() {
        match block["type"].as_str() {
            Some("text") => out.push_str(&text(&block["text"])),
            Some(kind) => out.push_str(&format!("[{kind} {}]", text(&block["mimeType"]))),
            None => out.push_str(&block.to_string()),
        }
        out.push('\n');
    }
    if let Some(structured) = result.get("structuredContent") {
        out.push_str(&format!("structured: {structured}\n"));
    }
    if result["isError"] == true {
        out.push_str("(the tool reported an error)\n");
    }
    out
}

/// `servers import`: one row per entry, the references to look at, and the counts.
pub fn import_report(report: &Value) -> String {
    let entries = report["entries"].as_array().cloned().unwrap_or_default();
    let rows: Vec<Vec<String>> = entries
        .iter()
        .map(|entry| {
            let detail = match (&entry["reason"], &entry["message"]) {
                (Value::Null, Value::Null) => String::new(),
                (Value::Null, message) => text(message),
                (reason, message) => format!("{}: {}", text(reason), text(message)),
            };
            vec![
                text(&entry["name"]),
                text(&entry["action"]),
                text(&entry["transport"]),
                detail,
            ]
        })
        .collect();
    let mut out = table(&["NAME", "ACTION", "TRANSPORT", "DETAIL"], &rows);
    for entry in &entries {
        for reference in entry["references"].as_array().into_iter().flatten() {
            let became = match &reference["user_field"] {
                Value::Null => text(&reference["outcome"]),
                field => format!("user field {}", text(field)),
            };
            out.push_str(&format!(
                "{} {}: {} -> {}\n",
                text(&entry["name"]),
                text(&reference["location"]),
                text(&reference["reference"]),
                became
            ));
        }
    }
    let verb = if report["dry_run"] == true {
        "would create"
    } else {
        "created"
    };
    out.push_str(&format!(
        "{} ({}): {verb} {}, change {}, skip {}\n",
        text(&report["format"]),
        if report["format_detected"] == true {
            "detected"
        } else {
            "given"
        },
        text(&report["created"]),
        text(&report["changed"]),
        text(&report["skipped"]),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tables_align_columns() {
        let rendered = table(
            &["A", "LONGER"],
            &[
                vec!["wide cell".into(), "x".into()],
                vec!["b".into(), "y".into()],
            ],
        );
        assert_eq!(rendered, "A          LONGER\nwide cell  x\nb          y\n");
    }

    #[test]
    fn server_rows_show_state_and_endpoint() {
        let listed = json!({"servers": [{"name": "files", "transport": "stdio", "command": "npx", "args": ["-y", "pkg"],
            "status": "ACTIVE", "sync_status": "synced", "tool_count": 3, "is_active": true}]});
        let rendered = server_table(&listed);
        assert!(
            rendered.contains("files")
                && rendered.contains("npx -y pkg")
                && rendered.contains("ACTIVE"),
            "{rendered}"
        );
    }
}

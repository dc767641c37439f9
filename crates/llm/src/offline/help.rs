//! What the offline planner says when it will not call a tool: an introduction, what it can
//! do with the tools on offer (with example questions), and plain messages for names it
//! could not resolve.

use switchboard_core::ToolSpec;

use super::mentions::ObjectMention;
use super::tool_index::base_name;

/// Example questions for tools we know by their (base) name.
pub(crate) const EXAMPLES: &[(&str, &str)] = &[
    (
        "type_info",
        "What types of objects are in my knowledge base?",
    ),
    ("schema_version", "What's the schema version?"),
    (
        "schema_changelog",
        "Show me the recent changes to the schema",
    ),
    (
        "relationship_info",
        "What relationships can I create between Documents and Projects?",
    ),
    (
        "traverse",
        "Show me Projects related to the Product Roadmap document",
    ),
    ("search_objects", "Which team owns the product roadmap?"),
    ("count_objects", "How many documents by status?"),
    ("search_types", "Which types mention status?"),
];
const MAX_TOOLS_LISTED: usize = 12;

/// The first words when there is no question at all.
pub(crate) fn introduction(tools: &[ToolSpec]) -> String {
    format!(
        "Hello! I'm Switchboard's built-in offline assistant. {}",
        capabilities(tools)
    )
}

/// No tool fits the question well enough (or none performs what it asks): say so plainly
/// rather than call a tool that shares a word with it.
pub(crate) fn low_confidence(tools: &[ToolSpec]) -> String {
    format!(
        "I can't do that offline: none of the available tools fits this question. I'm Switchboard's built-in offline assistant, not a language model — I answer only by choosing one of the tools from your question. {}",
        capabilities(tools)
    )
}

/// Tools are turned off for this conversation (or none are available).
pub(crate) fn without_tools(tools: &[ToolSpec]) -> String {
    let _ = tools;
    "I'm Switchboard's built-in offline assistant. I can only answer by using tools, and no tools are available in this conversation. Enable tools (or an MCP server) for it, or configure an OpenAI-compatible model in the `[llm]` settings for free-form chat.\n".to_owned()
}

pub(crate) fn which_type_is(name: &str) -> String {
    format!(
        "I couldn't tell what kind of object \"{name}\" is. Name its type next to it, for example \"the {name} document\" or \"the project {name}\".\n"
    )
}

pub(crate) fn object_not_found(object: &ObjectMention, seen: &[String]) -> String {
    let kind = object
        .type_hint
        .as_deref()
        .map(str::to_lowercase)
        .unwrap_or_else(|| "object".to_owned());
    let mut text = format!("I couldn't find a {kind} named \"{}\".", object.name);
    if !seen.is_empty() {
        let shown: Vec<String> = seen
            .iter()
            .take(10)
            .map(|name| format!("\"{name}\""))
            .collect();
        text.push_str(&format!(" The {kind}s I found are: {}", shown.join(", ")));
        if seen.len() > shown.len() {
            text.push_str(&format!(" and {} more", seen.len() - shown.len()));
        }
        text.push('.');
    }
    text.push('\n');
    text
}

/// Names a search across all types did not find, with those it did find (already described,
/// e.g. `the team "Platform"`).
pub(crate) fn names_not_found(missing: &[&str], found: &[String]) -> String {
    let quoted: Vec<String> = missing.iter().map(|name| format!("\"{name}\"")).collect();
    let mut text = match quoted.as_slice() {
        [] => String::new(),
        [only] => format!("I couldn't find anything named {only} in the knowledge graph."),
        [first @ .., last] => format!(
            "I couldn't find anything named {} or {last} in the knowledge graph.",
            first.join(", ")
        ),
    };
    if !found.is_empty() {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(&format!("I did find {}.", found.join(" and ")));
    }
    text.push('\n');
    text
}

/// Two objects found, but no tool to connect them.
pub(crate) fn no_tool_for(first: &str, second: &str) -> String {
    format!(
        "I found {first} and {second}, but none of the available tools finds how two objects are connected.\n"
    )
}

fn capabilities(tools: &[ToolSpec]) -> String {
    if tools.is_empty() {
        return "No tools are available right now, so there is little I can do. Configure an OpenAI-compatible model in the `[llm]` settings for free-form chat.\n".to_owned();
    }
    let mut text = String::from("These are the tools I can use:\n\n");
    for tool in tools.iter().take(MAX_TOOLS_LISTED) {
        let summary = first_sentence(&tool.description);
        if summary.is_empty() {
            text.push_str(&format!("- `{}`\n", tool.name));
        } else {
            text.push_str(&format!("- `{}` — {summary}\n", tool.name));
        }
    }
    if tools.len() > MAX_TOOLS_LISTED {
        text.push_str(&format!(
            "- … and {} more\n",
            tools.len() - MAX_TOOLS_LISTED
        ));
    }
    let examples: Vec<&str> = EXAMPLES
        .iter()
        .filter(|(base, _)| tools.iter().any(|tool| base_name(&tool.name) == *base))
        .map(|(_, question)| *question)
        .collect();
    if examples.is_empty() {
        text.push_str("\nMention what you want in the words of a tool's description, e.g. \"");
        text.push_str(&base_name(&tools[0].name).replace('_', " "));
        text.push_str(" …\".\n");
    } else {
        text.push_str("\nTry asking:\n");
        for example in examples {
            text.push_str(&format!("- \"{example}\"\n"));
        }
    }
    text.push_str(
        "\nFor free-form conversation, configure an OpenAI-compatible model in the `[llm]` settings.\n",
    );
    text
}

fn first_sentence(description: &str) -> String {
    let line = description.lines().next().unwrap_or_default().trim();
    let end = line
        .char_indices()
        .find(|(index, character)| *character == '.' && line[index + 1..].starts_with(' '))
        .map_or(line.len(), |(index, _)| index);
    super::render::truncate_text(line[..end].trim_end_matches('.'), 120)
}

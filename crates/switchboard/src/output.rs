//! How the admin commands print what they did: text for people, or one JSON value with the
//! global `--json` (for scripts). Each command describes its result as a `Serialize` type and a
//! text rendering; this module picks one, so no command prints JSON by hand.

use serde::Serialize;

/// The format chosen on the command line.
#[derive(Clone, Copy, Debug)]
pub struct Output {
    json: bool,
}

impl Output {
    pub fn new(json: bool) -> Self {
        Self { json }
    }

    /// Prints `value` as pretty JSON, or through `text`.
    pub fn emit<T: Serialize>(self, value: &T, text: impl FnOnce(&T)) -> anyhow::Result<()> {
        if self.json {
            println!("{}", serde_json::to_string_pretty(value)?);
        } else {
            text(value);
        }
        Ok(())
    }
}

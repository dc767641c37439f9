//! Context a person adds to the conversation from MCP servers, kept in a message's metadata:
//! resources attached to a question (read when it is asked, and again whenever its server says
//! it changed while someone watches the conversation) and the messages of a prompt
//! run from the slash menu. Stored with the message, so replays and later turns give the model
//! the same content without reading the server again.
//!
//! [`MessageContext::for_model`] turns a message's text and its context blocks into what the
//! model reads: text contents as text, images as image input (the text notes them, for a model
//! that takes no images), other binary contents as a note.

use crate::{ImageInput, ResultBlock};
use serde::{Deserialize, Serialize};

/// The metadata key holding a [`MessageContext`].
pub const MESSAGE_CONTEXT_KEY: &str = "context";

/// What a user (or prompt) message carries beside its text.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageContext {
    /// The resources attached to the question, in order (what the person sees).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<AttachmentRef>,
    /// The content given to the model after the text: each attachment's contents, or a
    /// prompt message's non-text content; within a byte budget (too large: `Omitted`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<ResultBlock>,
    /// Set on the messages a prompt inserted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<PromptOrigin>,
}

/// A resource attached to a question.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttachmentRef {
    /// The server's name in the conversation.
    pub server: String,
    pub uri: String,
    /// The resource's name as the server gave it, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// When its contents were last read again because the server said the resource changed
    /// (`notifications/resources/updated`, while someone watched the conversation); absent:
    /// as read when the question was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refreshed_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// The prompt whose messages these are.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptOrigin {
    pub server: String,
    pub name: String,
}

impl MessageContext {
    /// The context stored in a message's metadata, if any.
    pub fn from_metadata(metadata: &serde_json::Value) -> Option<Self> {
        let value = metadata.get(MESSAGE_CONTEXT_KEY)?;
        serde_json::from_value(value.clone()).ok()
    }

    /// The attached `uri` of `server` was read again: its contents become `blocks` (in place
    /// of the ones it had, or after the others when they cannot be told apart) and the
    /// attachment says when.
    pub fn replace_attachment(
        &mut self,
        server: &str,
        uri: &str,
        blocks: Vec<ResultBlock>,
        refreshed_at: chrono::DateTime<chrono::Utc>,
    ) {
        for attachment in &mut self.attachments {
            if attachment.server == server && attachment.uri == uri {
                attachment.refreshed_at = Some(refreshed_at);
            }
        }
        let replaced: Vec<&str> = std::iter::once(uri)
            .chain(blocks.iter().filter_map(resource_uri))
            .collect();
        let is_replaced =
            |block: &ResultBlock| resource_uri(block).is_some_and(|own| replaced.contains(&own));
        let at = self.blocks.iter().position(is_replaced);
        let kept: Vec<ResultBlock> = self
            .blocks
            .drain(..)
            .filter(|block| !is_replaced(block))
            .collect();
        let at = at.unwrap_or(kept.len()).min(kept.len());
        let mut merged = kept;
        merged.splice(at..at, blocks);
        self.blocks = merged;
    }

    /// `text` followed by the blocks as the model reads them, and the images among them.
    pub fn for_model(&self, text: &str) -> (String, Vec<ImageInput>) {
        let mut parts: Vec<String> = Vec::new();
        if !text.trim().is_empty() {
            parts.push(text.to_owned());
        }
        parts.extend(self.blocks.iter().map(block_text));
        (
            parts.join("\n\n"),
            ImageInput::from_context_blocks(&self.blocks),
        )
    }
}

impl ImageInput {
    /// The images of context blocks a model can take: image blocks and image resources.
    pub fn from_context_blocks(blocks: &[ResultBlock]) -> Vec<ImageInput> {
        blocks
            .iter()
            .filter_map(|block| match block {
                ResultBlock::Image { mime_type, data }
                | ResultBlock::Resource {
                    mime_type: Some(mime_type),
                    blob: Some(data),
                    ..
                } if Self::ACCEPTED_TYPES.contains(&mime_type.as_str()) => Some(ImageInput {
                    mime_type: mime_type.clone(),
                    data: data.clone(),
                }),
                _ => None,
            })
            .collect()
    }
}

fn is_model_image(mime_type: &str) -> bool {
    ImageInput::ACCEPTED_TYPES.contains(&mime_type)
}

/// One block as text: contents whole, binary ones as a note.
fn block_text(block: &ResultBlock) -> String {
    match block {
        ResultBlock::Text { text } => text.clone(),
        ResultBlock::Resource {
            uri,
            mime_type,
            text: Some(text),
            ..
        } => format!(
            "<resource uri=\"{uri}\"{}>\n{text}\n</resource>",
            mime_attribute(mime_type.as_deref())
        ),
        ResultBlock::Resource {
            uri,
            mime_type,
            blob,
            ..
        } => {
            let mime_type = mime_type.as_deref().unwrap_or("application/octet-stream");
            let bytes = blob.as_ref().map_or(0, |blob| blob.len() / 4 * 3);
            if is_model_image(mime_type) {
                format!(
                    "[resource {uri}: an image ({mime_type}, about {bytes} bytes), given as an image input to models that take images]"
                )
            } else {
                format!(
                    "[resource {uri}: binary content ({mime_type}, about {bytes} bytes), not shown]"
                )
            }
        }
        ResultBlock::Image { mime_type, data } if is_model_image(mime_type) => format!(
            "[an image ({mime_type}, about {} bytes), given as an image input to models that take images]",
            data.len() / 4 * 3
        ),
        ResultBlock::Image { mime_type, .. } => format!("[an image ({mime_type}), not shown]"),
        ResultBlock::Audio { mime_type, .. } => format!("[audio ({mime_type}), not shown]"),
        ResultBlock::ResourceLink { uri, name, .. } => format!("[resource link: {name} <{uri}>]"),
        ResultBlock::Omitted { kind, bytes } => {
            format!(
                "[a {kind} of {bytes} bytes was left out: it is larger than a message may carry]"
            )
        }
    }
}

fn mime_attribute(mime_type: Option<&str>) -> String {
    mime_type
        .map(|mime_type| format!(" mime_type=\"{mime_type}\""))
        .unwrap_or_default()
}

/// The URI of an embedded resource block.
fn resource_uri(block: &ResultBlock) -> Option<&str> {
    match block {
        ResultBlock::Resource { uri, .. } => Some(uri),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_resources_follow_the_question_and_images_become_inputs() {
        let context = MessageContext {
            attachments: vec![AttachmentRef {
                server: "everything".into(),
                uri: "demo://a".into(),
                name: None,
                refreshed_at: None,
            }],
            blocks: vec![
                ResultBlock::Resource {
                    uri: "demo://a".into(),
                    mime_type: Some("text/plain".into()),
                    text: Some("alpha".into()),
                    blob: None,
                },
                ResultBlock::Resource {
                    uri: "demo://b".into(),
                    mime_type: Some("image/png".into()),
                    text: None,
                    blob: Some("AAAA".into()),
                },
                ResultBlock::Resource {
                    uri: "demo://c".into(),
                    mime_type: Some("application/pdf".into()),
                    text: None,
                    blob: Some("AAAA".into()),
                },
            ],
            prompt: None,
        };
        let (text, images) = context.for_model("Summarise this");
        assert!(text.starts_with("Summarise this\n\n<resource uri=\"demo://a\" mime_type=\"text/plain\">\nalpha\n</resource>"));
        assert!(text.contains("[resource demo://b: an image (image/png"));
        assert!(text.contains("[resource demo://c: binary content (application/pdf"));
        assert_eq!(images.len(), 1);
        assert_eq!(images[0].data_uri(), "data:image/png;base64,AAAA");
    }

    #[test]
    fn the_context_round_trips_through_metadata() {
        let context = MessageContext {
            prompt: Some(PromptOrigin {
                server: "s".into(),
                name: "p".into(),
            }),
            ..MessageContext::default()
        };
        let metadata = serde_json::json!({ MESSAGE_CONTEXT_KEY: context });
        assert_eq!(MessageContext::from_metadata(&metadata), Some(context));
        assert_eq!(MessageContext::from_metadata(&serde_json::json!({})), None);
    }

    fn text_resource(uri: &str, text: &str) -> ResultBlock {
        ResultBlock::Resource {
            uri: uri.into(),
            mime_type: None,
            text: Some(text.into()),
            blob: None,
        }
    }

    #[test]
    fn a_refreshed_attachment_replaces_its_own_contents_in_place() {
        let attachment = |uri: &str| AttachmentRef {
            server: "notes".into(),
            uri: uri.into(),
            name: None,
            refreshed_at: None,
        };
        let mut context = MessageContext {
            attachments: vec![attachment("n://a"), attachment("n://b")],
            blocks: vec![text_resource("n://a", "old a"), text_resource("n://b", "b")],
            prompt: None,
        };
        let now = chrono::Utc::now();
        context.replace_attachment("notes", "n://a", vec![text_resource("n://a", "new a")], now);
        assert_eq!(
            context.blocks,
            vec![text_resource("n://a", "new a"), text_resource("n://b", "b")]
        );
        assert_eq!(context.attachments[0].refreshed_at, Some(now));
        assert_eq!(context.attachments[1].refreshed_at, None);
        // Contents that cannot be told apart from the others go after them.
        context.replace_attachment("notes", "n://c", vec![text_resource("n://c", "c")], now);
        assert_eq!(context.blocks.len(), 3);
        assert_eq!(context.blocks[2], text_resource("n://c", "c"));
    }
}

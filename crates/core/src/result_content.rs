//! The content blocks of a tool result as the host keeps them beside the tool message: text,
//! image, audio, resource link and embedded resource, in the order the server sent them, so
//! the chat can show them (an image as an image, audio with a player, links to open) and an
//! image can go to a model that takes images. Kept within a byte budget per message: a block
//! that does not fit is replaced by an [`ResultBlock::Omitted`] note (the full result stays in
//! the tool call's record), so one huge result cannot bloat every read of a conversation.

use serde::{Deserialize, Serialize};

/// One block of a tool result, with the MCP field names in snake case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResultBlock {
    Text {
        text: String,
    },
    Image {
        mime_type: String,
        /// Base64.
        data: String,
    },
    Audio {
        mime_type: String,
        /// Base64.
        data: String,
    },
    /// A link to a resource the server offers (`resource_link`).
    ResourceLink {
        uri: String,
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
    /// An embedded resource (`resource`): its text or its base64 blob.
    Resource {
        uri: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        blob: Option<String>,
    },
    /// A block left out because it did not fit the budget (or is of a kind this version does
    /// not know).
    Omitted {
        /// The block's MCP `type`.
        kind: String,
        /// Its size in bytes as received (base64 or text).
        bytes: usize,
    },
}

impl ResultBlock {
    /// The block's MCP `type`.
    pub fn kind(&self) -> &str {
        match self {
            ResultBlock::Text { .. } => "text",
            ResultBlock::Image { .. } => "image",
            ResultBlock::Audio { .. } => "audio",
            ResultBlock::ResourceLink { .. } => "resource_link",
            ResultBlock::Resource { .. } => "resource",
            ResultBlock::Omitted { kind, .. } => kind,
        }
    }

    /// About how many bytes the block takes when stored.
    pub fn size(&self) -> usize {
        match self {
            ResultBlock::Text { text } => text.len(),
            ResultBlock::Image { data, mime_type } | ResultBlock::Audio { data, mime_type } => {
                data.len() + mime_type.len()
            }
            ResultBlock::ResourceLink {
                uri,
                name,
                title,
                description,
                ..
            } => {
                uri.len()
                    + name.len()
                    + title.as_ref().map_or(0, String::len)
                    + description.as_ref().map_or(0, String::len)
            }
            ResultBlock::Resource {
                uri, text, blob, ..
            } => {
                uri.len()
                    + text.as_ref().map_or(0, String::len)
                    + blob.as_ref().map_or(0, String::len)
            }
            ResultBlock::Omitted { kind, .. } => kind.len(),
        }
    }

    /// Keeps the blocks in order while their sizes fit in `budget` bytes; the others become
    /// [`ResultBlock::Omitted`].
    pub fn within_budget(blocks: Vec<ResultBlock>, budget: usize) -> Vec<ResultBlock> {
        let mut left = budget;
        blocks
            .into_iter()
            .map(|block| {
                let size = block.size();
                if size <= left {
                    left -= size;
                    block
                } else {
                    ResultBlock::Omitted {
                        kind: block.kind().to_owned(),
                        bytes: size,
                    }
                }
            })
            .collect()
    }
}

/// An image given to the model with a tool result (for a model that takes images).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageInput {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub mime_type: String,
    /// Base64.
    pub data: String,
}

impl ImageInput {
    /// The image formats the OpenAI and Anthropic APIs both take.
    pub const ACCEPTED_TYPES: [&'static str; 4] =
        ["image/png", "image/jpeg", "image/gif", "image/webp"];

    /// The images of `blocks` a model can take, in order.
    pub fn from_blocks(blocks: &[ResultBlock]) -> Vec<ImageInput> {
        blocks
            .iter()
            .filter_map(|block| match block {
                ResultBlock::Image { mime_type, data }
                    if Self::ACCEPTED_TYPES.contains(&mime_type.as_str()) =>
                {
                    Some(ImageInput {
                        mime_type: mime_type.clone(),
                        data: data.clone(),
                    })
                }
                _ => None,
            })
            .collect()
    }

    /// The image as a `data:` URI (OpenAI's `image_url`).
    pub fn data_uri(&self) -> String {
        format!("data:{};base64,{}", self.mime_type, self.data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(bytes: usize) -> ResultBlock {
        ResultBlock::Image {
            mime_type: "image/png".to_owned(),
            data: "A".repeat(bytes),
        }
    }

    #[test]
    fn blocks_over_the_budget_are_omitted_in_place() {
        let blocks = vec![
            ResultBlock::Text {
                text: "hi".to_owned(),
            },
            image(100),
            image(20),
        ];
        let kept = ResultBlock::within_budget(blocks, 50);
        assert_eq!(kept[0].kind(), "text");
        assert_eq!(
            kept[1],
            ResultBlock::Omitted {
                kind: "image".to_owned(),
                bytes: 109
            }
        );
        assert_eq!(kept[2], image(20));
    }

    #[test]
    fn only_images_a_model_takes_are_inputs() {
        let svg = ResultBlock::Image {
            mime_type: "image/svg+xml".to_owned(),
            data: "PHN2Zz4=".to_owned(),
        };
        let inputs = ImageInput::from_blocks(&[svg, image(4)]);
        assert_eq!(inputs.len(), 1);
        assert_eq!(inputs[0].data_uri(), "data:image/png;base64,AAAA");
    }
}

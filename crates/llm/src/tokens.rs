//! Counting tokens the way the model will, so the chat engine can fit a request into the
//! model's context window by tokens rather than by characters.
//!
//! OpenAI-family models (chosen by model name, as OpenAI names them: `gpt-4o…`, `gpt-4.1…`,
//! `gpt-5…`, `o1…`/`o3…`/`o4-mini…`, `gpt-oss…` → `o200k_base`; `gpt-4…`, `gpt-3.5-turbo…`,
//! `gpt-35-turbo…` → `cl100k_base`; an Azure deployment counts the same when it is named after
//! its model) are counted with their own BPE vocabulary (`tiktoken-rs`, whose vocabularies are
//! compiled into the binary: nothing is downloaded at run time; each is parsed once, on first
//! use). Every other model (Claude, Llama, Mistral, Gemini…) gets a documented estimate:
//! [`ESTIMATE_BYTES_PER_TOKEN`] bytes of UTF-8 per token, rounded up — their tokenizers are not
//! public or differ per model, and English prose and JSON average 3.5–4.5 bytes per token on
//! them. The chat engine keeps a safety margin of the window for that error.

use tiktoken_rs::CoreBPE;
use tiktoken_rs::tokenizer::{Tokenizer, get_tokenizer};

/// Bytes of UTF-8 text per token in the estimate used for models without a known tokenizer.
pub const ESTIMATE_BYTES_PER_TOKEN: usize = 4;

/// How a [`TokenCounter`] counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenizerKind {
    /// OpenAI's `o200k_base` (GPT-4o and later).
    O200kBase,
    /// OpenAI's `cl100k_base` (GPT-4, GPT-3.5-turbo).
    Cl100kBase,
    /// [`ESTIMATE_BYTES_PER_TOKEN`] bytes per token, rounded up.
    Estimate,
}

impl TokenizerKind {
    /// The name reported with a trimming (`o200k_base`, `cl100k_base`, `estimate`).
    pub fn as_str(self) -> &'static str {
        match self {
            TokenizerKind::O200kBase => "o200k_base",
            TokenizerKind::Cl100kBase => "cl100k_base",
            TokenizerKind::Estimate => "estimate",
        }
    }
}

/// Counts (and cuts) text in one model's tokens. Cheap to copy.
#[derive(Clone, Copy)]
pub struct TokenCounter {
    kind: TokenizerKind,
    bpe: Option<&'static CoreBPE>,
}

impl std::fmt::Debug for TokenCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenCounter")
            .field("kind", &self.kind)
            .finish()
    }
}

impl TokenCounter {
    /// The counter for `model` (a model or Azure deployment name).
    pub fn for_model(model: &str) -> Self {
        let kind = match get_tokenizer(model.trim()) {
            Some(Tokenizer::O200kBase | Tokenizer::O200kHarmony) => TokenizerKind::O200kBase,
            Some(Tokenizer::Cl100kBase) => TokenizerKind::Cl100kBase,
            // Older completion-only vocabularies: not chat models; the estimate will do.
            _ => TokenizerKind::Estimate,
        };
        Self::of_kind(kind)
    }

    /// The estimate, whatever the model.
    pub fn estimate() -> Self {
        Self::of_kind(TokenizerKind::Estimate)
    }

    fn of_kind(kind: TokenizerKind) -> Self {
        let bpe = match kind {
            TokenizerKind::O200kBase => Some(tiktoken_rs::o200k_base_singleton()),
            TokenizerKind::Cl100kBase => Some(tiktoken_rs::cl100k_base_singleton()),
            TokenizerKind::Estimate => None,
        };
        Self { kind, bpe }
    }

    pub fn kind(&self) -> TokenizerKind {
        self.kind
    }

    /// Tokens of `text`.
    pub fn count(&self, text: &str) -> usize {
        match self.bpe {
            Some(bpe) => bpe.encode_ordinary(text).len(),
            None => text.len().div_ceil(ESTIMATE_BYTES_PER_TOKEN),
        }
    }

    /// `text` kept to its first `head` and last `tail` tokens, or `None` when it has at most
    /// `head + tail` tokens. Returns (head text, tail text, tokens of the whole text). A cut
    /// through a multi-byte character loses that character, never produces invalid UTF-8.
    pub fn head_and_tail(&self, text: &str, head: usize, tail: usize) -> Option<Cut> {
        match self.bpe {
            Some(bpe) => {
                let tokens = bpe.encode_ordinary(text);
                if tokens.len() <= head + tail {
                    return None;
                }
                let decode = |part: &[u32]| {
                    let bytes = bpe.decode_bytes(part).unwrap_or_default();
                    String::from_utf8_lossy(&bytes)
                        .trim_matches('\u{FFFD}')
                        .to_owned()
                };
                Some(Cut {
                    head: decode(&tokens[..head]),
                    tail: decode(&tokens[tokens.len() - tail..]),
                    total_tokens: tokens.len(),
                })
            }
            None => {
                let total_tokens = self.count(text);
                if total_tokens <= head + tail {
                    return None;
                }
                let head_end = floor_char_boundary(text, head * ESTIMATE_BYTES_PER_TOKEN);
                let tail_start = ceil_char_boundary(
                    text,
                    text.len()
                        .saturating_sub(tail * ESTIMATE_BYTES_PER_TOKEN)
                        .max(head_end),
                );
                Some(Cut {
                    head: text[..head_end].to_owned(),
                    tail: text[tail_start..].to_owned(),
                    total_tokens,
                })
            }
        }
    }
}

/// The two ends of a text cut by [`TokenCounter::head_and_tail`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cut {
    pub head: String,
    pub tail: String,
    /// Tokens of the whole text.
    pub total_tokens: usize,
}

fn floor_char_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

fn ceil_char_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_models_get_their_vocabulary_and_others_the_estimate() {
        for (model, kind) in [
            ("gpt-4o-mini", TokenizerKind::O200kBase),
            ("gpt-4.1", TokenizerKind::O200kBase),
            ("gpt-5-mini", TokenizerKind::O200kBase),
            ("o3-mini", TokenizerKind::O200kBase),
            ("gpt-4-turbo", TokenizerKind::Cl100kBase),
            ("gpt-35-turbo", TokenizerKind::Cl100kBase),
            ("claude-sonnet-4-5", TokenizerKind::Estimate),
            ("llama3.1:8b", TokenizerKind::Estimate),
            ("", TokenizerKind::Estimate),
        ] {
            assert_eq!(TokenCounter::for_model(model).kind(), kind, "{model}");
        }
    }

    #[test]
    fn counts_match_the_vocabularies_and_the_estimate_rounds_up() {
        // "hello world" is two tokens in both OpenAI vocabularies.
        assert_eq!(TokenCounter::for_model("gpt-4o").count("hello world"), 2);
        assert_eq!(TokenCounter::for_model("gpt-4").count("hello world"), 2);
        let estimate = TokenCounter::estimate();
        assert_eq!(estimate.count(""), 0);
        assert_eq!(estimate.count("abcd"), 1);
        assert_eq!(estimate.count("abcde"), 2);
        assert_eq!(estimate.count("é"), 1, "bytes, not characters");
    }

    #[test]
    fn head_and_tail_keep_the_ends_in_tokens() {
        let text = (0..1000)
            .map(|index| format!("w{index}"))
            .collect::<Vec<_>>()
            .join(" ");
        for counter in [TokenCounter::for_model("gpt-4o"), TokenCounter::estimate()] {
            let cut = counter.head_and_tail(&text, 20, 10).unwrap();
            assert!(text.starts_with(&cut.head), "{:?}", counter.kind());
            assert!(text.ends_with(&cut.tail), "{:?}", counter.kind());
            assert!(counter.count(&cut.head) <= 21);
            assert!(counter.count(&cut.tail) <= 11);
            assert_eq!(cut.total_tokens, counter.count(&text));
            assert!(counter.head_and_tail("short", 20, 10).is_none());
        }
        let multibyte = "é".repeat(100);
        let cut = TokenCounter::estimate()
            .head_and_tail(&multibyte, 3, 3)
            .unwrap();
        assert!(cut.head.chars().all(|c| c == 'é') && !cut.head.is_empty());
    }
}

//! Splitting a question into words and quoted phrases for the mention reader
//! (`mentions.rs`). Unlike `text::words` (lower-cased words for ranking tools), these tokens
//! keep their case, quoted phrases whole, and mark sentence starts and phrase ends, because
//! the mention rules read capitalisation and phrase boundaries. Its own module because this is
//! character-level work (quotes, contractions, punctuation) the mention rules should not have
//! to think about.

/// One word or quoted phrase of a question.
#[derive(Clone, Debug)]
pub(super) struct Token {
    pub text: String,
    /// First token of a sentence (capitalisation means nothing there).
    pub sentence_start: bool,
    /// Punctuation right after the token ends a phrase.
    pub phrase_end: bool,
    pub quoted: bool,
}

/// Splits a question into tokens, keeping quoted phrases whole and noting sentence starts and
/// phrase-ending punctuation.
pub(super) fn tokenize(question: &str) -> Vec<Token> {
    let mut tokens: Vec<Token> = Vec::new();
    let mut current = String::new();
    let mut sentence_start = true;
    let mut characters = question.chars().peekable();
    let push = |tokens: &mut Vec<Token>, current: &mut String, sentence_start: &mut bool| {
        push_token(tokens, std::mem::take(current), sentence_start, false);
    };
    while let Some(character) = characters.next() {
        match character {
            '"' | '“' | '”' | '`' => {
                push(&mut tokens, &mut current, &mut sentence_start);
                let closing = match character {
                    '“' => '”',
                    other => other,
                };
                let quoted: String = characters.by_ref().take_while(|c| *c != closing).collect();
                push_token(
                    &mut tokens,
                    quoted.trim().to_owned(),
                    &mut sentence_start,
                    true,
                );
            }
            '\'' if current.is_empty() => {
                // A single-quoted phrase: 'Product Roadmap'.
                let quoted: String = characters.by_ref().take_while(|c| *c != '\'').collect();
                push_token(
                    &mut tokens,
                    quoted.trim().to_owned(),
                    &mut sentence_start,
                    true,
                );
            }
            c if c.is_alphanumeric()
                || c == '-'
                || c == '_'
                || c == '.'
                    && !current.is_empty()
                    && characters.peek().is_some_and(|n| n.is_alphanumeric()) =>
            {
                current.push(c);
            }
            '\'' | '’' => {
                // "what's": drop the contraction's tail.
                push(&mut tokens, &mut current, &mut sentence_start);
                while characters.peek().is_some_and(|c| c.is_alphabetic()) {
                    characters.next();
                }
            }
            c => {
                push(&mut tokens, &mut current, &mut sentence_start);
                if matches!(c, '.' | '?' | '!' | ',' | ';' | ':' | '(' | ')')
                    && let Some(last) = tokens.last_mut()
                {
                    last.phrase_end = true;
                    if matches!(c, '.' | '?' | '!') {
                        sentence_start = true;
                    }
                }
            }
        }
    }
    push(&mut tokens, &mut current, &mut sentence_start);
    tokens
}

/// Appends `text` as a token unless it is empty; the token after it no longer starts a sentence.
fn push_token(tokens: &mut Vec<Token>, text: String, sentence_start: &mut bool, quoted: bool) {
    if text.is_empty() {
        return;
    }
    tokens.push(Token {
        text,
        sentence_start: *sentence_start,
        phrase_end: false,
        quoted,
    });
    *sentence_start = false;
}

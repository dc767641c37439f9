//! The fitting itself: long tool results are cut to `tool_result_max_tokens` (head and tail,
//! saying so in the text), then earlier turns are left out whole, oldest first, until the
//! request fits; the current turn (the question and what the answer did so far) is always
//! kept, its largest tool results cut further when it alone would not fit.

use super::{ContextLimits, ContextReport, MIN_TOOL_RESULT_TOKENS, REPLY_PRIMING};
use switchboard_core::{ChatMessage, ChatRole, ToolSpec};

/// `messages` (system prompt first, then the conversation) fitted to `limits`, with `tools`
/// offered; and what was left out.
pub(crate) fn fit(
    messages: Vec<ChatMessage>,
    tools: &[ToolSpec],
    limits: &ContextLimits,
) -> (Vec<ChatMessage>, ContextReport) {
    let mut report = ContextReport {
        context_window: limits.window,
        window_known: limits.window_known,
        tokenizer: limits.counter.kind().as_str().to_owned(),
        answer_reserve_tokens: limits.answer_reserve,
        ..ContextReport::default()
    };
    let tool_tokens = limits.tools_tokens(tools);
    report.tool_tokens = tool_tokens as u32;
    let (system, mut turns) = split_turns(messages, limits, &mut report);
    let system_tokens: usize = system.iter().map(|sized| sized.tokens).sum();
    let available = limits
        .prompt_budget()
        .saturating_sub(tool_tokens + system_tokens + REPLY_PRIMING);
    let current = turns.pop().unwrap_or_default();
    let mut current_tokens: usize = current.iter().map(|sized| sized.tokens).sum();
    let mut kept_tokens = 0;
    let mut first_kept = turns.len();
    for (index, turn) in turns.iter().enumerate().rev() {
        let tokens: usize = turn.iter().map(|sized| sized.tokens).sum();
        if current_tokens + kept_tokens + tokens > available {
            break;
        }
        kept_tokens += tokens;
        first_kept = index;
    }
    for turn in &turns[..first_kept] {
        report.dropped_turns += 1;
        report.dropped_messages += turn.len() as u32;
        report.dropped_tokens += turn.iter().map(|sized| sized.tokens as u32).sum::<u32>();
    }
    let mut current = current;
    if current_tokens > available {
        current_tokens -= shrink_results(
            &mut current,
            current_tokens - available,
            limits,
            &mut report,
        );
    }
    let mut fitted: Vec<ChatMessage> = system.into_iter().map(|sized| sized.message).collect();
    let history_start = fitted.len();
    fitted.extend(
        turns
            .into_iter()
            .skip(first_kept)
            .flatten()
            .chain(current)
            .map(|sized| sized.message),
    );
    // A history that starts mid-turn must not start with results of a call it does not show.
    while fitted
        .get(history_start)
        .is_some_and(|message| message.role == ChatRole::Tool)
    {
        let dropped = limits.message_tokens(&fitted.remove(history_start));
        report.dropped_messages += 1;
        report.dropped_tokens += dropped as u32;
        kept_tokens = kept_tokens.saturating_sub(dropped);
    }
    report.prompt_tokens =
        (tool_tokens + system_tokens + kept_tokens + current_tokens + REPLY_PRIMING) as u32;
    (fitted, report)
}

/// A message and its tokens.
#[derive(Clone, Debug)]
struct Sized {
    message: ChatMessage,
    tokens: usize,
    /// A tool result already cut (counted once in the report).
    cut: bool,
}

/// The leading system messages, and the rest in turns (each starting at a user message; a
/// first fragment without one is a turn of its own). Tool results over the per-result limit
/// are cut on the way.
fn split_turns(
    messages: Vec<ChatMessage>,
    limits: &ContextLimits,
    report: &mut ContextReport,
) -> (Vec<Sized>, Vec<Vec<Sized>>) {
    let mut system = Vec::new();
    let mut turns: Vec<Vec<Sized>> = Vec::new();
    for mut message in messages {
        let mut cut = false;
        if message.role == ChatRole::Tool
            && let Some(omitted) =
                cut_result(&mut message, limits.tool_result_max_tokens as usize, limits)
        {
            report.cut_tool_results += 1;
            report.cut_tokens += omitted as u32;
            cut = true;
        }
        let sized = Sized {
            tokens: limits.message_tokens(&message),
            message,
            cut,
        };
        if sized.message.role == ChatRole::System && turns.is_empty() {
            system.push(sized);
            continue;
        }
        if sized.message.role == ChatRole::User || turns.is_empty() {
            turns.push(Vec::new());
        }
        if let Some(turn) = turns.last_mut() {
            turn.push(sized);
        }
    }
    (system, turns)
}

/// Cuts the largest tool results of `turn` to one common size, the largest that saves
/// `excess` tokens (never below [`MIN_TOOL_RESULT_TOKENS`]); returns the tokens saved.
fn shrink_results(
    turn: &mut [Sized],
    excess: usize,
    limits: &ContextLimits,
    report: &mut ContextReport,
) -> usize {
    let mut results: Vec<(usize, usize)> = turn
        .iter()
        .enumerate()
        .filter(|(_, sized)| sized.message.role == ChatRole::Tool)
        .map(|(index, sized)| (index, limits.counter.count(&sized.message.content)))
        .collect();
    results.sort_by_key(|&(_, tokens)| std::cmp::Reverse(tokens));
    let cap = common_cap(&results, excess).max(MIN_TOOL_RESULT_TOKENS);
    let mut saved = 0;
    for (index, tokens) in results {
        if tokens <= cap {
            break;
        }
        let sized = &mut turn[index];
        if cut_result(&mut sized.message, cap, limits).is_none() {
            continue;
        }
        let now = limits.message_tokens(&sized.message);
        let delta = sized.tokens.saturating_sub(now);
        saved += delta;
        sized.tokens = now;
        report.cut_tokens += delta as u32;
        if !sized.cut {
            report.cut_tool_results += 1;
            sized.cut = true;
        }
    }
    saved
}

/// The largest cap such that cutting every size (sorted largest first) above it to it saves at
/// least `excess`; 0 when even cutting everything would not.
fn common_cap(sorted: &[(usize, usize)], excess: usize) -> usize {
    let mut sum = 0;
    for (count, &(_, tokens)) in sorted.iter().enumerate() {
        sum += tokens;
        let count = count + 1;
        let cap = sum.saturating_sub(excess) / count;
        let next = sorted.get(count).map_or(0, |&(_, tokens)| tokens);
        if cap >= next {
            return cap;
        }
    }
    0
}

/// Keeps a tool result to about `max_tokens`: two thirds head, one third tail, and a marker
/// that says how much was left out and why. Returns the tokens left out, `None` when the
/// result was short enough.
fn cut_result(
    message: &mut ChatMessage,
    max_tokens: usize,
    limits: &ContextLimits,
) -> Option<usize> {
    if limits.counter.count(&message.content) <= max_tokens {
        return None;
    }
    // Room for the marker itself.
    let keep = max_tokens.saturating_sub(48).max(16);
    let head = keep * 2 / 3;
    let cut = limits
        .counter
        .head_and_tail(&message.content, head, keep - head)?;
    let omitted = cut.total_tokens - keep;
    message.content = format!(
        "{}\n…[{omitted} of {} tokens of this result left out here to fit the model's context \
         window; the full result is stored with this tool call and can be read in pages \
         through the API]…\n{}",
        cut.head, cut.total_tokens, cut.tail
    );
    Some(omitted)
}

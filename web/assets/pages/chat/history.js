// history: rebuilds a stored conversation (GET /chat/conversations/{id}) into the same views the
// live stream uses — user bubbles, assistant turns with their tool calls (matched to tool result
// messages by tool_call_id), recorded approvals and partial/interrupted answers. A call still
// `dispatched` with a `task_id` is an MCP task still working: shown as such, with the status
// and status message its server last reported (stored with the call) and its Cancel.

import { h } from '../../lib/dom.js';
import { AssistantTurn } from './assistant-turn.js';
import { splitQualifiedToolName } from './tool-call-view.js';
import { attachmentChip } from './attachment-watch.js';

/**
 * Renders a user message bubble; `context` (a stored message's `metadata.context`, or what is
 * being sent) adds the prompt it came from and its attached resources.
 */
export function renderUserMessage(text, context = null) {
  const attachments = context?.attachments ?? [];
  const prompt = context?.prompt ?? null;
  if (attachments.length === 0 && !prompt) return h('div', { class: 'message message-user', text });
  const arguments_ = Object.entries(prompt?.arguments ?? {}).map(([name, value]) => `${name}=${value}`).join(' ');
  const blocks = (context?.blocks ?? []).map((block) => block.uri ?? `[${block.type}]`).join(', ');
  return h('div', { class: 'message message-user', dataset: prompt ? { prompt: `${prompt.server}:${prompt.name}` } : {} },
    prompt ? h('p', { class: 'small muted message-prompt', text: `/${prompt.server}:${prompt.name}${arguments_ ? ` ${arguments_}` : ''}` }) : null,
    text || (blocks && attachments.length === 0 ? h('span', { class: 'muted', text: blocks }) : null),
    attachments.length ? h('ul', { class: 'attachment-chips', 'aria-label': 'Attached resources' },
      attachments.map(attachmentChip)) : null);
}

/** Text of a stored message's content (string, or OpenAI-style parts). */
export function messageText(content) {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (typeof part === 'string' ? part : part?.text ?? '')).join('');
  return typeof content.text === 'string' ? content.text : JSON.stringify(content);
}

const STATE_TO_STATUS = { proposed: 'started', approved: 'started', dispatched: 'started', completed: 'completed', failed: 'error', denied: 'denied', unknown: 'unknown' };

/**
 * Builds transcript elements from stored messages (and the conversation's tool call records,
 * which carry each call's state, error and duration); returns `{elements, turns}`.
 */
/**
 * A tool call record's task as the page shows it (`{task_id, status, status_message}`): its
 * stored latest status, or `working` before the server's first report.
 */
export function storedTask(record) {
  return {
    task_id: record.task_id,
    status: record.task?.status ?? 'working',
    status_message: record.task?.status_message ?? undefined,
  };
}

export function renderHistory(messages, { onLayoutChange, toolCalls = [], conversationId } = {}) {
  const recordsByLlmId = new Map(toolCalls.map((record) => [record.llm_call_id, record]));
  const elements = [];
  const turns = [];
  let turn = null;
  const viewsByCallId = new Map();
  // Per turn: who answered (its last step) and the tokens of all its steps.
  const answeredBy = new Map();
  const ensureTurn = () => {
    if (!turn) {
      turn = new AssistantTurn({ onLayoutChange });
      turns.push(turn);
      elements.push(turn.element);
    }
    return turn;
  };
  for (const message of messages ?? []) {
    const metadata = message.metadata ?? {};
    if (message.role === 'user') {
      turn = null;
      elements.push(renderUserMessage(messageText(message.content), metadata.context));
      continue;
    }
    if (message.role === 'assistant') {
      const current = ensureTurn();
      answeredBy.set(current, addStep(answeredBy.get(current), message));
      for (const call of message.tool_calls ?? []) {
        const qualified = call.name ?? '';
        const split = splitQualifiedToolName(qualified);
        const record = recordsByLlmId.get(call.id);
        const state = call.state ?? record?.state;
        // A call whose MCP task still works (followed by the server, maybe after a restart),
        // as its server last reported it.
        const task = state === 'dispatched' && record?.task_id ? storedTask(record) : null;
        const view = current.applyToolEvent({
          call_id: call.id,
          tool_call_id: call.tool_call_id ?? record?.id,
          server: call.server ?? record?.server ?? split.server,
          tool: call.tool ?? record?.tool ?? split.tool,
          arguments: call.arguments,
          status: STATE_TO_STATUS[state] ?? 'started',
          state,
          error: record?.error ?? undefined,
          duration_ms: record?.duration_ms ?? undefined,
        });
        view.conversationId = conversationId;
        view.fromHistory = true;
        if (task) current.applyToolEvent({ call_id: call.id, status: 'task', task });
        viewsByCallId.set(call.id, view);
      }
      const text = messageText(message.content);
      if (text) current.setText(current.text ? `${current.text}\n\n${text}` : text);
      if (metadata.partial || metadata.interrupted || message.status === 'partial' || message.status === 'failed') {
        current.showNotice('This answer was cut short (stopped or interrupted) and is shown as far as it got.');
      }
      if (metadata.error) current.showError(metadata.error);
      continue;
    }
    if (message.role === 'tool') {
      const current = ensureTurn();
      const view = viewsByCallId.get(message.tool_call_id);
      const record = recordsByLlmId.get(message.tool_call_id);
      const state = record?.state ?? metadata.state ?? (message.status === 'complete' ? undefined : message.status);
      const isError = metadata.is_error === true || /^(error|failed|denied|unknown)$/.test(state ?? '');
      const result = parseMaybe(messageText(message.content));
      const update = {
        status: STATE_TO_STATUS[state] ?? (isError ? 'error' : 'completed'),
        result: isError ? undefined : result,
        error: isError ? (record?.error ?? metadata.error ?? result) : undefined,
        durationMs: record?.duration_ms ?? metadata.duration_ms,
        blocks: metadata.content ?? [],
        structured: metadata.structured_content,
      };
      const shown = view ?? current.applyToolEvent({ call_id: message.tool_call_id, server: metadata.server ?? '', tool: metadata.tool ?? 'tool', ...update, duration_ms: update.durationMs });
      if (view) view.update(update);
      if (metadata.app && shown.toolCallId) {
        shown.conversationId = conversationId;
        current.conversationId = current.conversationId ?? conversationId;
        current.showApp(shown, { fromHistory: true });
      }
    }
  }
  for (const view of viewsByCallId.values()) {
    if (view.status === 'started') view.update({ status: 'unknown' });
  }
  for (const [current, answer] of answeredBy) current.showUsage(answer);
  return { elements, turns };
}

const USAGE_COUNTS = ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens'];

/** An answer's `{provider_name, model, usage}` with one more stored assistant step. */
function addStep(answer, message) {
  let usage = answer?.usage ?? null;
  if (message.usage) {
    usage = Object.fromEntries(USAGE_COUNTS.map((key) => [key, (usage?.[key] ?? 0) + (message.usage[key] ?? 0)]));
  }
  return {
    provider_name: message.provider_name ?? answer?.provider_name,
    model: message.model ?? answer?.model,
    usage,
  };
}

function parseMaybe(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

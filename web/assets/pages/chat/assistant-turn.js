// assistant-turn: the DOM of one assistant answer — tool activity on top, then the Markdown
// answer — fed either by live SSE events or by stored messages. Streaming text is re-rendered at
// most once per animation frame, and the answer box never shrinks while streaming, so the page does
// not jump as partial Markdown (an unclosed ** or table) settles.

import { h } from '../../lib/dom.js';
import { renderMarkdown } from '../../lib/markdown.js';
import { ToolCallView } from './tool-call-view.js';
import { AppFrame } from './app-frame.js';
import { ApprovalCard, ElicitationCard, SignInCard } from './action-cards.js';
import { getIdentity } from '../../lib/session.js';

/** One assistant answer in the transcript. */
export class AssistantTurn {
  constructor({ onLayoutChange } = {}) {
    this.onLayoutChange = onLayoutChange ?? (() => {});
    this.text = '';
    this.toolViews = new Map();
    /** MCP Apps shown under their tool calls, by tool call id. */
    this.appFrames = new Map();
    /** MCP Apps shown while the model writes their call's input, before the call exists. */
    this.previewFrames = new Map();
    this.cards = new Map();
    /** Who decided each approval, by tool call id (the decision can arrive before the call's view). */
    this.deciders = new Map();
    this.renderScheduled = false;
    this.largestAnswerHeight = 0;
    this.meta = h('div', { class: 'message-meta' });
    this.activity = h('div', { class: 'tool-activity', 'aria-label': 'Tool activity' });
    this.answer = h('div', { class: 'answer markdown', 'aria-live': 'off' });
    this.notices = h('div', {});
    this.usageLine = h('p', { class: 'message-usage', hidden: true });
    this.element = h('article', { class: 'message message-assistant', 'aria-label': 'Assistant answer' },
      this.meta, this.activity, this.answer, this.usageLine, this.notices);
  }

  /** Marks the turn as streaming (caret, busy state for assistive tech). */
  startStreaming() {
    this.streaming = true;
    this.element.setAttribute('aria-busy', 'true');
    this.#scheduleRender();
  }

  /** Applies one typed chat event from the stream. */
  applyEvent(event) {
    switch (event.type) {
      case 'meta':
        this.conversationId = event.conversation_id ?? this.conversationId;
        this.setMeta(event);
        break;
      case 'token':
        this.appendText(event.token ?? '');
        break;
      case 'mcp_tool':
        this.applyToolEvent(event);
        break;
      case 'tool_input_partial':
        this.applyPartialInput(event);
        break;
      case 'approval_required':
        this.addApprovalCard(event);
        break;
      case 'approval_resolved':
        this.cards.get(`approval:${event.approval_id}`)?.resolve(event);
        this.noteDecider(event.tool_call_id, event.decided_by);
        break;
      case 'elicitation_required':
        this.addElicitationCard(event);
        break;
      case 'elicitation_resolved':
        this.cards.get(`elicitation:${event.elicitation_id}`)?.resolve(event);
        break;
      case 'auth_required':
        this.addSignInCard(event);
        break;
      case 'error':
        this.showError(event.error ?? 'The answer stopped because of an error.');
        break;
      case 'done':
        if (event.outcome === 'failed') this.showNotice('The answer ended early because of an error; what was written so far is saved.');
        if (event.outcome === 'cancelled') this.showNotice('The answer was stopped; what was written so far is saved.');
        this.showUsage(event);
        this.finish();
        break;
      default:
        break;
    }
  }

  setMeta({ model, provider, unavailable_servers: unavailableServers, tools }) {
    this.meta.replaceChildren();
    if (model) this.meta.append(h('span', { class: 'badge', title: provider ? `Provider: ${provider}` : 'Model', text: model }));
    if (Array.isArray(tools)) this.meta.append(h('span', { text: `${tools.length} tool${tools.length === 1 ? '' : 's'} available` }));
    for (const server of unavailableServers ?? []) {
      this.meta.append(h('span', { class: 'badge badge-warning', title: server.message ?? '', text: `${server.server} unavailable${server.message ? `: ${server.message}` : ''}` }));
    }
  }

  /**
   * The line under the answer: who answered (`provider_name · model`) and its tokens (in, out,
   * cache reads and writes when there were any), from `done` or from the stored messages.
   */
  showUsage({ provider_name: providerName, model, usage }) {
    const parts = [];
    if (providerName || model) parts.push([providerName, model].filter(Boolean).join(' · '));
    if (usage) {
      const count = (value) => Number(value ?? 0).toLocaleString('en');
      parts.push(`${count(usage.input_tokens)} tokens in`, `${count(usage.output_tokens)} out`);
      if (usage.cache_read_tokens) parts.push(`${count(usage.cache_read_tokens)} cache read`);
      if (usage.cache_write_tokens) parts.push(`${count(usage.cache_write_tokens)} cache write`);
    }
    this.usageLine.textContent = parts.join(' · ');
    this.usageLine.hidden = parts.length === 0;
    if (providerName) this.usageLine.dataset.provider = providerName;
    if (model) this.usageLine.dataset.model = model;
  }

  appendText(token) {
    if (!token) return;
    this.text += token;
    this.#scheduleRender();
  }

  setText(text) {
    this.text = text ?? '';
    this.#renderNow();
  }

  applyToolEvent(event) {
    const callId = event.call_id ?? `${event.server}:${event.tool}:${this.toolViews.size}`;
    let view = this.toolViews.get(callId);
    if (!view) {
      view = new ToolCallView({ callId, server: event.server, tool: event.tool, argumentsValue: event.arguments });
      view.conversationId = this.conversationId;
      this.toolViews.set(callId, view);
      this.activity.append(view.element);
    }
    const statusWords = { started: 'started', running: 'started', proposed: 'started', approved: 'started', dispatched: 'started', completed: 'completed', success: 'completed', error: 'error', failed: 'error', timeout: 'error', denied: 'denied', unknown: 'unknown' };
    const recordedState = event.state === 'denied' || event.state === 'unknown' ? event.state : null;
    if (event.tool_call_id) view.toolCallId = event.tool_call_id;
    if (this.deciders.has(view.toolCallId)) view.decidedBy = this.deciders.get(view.toolCallId);
    if (event.status === 'progress') {
      view.update({ status: 'progress', progress: event.progress });
      return view;
    }
    if (event.status === 'task') {
      view.conversationId = view.conversationId ?? this.conversationId;
      view.update({ status: 'task', task: event.task, argumentsValue: event.arguments });
      this.onLayoutChange();
      return view;
    }
    view.update({
      resultTruncated: event.result_truncated === true,
      errorCode: event.error_code,
      status: recordedState ?? statusWords[event.status] ?? event.status ?? 'started',
      result: event.result,
      error: event.error,
      durationMs: event.duration_ms,
      argumentsValue: event.arguments,
    });
    if (event.app && view.toolCallId) this.showApp(view, event);
    this.onLayoutChange();
    return view;
  }

  /**
   * Shows the MCP App of a tool call under it (once), and tells it what the call became:
   * its arguments, then its result, or that it will not have one.
   */
  showApp(view, { arguments: argumentsValue, status, state, result, app, fromHistory = false }) {
    let frame = this.appFrames.get(view.toolCallId);
    const preview = frame || fromHistory ? null : this.#takePreview(view, app);
    if (preview) {
      frame = preview;
      frame.adopt(view.toolCallId);
      this.appFrames.set(view.toolCallId, frame);
      // The view moves above the app, never the app (a moved iframe loads again).
      frame.element.before(view.element);
      frame.toolInput(argumentsValue ?? view.argumentsValue);
    }
    if (!frame) {
      frame = new AppFrame({ conversationId: this.conversationId ?? view.conversationId, toolCallId: view.toolCallId, server: view.server, tool: view.tool });
      this.appFrames.set(view.toolCallId, frame);
      view.element.after(frame.element);
      // From history, the API's answer carries the stored arguments and result.
      frame.fromHistory = fromHistory;
      if (!fromHistory) frame.toolInput(argumentsValue ?? view.argumentsValue);
      frame.load();
    }
    if (fromHistory) return;
    if (frame.sentOutcome) return;
    if (status === 'completed' && result !== undefined) {
      frame.sentOutcome = true;
      frame.toolResult(result);
    } else if (/^(error|failed|denied|unknown)$/.test(state ?? status ?? '')) {
      frame.sentOutcome = true;
      frame.toolCancelled(state ?? status);
    }
  }

  /**
   * The input of a call to an app tool as the model writes it: the app is shown at once (where
   * the call will be) and given each version; the call adopts it when it starts.
   */
  applyPartialInput(event) {
    if (!event.app) return;
    const key = event.call_id || `${event.server}:${event.tool}:#${event.index}`;
    let frame = this.previewFrames.get(key);
    if (!frame) {
      frame = new AppFrame({ conversationId: this.conversationId, server: event.server, tool: event.tool, preview: event.app });
      frame.previewKey = key;
      this.previewFrames.set(key, frame);
      this.activity.append(frame.element);
      frame.load();
      this.onLayoutChange();
    }
    frame.toolInputPartial(event.arguments);
  }

  /** The app shown for `view`'s call before it existed: by the model's call id, else the first of its app. */
  #takePreview(view, app) {
    let frame = this.previewFrames.get(view.callId);
    if (!frame && app) {
      frame = [...this.previewFrames.values()].find((candidate) => candidate.server === view.server
        && candidate.tool === view.tool && candidate.preview.resource_uri === app.resource_uri);
    }
    if (frame) this.previewFrames.delete(frame.previewKey);
    return frame ?? null;
  }

  /** Remembers who decided a call's approval and tells its view, if it is shown already. */
  noteDecider(toolCallId, decidedBy) {
    if (!toolCallId || !decidedBy) return;
    this.deciders.set(toolCallId, decidedBy);
    [...this.toolViews.values()].find((candidate) => candidate.toolCallId === toolCallId)?.noteDecider(decidedBy);
  }

  /** Shows a call's task status as stored (`task`: `{task_id, status, status_message}`), if the call is shown here. */
  showStoredTask(toolCallId, task) {
    const view = [...this.toolViews.values()].find((candidate) => candidate.toolCallId === toolCallId);
    if (!view) return;
    view.update({ status: 'task', task });
    this.onLayoutChange();
  }

  /** Notes a settled approval on its tool call (history). */
  noteApproval(approval) {
    const view = [...this.toolViews.values()].find((candidate) => candidate.toolCallId === approval.tool_call_id);
    if (!view) return;
    view.noteDecider(approval.decided_by);
    const who = approval.decided_by && approval.decided_by === getIdentity()?.user_id ? 'you' : approval.decided_by;
    const words = { approved: 'Approved', denied: 'Denied', expired: 'Expired without a decision', cancelled: 'Cancelled (the answer ended first)' }[approval.status] ?? approval.status;
    const text = `${words}${who && !/^(timeout|policy)$/.test(who) ? ` by ${who}` : ''}${approval.remember === 'always' ? ', always' : ''}`;
    view.element.querySelector('summary')?.append(h('span', { class: 'approval-note', text: `· ${text}` }));
  }

  addApprovalCard(event) {
    const key = `approval:${event.approval_id}`;
    if (this.cards.has(key)) return;
    const card = new ApprovalCard(event);
    this.cards.set(key, card);
    this.activity.append(card.element);
    this.onLayoutChange();
    card.buttons.querySelector('button')?.focus({ preventScroll: true });
  }

  addElicitationCard(event) {
    const key = `elicitation:${event.elicitation_id}`;
    if (this.cards.has(key)) return;
    const card = new ElicitationCard(event);
    this.cards.set(key, card);
    this.activity.append(card.element);
    this.onLayoutChange();
    card.element.querySelector('input, select, button')?.focus({ preventScroll: true });
  }

  addSignInCard(event) {
    const key = `sign-in:${event.server_id}`;
    if (this.cards.has(key)) return;
    const card = new SignInCard(event);
    this.cards.set(key, card);
    this.activity.append(card.element);
    this.onLayoutChange();
  }

  showError(message) {
    this.notices.append(h('p', { class: 'message-error', role: 'alert', text: plainErrorText(message) }));
    this.onLayoutChange();
  }

  showNotice(message) {
    this.notices.append(h('p', { class: 'message-notice', text: message }));
    this.onLayoutChange();
  }

  /** Ends streaming: final render, caret removed, open cards stop their timers. */
  finish() {
    if (!this.streaming) return;
    this.streaming = false;
    this.#dropPreviews();
    this.element.removeAttribute('aria-busy');
    this.#renderNow();
    this.answer.style.minHeight = '';
  }

  dispose() {
    for (const card of this.cards.values()) card.dispose();
    for (const frame of this.appFrames.values()) frame.dispose();
    this.#dropPreviews();
  }

  /** Apps shown for calls that never started (the answer ended first) go. */
  #dropPreviews() {
    for (const frame of this.previewFrames.values()) {
      frame.dispose();
      frame.element.remove();
    }
    this.previewFrames.clear();
  }

  #scheduleRender() {
    if (this.renderScheduled) return;
    this.renderScheduled = true;
    requestAnimationFrame(() => {
      this.renderScheduled = false;
      this.#renderNow();
    });
  }

  #renderNow() {
    this.answer.innerHTML = renderMarkdown(this.text);
    if (this.streaming) {
      const caret = h('span', { class: 'typing-caret', 'aria-hidden': 'true' });
      (this.answer.lastElementChild && !/^(PRE|TABLE|DIV|UL|OL|HR)$/.test(this.answer.lastElementChild.tagName)
        ? this.answer.lastElementChild : this.answer).append(caret);
      const height = this.answer.offsetHeight;
      if (height > this.largestAnswerHeight) this.largestAnswerHeight = height;
      this.answer.style.minHeight = `${this.largestAnswerHeight}px`;
    }
    this.answer.hidden = !this.text && !this.streaming;
    this.onLayoutChange();
  }
}

function plainErrorText(error) {
  if (typeof error === 'string') return error;
  return error?.message ?? 'The answer stopped because of an error.';
}

// chat-page: the Chat page — conversation list, bud selector, model picker, transcript, composer
// with "Try asking" and stop. Sends a question with POST /chat/stream and renders the typed SSE events as
// they arrive; opening a conversation loads its stored history.

import { h, replaceChildren } from '../../lib/dom.js';
import { api, listItems, segment } from '../../lib/api.js';
import { replaceAddress } from '../../lib/address.js';
import { streamServerSentEvents } from '../../lib/sse.js';
import { authHeaders, signOut } from '../../lib/session.js';
import { AssistantTurn } from './assistant-turn.js';
import { ConversationList, conversationTitle } from './conversation-list.js';
import { renderHistory, renderUserMessage, storedTask } from './history.js';
import { renderTryAsking } from './examples.js';
import { ModelPicker } from './model-picker.js';
import { ComposerItems } from './composer-items.js';
import { AttachmentPicker } from './composer-attachments.js';
import { SlashPrompts } from './composer-prompts.js';
import { AttachmentWatch } from './attachment-watch.js';

/** Draws the chat page; returns its cleanup. */
export async function renderPage(container, { parts, query }) {
  const page = new ChatPage(container, { budId: query?.get('bud') ?? '' });
  await page.open(parts[0] ?? null);
  return () => page.dispose();
}

class ChatPage {
  constructor(container, { budId = '' } = {}) {
    this.conversationId = null;
    // The assistant a link asked for (`#/chat?bud=ID`, from the Assistants page).
    this.requestedBudId = budId;
    this.turns = [];
    this.streamController = null;
    this.conversations = new ConversationList({
      onOpen: (conversationId) => this.open(conversationId),
      onNew: () => this.open(null),
      onDeleted: (conversationId) => { if (conversationId === this.conversationId) this.open(null); },
    });
    this.title = h('h1', { class: 'chat-title', text: 'New conversation' });
    this.budSelect = h('select', { id: 'bud-select', name: 'bud' }, h('option', { value: '', text: 'Default assistant' }));
    this.buds = [];
    this.budSelect.addEventListener('change', () => this.#syncModelPicker());
    this.modelPicker = new ModelPicker({
      onError: (message) => this.#showAlert(message),
      onChanged: (conversation) => { if (conversation?.id === this.conversationId) this.conversationDetail = conversation; },
    });
    this.transcript = h('div', { class: 'transcript', role: 'log', 'aria-live': 'off', 'aria-label': 'Conversation' });
    this.attachmentWatch = new AttachmentWatch(this.transcript);
    this.announcer = h('div', { class: 'visually-hidden', role: 'status', 'aria-live': 'polite' });
    this.input = h('textarea', { id: 'chat-input', name: 'message', rows: '2', placeholder: 'Ask about your knowledge graph, or anything your tools can do…', 'aria-describedby': 'chat-input-hint' });
    this.sendButton = h('button', { type: 'submit', class: 'button button-primary', text: 'Send' });
    this.stopButton = h('button', { type: 'button', class: 'button button-danger', text: 'Stop', hidden: true, onclick: () => this.stop() });
    this.examplesSlot = h('div', {});
    // Resources to attach and prompts as slash commands (before the input's own Enter handler).
    this.items = new ComposerItems({ conversationId: () => this.conversationId });
    this.attachments = new AttachmentPicker(this.items);
    this.slashPrompts = new SlashPrompts(this.items, this.input, { onRun: (prompt) => this.send(this.input.value, { prompt }) });
    this.composer = h('form', { class: 'composer', 'aria-label': 'Ask a question' },
      this.examplesSlot,
      this.attachments.panel, this.slashPrompts.form, this.slashPrompts.menu, this.attachments.chips,
      h('label', { for: 'chat-input', class: 'visually-hidden', text: 'Message' }),
      h('div', { class: 'composer-row' }, this.attachments.button, this.input, this.sendButton, this.stopButton),
      h('p', { id: 'chat-input-hint', class: 'small muted', text: 'Enter sends, Shift+Enter adds a line, Escape stops, / lists prompts. Tools run on your behalf; calls that need approval ask you first.' }));
    this.composer.addEventListener('submit', (event) => {
      event.preventDefault();
      this.send(this.input.value);
    });
    // Messages MCP Apps added (the person accepted each): sent as the person's next message.
    this.appMessages = [];
    this.transcript.addEventListener('mcp-app-message', (event) => this.#sendFromApp(event.detail?.text));
    this.transcript.addEventListener('scroll', () => {
      const distance = this.transcript.scrollHeight - this.transcript.scrollTop - this.transcript.clientHeight;
      this.stickToBottom = distance < 120;
    });
    this.composer.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && this.streaming) this.stop();
    });
    this.input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.send(this.input.value);
      }
    });
    this.element = h('div', { class: 'chat-layout' },
      this.conversations.element,
      h('section', { class: 'chat-main', 'aria-labelledby': 'chat-title-heading' },
        h('div', { class: 'chat-toolbar' },
          Object.assign(this.title, { id: 'chat-title-heading' }),
          h('label', { for: 'bud-select', class: 'small', text: 'Assistant' }),
          this.budSelect,
          this.modelPicker.element),
        this.transcript,
        this.announcer,
        this.composer));
    container.append(this.element);
    this.conversations.reload();
    this.#loadBuds();
  }

  async #loadBuds() {
    try {
      const buds = listItems(await api.get('/api/buds'), 'buds');
      this.buds = buds;
      replaceChildren(this.budSelect, h('option', { value: '', text: 'Default assistant' }),
        buds.map((bud) => h('option', { value: bud.id, text: bud.name })));
      if (this.requestedBudId && !this.conversationId && buds.some((bud) => bud.id === this.requestedBudId)) this.budSelect.value = this.requestedBudId;
      this.#syncBudSelect();
    } catch {
      this.budSelect.title = 'Assistant profiles are not available.';
    }
  }

  #syncBudSelect() {
    const conversation = this.conversations.find(this.conversationId) ?? this.conversationDetail;
    const budId = conversation?.bud_id ?? conversation?.source_bud_id ?? '';
    if (this.conversationId) this.budSelect.value = budId ?? '';
    this.budSelect.disabled = Boolean(this.conversationId) || this.streaming;
    this.budSelect.title = this.conversationId ? 'A conversation keeps the assistant it started with.' : 'Choose which assistant answers this new conversation.';
    this.#syncModelPicker();
  }

  /** The model picker shows the current conversation (or the new one's assistant). */
  #syncModelPicker() {
    const conversation = this.conversationId ? (this.conversationDetail ?? this.conversations.find(this.conversationId)) : null;
    const budId = conversation ? conversation.bud_id : this.budSelect.value;
    const bud = this.buds.find((candidate) => candidate.id === budId) ?? null;
    this.modelPicker.show({ conversation: conversation?.id === this.conversationId ? conversation : null, bud, disabled: this.streaming });
  }

  #showAlert(message) {
    this.transcript.append(h('p', { class: 'alert alert-error', role: 'alert', text: message }));
  }

  /** Opens a conversation (or a new, empty one for null). */
  async open(conversationId) {
    if (this.streaming) this.stop();
    this.attachmentWatch.stop();
    this.#disposeTurns();
    this.attachments.clear();
    this.slashPrompts.close();
    this.appMessages = [];
    this.conversationId = conversationId;
    this.conversationDetail = null;
    this.conversations.setCurrent(conversationId);
    replaceAddress(conversationId ? `#/chat/${encodeURIComponent(conversationId)}` : '#/chat');
    this.transcript.replaceChildren();
    this.title.textContent = 'New conversation';
    this.#syncBudSelect();
    if (!conversationId) {
      this.#showEmptyState();
      this.input.focus();
      return;
    }
    this.transcript.append(h('p', { class: 'muted', text: 'Loading conversation…' }));
    try {
      const detail = await api.get(`/chat/conversations/${segment(conversationId)}`);
      if (this.conversationId !== conversationId) return;
      this.conversationDetail = detail?.conversation;
      this.title.textContent = conversationTitle(this.conversationDetail);
      const storedMessages = listItems(detail, 'messages');
      const inFlight = this.conversationDetail?.answer_in_flight === true;
      // An answer still being written is re-attached live (its events replay from the start),
      // so its partial stored copy is left out here.
      const lastQuestion = storedMessages.map((message) => message.role).lastIndexOf('user');
      const messages = inFlight && lastQuestion >= 0 ? storedMessages.slice(0, lastQuestion + 1) : storedMessages;
      const { elements, turns } = renderHistory(messages, { onLayoutChange: () => this.#keepAtBottom(), toolCalls: listItems(detail, 'tool_calls'), conversationId });
      this.turns = turns;
      replaceChildren(this.transcript, elements);
      if (elements.length === 0) this.#showEmptyState();
      else replaceChildren(this.examplesSlot, h('details', { class: 'small' }, h('summary', { text: 'Try asking' }), renderTryAsking({ onAsk: (question) => this.send(question), compact: true })));
      this.#syncBudSelect();
      if (inFlight) {
        this.#attach(conversationId);
      } else {
        this.attachmentWatch.follow(conversationId);
        await this.#showPendingApprovals(conversationId);
        this.#watchRunningTasks(conversationId, listItems(detail, 'tool_calls'));
      }
      this.transcript.scrollTop = this.transcript.scrollHeight;
    } catch (error) {
      replaceChildren(this.transcript, h('p', { class: 'alert alert-error', role: 'alert', text: error.status === 404 ? 'This conversation no longer exists.' : `The conversation could not be loaded: ${error.message}` }));
    }
  }

  /**
   * A conversation with no answer running may still have calls whose MCP tasks work (followed
   * by the server, e.g. after its restart): it is read again every few seconds, each task's
   * card showing its latest stored status, until none works, then shown again with their
   * results.
   */
  #watchRunningTasks(conversationId, toolCalls) {
    const running = (calls) => calls.some((call) => call.state === 'dispatched' && call.task_id);
    if (!running(toolCalls)) return;
    clearTimeout(this.taskWatchTimer);
    this.taskWatchTimer = setTimeout(async () => {
      if (this.conversationId !== conversationId || this.streaming) return;
      try {
        const detail = await api.get(`/chat/conversations/${segment(conversationId)}`);
        if (this.conversationId !== conversationId || this.streaming) return;
        const calls = listItems(detail, 'tool_calls');
        if (!running(calls)) {
          await this.open(conversationId);
          return;
        }
        for (const call of calls.filter((record) => record.state === 'dispatched' && record.task_id)) {
          for (const turn of this.turns) turn.showStoredTask(call.id, storedTask(call));
        }
        this.#watchRunningTasks(conversationId, calls);
      } catch {
        // The next open or reload shows it.
      }
    }, 3000);
  }

  /**
   * After a reload: approvals still waiting get their cards back, and decided ones are noted on
   * their tool calls ("Approved by you, always").
   */
  async #showPendingApprovals(conversationId) {
    let approvals;
    try {
      approvals = listItems(await api.get(`/chat/approvals?conversation_id=${encodeURIComponent(conversationId)}&state=all`), 'approvals');
    } catch {
      return;
    }
    if (this.conversationId !== conversationId) return;
    for (const approval of approvals) {
      if (approval.status === 'pending') continue;
      for (const turn of this.turns) turn.noteApproval(approval);
    }
    // An app's own requests get their cards under the app, while the app waits (app-approvals.js).
    const mine = approvals.filter((approval) => approval.status === 'pending' && approval.conversation_id === conversationId && !approval.app_of);
    if (mine.length === 0 || this.conversationId !== conversationId) return;
    let turn = this.turns[this.turns.length - 1];
    if (!turn) {
      turn = new AssistantTurn({ onLayoutChange: () => this.#keepAtBottom() });
      this.turns.push(turn);
      this.transcript.append(turn.element);
    }
    for (const approval of mine) turn.addApprovalCard(approval);
  }

  #showEmptyState() {
    this.examplesSlot.replaceChildren();
    this.transcript.append(h('div', { class: 'empty-state stack' },
      h('p', { text: 'Ask a question. The assistant uses the tools of your MCP servers and shows each call as it happens.' }),
      renderTryAsking({ onAsk: (question) => this.send(question) })));
  }

  get streaming() {
    return this.streamController !== null;
  }

  /**
   * Sends a question (with the attached resources, or after a prompt) and streams the answer.
   * An app's message (`keepInput`) leaves the person's draft and attachments alone.
   */
  async send(rawText, { prompt = null, keepInput = false } = {}) {
    const text = String(rawText ?? '').trim();
    if ((!text && !prompt) || this.streaming) return;
    const attachments = keepInput ? [] : this.attachments.attachments();
    if (!keepInput) this.input.value = '';
    this.transcript.querySelector('.empty-state')?.remove();
    const controller = new AbortController();
    this.streamController = controller;
    this.#setStreamingUi(true);
    const modelChoice = this.modelPicker.pendingChoice;
    if (!this.conversationId && (this.budSelect.value || modelChoice)) {
      try {
        const created = await api.post('/chat/conversations', {
          ...(this.budSelect.value ? { bud_id: this.budSelect.value } : {}),
          ...(modelChoice ? { provider: modelChoice.provider, model: modelChoice.model || undefined } : {}),
        });
        this.conversationDetail = created;
        this.#adoptConversation(created?.id);
      } catch (error) {
        this.transcript.append(h('p', { class: 'alert alert-error', role: 'alert', text: `The conversation could not be started: ${error.message}` }));
        if (!keepInput) this.input.value = text;
        this.streamController = null;
        this.#setStreamingUi(false);
        return;
      }
    }
    this.transcript.append(renderUserMessage(text, { attachments, prompt }));
    const title = text || `/${prompt.server}:${prompt.name}`;
    if (this.title.textContent === 'New conversation') this.title.textContent = title.length > 80 ? `${title.slice(0, 79)}…` : title;
    const body = { message: text };
    if (this.conversationId) body.conversation_id = this.conversationId;
    if (attachments.length) body.attachments = attachments;
    if (prompt) body.prompt = prompt;
    if (!keepInput) this.attachments.clear();
    await this.#runStream(controller, { url: '/chat/stream', body });
    this.input.focus();
  }

  /** An app's message: sent now, or once the answer in progress has finished. */
  #sendFromApp(text) {
    if (!text) return;
    if (this.streaming) this.appMessages.push(text);
    else this.send(text, { keepInput: true });
  }

  /** Re-attaches to an answer still being written (after a reload or from another tab). */
  async #attach(conversationId) {
    if (this.streaming) return;
    const controller = new AbortController();
    this.streamController = controller;
    this.#setStreamingUi(true);
    await this.#runStream(controller, { url: `/chat/${encodeURIComponent(conversationId)}/stream`, method: 'GET' });
  }

  /** Streams one answer into a new assistant turn until done, stop or failure. */
  async #runStream(controller, request) {
    const turn = new AssistantTurn({ onLayoutChange: () => this.#keepAtBottom() });
    turn.conversationId = this.conversationId;
    this.turns.push(turn);
    this.transcript.append(turn.element);
    turn.startStreaming();
    this.transcript.scrollTop = this.transcript.scrollHeight;
    this.stickToBottom = true;
    try {
      const { completed } = await streamServerSentEvents({
        ...request,
        headers: authHeaders(),
        signal: controller.signal,
        onEvent: (event) => {
          if (event.type === 'meta') this.#adoptConversation(event.conversation_id);
          turn.applyEvent(event);
        },
      });
      if (!completed) turn.showError('The connection closed before the answer finished. What was written so far is saved; reopen the conversation to see it.');
      this.announcer.textContent = 'Answer complete.';
    } catch (error) {
      if (error.name === 'AbortError') {
        turn.showNotice('Stopped. What was written so far is saved.');
      } else if (error.status === 401) {
        signOut('Your token is no longer accepted. Sign in again.');
        return;
      } else {
        turn.showError(error.status ? error.message : `The answer could not be received: ${error.message}. Check your connection and try again.`);
      }
    } finally {
      turn.finish();
      if (this.streamController === controller) {
        this.streamController = null;
        this.#setStreamingUi(false);
      }
    }
    if (!this.streaming) this.attachmentWatch.follow(this.conversationId);
    await this.conversations.reload();
    const summary = this.conversations.find(this.conversationId);
    if (summary) this.title.textContent = conversationTitle(summary);
    const waiting = this.appMessages.shift();
    if (waiting && !this.streaming) this.send(waiting, { keepInput: true });
  }

  #adoptConversation(conversationId) {
    if (!conversationId || conversationId === this.conversationId) return;
    this.conversationId = conversationId;
    replaceAddress(`#/chat/${encodeURIComponent(conversationId)}`);
    this.conversations.reload().then(() => {
      this.conversations.setCurrent(conversationId);
      this.#syncModelPicker();
    });
    this.#syncBudSelect();
  }

  /** Stops the answer in progress; the server keeps what was produced. */
  stop() {
    this.streamController?.abort();
  }

  #setStreamingUi(streaming) {
    this.sendButton.hidden = streaming;
    this.stopButton.hidden = !streaming;
    this.input.setAttribute('aria-disabled', streaming ? 'true' : 'false');
    this.#syncBudSelect();
  }

  #keepAtBottom() {
    const distance = this.transcript.scrollHeight - this.transcript.scrollTop - this.transcript.clientHeight;
    if (this.stickToBottom !== false || distance < 120) this.transcript.scrollTop = this.transcript.scrollHeight;
  }

  #disposeTurns() {
    for (const turn of this.turns) turn.dispose();
    this.turns = [];
  }

  dispose() {
    this.stop();
    this.attachmentWatch.stop();
    this.#disposeTurns();
  }
}

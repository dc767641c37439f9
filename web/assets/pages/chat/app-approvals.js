// app-approvals: the approval cards of an MCP App's own requests. An app's `tools/call` and
// `resources/read` go through the approval gate like the model's calls, but outside a turn: no
// `approval_required` event reaches the page. So while an app has a request in flight, this
// polls the conversation's pending approvals (`GET /chat/approvals?conversation_id=…`) and shows
// the ones its app asked (`app_of`, the tool call the app is shown with) as the same cards a
// turn's calls get (action-cards.js: Approve once / Always allow / Deny, posted to the same
// decision API), above the app (under its tool call) and brought into view. The app's request
// then goes on or fails with the refusal; a card leaves as soon as its request is decided, here
// or anywhere else (another tab, the approvals API).

import { h } from '../../lib/dom.js';
import { api, listItems } from '../../lib/api.js';
import { ApprovalCard } from './action-cards.js';

const POLL_MS = 750;

export class AppApprovals {
  constructor({ conversationId, toolCallId, onLayoutChange }) {
    this.conversationId = conversationId;
    this.toolCallId = toolCallId;
    this.onLayoutChange = onLayoutChange ?? (() => {});
    this.inFlight = 0;
    this.cards = new Map();
    /** Decided here: a poll answered before the decision must not bring the card back. */
    this.decided = new Set();
    this.element = h('div', { class: 'mcp-app-approvals stack', 'aria-live': 'polite' });
  }

  /** Runs one of the app's gated requests, showing its approval card while it waits. */
  async around(request) {
    this.inFlight += 1;
    this.#watch();
    try {
      return await request();
    } finally {
      this.inFlight -= 1;
    }
  }

  /** Polls while a request is in flight; the cards go when the last one ends. */
  async #watch() {
    if (this.watching) return;
    this.watching = true;
    try {
      while (this.inFlight > 0 && !this.disposed) {
        await this.#refresh();
        await sleep(POLL_MS);
      }
    } finally {
      this.watching = false;
      this.#keepOnly(new Set());
    }
  }

  /** Shows the app's pending approvals and removes the cards of decided ones. */
  async #refresh() {
    let approvals;
    try {
      approvals = listItems(await api.get(`/chat/approvals?conversation_id=${encodeURIComponent(this.conversationId)}`), 'approvals');
    } catch {
      return;
    }
    if (this.disposed || this.inFlight === 0) return;
    const mine = approvals.filter((approval) => approval.status === 'pending' && approval.app_of === this.toolCallId);
    this.#keepOnly(new Set(mine.map((approval) => approval.approval_id)));
    for (const approval of mine) this.#show(approval);
  }

  #show(approval) {
    if (this.cards.has(approval.approval_id) || this.decided.has(approval.approval_id)) return;
    const card = new ApprovalCard(approval, {
      onDecided: () => {
        this.decided.add(approval.approval_id);
        this.#remove(approval.approval_id);
      },
    });
    card.element.classList.add('mcp-app-approval');
    this.cards.set(approval.approval_id, card);
    this.element.append(card.element);
    this.onLayoutChange();
    // Above the app, brought into view: the person is looking at the app, which may be tall.
    card.element.scrollIntoView({ block: 'nearest' });
    card.buttons.querySelector('button')?.focus({ preventScroll: true });
  }

  #keepOnly(pendingIds) {
    for (const id of [...this.cards.keys()]) if (!pendingIds.has(id)) this.#remove(id);
  }

  #remove(id) {
    const card = this.cards.get(id);
    if (!card) return;
    this.cards.delete(id);
    card.dispose();
    card.element.remove();
    this.onLayoutChange();
  }

  dispose() {
    this.disposed = true;
    this.#keepOnly(new Set());
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// action-cards: the cards that ask the user to act mid-answer — tool approvals (Approve once /
// Always / Deny with a countdown, and the definition diff when a pinned tool changed), elicitation
// forms (generated from the server's requested schema), both posting the decision to the API and
// then showing the outcome (the stream's *_resolved events also close them), and sign-in cards for
// a server the person has not connected (`auth_required`: Connect sends the window to sign in).

import { h, replaceChildren } from '../../lib/dom.js';
import { api, segment } from '../../lib/api.js';
import { renderJsonViewer, parseJsonLoosely } from '../../lib/json-view.js';
import { renderElicitationForm } from '../../lib/schema-form.js';
import { getIdentity } from '../../lib/session.js';
import { connectServer } from '../../lib/oauth.js';

/** Seconds left until `expiresAt` (never negative); null without a deadline. */
export function secondsUntil(expiresAt, now = Date.now()) {
  if (!expiresAt) return null;
  const deadline = new Date(expiresAt).getTime();
  if (Number.isNaN(deadline)) return null;
  return Math.max(0, Math.ceil((deadline - now) / 1000));
}

/** "1:05" style countdown text. */
export function formatCountdown(seconds) {
  const minutes = Math.floor(seconds / 60);
  return `${minutes}:${String(seconds % 60).padStart(2, '0')}`;
}

/** Renders a definition diff `{changes: [{field, before, after}…], omitted}` (the approval's `diff`). */
export function renderDefinitionDiff(diff) {
  if (!diff) return null;
  const changes = Array.isArray(diff.changes) ? diff.changes : null;
  if (changes) {
    return h('pre', { class: 'definition-diff' }, changes.flatMap((change) => {
      const field = change.field;
      return [
        h('span', { text: `${field}:` }),
        change.before !== undefined ? h('span', { class: 'diff-removed', text: `- ${stringify(change.before)}` }) : null,
        change.after !== undefined ? h('span', { class: 'diff-added', text: `+ ${stringify(change.after)}` }) : null,
      ];
    }), Number.isInteger(diff.omitted) && diff.omitted > 0 ? h('span', { text: `…and ${diff.omitted} more change${diff.omitted === 1 ? '' : 's'}` }) : null);
  }
  return renderJsonViewer(diff, { label: 'What changed', expandDepth: 2 });
}

function stringify(value) {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** An approval card for an `approval_required` event. */
export class ApprovalCard {
  constructor(event, { onDecided } = {}) {
    this.approvalId = event.approval_id;
    this.expiresAt = event.expires_at;
    this.onDecided = onDecided;
    this.countdown = h('span', { class: 'countdown', 'aria-live': 'off' });
    this.message = h('p', { class: 'field-error', role: 'alert' });
    const decide = (decision, remember) => () => this.decide(decision, remember);
    this.buttons = h('div', { class: 'button-row' },
      h('button', { type: 'button', class: 'button button-primary', text: 'Approve once', onclick: decide('approve', 'once') }),
      h('button', { type: 'button', class: 'button button-success', text: 'Always allow', title: 'Approve now and stop asking for this tool', onclick: decide('approve', 'always') }),
      h('button', { type: 'button', class: 'button button-danger', text: 'Deny', onclick: decide('deny', 'once') }));
    const diff = event.diff ?? null;
    const toolLabel = event.server ? `${event.server} · ${event.tool}` : event.tool;
    this.element = h('section', { class: 'action-card approval-card', 'aria-label': `Approval needed for ${toolLabel}`, dataset: { approvalId: this.approvalId ?? '', state: 'pending' } },
      h('div', { class: 'row' },
        h('h3', { text: `Allow ${toolLabel}?` }), h('span', { class: 'spacer' }),
        this.expiresAt ? h('span', { class: 'small' }, 'Time left ', this.countdown) : null),
      event.description ? h('p', { class: 'description', text: event.description }) : null,
      diff ? h('div', { class: 'stack' }, h('p', { class: 'alert alert-warning', text: 'This tool changed since it was last approved. Review what changed:' }), renderDefinitionDiff(diff)) : null,
      renderJsonViewer(parseJsonLoosely(event.arguments ?? {}), { label: 'Arguments', expandDepth: 2 }),
      this.buttons,
      this.message);
    this.#tick();
    this.timer = this.expiresAt ? setInterval(() => this.#tick(), 1000) : null;
  }

  #tick() {
    const seconds = secondsUntil(this.expiresAt);
    if (seconds === null) return;
    this.countdown.textContent = formatCountdown(seconds);
    if (seconds === 0 && this.element.dataset.state === 'pending') this.resolve({ decision: 'expired' });
  }

  /** Sends the decision; the card closes when the server accepts it. */
  async decide(decision, remember) {
    this.buttons.querySelectorAll('button').forEach((button) => { button.disabled = true; });
    this.message.textContent = '';
    try {
      const answer = await api.post(`/chat/approvals/${segment(this.approvalId)}`, { decision, remember });
      this.resolve({ decision: answer?.decision ?? decision, remember: answer?.remember ?? remember });
      this.onDecided?.(decision);
    } catch (error) {
      this.message.textContent = error.status === 409 || error.status === 410
        ? `This request was already settled: ${error.message}`
        : `Your decision was not recorded: ${error.message}`;
      if (error.status === 409 || error.status === 410) this.resolve({ decision: 'settled' });
      else this.buttons.querySelectorAll('button').forEach((button) => { button.disabled = false; });
    }
  }

  /** Shows the final outcome (from our decision or an `approval_resolved` event). */
  resolve({ decision, remember, decided_by: decidedBy, reason }) {
    if (this.element.dataset.state === 'resolved') return;
    clearInterval(this.timer);
    this.element.dataset.state = 'resolved';
    const words = {
      approve: remember === 'always' ? 'Approved — always allowed from now on' : 'Approved once',
      approved: remember === 'always' ? 'Approved — always allowed from now on' : 'Approved',
      deny: 'Denied', denied: 'Denied',
      expired: 'No decision in time — denied', timeout: 'No decision in time — denied', timed_out: 'No decision in time — denied',
      policy: 'Decided by policy',
      settled: 'Already settled',
    };
    const by = decidedBy && !/^(timeout|policy)$/.test(decidedBy) ? ` by ${decidedBy === getIdentity()?.user_id ? 'you' : decidedBy}` : '';
    const text = `${words[decision] ?? `Resolved: ${decision}`}${by}${reason ? ` (${reason})` : ''}`;
    const tone = /^(approve|approved)$/.test(decision) ? 'badge-success' : 'badge-danger';
    replaceChildren(this.buttons, h('span', { class: `badge ${tone}`, role: 'status', text }));
    this.countdown.closest('.small')?.remove();
  }

  dispose() {
    clearInterval(this.timer);
  }
}

/** An elicitation card for an `elicitation_required` event. */
export class ElicitationCard {
  constructor(event) {
    this.elicitationId = event.elicitation_id;
    this.status = h('p', { class: 'field-error', role: 'alert' });
    this.formSlot = h('div', {});
    const schema = event.requested_schema ?? { type: 'object', properties: {} };
    this.formSlot.append(renderElicitationForm(schema, { onRespond: (action, content) => this.respond(action, content) }));
    this.element = h('section', { class: 'action-card elicitation-card', 'aria-label': `${event.server ?? 'A server'} asks for information`, dataset: { elicitationId: this.elicitationId ?? '', state: 'pending' } },
      h('h3', { text: `${event.server ?? 'A server'} asks:` }),
      h('p', { class: 'description', text: event.message ?? '' }),
      this.formSlot,
      this.status);
  }

  async respond(action, content) {
    this.status.textContent = '';
    try {
      await api.post(`/chat/elicitations/${segment(this.elicitationId)}`, content === undefined ? { action } : { action, content });
      this.resolve({ action });
    } catch (error) {
      this.status.textContent = `Your answer was not accepted: ${error.message}`;
    }
  }

  resolve({ action, expired }) {
    if (expired) action = 'expired';
    if (this.element.dataset.state === 'resolved') return;
    this.element.dataset.state = 'resolved';
    const words = { accept: 'Answer sent', decline: 'Declined', cancel: 'Cancelled', expired: 'No answer in time — cancelled' };
    replaceChildren(this.formSlot, h('span', { class: `badge ${action === 'accept' ? 'badge-success' : 'badge-danger'}`, role: 'status', text: words[action] ?? action }));
  }

  dispose() {}
}

/** A sign-in card for an `auth_required` event: the answer went on without the server's tools. */
export class SignInCard {
  constructor(event) {
    const server = event.server ?? 'A server';
    this.status = h('p', { class: 'field-error', role: 'alert' });
    const action = event.code === 'needs_user_credentials'
      ? h('a', { class: 'button button-small', href: '#/servers', text: `Add your credentials for ${server}` })
      : h('button', { type: 'button', class: 'button button-small button-primary', text: `Connect ${server}`,
          onclick: (click) => this.connect(click.currentTarget, event) });
    this.element = h('section', { class: 'action-card sign-in-card', 'aria-label': `${server} needs you to connect`, dataset: { serverId: event.server_id ?? '' } },
      h('p', { class: 'description', text: event.message ?? `${server} needs you to sign in.` }),
      h('div', { class: 'button-row' }, action),
      this.status);
  }

  async connect(button, event) {
    button.disabled = true;
    this.status.textContent = '';
    try {
      await connectServer(event.server_id, { authorizationUrl: event.authorization_url ?? null });
    } catch (error) {
      button.disabled = false;
      this.status.textContent = `Sign-in could not start: ${error.message}`;
    }
  }

  resolve() {}

  dispose() {}
}

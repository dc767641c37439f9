// user-credentials: on a server card, the form where the signed-in person fills in their own
// values for the server's user fields (`auth.user_fields`, referenced as `{{user.NAME}}` in its
// headers, API key or env) — PUT /api/mcp/servers/{id}/user-credentials. Values are write-only:
// the page only ever learns whether each is set (`is_set`), secret fields are password inputs,
// and the inputs are emptied once saved. The card refreshes every few seconds; the form is
// rebuilt only when the server's fields change, so typing is never lost.

import { h, replaceChildren, uniqueId } from '../../lib/dom.js';
import { api, segment } from '../../lib/api.js';
import { hasScope } from '../../lib/session.js';

/** The PUT body from the typed values: empty inputs are left out (they keep what is stored). */
export function buildCredentialsBody(typed, forget = []) {
  const values = {};
  for (const [name, value] of Object.entries(typed)) if (value !== '') values[name] = value;
  for (const name of forget) values[name] = null;
  return { values };
}

export class UserCredentialsForm {
  constructor({ onSaved }) {
    this.onSaved = onSaved;
    this.signature = null;
    this.element = h('details', { class: 'user-credentials-details' });
    this.element.hidden = true;
  }

  /** Shows (or hides) the form for `server`'s user fields. */
  update(server) {
    this.server = server;
    const fields = server.auth?.user_fields ?? [];
    this.element.hidden = fields.length === 0;
    if (fields.length === 0) return;
    const signature = JSON.stringify(fields.map(({ name, title, description, secret }) => [name, title, description, secret]));
    if (signature !== this.signature) {
      const firstTime = this.signature === null;
      this.signature = signature;
      this.#build(fields);
      if (firstTime) this.element.open = fields.some((field) => !field.is_set);
    }
    this.#showState(fields);
  }

  #build(fields) {
    const canUse = hasScope('chat:use');
    this.summary = h('summary', {});
    this.status = h('p', { class: 'small', role: 'status' });
    this.rows = new Map();
    const form = h('form', { class: 'user-credentials', novalidate: true, 'aria-label': `Your credentials for ${this.server.name}` },
      h('p', { class: 'small muted', text: `${this.server.name} uses each person’s own values. Yours are stored encrypted, used only for your connections, and never shown again.` }),
      fields.map((field) => {
        const input = h('input', { type: field.secret ? 'password' : 'text', id: uniqueId('user-field'), name: field.name, autocomplete: field.secret ? 'new-password' : 'off', spellcheck: 'false', disabled: !canUse });
        const state = h('span', { class: 'badge' });
        const forget = h('button', { type: 'button', class: 'button button-small', text: 'Forget', 'aria-label': `Forget your ${field.title}`, disabled: !canUse, onclick: () => this.#save({ forget: [field.name] }) });
        this.rows.set(field.name, { input, state, forget });
        return h('div', { class: 'field', dataset: { userField: field.name } },
          h('label', { for: input.id }, field.title, ' ', state),
          h('div', { class: 'row' }, input, forget),
          field.description ? h('p', { class: 'field-hint', text: field.description }) : null);
      }),
      h('div', { class: 'button-row' },
        h('button', { type: 'submit', class: 'button button-small button-primary', text: 'Save my credentials', disabled: !canUse,
          title: canUse ? null : 'Your token lacks the chat:use scope.' })),
      this.status);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.#save({});
    });
    replaceChildren(this.element, this.summary, form);
  }

  #showState(fields) {
    const missing = fields.filter((field) => !field.is_set).length;
    this.summary.textContent = missing ? `Your credentials — ${missing} of ${fields.length} not set` : 'Your credentials — all set';
    for (const field of fields) {
      const row = this.rows.get(field.name);
      if (!row) continue;
      row.state.textContent = field.is_set ? 'set' : 'not set';
      row.state.className = `badge ${field.is_set ? 'badge-success' : 'badge-warning'}`;
      row.input.placeholder = field.is_set ? 'Set — type a new value to replace it' : 'Not set';
      row.forget.hidden = !field.is_set;
    }
  }

  async #save({ forget = [] }) {
    const typed = Object.fromEntries([...this.rows].map(([name, row]) => [name, row.input.value]));
    const body = forget.length ? buildCredentialsBody({}, forget) : buildCredentialsBody(typed);
    if (Object.keys(body.values).length === 0) {
      this.status.textContent = 'Type a value first.';
      return;
    }
    this.status.textContent = 'Saving…';
    try {
      const auth = await api.put(`/api/mcp/servers/${segment(this.server.id)}/user-credentials`, body);
      if (!forget.length) for (const row of this.rows.values()) row.input.value = '';
      this.#showState(auth?.user_fields ?? []);
      this.status.textContent = forget.length ? 'Forgotten.' : 'Saved. Your values are used from your next connection, question or test.';
      await this.onSaved?.();
    } catch (error) {
      this.status.textContent = `Not saved: ${error.message}`;
    }
  }
}

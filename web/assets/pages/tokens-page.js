// tokens-page: "My tokens" — the signed-in person's own API tokens (GET /api/me/tokens): create
// one with scopes up to their own (the form offers only those; the server checks again), see
// its secret once, copy it, revoke a token (DELETE /api/me/tokens/{id}). For automation and MCP
// clients; the browser session itself needs none.

import { h, copyTextToClipboard, formatDateTime, showToast } from '../lib/dom.js';
import { api, ApiError, segment } from '../lib/api.js';
import { getIdentity } from '../lib/session.js';

const ALL_SCOPES = ['chat:use', 'schema:read', 'data:read', 'data:write', 'servers:read', 'servers:write', 'gateway:use', 'admin'];

/** The scopes a person holding `held` may put on a token (`admin` holds them all). */
export function grantableScopes(held) {
  return held.includes('admin') ? ALL_SCOPES : ALL_SCOPES.filter((scope) => held.includes(scope));
}

/** Draws the page. */
export async function renderPage(container) {
  const status = h('p', { class: 'alert alert-error', role: 'alert', hidden: true });
  const secretSlot = h('div', { 'aria-live': 'polite' });
  const tableSlot = h('div', { class: 'token-results', 'aria-live': 'polite' });
  const nameInput = h('input', { type: 'text', id: 'token-name', name: 'name', required: true, placeholder: 'e.g. laptop CLI' });
  const expiry = h('select', { id: 'token-expiry', name: 'expiry' },
    h('option', { value: '30', text: '30 days' }), h('option', { value: '90', text: '90 days' }),
    h('option', { value: '365', text: 'One year' }), h('option', { value: '', text: 'Never' }));
  const scopeBoxes = grantableScopes(getIdentity()?.scopes ?? []).map((scope) =>
    h('label', { class: 'row small' }, h('input', { type: 'checkbox', name: 'scope', value: scope, checked: scope !== 'admin' }), scope));
  const form = h('form', { class: 'stack card', 'aria-label': 'Create a token' },
    h('div', { class: 'form-grid' },
      h('div', { class: 'field' }, h('label', { for: nameInput.id, text: 'Name' }), nameInput),
      h('div', { class: 'field' }, h('label', { for: expiry.id, text: 'Expires after' }), expiry)),
    h('fieldset', { class: 'field' }, h('legend', { text: 'Scopes' }), h('div', { class: 'row wrap' }, scopeBoxes)),
    h('div', { class: 'button-row' }, h('button', { type: 'submit', class: 'button button-primary', text: 'Create token' })));
  container.append(h('div', { class: 'page-header' }, h('h1', { text: 'My tokens' })),
    h('p', { class: 'muted', text: 'Tokens let scripts and MCP clients act as you. A token carries at most the scopes you hold, and stops working as soon as it is revoked or you are deactivated.' }),
    form, status, secretSlot, tableSlot);

  const showError = (error) => {
    status.hidden = false;
    status.textContent = error instanceof ApiError ? error.message : String(error);
  };

  async function load() {
    try {
      const tokens = await api.get('/api/me/tokens');
      tableSlot.replaceChildren(renderTable(tokens, revoke));
    } catch (error) {
      showError(error);
    }
  }

  async function revoke(token) {
    status.hidden = true;
    try {
      await api.delete(`/api/me/tokens/${segment(token.id)}`);
      showToast(`Token “${token.name}” revoked.`, 'success');
      await load();
    } catch (error) {
      showError(error);
    }
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    status.hidden = true;
    const scopes = scopeBoxes.map((label) => label.querySelector('input')).filter((box) => box.checked).map((box) => box.value);
    const body = { name: nameInput.value.trim(), scopes };
    if (expiry.value) body.expires_at = new Date(Date.now() + Number(expiry.value) * 86400000).toISOString();
    try {
      const issued = await api.post('/api/me/tokens', body);
      form.reset();
      secretSlot.replaceChildren(h('div', { class: 'alert alert-success stack', role: 'status' },
        h('p', { text: `Token “${issued.token.name}” created. Copy it now: it is not shown again.` }),
        h('div', { class: 'row' }, h('code', { class: 'mono token-secret', text: issued.plaintext }),
          h('button', { type: 'button', class: 'button button-small', text: 'Copy', onclick: async () => {
            await copyTextToClipboard(issued.plaintext);
            showToast('Copied.');
          } }))));
      await load();
    } catch (error) {
      showError(error);
    }
  });
  await load();
}

function renderTable(tokens, revoke) {
  if (!tokens.length) return h('p', { class: 'muted', text: 'You have no tokens yet.' });
  const rows = tokens.map((token) => h('tr', { dataset: { token: token.name } },
    h('td', {}, h('div', { text: token.name }), h('div', { class: 'small muted mono', text: `${token.display_prefix}…` })),
    h('td', { class: 'small', text: token.scopes.join(', ') }),
    h('td', { class: 'small', text: formatDateTime(token.created_at) }),
    h('td', { class: 'small', text: token.last_used_at ? formatDateTime(token.last_used_at) : 'never' }),
    h('td', { class: 'small', text: token.revoked_at ? `revoked ${formatDateTime(token.revoked_at)}` : token.expires_at ? `until ${formatDateTime(token.expires_at)}` : 'no expiry' }),
    h('td', {}, token.revoked_at ? null : h('button', { type: 'button', class: 'button button-small button-danger', text: 'Revoke', 'aria-label': `Revoke ${token.name}`, onclick: () => revoke(token) }))));
  return h('div', { class: 'table-wrap' }, h('table', { class: 'data-table' },
    h('caption', { class: 'visually-hidden', text: 'Your tokens' }),
    h('thead', {}, h('tr', {}, ['Token', 'Scopes', 'Created', 'Last used', 'State', ''].map((label) => h('th', { scope: 'col', text: label })))),
    h('tbody', {}, rows)));
}

// people-page: the People page (admins) — everyone of the workspace (GET /api/people) with their
// role, state, working tokens and last use; add a person (POST /api/users), make admin or
// member, deactivate or reactivate (PATCH /api/people/{id}), remove (DELETE, after a dialog
// asking whether their conversations are kept or deleted: people-remove-dialog.js). The server
// decides what is allowed (the last active admin, yourself): its refusal is shown as is.

import { h, formatDateTime, showToast } from '../lib/dom.js';
import { api, ApiError, segment } from '../lib/api.js';
import { getIdentity } from '../lib/session.js';
import { openRemoveDialog, removalMessage } from './people-remove-dialog.js';

/** Draws the page. */
export async function renderPage(container) {
  const status = h('p', { class: 'alert alert-error', role: 'alert', hidden: true });
  const tableSlot = h('div', { class: 'people-results', 'aria-live': 'polite' });
  const nameInput = h('input', { type: 'text', id: 'person-name', name: 'name', required: true, placeholder: 'name or e-mail address' });
  const roleSelect = h('select', { id: 'person-role', name: 'role' },
    h('option', { value: 'member', text: 'Member' }), h('option', { value: 'admin', text: 'Admin' }));
  const form = h('form', { class: 'filter-bar', 'aria-label': 'Add a person' },
    h('div', { class: 'field' }, h('label', { for: nameInput.id, text: 'Name' }), nameInput),
    h('div', { class: 'field' }, h('label', { for: roleSelect.id, text: 'Role' }), roleSelect),
    h('div', { class: 'button-row' }, h('button', { type: 'submit', class: 'button button-primary', text: 'Add person' })));
  container.append(h('div', { class: 'page-header' }, h('h1', { text: 'People' })),
    h('p', { class: 'muted', text: 'Everyone who can use this workspace. A change takes effect on their next request: a deactivated person\'s tokens stop working until they are reactivated.' }),
    form, status, tableSlot);

  const showError = (error) => {
    status.hidden = false;
    status.textContent = error instanceof ApiError ? error.message : String(error);
  };
  const act = async (work, done) => {
    status.hidden = true;
    try {
      await work();
      if (done) showToast(done, 'success');
      await load();
    } catch (error) {
      showError(error);
    }
  };

  async function load() {
    tableSlot.setAttribute('aria-busy', 'true');
    try {
      const people = await api.get('/api/people');
      tableSlot.replaceChildren(renderTable(people, act, removed));
    } catch (error) {
      showError(error);
    } finally {
      tableSlot.removeAttribute('aria-busy');
    }
  }

  const removed = async (answer) => {
    showToast(removalMessage(answer), 'success');
    await load();
  };

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const name = nameInput.value.trim();
    act(async () => {
      await api.post('/api/users', { name, role: roleSelect.value });
      form.reset();
    }, `${name} added. Issue them a token on the command line or with POST /api/tokens.`);
  });
  await load();
}

function renderTable(people, act, removed) {
  const me = getIdentity()?.user_id;
  const rows = people.filter((person) => !person.internal).map((person) => {
    const path = `/api/people/${segment(person.id)}`;
    const label = person.id === me ? `${person.name} (you)` : person.name;
    const roleSelect = h('select', { 'aria-label': `Role of ${person.name}` },
      ['owner', 'admin', 'member'].filter((role) => role !== 'owner' || person.role === 'owner')
        .map((role) => h('option', { value: role, text: role[0].toUpperCase() + role.slice(1), selected: role === person.role ? true : undefined })));
    roleSelect.addEventListener('change', () => act(() => api.patch(path, { role: roleSelect.value }), `${person.name} is now ${roleSelect.value}.`));
    const toggle = h('button', {
      type: 'button', class: 'button button-small',
      text: person.active ? 'Deactivate' : 'Reactivate',
      'aria-label': `${person.active ? 'Deactivate' : 'Reactivate'} ${person.name}`,
      onclick: () => act(() => api.patch(path, { active: !person.active }), `${person.name} ${person.active ? 'deactivated' : 'reactivated'}.`),
    });
    const remove = h('button', {
      type: 'button', class: 'button button-small button-danger', text: 'Remove', 'aria-label': `Remove ${person.name}`,
      onclick: () => openRemoveDialog(person, { onRemoved: removed }),
    });
    return h('tr', { 'data-person': person.name },
      h('th', { scope: 'row', text: label }),
      h('td', {}, roleSelect),
      h('td', { class: 'person-state', text: person.active ? 'Active' : 'Deactivated' }),
      h('td', { text: String(person.usable_tokens) }),
      h('td', { text: person.last_seen_at ? formatDateTime(person.last_seen_at) : 'never' }),
      h('td', { class: 'button-row' }, toggle, remove));
  });
  return h('div', { class: 'table-wrap' }, h('table', { class: 'data-table people-table' },
    h('caption', { class: 'visually-hidden', text: 'People of this workspace' }),
    h('thead', {}, h('tr', {}, ['Name', 'Role', 'State', 'Working tokens', 'Last seen', 'Actions'].map((text) => h('th', { scope: 'col', text })))),
    h('tbody', {}, rows)));
}

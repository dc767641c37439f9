// audit-page: the Audit page (admins) — the workspace's audit log (GET /api/audit) as a table
// filterable by time range, server, tool, user and status, paged, each row expandable to its
// redacted arguments and details.

import { h, formatDateTime, replaceChildren } from '../lib/dom.js';
import { api, listItems } from '../lib/api.js';
import { renderJsonViewer } from '../lib/json-view.js';
import { formatDuration } from '../lib/tool-summary.js';
import { getIdentity } from '../lib/session.js';

/** "you" for the signed-in user, else a short id (the full one in the tooltip). */
function renderPerson(id) {
  if (!id) return '';
  if (id === getIdentity()?.user_id) return h('span', { title: id, text: 'you' });
  const text = String(id);
  return h('span', { class: 'mono', title: text, text: text.length > 12 ? `${text.slice(0, 8)}…` : text });
}

/**
 * An action such as `tool_call.completed`: each dotted part kept whole, with a break
 * opportunity after each dot, so a narrow column wraps between parts, never inside one.
 */
function renderAction(action) {
  const parts = String(action).split('.');
  return parts.flatMap((part, index) => (index === 0 ? [h('span', { text: part })] : [h('wbr'), h('span', { text: `.${part}` })]));
}

/**
 * Who decided an approval: a person ("you" or a short id), or a rule such as
 * `policy:workspace` or `default:auto`, shown whole — it says why, so it must not be cut.
 */
function renderDecider(decidedBy) {
  const text = String(decidedBy);
  if (text.includes(':')) return h('span', { class: 'audit-decided-by', text });
  return renderPerson(text);
}

const PAGE_SIZE = 50;

/** Draws the page. */
export async function renderPage(container, { query }) {
  const filters = {};
  const field = (name, label, control) => {
    control.id = `audit-${name}`;
    control.name = name;
    control.value = query.get(name) ?? '';
    filters[name] = control;
    const wide = control.type === 'datetime-local' ? ' field-datetime' : '';
    return h('div', { class: `field${wide}` }, h('label', { for: control.id, text: label }), control);
  };
  const form = h('form', { class: 'filter-bar', 'aria-label': 'Filter the audit log' },
    field('from', 'From', h('input', { type: 'datetime-local' })),
    field('to', 'To', h('input', { type: 'datetime-local' })),
    field('server', 'Server', h('input', { type: 'text', placeholder: 'any' })),
    field('tool', 'Tool', h('input', { type: 'text', placeholder: 'any' })),
    field('user', 'User', h('input', { type: 'text', placeholder: 'any' })),
    field('action', 'Action', h('input', { type: 'text', placeholder: 'e.g. tool_call.' })),
    field('status', 'Status', h('select', {}, ['', 'completed', 'failed', 'denied', 'unknown', 'approved', 'expired', 'connect', 'disconnect', 'error', 'changed'].map((value) =>
      h('option', { value, text: value || 'any' })))),
    h('div', { class: 'button-row' },
      h('button', { type: 'submit', class: 'button button-primary', text: 'Apply' }),
      h('button', { type: 'reset', class: 'button', text: 'Clear' })));
  const status = h('p', { class: 'muted', role: 'status' });
  const tableSlot = h('div', { class: 'audit-results', 'aria-live': 'polite' });
  const previous = h('button', { type: 'button', class: 'button button-small', text: '← Newer' });
  const next = h('button', { type: 'button', class: 'button button-small', text: 'Older →' });
  const pager = h('div', { class: 'pager' }, previous, next);
  container.append(h('div', { class: 'page-header' }, h('h1', { text: 'Audit log' })),
    h('p', { class: 'muted', text: 'Every tool call, server connection event and configuration change in this workspace. Secrets are redacted before they are stored.' }),
    form, status, tableSlot, pager);

  const cursors = [null];
  let pageIndex = 0;
  // Only the newest request may fill the table: an older answer arriving late (a slow page
  // before a quick filter) must not replace it. aria-busy tells assistive tech (and the
  // browser tests) that the rows shown are about to change.
  let latestRequest = 0;
  async function load() {
    const request = ++latestRequest;
    tableSlot.setAttribute('aria-busy', 'true');
    const params = new URLSearchParams();
    for (const [name, control] of Object.entries(filters)) {
      const value = control.value.trim();
      if (!value) continue;
      params.set(name, name === 'from' || name === 'to' ? new Date(value).toISOString() : value);
    }
    params.set('limit', String(PAGE_SIZE));
    const cursor = cursors[pageIndex];
    if (cursor?.cursor) params.set('cursor', cursor.cursor);
    if (cursor?.offset) params.set('offset', String(cursor.offset));
    status.textContent = 'Loading…';
    try {
      const answer = await api.get(`/api/audit?${params}`);
      if (request !== latestRequest) return;
      const rows = listItems(answer, 'entries');
      status.textContent = rows.length ? `Showing ${rows.length} entr${rows.length === 1 ? 'y' : 'ies'}${answer?.total !== undefined ? ` of ${answer.total}` : ''}.` : 'Nothing matches these filters.';
      replaceChildren(tableSlot, rows.length ? renderTable(rows) : null);
      const nextCursor = answer?.next_cursor ?? null;
      cursors[pageIndex + 1] = nextCursor ? { cursor: nextCursor } : rows.length === PAGE_SIZE ? { offset: (pageIndex + 1) * PAGE_SIZE } : undefined;
      previous.disabled = pageIndex === 0;
      next.disabled = !cursors[pageIndex + 1];
    } catch (error) {
      if (request !== latestRequest) return;
      status.textContent = '';
      replaceChildren(tableSlot, h('p', { class: 'alert alert-error', role: 'alert', text: error.status === 403 ? 'Only administrators can read the audit log.' : `The audit log could not be loaded: ${error.message}` }));
      previous.disabled = true;
      next.disabled = true;
    } finally {
      if (request === latestRequest) tableSlot.removeAttribute('aria-busy');
    }
  }
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    cursors.length = 1;
    pageIndex = 0;
    load();
  });
  form.addEventListener('reset', () => setTimeout(() => form.requestSubmit(), 0));
  previous.addEventListener('click', () => { pageIndex = Math.max(0, pageIndex - 1); load(); });
  next.addEventListener('click', () => { pageIndex += 1; load(); });
  await load();
}

function statusTone(value) {
  const text = String(value ?? '').toLowerCase();
  if (/^(completed|success|ok|approved|connect|connected)$/.test(text)) return 'badge-success';
  if (/^(failed|error|denied|timeout|disconnect)$/.test(text)) return 'badge-danger';
  if (text === 'unknown') return 'badge-warning';
  return '';
}

function renderTable(rows) {
  return h('div', { class: 'table-wrap' }, h('table', { class: 'data-table audit-table' },
    h('caption', { class: 'visually-hidden', text: 'Audit log entries' }),
    h('thead', {}, h('tr', {}, ['When', 'Action', 'Actor', 'Server · tool', 'Status', 'Duration', 'Approval', 'Details'].map((label) => h('th', { scope: 'col', text: label })))),
    h('tbody', {}, rows.map((row) => {
      const details = { ...row };
      const approval = row.decision;
      const decidedBy = row.decided_by;
      return h('tr', {},
        h('td', { text: formatDateTime(row.at) }),
        h('td', { class: 'mono audit-action', title: row.action ?? '' }, renderAction(row.action ?? '')),
        h('td', {}, renderPerson(row.actor)),
        h('td', { text: [row.server_name, row.tool_name].filter(Boolean).join(' · ') }),
        h('td', {}, row.status ? h('span', { class: `badge ${statusTone(row.status)}`, text: row.status }) : ''),
        h('td', { text: formatDuration(row.duration_ms) }),
        h('td', {}, approval ? [String(approval), decidedBy ? [' by ', renderDecider(decidedBy)] : null] : ''),
        h('td', {}, h('details', {}, h('summary', { text: 'Show' }), renderJsonViewer(details, { label: 'Entry', expandDepth: 1 }))));
    }))));
}

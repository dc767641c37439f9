// kg-page: the Knowledge graph page — object types with their properties, relationship types,
// and the schema changelog, read from the JSON API (GET /api/kg/schema, GET /api/kg/changelog).
// Through the API, not /mcp: the API takes the tab's token or the single sign-on session cookie
// alike (with its CSRF and same-site checks), while /mcp takes bearer tokens only.

import { h, formatDateTime, replaceChildren } from '../lib/dom.js';
import { api } from '../lib/api.js';
import { replaceAddress } from '../lib/address.js';
import { renderJsonViewer } from '../lib/json-view.js';

const TABS = [
  { id: 'types', label: 'Object types' },
  { id: 'relationships', label: 'Relationships' },
  { id: 'changelog', label: 'Changelog' },
];

/** Draws the page; returns its cleanup. */
export async function renderPage(container, { query }) {
  const client = kgReader();
  const versionSlot = h('span', { class: 'badge badge-info', id: 'kg-version', text: 'version …' });
  // Why the current version exists (its change message) and when: shown, not only as a tooltip.
  const versionNote = h('p', { class: 'small muted kg-version-note', id: 'kg-version-note', hidden: true });
  const panel = h('div', { role: 'tabpanel', id: 'kg-panel', tabindex: '0' });
  const tabButtons = TABS.map((tab) => h('button', {
    type: 'button', role: 'tab', class: 'tab', id: `kg-tab-${tab.id}`, 'aria-controls': 'kg-panel', text: tab.label,
    onclick: () => select(tab.id),
  }));
  const tabList = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Knowledge graph views' }, tabButtons);
  tabList.addEventListener('keydown', (event) => {
    const index = tabButtons.indexOf(document.activeElement);
    if (index < 0 || !['ArrowLeft', 'ArrowRight'].includes(event.key)) return;
    const next = tabButtons[(index + (event.key === 'ArrowRight' ? 1 : tabButtons.length - 1)) % tabButtons.length];
    next.focus();
    next.click();
  });
  container.append(
    h('div', { class: 'page-header' }, h('h1', { text: 'Knowledge graph' }), versionSlot),
    versionNote, tabList, panel);

  let current = null;
  async function select(tabId) {
    current = tabId;
    tabButtons.forEach((button) => {
      const selected = button.id === `kg-tab-${tabId}`;
      button.setAttribute('aria-selected', String(selected));
      button.tabIndex = selected ? 0 : -1;
    });
    panel.setAttribute('aria-labelledby', `kg-tab-${tabId}`);
    replaceAddress(`#/kg?view=${tabId}`);
    replaceChildren(panel, h('p', { class: 'muted', text: 'Loading…' }));
    try {
      const view = tabId === 'types' ? await renderTypes(client) : tabId === 'relationships' ? await renderRelationships(client) : await renderChangelog(client);
      if (current === tabId) replaceChildren(panel, view);
    } catch (error) {
      if (current === tabId) replaceChildren(panel, h('p', { class: 'alert alert-error', role: 'alert', text: explain(error) }));
    }
  }

  client.schema().then(({ version: answer }) => {
    const version = answer?.version;
    versionSlot.textContent = version ? `Schema version ${version}${answer.sequence ? ` (#${answer.sequence})` : ''}` : 'No schema yet';
    const when = answer?.created_at ? formatDateTime(answer.created_at) : '';
    const message = typeof answer?.message === 'string' ? answer.message.trim() : '';
    versionSlot.title = [when ? `Since ${when}` : '', message].filter(Boolean).join(' — ');
    if (version && (when || message)) {
      versionNote.textContent = message ? `Latest change${when ? ` (${when})` : ''}: ${message}` : `Created ${when}`;
      versionNote.hidden = false;
      versionSlot.setAttribute('aria-describedby', versionNote.id);
    }
  }).catch(() => { versionSlot.textContent = 'Schema version unavailable'; });
  await select(TABS.some((tab) => tab.id === query.get('view')) ? query.get('view') : 'types');
  return () => { current = null; client.close(); };
}

/** The page's reads; the schema is asked once per page (the version badge and two tabs share it). */
function kgReader() {
  const controller = new AbortController();
  let schema = null;
  return {
    schema: () => (schema ??= api.get('/api/kg/schema', { signal: controller.signal })),
    changelog: (limit) => api.get(`/api/kg/changelog?limit=${limit}`, { signal: controller.signal }),
    close: () => controller.abort(),
  };
}

function explain(error) {
  if (error.code === 'insufficient_scope') return 'Your token cannot read the schema (schema:read is needed).';
  if (error.status === 401) return 'Your sign-in was not accepted; sign in again.';
  return `The knowledge graph could not be read: ${error.message}`;
}

/** Names of the relationship types whose `end` (`from_types` or `to_types`) lists `typeName`. */
function relationshipsAt(relationships, end, typeName) {
  return relationships.filter((relationship) => relationship[end].includes(typeName)).map((relationship) => relationship.name);
}

async function renderTypes(client) {
  const answer = await client.schema();
  const types = answer.schema.object_types;
  const relationships = answer.schema.relationship_types;
  if (types.length === 0) return h('div', {}, h('p', { class: 'muted', text: 'No object types yet.' }), renderJsonViewer(answer, { label: 'Answer' }));
  return h('div', { class: 'kg-grid' }, types.map((objectType) => {
    const type = {
      ...objectType,
      outgoing_relationships: relationshipsAt(relationships, 'from_types', objectType.name),
      incoming_relationships: relationshipsAt(relationships, 'to_types', objectType.name),
    };
    const properties = type.properties;
    return h('article', { class: 'card kg-type', 'aria-label': `Type ${type.name}` },
      h('h3', {}, type.name, h('span', { class: 'badge', text: `${properties.length} propert${properties.length === 1 ? 'y' : 'ies'}` })),
      type.description ? h('p', { class: 'small muted', text: type.description }) : null,
      h('ul', { class: 'property-list' }, properties.map((property) => h('li', {},
        h('code', { text: property.name }), ': ', h('span', { class: 'muted', text: property.type }),
        property.required ? h('span', { class: 'badge badge-warning', text: 'required' }) : null,
        property.enum_values?.length ? h('span', { class: 'small muted', text: ` (${property.enum_values.join(', ')})` }) : null))),
      type.outgoing_relationships?.length || type.incoming_relationships?.length ? h('p', { class: 'small muted' },
        type.outgoing_relationships?.length ? `Links to: ${type.outgoing_relationships.join(', ')}. ` : '',
        type.incoming_relationships?.length ? `Linked from: ${type.incoming_relationships.join(', ')}.` : '') : null);
  }));
}

async function renderRelationships(client) {
  const answer = await client.schema();
  const relationships = answer.schema.relationship_types;
  if (relationships.length === 0) return h('div', {}, h('p', { class: 'muted', text: 'No relationship types yet.' }), renderJsonViewer(answer, { label: 'Answer' }));
  const list = (value) => (value.length ? value.join(', ') : 'any');
  return h('div', { class: 'table-wrap' }, h('table', { class: 'data-table' },
    h('caption', { class: 'visually-hidden', text: 'Relationship types' }),
    h('thead', {}, h('tr', {}, ['Relationship', 'From', 'To', 'Description'].map((label) => h('th', { scope: 'col', text: label })))),
    h('tbody', {}, relationships.map((relationship) => h('tr', {},
      h('td', {}, h('code', { text: relationship.name })),
      h('td', { text: list(relationship.from_types) }),
      h('td', { text: list(relationship.to_types) }),
      h('td', { class: 'small', text: relationship.description ?? '' }))))));
}

async function renderChangelog(client) {
  const answer = await client.changelog(50);
  const changes = answer.changes;
  if (changes.length === 0) return h('div', {}, h('p', { class: 'muted', text: 'No schema changes recorded.' }), renderJsonViewer(answer, { label: 'Answer' }));
  const tone = { added: 'badge-success', removed: 'badge-danger', modified: 'badge-warning' };
  return h('div', { class: 'table-wrap' }, h('table', { class: 'data-table' },
    h('caption', { class: 'visually-hidden', text: 'Schema changelog' }),
    h('thead', {}, h('tr', {}, ['When', 'Version', 'Change', 'What', 'Details'].map((label) => h('th', { scope: 'col', text: label })))),
    h('tbody', {}, changes.map((change) => {
      const kind = change.change;
      const owner = change.relationship_name ?? change.type_name ?? '';
      const target = [change.subject, change.property_name ? `${owner}.${change.property_name}` : owner].filter(Boolean).join(' ');
      return h('tr', {},
        h('td', { text: formatDateTime(change.at) }),
        h('td', {}, h('code', { text: change.version })),
        h('td', {}, h('span', { class: `badge ${tone[String(kind).toLowerCase()] ?? ''}`, text: kind })),
        h('td', { text: target }),
        h('td', { class: 'small', text: change.description ?? '' }));
    }))));
}

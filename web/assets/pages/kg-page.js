// kg-page: the Knowledge graph page — object types with their properties, relationship types,
// and the schema changelog, read from our own knowledge-graph MCP server (/mcp) with the tab's
// token through the schema tools (schema_version, type_info, relationship_info, schema_changelog).

import { h, formatDateTime, replaceChildren } from '../lib/dom.js';
import { McpHttpClient } from '../lib/mcp.js';
import { renderJsonViewer } from '../lib/json-view.js';

const TABS = [
  { id: 'types', label: 'Object types' },
  { id: 'relationships', label: 'Relationships' },
  { id: 'changelog', label: 'Changelog' },
];

/** Draws the page; returns its cleanup. */
export async function renderPage(container, { query }) {
  const client = new McpHttpClient('/mcp');
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
    history.replaceState(null, '', `#/kg?view=${tabId}`);
    replaceChildren(panel, h('p', { class: 'muted', text: 'Loading…' }));
    try {
      const view = tabId === 'types' ? await renderTypes(client) : tabId === 'relationships' ? await renderRelationships(client) : await renderChangelog(client);
      if (current === tabId) replaceChildren(panel, view);
    } catch (error) {
      if (current === tabId) replaceChildren(panel, h('p', { class: 'alert alert-error', role: 'alert', text: explain(error) }));
    }
  }

  client.callTool('schema_version', {}).then((answer) => {
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

function explain(error) {
  if (error.code === -32001) return `Your token cannot read the schema (${error.data?.required_scope ?? 'schema:read'} is needed).`;
  if (error.status === 401) return 'The knowledge-graph server did not accept your token.';
  if (error.status === 404) return 'The knowledge-graph server is not available on this Switchboard.';
  if (error.status === 403) {
    return `This Switchboard does not serve its knowledge graph to pages opened at ${location.host}. `
      + `An administrator can allow it by adding ${location.origin} to kg.allowed_origins and ${location.hostname} to kg.allowed_hosts.`;
  }
  return `The knowledge graph could not be read: ${error.message}`;
}

async function renderTypes(client) {
  const answer = await client.callTool('type_info', {});
  const types = answer?.types ?? [];
  if (types.length === 0) return h('div', {}, h('p', { class: 'muted', text: 'No object types yet.' }), renderJsonViewer(answer, { label: 'Answer' }));
  return h('div', { class: 'kg-grid' }, types.map((type) => {
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
  const answer = await client.callTool('relationship_info', {});
  const relationships = answer?.relationships ?? [];
  if (relationships.length === 0) return h('div', {}, h('p', { class: 'muted', text: 'No relationship types yet.' }), renderJsonViewer(answer, { label: 'Answer' }));
  const list = (value) => (Array.isArray(value) ? value.join(', ') : value ?? 'any');
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
  const answer = await client.callTool('schema_changelog', { limit: 50 });
  const changes = answer?.changes ?? [];
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

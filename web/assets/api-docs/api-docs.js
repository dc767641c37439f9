// The API reference page (/api/docs): reads the OpenAPI document the server generates
// (/api/openapi.json) and lists its operations by tag — method, path, summary, parameters,
// request and response schemas — then every schema. Our own small viewer: no CDN, no
// third-party code. Text goes in through `h` (text nodes only), never as HTML.

import { h, replaceChildren } from '../lib/dom.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** `#/components/schemas/Name` → `Name`. */
export function refName(ref) {
  return typeof ref === 'string' ? ref.split('/').pop() : '';
}

/** The operations of a document grouped by their first tag, in the document's tag order. */
export function operationsByTag(document) {
  const groups = new Map((document.tags ?? []).map((tag) => [tag.name, { tag, operations: [] }]));
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const name = operation.tags?.[0] ?? 'other';
      if (!groups.has(name)) groups.set(name, { tag: { name }, operations: [] });
      groups.get(name).operations.push({ method, path, operation, parameters: [...(item.parameters ?? []), ...(operation.parameters ?? [])] });
    }
  }
  return [...groups.values()].filter((group) => group.operations.length > 0);
}

/** A short type label: `string`, `Conversation`, `array of Message`, `string | null`… */
export function typeLabel(schema) {
  if (!schema) return 'any';
  if (schema.$ref) return refName(schema.$ref);
  if (schema.oneOf || schema.anyOf) return (schema.oneOf ?? schema.anyOf).map(typeLabel).join(' | ');
  if (schema.allOf) return schema.allOf.map(typeLabel).join(' & ');
  const types = Array.isArray(schema.type) ? schema.type : [schema.type ?? (schema.properties ? 'object' : 'any')];
  return types.map((type) => {
    if (type === 'array') return `array of ${typeLabel(schema.items)}`;
    if (schema.enum && type !== 'null') return `${type} (${schema.enum.filter((value) => value !== null).join(', ')})`;
    return schema.format ? `${type} (${schema.format})` : type;
  }).join(' | ');
}

function schemaLink(schema) {
  if (schema?.$ref) return h('a', { href: `#schema-${refName(schema.$ref)}`, text: refName(schema.$ref) });
  if (schema?.type === 'array' && schema.items?.$ref) return ['array of ', schemaLink(schema.items)];
  return null;
}

/** A schema as a nested list of its properties, with links to named schemas. */
function renderSchema(schema, depth = 0) {
  if (!schema) return h('span', { class: 'muted', text: 'no body' });
  const link = schemaLink(schema);
  if (link) return h('span', {}, link);
  const variants = schema.oneOf ?? schema.anyOf;
  if (variants) {
    return h('div', {}, schema.discriminator ? `one of (by \`${schema.discriminator.propertyName}\`):` : 'one of:',
      h('ul', {}, variants.map((variant) => h('li', {}, renderSchema(variant, depth + 1)))));
  }
  if (schema.allOf) return h('div', {}, 'all of:', h('ul', {}, schema.allOf.map((part) => h('li', {}, renderSchema(part, depth + 1)))));
  const properties = Object.entries(schema.properties ?? {});
  if (properties.length === 0) {
    return h('span', {}, typeLabel(schema), schema.description ? h('span', { class: 'muted', text: ` — ${schema.description}` }) : null);
  }
  const required = new Set(schema.required ?? []);
  return h('ul', {}, properties.map(([name, property]) => h('li', {},
    h('strong', { text: name }),
    required.has(name) ? h('span', { class: 'api-required', title: 'required', text: '*' }) : null,
    ': ',
    schemaLink(property) ?? typeLabel(property),
    property.description ? h('span', { class: 'muted', text: ` — ${property.description}` }) : null,
    depth < 2 && property.properties ? renderSchema(property, depth + 1) : null,
  )));
}

function renderParameters(parameters) {
  if (parameters.length === 0) return null;
  return [h('h4', { text: 'Parameters' }), h('table', { class: 'api-params' },
    h('thead', {}, h('tr', {}, ['Name', 'In', 'Type', 'Description'].map((text) => h('th', { text })))),
    h('tbody', {}, parameters.map((parameter) => h('tr', {},
      h('td', {}, h('code', { text: parameter.name }), parameter.required ? h('span', { class: 'api-required', text: '*' }) : null),
      h('td', { text: parameter.in }),
      h('td', { text: typeLabel(parameter.schema) }),
      h('td', { text: parameter.description ?? '' }),
    ))))];
}

/** The document's named schemas, for expanding a body's `$ref` one level. */
let namedSchemas = {};

/** A body's schema: its name (linked) and, for a named schema, its fields one level deep. */
function renderBodySchema(schema) {
  const named = schema?.$ref ? namedSchemas[refName(schema.$ref)] : null;
  if (!named) return renderSchema(schema);
  return [schemaLink(schema), named.description ? h('span', { class: 'muted', text: ` — ${named.description}` }) : null, renderSchema(named, 1)];
}

function renderContent(content) {
  return Object.entries(content ?? {}).map(([mediaType, media]) => h('div', {},
    h('code', { text: mediaType }), h('div', { class: 'api-schema' }, renderBodySchema(media.schema))));
}

function renderOperation({ method, path, operation, parameters }) {
  const responses = Object.entries(operation.responses ?? {});
  const secured = (operation.security ?? []).some((requirement) => Object.keys(requirement).length > 0);
  return h('details', { class: 'api-operation', id: operation.operationId ? `op-${operation.operationId}` : null, dataset: { search: `${method} ${path} ${operation.summary ?? ''} ${(operation.tags ?? []).join(' ')}`.toLowerCase() } },
    h('summary', {},
      h('span', { class: `api-method api-method-${method}`, text: method }),
      h('span', { class: 'api-path', text: path }),
      h('span', { class: 'muted', text: operation.summary ?? '' })),
    h('div', { class: 'api-operation-body' },
      operation.description ? h('p', { text: operation.description }) : null,
      h('p', { class: 'api-security', text: secured ? 'Needs a bearer token.' : 'No token needed.' }),
      renderParameters(parameters),
      operation.requestBody ? [h('h4', { text: `Request body${operation.requestBody.required ? ' (required)' : ''}` }), renderContent(operation.requestBody.content)] : null,
      h('h4', { text: 'Responses' }),
      responses.map(([status, response]) => h('div', {},
        h('span', { class: 'api-response-status', text: status }), ' ', response.description ?? '',
        renderContent(response.content)))));
}

function renderSchemas(schemas) {
  const entries = Object.entries(schemas ?? {});
  return h('section', { class: 'api-tag', id: 'schemas' }, h('h2', { text: `Schemas (${entries.length})` }),
    entries.map(([name, schema]) => h('div', { class: 'api-schema-component', id: `schema-${name}`, dataset: { search: name.toLowerCase() } },
      h('h3', { text: name }),
      schema.description ? h('p', { class: 'muted', text: schema.description }) : null,
      h('div', { class: 'api-schema' }, renderSchema(schema)))));
}

/** Renders the whole reference into the page. */
export function renderReference(document, { nav, main, title, summary }) {
  namedSchemas = document.components?.schemas ?? {};
  const groups = operationsByTag(document);
  const count = groups.reduce((total, group) => total + group.operations.length, 0);
  title.textContent = `${document.info?.title ?? 'API'} ${document.info?.version ?? ''}`.trim();
  replaceChildren(summary, `OpenAPI ${document.openapi}: ${count} operations, ${Object.keys(document.components?.schemas ?? {}).length} schemas. `,
    document.info?.description ?? '', ' ', h('a', { href: '/api/openapi.json', text: 'The document as JSON.' }));
  replaceChildren(nav, groups.map((group) => h('a', { href: `#tag-${group.tag.name}`, text: `${group.tag.name} (${group.operations.length})` })),
    h('a', { href: '#schemas', text: 'Schemas' }));
  replaceChildren(main, groups.map((group) => h('section', { class: 'api-tag', id: `tag-${group.tag.name}` },
    h('h2', { text: group.tag.name }),
    group.tag.description ? h('p', { class: 'muted', text: group.tag.description }) : null,
    group.operations.map(renderOperation))), renderSchemas(document.components?.schemas));
}

/** Hides operations and schemas that do not contain every word of the filter. */
export function applyFilter(main, text) {
  const words = text.toLowerCase().split(/\s+/).filter(Boolean);
  for (const element of main.querySelectorAll('[data-search]')) {
    element.hidden = !words.every((word) => element.dataset.search.includes(word));
  }
}

async function start() {
  const nav = document.getElementById('api-nav');
  const main = document.getElementById('api-main');
  const title = document.getElementById('api-title');
  const summary = document.getElementById('api-summary');
  try {
    const response = await fetch('/api/openapi.json', { headers: { Accept: 'application/json' } });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    renderReference(await response.json(), { nav, main, title, summary });
    document.getElementById('api-filter').addEventListener('input', (event) => applyFilter(main, event.target.value));
    if (location.hash) document.getElementById(location.hash.slice(1))?.scrollIntoView();
  } catch (error) {
    replaceChildren(summary, `The API description could not be read: ${error.message}`);
  }
}

if (document.getElementById('api-main')) start();

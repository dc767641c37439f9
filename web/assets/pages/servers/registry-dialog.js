// registry-dialog: the servers page's "From registry" dialog — search the MCP registry the
// instance is configured with (GET /api/mcp/registry/servers), open a published server, choose
// one of its packages (a local command: administrators only) or remotes, fill the inputs it
// declares, preview (POST /api/mcp/registry/add with `dry_run`) and add it. Values typed here
// are stored encrypted as the server's; a required variable left empty becomes a field each
// person fills in. The inputs listed are keyed as the API reads them (`inputsOf`).

import { h, replaceChildren, uniqueId } from '../../lib/dom.js';
import { api } from '../../lib/api.js';

const PACKAGE_RUNNERS = { npm: 'npx', pypi: 'uvx', oci: 'docker' };

/** The ways to run `server`: `{kind: 'package'|'remote', index, label, supported}`. */
export function waysOf(server) {
  const packages = (server.packages ?? []).map((item, index) => ({
    kind: 'package', index,
    label: `${PACKAGE_RUNNERS[item.registryType] ?? item.registryType} ${item.identifier}${item.version ? ` ${item.version}` : ''}`,
    supported: item.registryType in PACKAGE_RUNNERS && (item.transport?.type ?? 'stdio') === 'stdio',
  }));
  const remotes = (server.remotes ?? []).map((item, index) => ({
    kind: 'remote', index,
    label: `${item.type === 'sse' ? 'SSE' : 'Streamable HTTP'} ${item.url}`,
    supported: item.type === 'sse' || item.type === 'streamable-http',
  }));
  return [...remotes, ...packages];
}

/** The inputs a way declares that a person may give: `{key, label, required, secret, choices}`. */
export function inputsOf(server, way) {
  const inputs = [];
  const variables = (map, where) => Object.entries(map ?? {}).forEach(([key, input]) => {
    if (input.value === undefined) inputs.push(entry(key, `${where} {${key}}`, input));
  });
  const keyValue = (item, where) => {
    if (item.value === undefined) inputs.push(entry(item.name, `${where} ${item.name}`, item));
    else variables(item.variables, `${where} ${item.name}`);
  };
  if (way.kind === 'remote') {
    const remote = server.remotes[way.index];
    variables(remote.variables, 'URL');
    (remote.headers ?? []).forEach((header) => keyValue(header, 'Header'));
  } else {
    const item = server.packages[way.index];
    const argument = (argumentItem, index) => {
      const key = argumentItem.name ?? argumentItem.valueHint ?? `arg${index}`;
      if (argumentItem.value === undefined) inputs.push(entry(key, `Argument ${key}`, argumentItem));
      else variables(argumentItem.variables, `Argument ${key}`);
    };
    (item.runtimeArguments ?? []).forEach(argument);
    (item.packageArguments ?? []).forEach(argument);
    (item.environmentVariables ?? []).forEach((variable) => keyValue(variable, 'Environment variable'));
  }
  return inputs;
}

function entry(key, label, input) {
  return { key, label, description: input.description ?? '', required: Boolean(input.isRequired), secret: Boolean(input.isSecret),
    choices: input.choices ?? [], placeholder: input.placeholder ?? input.default ?? '' };
}

/** Opens the dialog; `onAdded(report)` runs after a server is added. */
export function openRegistryDialog({ onAdded }) {
  const searchInput = h('input', { type: 'search', id: uniqueId('registry-search'), name: 'search', placeholder: 'e.g. github, filesystem, weather' });
  const results = h('div', { class: 'registry-results', 'aria-live': 'polite' });
  const details = h('div', { class: 'registry-details' });
  const formError = h('p', { class: 'alert alert-error', role: 'alert', hidden: true });
  const title = 'Add a server from the MCP registry';
  const searchForm = h('form', { class: 'row', role: 'search', onsubmit: (event) => { event.preventDefault(); search(); } },
    h('label', { for: searchInput.id, class: 'visually-hidden', text: 'Search the registry' }), searchInput,
    h('button', { type: 'submit', class: 'button', text: 'Search' }));
  const dialog = h('dialog', { 'aria-label': title, class: 'import-dialog registry-dialog' },
    h('div', { class: 'dialog-form' },
      h('div', { class: 'dialog-header' }, h('h2', { text: title }), h('button', { type: 'button', class: 'button button-quiet', 'aria-label': 'Close', text: '✕', onclick: () => dialog.close() })),
      h('div', { class: 'dialog-body' },
        h('p', { class: 'alert alert-warning', text: 'A server you add receives what the assistant sends to its tools. Add only servers you trust with that.' }),
        searchForm, formError, results, details)));

  const fail = (message) => { formError.textContent = message; formError.hidden = !message; };
  const search = async (cursor) => {
    fail('');
    const query = new URLSearchParams({ limit: '20' });
    if (searchInput.value.trim()) query.set('search', searchInput.value.trim());
    if (cursor) query.set('cursor', cursor);
    try {
      const page = await api.get(`/api/mcp/registry/servers?${query}`);
      const rows = page.servers.map((item) => h('li', { class: 'registry-result', dataset: { server: item.server.name } },
        h('button', { type: 'button', class: 'button button-quiet', onclick: () => showDetails(item.server) },
          h('strong', { text: item.server.title ?? item.server.name }), ' ',
          h('span', { class: 'small muted mono', text: `${item.server.name} ${item.server.version}` })),
        h('div', { class: 'small', text: item.server.description ?? '' }),
        item.status && item.status !== 'active' ? h('span', { class: 'badge badge-warning', text: item.status }) : null));
      replaceChildren(results,
        h('p', { class: 'small muted', text: `From ${page.registry_url}` }),
        rows.length ? h('ul', { class: 'plain-list stack' }, rows) : h('p', { class: 'muted', text: 'No server matches.' }),
        page.next_cursor ? h('button', { type: 'button', class: 'button button-small', text: 'More', onclick: () => search(page.next_cursor) }) : null);
    } catch (error) {
      replaceChildren(results);
      fail(error.message);
    }
  };

  const showDetails = (server) => {
    fail('');
    const ways = waysOf(server);
    const wayId = uniqueId('registry-way');
    const nameInput = h('input', { id: uniqueId('registry-name'), name: 'name', value: server.name.split('/').pop().replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 32) });
    const waySelect = h('select', { id: wayId, name: 'way' }, ways.map((way, position) =>
      h('option', { value: String(position), text: `${way.kind === 'package' ? 'Run locally' : 'Connect'}: ${way.label}${way.supported ? '' : ' (not supported)'}`, disabled: !way.supported })));
    const firstSupported = ways.findIndex((way) => way.supported);
    if (firstSupported >= 0) waySelect.value = String(firstSupported);
    const fields = h('div', { class: 'stack' });
    const preview = h('div', { class: 'registry-preview', 'aria-live': 'polite' });
    const addButton = h('button', { type: 'button', class: 'button button-primary', text: 'Add server' });
    const previewButton = h('button', { type: 'button', class: 'button', text: 'Preview' });
    let controls = [];
    const drawFields = () => {
      const way = ways[Number(waySelect.value)];
      const rows = [];
      controls = (way ? inputsOf(server, way) : []).map((input) => {
        const id = uniqueId('registry-input');
        const control = input.choices.length
          ? h('select', { id }, h('option', { value: '', text: '—' }), input.choices.map((choice) => h('option', { value: choice, text: choice })))
          : h('input', { id, type: input.secret ? 'password' : 'text', autocomplete: 'off', placeholder: input.placeholder });
        const hint = [input.description, input.required ? (input.secret ? 'Required; left empty, each person fills in their own.' : 'Required.') : 'Optional.'].filter(Boolean).join(' — ');
        rows.push(h('div', { class: 'field', dataset: { input: input.key } }, h('label', { for: id, text: input.label }), control, h('p', { class: 'small muted', text: hint })));
        return { key: input.key, control };
      });
      replaceChildren(fields, rows.length ? rows : h('p', { class: 'small muted', text: 'Nothing to fill in.' }));
      replaceChildren(preview);
    };
    const body = (dryRun) => {
      const way = ways[Number(waySelect.value)];
      const values = Object.fromEntries(controls.filter(({ control }) => control.value !== '').map(({ key, control }) => [key, control.value]));
      return { server: server.name, version: server.version, [way.kind]: way.index, name: nameInput.value.trim() || undefined, values, dry_run: dryRun };
    };
    const send = async (dryRun) => {
      fail('');
      if (!ways[Number(waySelect.value)]?.supported) { fail('Choose a way Switchboard can run.'); return null; }
      try {
        return await api.post('/api/mcp/registry/add', body(dryRun));
      } catch (error) {
        fail(error.message);
        return null;
      }
    };
    previewButton.addEventListener('click', async () => {
      const answer = await send(true);
      if (answer) replaceChildren(preview, describeAddition(answer));
    });
    addButton.addEventListener('click', async () => {
      const answer = await send(false);
      if (!answer) return;
      replaceChildren(preview, describeAddition(answer));
      await onAdded?.(answer);
      dialog.close();
    });
    waySelect.addEventListener('change', drawFields);
    replaceChildren(details, h('section', { class: 'card stack', 'aria-label': `Details of ${server.name}` },
      h('h3', { text: server.title ?? server.name }),
      h('p', { class: 'small', text: server.description ?? '' }),
      server.repository?.url ? h('p', { class: 'small' }, h('a', { href: server.repository.url, target: '_blank', rel: 'noopener noreferrer', text: server.repository.url })) : null,
      ways.length ? h('div', { class: 'field' }, h('label', { for: wayId, text: 'How to reach it' }), waySelect) : h('p', { class: 'muted', text: 'This server publishes no package or remote.' }),
      h('div', { class: 'field' }, h('label', { for: nameInput.id, text: 'Name in Switchboard' }), nameInput),
      fields, preview,
      h('div', { class: 'button-row' }, previewButton, addButton)));
    drawFields();
  };

  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  searchInput.focus();
  search();
  return dialog;
}

function describeAddition(answer) {
  const how = answer.command ? `${answer.command} ${answer.args.join(' ')}` : answer.url;
  return h('div', { class: answer.dry_run ? 'alert alert-info' : 'alert alert-success', role: 'status' },
    h('p', { text: `${answer.dry_run ? 'Would add' : 'Added'} “${answer.name}” (${answer.transport}) from ${answer.registry_server} ${answer.version}.` }),
    h('p', { class: 'mono small registry-command', text: how ?? '' }),
    answer.secrets.length ? h('p', { class: 'small', text: `Stored encrypted: ${answer.secrets.join(', ')}` }) : null,
    answer.user_fields.length ? h('p', { class: 'small', text: `Each person fills in: ${answer.user_fields.join(', ')}` }) : null);
}

// servers-page: the Servers settings page — the workspace's MCP servers with a status dot and
// last error, add / edit / delete, Test connection, Sync tools, and each server's tools. The list
// refreshes every few seconds while the page is open, so a connecting server turns green by itself.
// An OAuth server shows Connect (or Disconnect) for the signed-in person; coming back from the
// authorization server, the page says how the sign-in went. Import reads the MCP configuration
// file of another client (import-dialog.js), From registry adds a published server (registry-dialog.js); a server with user fields shows the person's own
// credentials form (user-credentials.js).

import { h, formatRelativeTime, replaceChildren, showToast } from '../../lib/dom.js';
import { api, listItems, segment } from '../../lib/api.js';
import { hasScope } from '../../lib/session.js';
import { openServerDialog } from './server-form.js';
import { openImportDialog } from './import-dialog.js';
import { openRegistryDialog } from './registry-dialog.js';
import { UserCredentialsForm } from './user-credentials.js';
import { renderStatus, transportName } from './server-status.js';
import { renderServerTools } from './server-tools.js';
import { renderUpstreamError } from '../../lib/upstream-errors.js';
import { connectServer, disconnectServer, needsSignIn, readSignInResult } from '../../lib/oauth.js';

const REFRESH_MILLISECONDS = 4000;

/** Draws the page; returns its cleanup. */
export async function renderPage(container, { query } = {}) {
  const page = new ServersPage(container);
  page.showSignInResult(readSignInResult(query));
  await page.reload();
  return () => page.dispose();
}

class ServersPage {
  constructor(container) {
    this.canWrite = hasScope('servers:write');
    this.cards = new Map();
    this.openTools = new Set();
    this.list = h('div', { class: 'server-list', 'aria-live': 'polite' });
    this.status = h('p', { class: 'muted', role: 'status' });
    this.signInResult = h('div', { class: 'oauth-result' });
    container.append(
      h('div', { class: 'page-header' },
        h('h1', { text: 'MCP servers' }),
        h('div', { class: 'button-row' },
          h('button', { type: 'button', class: 'button', text: 'From registry…', disabled: !this.canWrite,
            title: this.canWrite ? 'Search the MCP registry and add one of its servers.' : 'Your token lacks the servers:write scope.',
            onclick: () => this.fromRegistry() }),
          h('button', { type: 'button', class: 'button', text: 'Import…', disabled: !this.canWrite,
            title: this.canWrite ? 'Add the servers of a Claude Desktop, Claude Code, Cursor, VS Code or Windsurf configuration file.' : 'Your token lacks the servers:write scope.',
            onclick: () => this.import() }),
          h('button', { type: 'button', class: 'button button-primary', text: '+ Add server', disabled: !this.canWrite,
            title: this.canWrite ? null : 'Your token lacks the servers:write scope.', onclick: () => this.add() }))),
      h('p', { class: 'muted', text: 'The assistant uses the tools of these servers. Each server receives what the assistant sends to its tools, so add only servers you trust.' }),
      this.signInResult,
      this.status,
      this.list);
    this.timer = setInterval(() => this.reload({ quiet: true }), REFRESH_MILLISECONDS);
  }

  async reload({ quiet = false } = {}) {
    try {
      this.servers = listItems(await api.get('/api/mcp/servers'), 'servers');
      this.status.textContent = this.servers.length ? '' : 'No servers yet. Add one, or start from a template.';
      this.#render();
    } catch (error) {
      if (!quiet || !this.servers) this.status.textContent = `The server list could not be loaded: ${error.message}`;
    }
  }

  #render() {
    const seen = new Set();
    for (const [index, server] of this.servers.entries()) {
      seen.add(server.id);
      let card = this.cards.get(server.id);
      if (!card) {
        card = new ServerCard(this, server);
        this.cards.set(server.id, card);
      }
      card.update(server);
      // Move only when out of place: re-inserting a node would drop keyboard focus inside it.
      if (this.list.children[index] !== card.element) this.list.insertBefore(card.element, this.list.children[index] ?? null);
    }
    for (const [id, card] of this.cards) {
      if (!seen.has(id)) {
        card.element.remove();
        this.cards.delete(id);
      }
    }
  }

  /** The outcome of a sign-in the callback sent back here (`null`: none). */
  showSignInResult(result) {
    if (!result) return;
    const text = result.kind === 'connected'
      ? `Connected to ${result.server || 'the server'}. Its tools are available in your next question.`
      : `Signing in${result.server ? ` to ${result.server}` : ''} failed: ${result.reason || 'unknown reason'}.`;
    replaceChildren(this.signInResult, h('p', {
      class: `alert ${result.kind === 'connected' ? 'alert-success' : 'alert-error'}`,
      role: result.kind === 'connected' ? 'status' : 'alert', dataset: { oauth: result.kind }, text,
    }));
  }

  add() {
    openServerDialog({
      onSave: async (body) => {
        const created = await api.post('/api/mcp/servers', body);
        const server = created?.server ?? created;
        showToast(`${body.name} added. Testing the connection…`);
        await this.reload();
        if (server?.id) await this.cards.get(server.id)?.test({ announce: true });
      },
    });
  }

  fromRegistry() {
    openRegistryDialog({
      onAdded: async (answer) => {
        showToast(`Added “${answer.name}” from the registry.`);
        await this.reload();
      },
    });
  }

  import() {
    openImportDialog({
      onImported: async (report) => {
        showToast(`Imported: ${report.created} added, ${report.changed} replaced, ${report.skipped} skipped.`);
        await this.reload();
      },
    });
  }

  dispose() {
    clearInterval(this.timer);
  }
}

class ServerCard {
  constructor(page, server) {
    this.page = page;
    this.server = server;
    this.statusSlot = h('span', {});
    this.detailSlot = h('div', { class: 'small muted row' });
    this.errorSlot = h('p', { class: 'server-error', role: 'alert' });
    this.testSlot = h('p', { class: 'small', role: 'status' });
    this.toolsSlot = h('div', {});
    this.signInSlot = h('div', { class: 'button-row' });
    this.credentials = new UserCredentialsForm({ onSaved: () => page.reload({ quiet: true }) });
    this.title = h('h2', {});
    const canWrite = page.canWrite;
    this.toolsDetails = h('details', {}, h('summary', { text: 'Tools' }), this.toolsSlot);
    this.toolsDetails.addEventListener('toggle', () => {
      if (this.toolsDetails.open) {
        page.openTools.add(this.server.id);
        renderServerTools(this.toolsSlot, this.server, { canWrite });
      } else {
        page.openTools.delete(this.server.id);
      }
    });
    this.actions = h('div', { class: 'button-row' },
      h('button', { type: 'button', class: 'button button-small', text: 'Test connection', onclick: () => this.test({ announce: true }) }),
      h('button', { type: 'button', class: 'button button-small', text: 'Sync tools', disabled: !canWrite, onclick: () => this.sync() }),
      h('button', { type: 'button', class: 'button button-small', text: 'Edit', disabled: !canWrite, onclick: () => this.edit() }),
      h('button', { type: 'button', class: 'button button-small button-danger', text: 'Delete', disabled: !canWrite, onclick: () => this.confirmDelete() }));
    this.element = h('article', { class: 'card server-card' },
      h('div', { class: 'server-head' }, this.title, this.statusSlot),
      this.detailSlot, this.errorSlot, this.testSlot, this.signInSlot, this.credentials.element, this.actions, this.toolsDetails);
  }

  update(server) {
    this.server = server;
    this.element.dataset.serverId = server.id;
    this.element.dataset.serverName = server.name;
    this.element.setAttribute('aria-label', `Server ${server.name}`);
    this.title.textContent = server.name;
    replaceChildren(this.statusSlot, renderStatus(server));
    const endpoint = server.transport === 'stdio' ? [server.command, ...(server.args ?? [])].filter(Boolean).join(' ') : server.url;
    const toolCount = server.tool_count;
    replaceChildren(this.detailSlot,
      h('span', { class: 'badge', text: transportName(server.transport) }),
      endpoint ? h('span', { class: 'mono server-endpoint', title: endpoint, text: endpoint }) : null,
      toolCount !== undefined ? h('span', { text: `${toolCount} tool${toolCount === 1 ? '' : 's'}` }) : null,
      server.last_synced_at ? h('span', { text: `synced ${formatRelativeTime(server.last_synced_at)}` }) : null,
      server.has_api_key ? h('span', { class: 'badge', text: 'API key set' }) : null,
      server.server_info?.name ? h('span', { text: `${server.server_info.name}${server.server_info.version ? ` ${server.server_info.version}` : ''}` }) : null,
      server.protocol_version ? h('span', { title: 'Negotiated MCP protocol version', text: `MCP ${server.protocol_version}` }) : null,
      server.session_scope && server.session_scope !== 'shared' ? h('span', { class: 'badge', text: server.session_scope.replace('_', ' ') }) : null);
    const lastError = server.status === 'ERROR' || /error|needs_auth/.test(server.sync_status ?? '') ? server.last_error ?? '' : '';
    replaceChildren(this.errorSlot, lastError ? renderUpstreamError(server.error_code, String(lastError), { prefix: 'Last error: ' }) : null);
    this.errorSlot.hidden = !lastError;
    this.#renderSignIn(server);
    this.credentials.update(server);
  }

  /** Connect / Disconnect for an OAuth server (the caller's own connection, or the shared one). */
  #renderSignIn(server) {
    if (server.auth?.mode !== 'oauth') {
      replaceChildren(this.signInSlot);
      return;
    }
    const shared = server.auth.credential_scope === 'shared';
    const account = server.auth.account ? ` as ${server.auth.account}` : '';
    replaceChildren(this.signInSlot, needsSignIn(server)
      ? h('button', { type: 'button', class: 'button button-small button-primary', text: `Connect ${server.name}`,
          title: shared ? 'Connects the workspace’s account (administrators only).' : 'Connects your own account.',
          onclick: (event) => this.connect(event.currentTarget) })
      : [h('span', { class: 'small', text: `${shared ? 'Connected for everyone' : 'Connected'}${account}.` }),
        h('button', { type: 'button', class: 'button button-small', text: 'Disconnect', onclick: (event) => this.disconnect(event.currentTarget) })]);
  }

  async connect(button) {
    button.disabled = true;
    try {
      await connectServer(this.server.id);
    } catch (error) {
      button.disabled = false;
      replaceChildren(this.testSlot, renderUpstreamError(error.code, error.message, { prefix: 'Sign-in could not start: ' }));
    }
  }

  async disconnect(button) {
    button.disabled = true;
    try {
      await disconnectServer(this.server.id);
      showToast(`Disconnected from ${this.server.name}.`);
    } catch (error) {
      showToast(`${this.server.name} could not be disconnected: ${error.message}`, 'error');
    }
    await this.page.reload({ quiet: true });
  }

  async test({ announce }) {
    this.testSlot.textContent = 'Testing the connection…';
    try {
      const answer = await api.post(`/api/mcp/servers/${segment(this.server.id)}/test`, {});
      const ok = answer?.ok ?? !/error|fail/i.test(answer?.status ?? '');
      const info = answer?.server_info;
      const name = info ? `${info.name ?? ''} ${info.version ?? ''}`.trim() : '';
      const latency = answer?.latency_ms;
      const count = answer?.tool_count;
      this.testSlot.textContent = ok
        ? `Connected${name ? ` to ${name}` : ''}${latency !== undefined ? ` in ${latency} ms` : ''}${count !== undefined ? `, ${count} tool${count === 1 ? '' : 's'}` : ''}.`
        : '';
      if (!ok) replaceChildren(this.testSlot, renderUpstreamError(answer?.error?.code, answer?.error?.message ?? String(answer?.error ?? answer?.status), { prefix: 'Connection failed: ' }));
      if (announce) showToast(ok ? this.testSlot.textContent : 'The connection test failed; see the server card.', ok ? 'info' : 'error');
    } catch (error) {
      replaceChildren(this.testSlot, renderUpstreamError(error.code, error.message, { prefix: 'Connection failed: ' }));
    }
    await this.page.reload({ quiet: true });
  }

  async sync() {
    this.testSlot.textContent = 'Asking the server for its tools…';
    try {
      const answer = await api.post(`/api/mcp/servers/${segment(this.server.id)}/sync`, {});
      const count = answer?.tool_count;
      this.testSlot.textContent = count !== undefined ? `Synced: ${count} tool${count === 1 ? '' : 's'}.` : 'Synced.';
    } catch (error) {
      replaceChildren(this.testSlot, renderUpstreamError(error.code, error.message, { prefix: 'Sync failed: ' }));
    }
    await this.page.reload({ quiet: true });
    if (this.toolsDetails.open) renderServerTools(this.toolsSlot, this.server, { canWrite: this.page.canWrite });
  }

  edit() {
    openServerDialog({
      server: this.server,
      onSave: async (body) => {
        // The version read with the list: a change made meanwhile by someone else is a 409.
        const patch = { ...body, version: this.server.version };
        await api.patch(`/api/mcp/servers/${segment(this.server.id)}`, patch);
        showToast(`${body.name} saved.`);
        await this.page.reload();
      },
    });
  }

  confirmDelete() {
    const keep = h('button', { type: 'button', class: 'button button-small', text: 'Keep it', onclick: () => restore() });
    const confirm = h('button', {
      type: 'button', class: 'button button-small button-danger', text: `Delete ${this.server.name}`,
      onclick: async () => {
        confirm.disabled = true;
        try {
          await api.delete(`/api/mcp/servers/${segment(this.server.id)}`);
          showToast(`${this.server.name} deleted.`);
          await this.page.reload();
        } catch (error) {
          showToast(`${this.server.name} could not be deleted: ${error.message}`, 'error');
          restore();
        }
      },
    });
    const original = [...this.actions.childNodes];
    const restore = () => replaceChildren(this.actions, original);
    replaceChildren(this.actions, h('span', { class: 'small', text: 'Delete this server? Its tools disappear from every conversation.' }), confirm, keep);
    confirm.focus();
  }
}

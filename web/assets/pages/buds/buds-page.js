// buds-page: the Assistants page — the workspace's buds (assistant profiles: GET /api/buds) as
// cards saying what each is (provider and model, servers, tool choice, the start of its system
// prompt), with New, Edit and Delete (its owner or an admin; the API refuses others) and a link
// that opens the chat with that assistant chosen.

import { h, formatRelativeTime, replaceChildren, showToast } from '../../lib/dom.js';
import { api, listItems, segment } from '../../lib/api.js';
import { getIdentity, hasScope } from '../../lib/session.js';
import { openBudDialog, readToolChoice } from './bud-form.js';

/** Draws the page; returns its cleanup. */
export async function renderPage(container) {
  const page = new BudsPage(container);
  await page.reload();
  return null;
}

const TOOL_CHOICE_WORDS = { auto: 'the model decides', required: 'always calls a tool', none: 'never calls tools' };

class BudsPage {
  constructor(container) {
    this.list = h('div', { class: 'bud-list', 'aria-live': 'polite' });
    this.status = h('p', { class: 'muted', role: 'status' });
    container.append(
      h('div', { class: 'page-header' },
        h('h1', { text: 'Assistants' }),
        h('button', { type: 'button', class: 'button button-primary', text: '+ New assistant', onclick: () => this.create() })),
      h('p', { class: 'muted', text: 'An assistant (a “bud”) is a system prompt, a model and the MCP servers and tools it may use. Everyone in the workspace can chat with it; its creator and administrators can change it.' }),
      this.status,
      this.list);
  }

  async reload() {
    try {
      const buds = listItems(await api.get('/api/buds'), 'buds');
      // Server names for the cards (a bud stores ids); without servers:read the count is shown.
      this.serverNames = new Map(listItems(await api.get('/api/mcp/servers').catch(() => null), 'servers').map((server) => [server.id, server.name]));
      this.status.textContent = buds.length ? '' : 'No assistants yet: the chat uses the default one. Create one to give it its own prompt, model and tools.';
      replaceChildren(this.list, buds.map((bud) => this.#card(bud)));
    } catch (error) {
      this.status.textContent = `The assistants could not be loaded: ${error.message}`;
    }
  }

  #card(bud) {
    const identity = getIdentity();
    const mayChange = hasScope('admin') || identity?.unknown || (bud.owner_user_id && bud.owner_user_id === identity?.user_id);
    const refusal = mayChange ? null : 'Only its creator or an administrator can change it.';
    const actions = h('div', { class: 'button-row' },
      h('a', { class: 'button button-small button-primary', href: `#/chat?bud=${encodeURIComponent(bud.id)}`, text: 'Chat with it' }),
      h('button', { type: 'button', class: 'button button-small', text: 'Edit', disabled: !mayChange, title: refusal, onclick: () => this.edit(bud) }),
      h('button', { type: 'button', class: 'button button-small button-danger', text: 'Delete', disabled: !mayChange, title: refusal, onclick: () => this.confirmDelete(bud, actions) }));
    const prompt = bud.system_prompt?.trim() ?? '';
    return h('article', { class: 'card bud-card', 'aria-label': `Assistant ${bud.name}`, dataset: { budId: bud.id, budName: bud.name } },
      h('h2', { text: bud.name }),
      h('div', { class: 'small muted row' },
        h('span', { class: 'badge', text: `${bud.provider ?? 'default'}${bud.model ? ` · ${bud.model}` : ''}` }),
        h('span', { text: describeServers(bud.mcp_config, this.serverNames) }),
        h('span', { text: describeToolChoice(bud.mcp_config) }),
        bud.updated_at ? h('span', { text: `changed ${formatRelativeTime(bud.updated_at)}` }) : null,
        mayChange && bud.owner_user_id === identity?.user_id ? h('span', { class: 'badge badge-info', text: 'yours' }) : null),
      prompt ? h('p', { class: 'bud-prompt', text: prompt.length > 240 ? `${prompt.slice(0, 239)}…` : prompt }) : h('p', { class: 'muted small', text: 'No system prompt: the default one is used.' }),
      actions);
  }

  create() {
    openBudDialog({
      onSave: async (body) => {
        await api.post('/api/buds', body);
        showToast(`${body.name} created.`);
        await this.reload();
      },
    });
  }

  edit(bud) {
    openBudDialog({
      bud,
      onSave: async (body) => {
        await api.patch(`/api/buds/${segment(bud.id)}`, body);
        showToast(`${body.name} saved.`);
        await this.reload();
      },
    });
  }

  confirmDelete(bud, actions) {
    const original = [...actions.childNodes];
    const restore = () => replaceChildren(actions, original);
    const confirm = h('button', {
      type: 'button', class: 'button button-small button-danger', text: `Delete ${bud.name}`,
      onclick: async () => {
        confirm.disabled = true;
        try {
          await api.delete(`/api/buds/${segment(bud.id)}`);
          showToast(`${bud.name} deleted.`);
          await this.reload();
        } catch (error) {
          showToast(`${bud.name} could not be deleted: ${error.message}`, 'error');
          restore();
        }
      },
    });
    replaceChildren(actions, h('span', { class: 'small', text: 'Delete this assistant? Its conversations stay.' }), confirm,
      h('button', { type: 'button', class: 'button button-small', text: 'Keep it', onclick: restore }));
    confirm.focus();
  }
}

function describeServers(config, names) {
  const servers = config?.servers;
  if (!Array.isArray(servers)) return 'every active server';
  if (servers.length === 0) return 'no servers';
  const named = servers.map((reference) => names?.get(reference) ?? ([...(names?.values() ?? [])].includes(reference) ? reference : null));
  if (named.every(Boolean)) return `servers: ${named.join(', ')}`;
  return `${servers.length} server${servers.length === 1 ? '' : 's'}`;
}

function describeToolChoice(config) {
  const { mode, tool } = readToolChoice(config?.tool_choice);
  return mode === 'function' ? `always calls ${tool}` : TOOL_CHOICE_WORDS[mode];
}

// composer-attachments: attaching MCP resources to the next question. "Attach" opens a panel
// listing each server's resources and resource templates; a resource is attached at once, a
// template first asks for its variables (with the server's completions). Attached resources show
// as removable chips above the message; `POST /chat/stream` sends them as `attachments` and the
// server reads them when the question is asked.

import { h, replaceChildren } from '../../lib/dom.js';
import { listItems } from '../../lib/api.js';
import { argumentFields } from './composer-items.js';

export class AttachmentPicker {
  constructor(items) {
    this.items = items;
    this.attached = [];
    this.chips = h('ul', { class: 'attachment-chips', 'aria-label': 'Attached resources', hidden: true });
    this.panel = h('div', { class: 'attachment-panel stack', hidden: true, role: 'region', 'aria-label': 'Resources to attach' });
    this.button = h('button', { type: 'button', class: 'button', text: 'Attach', 'aria-expanded': 'false', title: 'Attach a resource of an MCP server to your question', onclick: () => this.toggle() });
  }

  /** `[{server, uri}]` for the request body. */
  attachments() {
    return this.attached.map(({ server, uri }) => ({ server, uri }));
  }

  clear() {
    this.attached = [];
    this.#renderChips();
  }

  async toggle() {
    if (!this.panel.hidden) {
      this.close();
      return;
    }
    this.panel.hidden = false;
    this.button.setAttribute('aria-expanded', 'true');
    replaceChildren(this.panel, h('p', { class: 'muted small', text: 'Loading resources…' }));
    try {
      this.#renderServers(await this.items.load());
    } catch (error) {
      replaceChildren(this.panel, h('p', { class: 'alert alert-error', role: 'alert', text: `Resources could not be listed: ${error.message}` }));
    }
  }

  close() {
    this.panel.hidden = true;
    this.button.setAttribute('aria-expanded', 'false');
  }

  #renderServers(items) {
    const servers = listItems(items, 'servers').filter((server) => server.resources.length || server.resource_templates.length);
    const failed = listItems(items, 'failed').map((failure) => h('p', { class: 'small muted', text: `${failure.server} could not be listed: ${failure.message}` }));
    if (servers.length === 0) {
      replaceChildren(this.panel, h('p', { class: 'muted', text: 'No server of this conversation offers resources.' }), failed);
      return;
    }
    replaceChildren(this.panel, servers.map((server) => h('section', { class: 'stack', 'aria-label': server.server },
      h('h3', { class: 'small', text: server.server }),
      h('ul', { class: 'resource-list' },
        server.resources.map((resource) => h('li', {}, h('button', {
          type: 'button', class: 'link-button resource-option', dataset: { uri: resource.uri },
          title: resource.description ?? resource.uri, text: resource.title ?? resource.name,
          onclick: () => this.#attach({ server: server.server, uri: resource.uri, label: resource.title ?? resource.name }),
        }))),
        server.resource_templates.map((template) => h('li', {}, h('button', {
          type: 'button', class: 'link-button template-option', dataset: { uriTemplate: template.uri_template },
          title: template.description ?? template.uri_template, text: `${template.title ?? template.name} …`,
          onclick: () => this.#askTemplate(server.server, template),
        })))))), failed);
  }

  /** A template's variables as a form; attaching expands the template. */
  #askTemplate(server, template) {
    const names = templateVariables(template.uri_template);
    const form = argumentFields(this.items, {
      server,
      reference: { type: 'resource', uri: template.uri_template },
      fields: names.map((name) => ({ name, required: true })),
    });
    // A group, not a form: it sits inside the composer's form, and its Enter must not send.
    const attach = () => {
      const missing = names.find((name) => !form.values()[name]);
      if (missing) {
        element.querySelector(`[name="${CSS.escape(missing)}"]`)?.focus();
        return;
      }
      const uri = expandTemplate(template.uri_template, form.values());
      this.#attach({ server, uri, label: uri });
    };
    const element = h('div', { class: 'template-form stack', role: 'group', 'aria-label': `Fill in ${template.name}` },
      h('p', { class: 'small', text: template.uri_template }),
      form.element,
      h('div', { class: 'row' },
        h('button', { type: 'button', class: 'button button-primary', text: 'Attach resource', onclick: attach }),
        h('button', { type: 'button', class: 'button', text: 'Back', onclick: () => { this.close(); this.toggle(); } })));
    element.addEventListener('keydown', (event) => {
      if (event.key !== 'Enter') return;
      event.preventDefault();
      attach();
    });
    replaceChildren(this.panel, element);
    form.firstField?.focus();
  }

  #attach(attachment) {
    if (!this.attached.some((known) => known.server === attachment.server && known.uri === attachment.uri)) this.attached.push(attachment);
    this.#renderChips();
    this.close();
  }

  #renderChips() {
    this.chips.hidden = this.attached.length === 0;
    replaceChildren(this.chips, this.attached.map((attachment, index) => h('li', { class: 'attachment-chip', dataset: { uri: attachment.uri } },
      h('span', { text: `${attachment.server}: ${attachment.label}`, title: attachment.uri }),
      h('button', { type: 'button', class: 'link-button', 'aria-label': `Remove ${attachment.label}`, text: '×', onclick: () => { this.attached.splice(index, 1); this.#renderChips(); } }))));
  }
}

/** The variables of an RFC 6570 template (simple and reserved expansions). */
export function templateVariables(template) {
  const names = [];
  for (const [, body] of template.matchAll(/\{([^}]+)\}/g)) {
    for (const name of body.replace(/^[+#./;?&]/, '').split(',')) {
      const clean = name.replace(/[*:].*$/, '');
      if (clean && !names.includes(clean)) names.push(clean);
    }
  }
  return names;
}

/** `template` with its `{name}` / `{+name}` expressions filled in (values percent-encoded). */
export function expandTemplate(template, values) {
  return template.replace(/\{(\+?)([^}]+)\}/g, (_, reserved, body) => body.split(',')
    .map((name) => {
      const value = values[name.replace(/[*:].*$/, '')] ?? '';
      return reserved ? encodeURI(value) : encodeURIComponent(value);
    })
    .join(','));
}

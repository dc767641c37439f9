// composer-prompts: MCP prompts as slash commands. Typing `/` at the start of the message lists
// the conversation's prompts as `/server:prompt` (filtered as you type; arrows and Enter, or a
// click, pick one). A prompt with arguments then shows its form, each field completed by the
// server (`completion/complete`); running it sends the prompt with `POST /chat/stream`, whose
// messages go into the conversation before the model answers.

import { h, replaceChildren } from '../../lib/dom.js';
import { argumentFields } from './composer-items.js';

export class SlashPrompts {
  /**
   * `input` is the composer's textarea (this listens to it before the composer does, so Enter
   * picks from the open menu instead of sending); `onRun({server, name, arguments})` runs one.
   */
  constructor(items, input, { onRun }) {
    this.items = items;
    this.input = input;
    this.onRun = onRun;
    this.matches = [];
    this.active = 0;
    this.menu = h('ul', { id: 'slash-menu', class: 'slash-menu', role: 'listbox', 'aria-label': 'Prompts', hidden: true });
    this.form = h('div', { class: 'prompt-form', hidden: true });
    input.setAttribute('aria-controls', this.menu.id);
    input.addEventListener('input', () => this.#update());
    input.addEventListener('keydown', (event) => this.#onKey(event));
  }

  async #update() {
    const text = this.input.value;
    if (!text.startsWith('/') || /\s/.test(text)) {
      this.#hideMenu();
      return;
    }
    let prompts;
    try {
      prompts = await this.items.prompts();
    } catch {
      this.#hideMenu();
      return;
    }
    if (this.input.value !== text) return;
    const typed = text.slice(1).toLowerCase();
    this.matches = prompts.filter(({ server, prompt }) => `${server}:${prompt.name}`.toLowerCase().includes(typed));
    this.active = 0;
    this.#renderMenu();
  }

  #renderMenu() {
    if (this.matches.length === 0) {
      replaceChildren(this.menu, h('li', { class: 'muted small', text: 'No prompt matches.' }));
    } else {
      replaceChildren(this.menu, this.matches.map(({ server, prompt }, index) => h('li', {
        role: 'option', class: 'slash-option', 'aria-selected': index === this.active ? 'true' : 'false',
        dataset: { command: `/${server}:${prompt.name}` },
        onmousedown: (event) => { event.preventDefault(); this.#pick(index); },
      }, h('strong', { text: `/${server}:${prompt.name}` }), prompt.description ? h('span', { class: 'small muted', text: ` ${prompt.description}` }) : null)));
    }
    this.menu.hidden = false;
  }

  #hideMenu() {
    this.menu.hidden = true;
    this.matches = [];
  }

  #onKey(event) {
    if (this.menu.hidden || this.matches.length === 0) {
      if (event.key === 'Escape' && !this.menu.hidden) this.#hideMenu();
      return;
    }
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      this.active = (this.active + (event.key === 'ArrowDown' ? 1 : this.matches.length - 1)) % this.matches.length;
      this.#renderMenu();
    } else if (event.key === 'Enter' || event.key === 'Tab') {
      this.#pick(this.active);
    } else if (event.key === 'Escape') {
      this.#hideMenu();
    } else {
      return;
    }
    event.preventDefault();
    event.stopImmediatePropagation();
  }

  /** Shows the picked prompt's form (or runs it at once when it takes no arguments). */
  #pick(index) {
    const { server, prompt } = this.matches[index];
    this.#hideMenu();
    this.input.value = '';
    const fields = prompt.arguments ?? [];
    if (fields.length === 0) {
      this.onRun({ server, name: prompt.name, arguments: {} });
      return;
    }
    const form = argumentFields(this.items, { server, reference: { type: 'prompt', name: prompt.name }, fields });
    // A group, not a form: it sits inside the composer's form, and its Enter must not send.
    const run = () => {
      const missing = fields.find((field) => field.required && !form.values()[field.name]);
      if (missing) {
        element.querySelector(`[name="${CSS.escape(missing.name)}"]`)?.focus();
        return;
      }
      const values = Object.fromEntries(Object.entries(form.values()).filter(([, value]) => value !== ''));
      this.close();
      this.onRun({ server, name: prompt.name, arguments: values });
    };
    const element = h('div', { class: 'stack', role: 'group', 'aria-label': `Arguments of /${server}:${prompt.name}` },
      h('p', {}, h('strong', { text: `/${server}:${prompt.name}` }), prompt.description ? h('span', { class: 'small muted', text: ` ${prompt.description}` }) : null),
      form.element,
      h('div', { class: 'row' },
        h('button', { type: 'button', class: 'button button-primary', text: 'Run prompt', onclick: run }),
        h('button', { type: 'button', class: 'button', text: 'Cancel', onclick: () => this.close() })));
    element.addEventListener('keydown', (event) => {
      if (event.key !== 'Enter') return;
      event.preventDefault();
      run();
    });
    replaceChildren(this.form, element);
    this.form.hidden = false;
    form.firstField?.focus();
  }

  close() {
    this.form.hidden = true;
    this.form.replaceChildren();
    this.#hideMenu();
  }
}

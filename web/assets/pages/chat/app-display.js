// app-display: how much room an MCP App's frame takes. Inline, the frame is as tall as the app
// says it is (`ui/notifications/size-changed`, kept between MIN_HEIGHT and MAX_HEIGHT);
// fullscreen (granted on `ui/request-display-mode`), it covers the page until the person leaves
// with its Exit button or Escape. Each mode change is told to the app
// (`ui/notifications/host-context-changed`, with the container's new dimensions), which also
// reads them from `ui/initialize`'s host context.

import { h } from '../../lib/dom.js';

const MIN_HEIGHT = 48;
const MAX_HEIGHT = 720;

export class AppDisplay {
  /** `onChange(change)` tells the app of a mode change (`{displayMode, containerDimensions}`). */
  constructor({ onChange }) {
    this.onChange = onChange;
    this.mode = 'inline';
    this.inlineHeight = MIN_HEIGHT * 3;
    this.element = null;
    this.iframe = null;
    this.onKey = (event) => { if (event.key === 'Escape' && this.mode === 'fullscreen') this.setMode('inline'); };
    this.exitButton = h('button', { type: 'button', class: 'button mcp-app-exit', text: 'Exit full screen', hidden: true, onclick: () => this.setMode('inline') });
  }

  /** Starts sizing `iframe` inside the app's `element`. */
  attach(element, iframe) {
    this.element = element;
    this.iframe = iframe;
    iframe.style.height = `${this.inlineHeight}px`;
    window.addEventListener('keydown', this.onKey);
  }

  detach() {
    window.removeEventListener('keydown', this.onKey);
  }

  /** Grants `inline` or `fullscreen` (anything else keeps the current mode); returns the mode. */
  setMode(requested) {
    const mode = requested === 'fullscreen' || requested === 'inline' ? requested : this.mode;
    if (mode === this.mode || !this.iframe) return this.mode;
    this.mode = mode;
    this.element.dataset.displayMode = mode;
    this.element.classList.toggle('mcp-app-fullscreen', mode === 'fullscreen');
    this.exitButton.hidden = mode !== 'fullscreen';
    this.iframe.style.height = mode === 'fullscreen' ? '' : `${this.inlineHeight}px`;
    this.onChange({ displayMode: mode, containerDimensions: this.dimensions() });
    return mode;
  }

  /** The app's new height (`ui/notifications/size-changed`), shown when inline. */
  resize(height) {
    if (!Number.isFinite(height) || !this.iframe) return;
    this.inlineHeight = Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, Math.ceil(height)));
    if (this.mode === 'inline') this.iframe.style.height = `${this.inlineHeight}px`;
  }

  /** The container's dimensions as the app's host context gives them. */
  dimensions() {
    if (this.mode === 'fullscreen') return { width: window.innerWidth, height: window.innerHeight };
    return { width: Math.round(this.element?.clientWidth || 600), maxHeight: MAX_HEIGHT };
  }
}

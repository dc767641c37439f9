// tool-call-view: one tool call in the transcript — a one-line status ("Calling kg ·
// schema_version…", then a success or error badge with a human summary and the duration) that
// expands to the arguments and the result as JSON viewers. Under it, always visible: a running
// call's progress bar and what the result carries besides text (images, audio, resources,
// structured content; see tool-result-content.js). A call that became an MCP task shows the
// task's state and status message as `task` events arrive (or, from history, that it is still
// working) and a Cancel button that stops that one task (POST …/tool-calls/{id}/cancel).
// Used for live events and for history.

import { h, replaceChildren } from '../../lib/dom.js';
import { api, segment } from '../../lib/api.js';
import { renderJsonViewer, parseJsonLoosely } from '../../lib/json-view.js';
import { deniedLabel, formatDuration, resultPayload, runningLabel, summariseError, summariseResult } from '../../lib/tool-summary.js';
import { getIdentity } from '../../lib/session.js';
import { explainUpstreamError } from '../../lib/upstream-errors.js';
import { blocksOfResult, renderProgress, renderResultContent } from './tool-result-content.js';

/** Splits an LLM-facing tool name `server__tool` into its parts (best effort). */
export function splitQualifiedToolName(name) {
  const text = String(name ?? '');
  const separator = text.indexOf('__');
  return separator > 0 ? { server: text.slice(0, separator), tool: text.slice(separator + 2) } : { server: '', tool: text };
}

/** A tool call view; call `update(state)` as its status changes. */
export class ToolCallView {
  constructor({ callId, server, tool, argumentsValue }) {
    this.callId = callId;
    this.server = server;
    this.tool = tool;
    this.argumentsValue = argumentsValue;
    this.statusSlot = h('span', { class: 'tool-status' });
    this.body = h('div', { class: 'tool-call-body' });
    this.details = h('details', { class: 'tool-call', dataset: { callId: callId ?? '' } },
      h('summary', {}, this.statusSlot),
      this.body);
    this.progressSlot = h('div', { class: 'tool-progress-slot' });
    this.contentSlot = h('div', { class: 'tool-content-slot' });
    this.element = h('div', { class: 'tool-call-card' }, this.details, this.progressSlot, this.contentSlot);
    this.details.addEventListener('toggle', () => { if (this.details.open) this.#renderBody(); });
    this.bodyDirty = true;
    this.update({ status: 'started' });
  }

  /** Who decided the call's approval (a user id), so a denied badge can say "Denied by you". */
  noteDecider(decidedBy) {
    if (!decidedBy || this.decidedBy === decidedBy) return;
    this.decidedBy = decidedBy;
    if (this.status === 'denied') this.update({ status: 'denied' });
  }

  /**
   * Updates the view. `status`: started | progress | task | completed | error | denied | unknown |
   * waiting_approval. `result`, `error`, `durationMs` as they become known; `progress` on a
   * progress update; `task` (`{task_id, status, status_message}`) on a task update; `blocks`
   * and `structured` (the stored tool message's) from history.
   */
  update({ status, result, error, durationMs, argumentsValue, resultTruncated, errorCode, progress, blocks, structured, task }) {
    if (status === 'progress') {
      if (progress) replaceChildren(this.progressSlot, renderProgress(progress));
      return;
    }
    if (status === 'task') {
      // A late task event never undoes the call's end.
      if (this.status !== 'started' && this.status !== 'task') return;
      this.task = task ?? this.task;
    }
    if (status !== 'started' && status !== 'task') this.progressSlot.replaceChildren();
    this.status = status;
    if (result !== undefined && result !== null && blocks === undefined) {
      this.#showContent(blocksOfResult(result), result.structuredContent);
    } else if (blocks !== undefined || structured !== undefined) {
      this.#showContent(blocks, structured);
    }
    if (errorCode !== undefined) this.errorCode = errorCode;
    if (resultTruncated !== undefined) this.resultTruncated = resultTruncated;
    if (argumentsValue !== undefined) this.argumentsValue = argumentsValue;
    if (result !== undefined) this.result = result;
    if (error !== undefined) this.error = error;
    if (durationMs !== undefined) this.durationMs = durationMs;
    this.details.dataset.status = status;
    const name = h('span', { class: 'tool-name', text: this.server ? `${this.server} · ${this.tool}` : this.tool });
    const duration = formatDuration(this.durationMs);
    const durationText = duration ? h('span', { class: 'muted', text: duration }) : null;
    let content;
    if (this.task) this.details.dataset.taskStatus = status === 'task' ? this.task.status : status;
    if (status === 'started') {
      content = [h('span', { class: 'spinner', 'aria-hidden': 'true' }), h('span', { text: runningLabel(this.server, this.tool) })];
    } else if (status === 'task') {
      content = this.#taskLine(name);
    } else if (status === 'unknown' && this.task && this.errorCode === 'cancelled') {
      content = [h('span', { class: 'badge badge-warning', text: '■ Task cancelled — its server was asked to stop it' }), name, durationText];
    } else if (status === 'waiting_approval') {
      content = [h('span', { class: 'badge badge-warning', text: 'Waiting for approval' }), name];
    } else if (status === 'completed') {
      content = [h('span', { class: 'badge badge-success', text: `✓ ${summariseResult(this.result)}` }), name, durationText];
    } else if (status === 'unknown') {
      content = [h('span', { class: 'badge badge-warning', text: '? Outcome unknown — the call was interrupted and was not repeated' }), name];
    } else {
      const explained = explainUpstreamError(this.errorCode);
      const label = status === 'denied' ? deniedLabel(this.error, { decidedBy: this.decidedBy, me: getIdentity()?.user_id })
        : explained ? `⚠ Failed: ${explained}` : `⚠ ${summariseError(this.error ?? this.result)}`;
      content = [h('span', { class: 'badge badge-danger', text: label }), name, durationText];
    }
    replaceChildren(this.statusSlot, content);
    this.statusSlot.setAttribute('role', status === 'started' || status === 'task' ? 'status' : 'group');
    this.bodyDirty = true;
    if (this.details.open) this.#renderBody();
  }

  /**
   * The status line of a call that is an MCP task: its state, its status message, and a
   * Cancel button (outside the summary's toggle) while it works.
   */
  #taskLine(name) {
    const { status: state = 'working', status_message: message } = this.task ?? {};
    const words = { working: 'Task working', input_required: 'Task needs input', completed: 'Task completed', failed: 'Task failed', cancelled: 'Task cancelled' };
    const badge = { completed: 'badge-success', failed: 'badge-danger', cancelled: 'badge-warning' }[state] ?? 'badge-info';
    const running = state === 'working' || state === 'input_required';
    const cancel = running && this.toolCallId && this.conversationId ? h('button', {
      type: 'button', class: 'button button-small button-danger tool-task-cancel', text: this.cancelling ? 'Cancelling…' : 'Cancel task', disabled: Boolean(this.cancelling),
      title: 'Ask the server to stop this task (the rest of the answer goes on)',
      onclick: (event) => {
        event.preventDefault();
        event.stopPropagation();
        this.#cancelTask(event.currentTarget);
      },
    }) : null;
    return [
      running ? h('span', { class: 'spinner', 'aria-hidden': 'true' }) : null,
      h('span', { class: `badge ${badge} tool-task-state`, dataset: { taskState: state }, text: words[state] ?? `Task ${state}` }),
      name,
      message ? h('span', { class: 'muted tool-task-message', text: message }) : null,
      cancel,
    ];
  }

  async #cancelTask(button) {
    this.cancelling = true;
    button.disabled = true;
    button.textContent = 'Cancelling…';
    try {
      await api.post(`/chat/conversations/${segment(this.conversationId)}/tool-calls/${segment(this.toolCallId)}/cancel`);
    } catch (error) {
      this.cancelling = false;
      button.disabled = false;
      button.textContent = 'Cancel task';
      this.contentSlot.append(h('p', { class: 'field-error', role: 'alert', text: `The task could not be cancelled: ${error.message}` }));
    }
  }

  /** Shows the result's images, audio, resources and structured content under the call. */
  #showContent(blocks, structured) {
    replaceChildren(this.contentSlot, renderResultContent(blocks, structured));
  }

  #renderBody() {
    if (!this.bodyDirty) return;
    this.bodyDirty = false;
    const parts = [renderJsonViewer(parseJsonLoosely(this.argumentsValue ?? {}), { label: 'Arguments', expandDepth: 2 })];
    if (this.result !== undefined) {
      // The readable part first (structured content, or the text parsed as JSON); the MCP
      // envelope stays one click away.
      const payload = resultPayload(this.result);
      parts.push(renderJsonViewer(payload, { label: 'Result', expandDepth: 2 }));
      if (payload !== this.result) {
        parts.push(h('details', { class: 'small' }, h('summary', { text: 'Raw MCP result' }), renderJsonViewer(this.result, { label: 'Raw MCP result', expandDepth: 1 })));
      }
    }
    if (this.error !== undefined && this.error !== null) parts.push(renderJsonViewer(this.error, { label: 'Error', expandDepth: 2 }));
    if (this.toolCallId && this.conversationId && (this.resultTruncated || this.fromHistory) && /^(completed|error)$/.test(this.status)) {
      parts.push(this.#renderFullResultLoader());
    }
    if (this.result === undefined && (this.error === undefined || this.error === null)) {
      parts.push(h('p', { class: 'muted small', text: this.status === 'started' || this.status === 'task' ? 'Waiting for the result…' : 'No result was recorded.' }));
    }
    replaceChildren(this.body, parts);
  }

  /** A button that reads the stored full result page by page (results sent to the LLM or in events may be shortened). */
  #renderFullResultLoader() {
    const slot = h('div', { class: 'stack' });
    const button = h('button', {
      type: 'button', class: 'button button-small', text: this.resultTruncated ? 'Result shortened — load the full result' : 'Load the stored result',
      onclick: async () => {
        button.disabled = true;
        try {
          let text = '';
          let offset = 0;
          for (let page = 0; page < 200 && offset !== null && offset !== undefined; page += 1) {
            const answer = await api.get(`/chat/conversations/${segment(this.conversationId)}/tool-calls/${segment(this.toolCallId)}/result?offset=${offset}&limit=65536`);
            text += answer?.text ?? '';
            offset = answer?.next_offset ?? null;
          }
          replaceChildren(slot, renderJsonViewer(parseJsonLoosely(text), { label: 'Full result', expandDepth: 2, copyText: text }));
        } catch (error) {
          replaceChildren(slot, h('p', { class: 'field-error', role: 'alert', text: `The full result could not be loaded: ${error.message}` }));
          button.disabled = false;
        }
      },
    });
    slot.append(button);
    return slot;
  }
}

// tool-summary: one-line human descriptions of tool activity for the chat ("Calling kg ·
// schema_version…", "Found 12 object types", "Failed: server not reachable"). Works from the
// result's shape (structured content, JSON text content, lists), not from tool names, so it reads
// sensibly for any server's tools.

import { parseJsonLoosely } from './json-view.js';

/** Nicer nouns for common list keys ("types" of a schema are object types). */
const NOUNS = { types: 'object types', relationships: 'relationship types', matches: 'matches', changes: 'changes' };

/** The label shown while a call runs. */
export function runningLabel(server, tool) {
  return server ? `Calling ${server} · ${tool}…` : `Calling ${tool}…`;
}

/** The most useful JSON value inside a tool result (structured content, else parsed text). */
export function resultPayload(result) {
  if (result === undefined || result === null) return null;
  if (typeof result === 'string') return parseJsonLoosely(result);
  if (typeof result !== 'object') return result;
  const structured = result.structuredContent;
  if (structured !== undefined && structured !== null) return structured;
  if (Array.isArray(result.content)) {
    const texts = result.content.filter((part) => part?.type === 'text' && typeof part.text === 'string');
    if (texts.length === 1) return parseJsonLoosely(texts[0].text);
    if (texts.length > 1) return texts.map((part) => parseJsonLoosely(part.text));
    return result.content;
  }
  return result;
}

/** A short summary of a successful result, e.g. "Found 12 object types". */
export function summariseResult(result) {
  const payload = resultPayload(result);
  if (payload === null || payload === undefined) return 'Done';
  if (Array.isArray(payload)) return `Found ${countPhrase(payload.length, 'item')}`;
  if (typeof payload === 'string') return firstLine(payload) || 'Done';
  if (typeof payload !== 'object') return `Result: ${String(payload)}`;
  if (typeof payload.version === 'string' && Number.isInteger(payload.object_type_count)) {
    return `Version ${payload.version} · ${countPhrase(payload.object_type_count, 'object type')}`;
  }
  const arrays = Object.entries(payload).filter(([, value]) => Array.isArray(value));
  if (arrays.length > 0) {
    const preferred = arrays.find(([key]) => !/^(required|enum|enum_values|tags|keywords)$/i.test(key)) ?? arrays[0];
    const [key, value] = preferred;
    const total = [payload.total, payload.total_matching, payload.count].find(Number.isInteger) ?? value.length;
    const noun = NOUNS[key] ?? humaniseKey(key);
    return total > value.length ? `Found ${countPhrase(total, noun)} (${value.length} shown)` : `Found ${countPhrase(total, noun)}`;
  }
  for (const key of ['version', 'schema_version', 'current_version']) {
    const value = payload[key];
    if (typeof value === 'string' || typeof value === 'number') return `Version ${value}`;
    if (value && typeof value === 'object' && (value.version || value.hash)) return `Version ${value.version ?? value.hash}`;
  }
  for (const key of ['count', 'total']) {
    if (typeof payload[key] === 'number') return `Counted ${payload[key]}`;
  }
  const name = payload.name ?? payload.title ?? payload.id;
  if (typeof name === 'string' || typeof name === 'number') return `Found ${String(name)}`;
  const keys = Object.keys(payload);
  return keys.length ? `Returned ${countPhrase(keys.length, 'field')}` : 'Done';
}

/** A plain description of a failed call's reason. */
export function summariseError(error) {
  if (error === undefined || error === null || error === '') return 'Failed';
  if (typeof error === 'string') return `Failed: ${firstLine(error)}`;
  const message = error.message ?? error.error ?? error.reason;
  if (typeof message === 'string') return `Failed: ${firstLine(message)}`;
  const payload = resultPayload(error);
  return typeof payload === 'string' ? `Failed: ${firstLine(payload)}` : 'Failed';
}

/**
 * The badge of a refused call, saying "denied" once. The chat tells the model "the call was not
 * allowed: <reason>" and the approval gate's reasons say "denied" themselves, so the reason is
 * rephrased: who or what refused it. `decidedBy` is the approval's decider when known and
 * `me` the signed-in user id ("Denied by you").
 */
export function deniedLabel(error, { decidedBy, me } = {}) {
  const raw = typeof error === 'string' ? error : error?.message ?? '';
  const reason = firstLine(raw).replace(/^the call was not allowed:\s*/i, '').trim().replace(/\.$/, '');
  if (!reason) return '✕ Denied';
  if (/^the user denied this call$/i.test(reason)) {
    if (decidedBy && me && decidedBy === me) return '✕ Denied by you';
    return decidedBy ? '✕ Denied by another user' : '✕ Denied at approval';
  }
  const timedOut = /^nobody approved the call within (.+?), so it was not run$/i.exec(reason);
  if (timedOut) return `✕ Denied: approval timed out after ${timedOut[1]}`;
  if (/^the answer was stopped before the call was approved$/i.test(reason)) return '✕ Not run: the answer was stopped before approval';
  const policy = /is set to ALWAYS_DENY(?: \((.+) policy\))?$/.exec(reason);
  if (policy) return policy[1] ? `✕ Denied by the ${policy[1]} policy (always deny)` : '✕ Denied by policy (always deny)';
  if (/is always denied for this user \(a remembered decision\)$/i.test(reason)) return '✕ Denied: an earlier "deny always" for this tool';
  return `✕ Denied: ${reason}`;
}

/** "12 ms" / "1.4 s" for durations. */
export function formatDuration(milliseconds) {
  if (typeof milliseconds !== 'number' || !Number.isFinite(milliseconds)) return '';
  if (milliseconds < 1000) return `${Math.round(milliseconds)} ms`;
  return `${(milliseconds / 1000).toFixed(1)} s`;
}

function firstLine(text) {
  const line = String(text).trim().split('\n')[0];
  return line.length > 140 ? `${line.slice(0, 139)}…` : line;
}

function humaniseKey(key) {
  return String(key).replace(/[_-]+/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
}

/** "1 change", "3 changes", "12 object types" (simple English plural of the last word). */
export function countPhrase(count, noun) {
  const words = noun.trim().split(' ');
  let last = words.pop();
  const singular = last.endsWith('ies') ? `${last.slice(0, -3)}y` : last.endsWith('ses') ? last.slice(0, -2) : last.replace(/s$/, '');
  if (count === 1) last = singular;
  else if (!/s$/.test(last)) last = /[^aeiou]y$/.test(last) ? `${last.slice(0, -1)}ies` : /(s|x|ch|sh)$/.test(last) ? `${last}es` : `${last}s`;
  return `${count} ${[...words, last].join(' ')}`;
}

// tool-result-content: what a tool result carries besides text, shown in its tool card — images
// and audio (from the result's own base64 data only: the page never fetches a URL a server
// named, and its CSP allows `data:` images and media and nothing remote), resource links (an
// http(s) link opens in a new tab without an opener; other schemes are shown, not followed),
// embedded resources (their text, and a download), `structuredContent` as JSON, and the live
// progress bar of a running call.

import { h } from '../../lib/dom.js';
import { renderJsonViewer } from '../../lib/json-view.js';

const SHOWN_IMAGE_TYPES = /^image\/(png|jpeg|gif|webp|bmp|avif)$/;
const SHOWN_AUDIO_TYPES = /^audio\/[a-z0-9.+-]+$/;

/**
 * The blocks of an MCP result (`content`, camelCase, as the `mcp_tool` event carries it) in the
 * shape the stored tool message keeps them (`metadata.content`, snake_case).
 */
export function blocksOfResult(result) {
  const content = Array.isArray(result?.content) ? result.content : [];
  return content.map((block) => {
    if (block?.type === 'resource') {
      const resource = block.resource ?? {};
      return { type: 'resource', uri: resource.uri, mime_type: resource.mimeType, text: resource.text, blob: resource.blob };
    }
    return { ...block, mime_type: block?.mime_type ?? block?.mimeType };
  });
}

/** The rich part of a result: the non-text blocks and the structured content (null when none). */
export function renderResultContent(blocks, structured) {
  const parts = (blocks ?? []).map(renderBlock).filter(Boolean);
  if (structured !== undefined && structured !== null) {
    parts.push(h('div', { class: 'tool-structured' }, renderJsonViewer(structured, { label: 'Structured content', expandDepth: 2 })));
  }
  return parts.length ? h('div', { class: 'tool-result-content stack' }, parts) : null;
}

function renderBlock(block) {
  switch (block?.type) {
    case 'image':
      if (!SHOWN_IMAGE_TYPES.test(block.mime_type ?? '') || typeof block.data !== 'string') return unshown(block);
      return h('img', { class: 'tool-image', src: `data:${block.mime_type};base64,${block.data}`, alt: `Image from the tool (${block.mime_type})` });
    case 'audio':
      if (!SHOWN_AUDIO_TYPES.test(block.mime_type ?? '') || typeof block.data !== 'string') return unshown(block);
      return h('audio', { class: 'tool-audio', controls: true, src: `data:${block.mime_type};base64,${block.data}`, 'aria-label': `Audio from the tool (${block.mime_type})` });
    case 'resource_link':
      return renderResourceLink(block);
    case 'resource':
      return renderEmbeddedResource(block);
    case 'omitted':
      return h('p', { class: 'muted small', text: `A ${block.kind} block of ${block.bytes} bytes is not kept with the message (too large); load the stored result to see it.` });
    default:
      return null;
  }
}

function unshown(block) {
  return h('p', { class: 'muted small', text: `A ${block.type} of type ${block.mime_type ?? 'unknown'} is not shown here.` });
}

function renderResourceLink(block) {
  const label = block.title || block.name || block.uri;
  const web = /^https?:\/\//i.test(block.uri ?? '');
  return h('div', { class: 'tool-resource-link' },
    web ? h('a', { href: block.uri, target: '_blank', rel: 'noopener noreferrer', text: label }) : h('strong', { text: label }),
    h('code', { class: 'small', text: ` ${block.uri ?? ''}` }),
    block.description ? h('p', { class: 'muted small', text: block.description }) : null);
}

function renderEmbeddedResource(block) {
  const name = (block.uri ?? 'resource').split(/[/:]/).filter(Boolean).pop() || 'resource';
  const download = h('button', {
    type: 'button', class: 'button button-small', text: 'Download',
    onclick: () => {
      const bytes = block.blob !== undefined && block.blob !== null
        ? Uint8Array.from(atob(block.blob), (character) => character.charCodeAt(0))
        : new TextEncoder().encode(block.text ?? '');
      const url = URL.createObjectURL(new Blob([bytes], { type: block.mime_type || 'application/octet-stream' }));
      const link = h('a', { href: url, download: name });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
    },
  });
  return h('details', { class: 'tool-resource' },
    h('summary', {}, h('span', { text: `Resource ${block.uri ?? ''}` }), block.mime_type ? h('span', { class: 'muted small', text: ` (${block.mime_type})` }) : null),
    typeof block.text === 'string' ? h('pre', { class: 'small', text: block.text }) : h('p', { class: 'muted small', text: 'Binary content.' }),
    download);
}

/** A running call's progress bar: `progress` of `total` (indeterminate without a total). */
export function renderProgress({ progress, total, message }) {
  const known = typeof total === 'number' && total > 0;
  const percent = known ? Math.round(Math.min(1, progress / total) * 100) : null;
  const bar = h('progress', { class: 'tool-progress', max: known ? String(total) : null, value: known ? String(progress) : null, 'aria-label': 'Tool progress' });
  const text = [message, known ? `${percent}%` : `${progress}`].filter(Boolean).join(' · ');
  return h('div', { class: 'tool-progress-row', role: 'status' }, bar, h('span', { class: 'muted small', text }));
}

// app-downloads: an MCP App's `ui/download-file`. A sandboxed frame cannot download by itself, so
// the app hands the host MCP resources — embedded ones (`{type: "resource", resource: {uri,
// mimeType, text | blob}}`) as they are, resource links (`{type: "resource_link", uri, name}`)
// read by the host from the app's own server (through `readResource`: the API, so the approval
// gate and audit apply, as for the app's own `resources/read`). The person sees every file's
// name, type and size and saves them, or not; only then are they written, from memory (a
// `blob:` URL of this page), under a name stripped of path and control characters.

import { h } from '../../lib/dom.js';
import { confirmDownload } from './app-dialogs.js';

const MAX_FILES = 10;
const MAX_NAME = 120;

/** A request the host cannot take as given (JSON-RPC invalid params). */
export class DownloadRequestError extends Error {}

/**
 * Resolves the app's `contents` to files, asks the person, saves them; resolves to the spec's
 * result (`{}` saved, `{isError: true}` refused). `readResource(uri)` reads a link's resource.
 */
export async function downloadFiles(contents, appLabel, readResource) {
  if (!Array.isArray(contents) || contents.length === 0) throw new DownloadRequestError('contents: at least one resource');
  if (contents.length > MAX_FILES) throw new DownloadRequestError(`contents: at most ${MAX_FILES} files at once`);
  const files = [];
  for (const item of contents) files.push(await fileOf(item, readResource));
  if (!await confirmDownload(files.map(({ name, blob }) => ({ name, type: blob.type, size: blob.size })), appLabel)) {
    return { isError: true };
  }
  for (const file of files) save(file);
  return {};
}

async function fileOf(item, readResource) {
  if (item?.type === 'resource' && item.resource && typeof item.resource.uri === 'string') {
    return { name: fileName(item.resource.uri, item.resource.uri), blob: blobOf(item.resource) };
  }
  if (item?.type === 'resource_link' && typeof item.uri === 'string') {
    const read = await readResource(item.uri);
    const contents = Array.isArray(read?.contents) ? read.contents : [];
    const resource = contents.find((content) => content?.uri === item.uri) ?? contents[0];
    if (!resource) throw new Error(`${item.uri}: the server sent no contents`);
    return { name: fileName(item.name, item.uri), blob: blobOf({ mimeType: item.mimeType, ...resource }) };
  }
  throw new DownloadRequestError('contents: each item is an embedded resource or a resource link');
}

function blobOf({ mimeType, text, blob }) {
  const type = typeof mimeType === 'string' && /^[\w.+-]+\/[\w.+-]+$/.test(mimeType) ? mimeType : 'application/octet-stream';
  if (typeof text === 'string') return new Blob([text], { type });
  if (typeof blob === 'string') {
    let bytes;
    try {
      bytes = Uint8Array.from(atob(blob), (character) => character.charCodeAt(0));
    } catch {
      throw new DownloadRequestError('contents: a blob that is not base64');
    }
    return new Blob([bytes], { type });
  }
  throw new DownloadRequestError('contents: a resource with neither text nor blob');
}

/** A file name from `name`, else the URI's last path segment; no path, control or reserved characters. */
function fileName(name, uri) {
  let candidate = typeof name === 'string' && name.trim() ? name : '';
  if (!candidate || candidate === uri) {
    try {
      candidate = decodeURIComponent(new URL(uri).pathname.split('/').filter(Boolean).pop() ?? '');
    } catch {
      candidate = '';
    }
  }
  const cleaned = candidate.replace(/[\\/:*?"<>|\u0000-\u001f\u007f]/g, '_').replace(/^[.\s]+|[.\s]+$/g, '').slice(0, MAX_NAME);
  return cleaned || 'download';
}

function save({ name, blob }) {
  const url = URL.createObjectURL(blob);
  const link = h('a', { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

// markdown: a small, safe Markdown-to-HTML renderer for assistant answers.
//
// Safety rule: every character of the source is HTML-escaped before any markup is added, and the
// only tags produced are the fixed ones below; link targets must parse as http(s) URLs. So model or
// tool output can never inject markup, attributes or script. Supported: ATX headings, paragraphs
// with line breaks, emphasis (bold, italic, strike), inline code and fenced code blocks, block
// quotes, ordered/unordered (nested) lists, GFM tables with alignment, rules, links and autolinks.
// Unclosed constructs (while streaming) render as plain text or an open code block, never break.

const HTML_ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes the five HTML-significant characters. */
export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (character) => HTML_ESCAPES[character]);
}

/** Renders Markdown source to an HTML string that is safe to assign to innerHTML. */
export function renderMarkdown(source) {
  const lines = String(source ?? '')
    .replace(/\u0000/g, '')
    .replace(/\r\n?/g, '\n')
    .split('\n');
  return renderBlocks(lines);
}

/** Returns the href for an allowed link target (http or https), or null. */
export function safeLinkTarget(rawTarget) {
  const target = String(rawTarget).trim();
  if (!/^https?:\/\//i.test(target)) return null;
  try {
    const url = new URL(target);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:\s+(.*?))?\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?/;
const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_SEPARATOR = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

function isBlank(line) {
  return /^\s*$/.test(line);
}

function startsTable(lines, index) {
  return lines[index].includes('|') && index + 1 < lines.length &&
    lines[index + 1].includes('-') && TABLE_SEPARATOR.test(lines[index + 1]);
}

function startsBlock(lines, index) {
  const line = lines[index];
  return FENCE_OPEN.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) ||
    LIST_ITEM.test(line) || startsTable(lines, index);
}

function renderBlocks(lines) {
  const html = [];
  let index = 0;
  while (index < lines.length) {
    const line = lines[index];
    if (isBlank(line)) {
      index += 1;
      continue;
    }
    const fence = line.match(FENCE_OPEN);
    if (fence) {
      index = renderFencedCode(lines, index, fence, html);
      continue;
    }
    const heading = line.match(HEADING);
    if (heading) {
      const level = heading[1].length;
      html.push(`<h${level}>${renderInline(heading[2] ?? '')}</h${level}>`);
      index += 1;
      continue;
    }
    if (RULE.test(line)) {
      html.push('<hr>');
      index += 1;
      continue;
    }
    if (startsTable(lines, index)) {
      index = renderTable(lines, index, html);
      continue;
    }
    if (QUOTE.test(line)) {
      const quoted = [];
      while (index < lines.length && QUOTE.test(lines[index])) {
        quoted.push(lines[index].replace(QUOTE, ''));
        index += 1;
      }
      html.push(`<blockquote>${renderBlocks(quoted)}</blockquote>`);
      continue;
    }
    if (LIST_ITEM.test(line)) {
      index = renderList(lines, index, html);
      continue;
    }
    const paragraph = [];
    while (index < lines.length && !isBlank(lines[index]) &&
      (paragraph.length === 0 || !startsBlock(lines, index))) {
      paragraph.push(lines[index].trim());
      index += 1;
    }
    html.push(`<p>${renderInline(paragraph.join('\n'))}</p>`);
  }
  return html.join('');
}

function renderFencedCode(lines, start, fence, html) {
  const marker = fence[1];
  const language = fence[2];
  const body = [];
  let index = start + 1;
  while (index < lines.length) {
    const trimmed = lines[index].trim();
    if (trimmed.startsWith(marker) && /^[`~]+$/.test(trimmed) && trimmed[0] === marker[0]) break;
    body.push(lines[index]);
    index += 1;
  }
  const languageAttribute = language ? ` data-language="${escapeHtml(language)}"` : '';
  html.push(`<pre class="md-code"${languageAttribute}><code>${escapeHtml(body.join('\n'))}</code></pre>`);
  return index + 1;
}

function splitTableRow(line) {
  let row = line.trim();
  if (row.startsWith('|')) row = row.slice(1);
  if (row.endsWith('|') && !row.endsWith('\\|')) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, '|'));
}

function renderTable(lines, start, html) {
  const header = splitTableRow(lines[start]);
  const alignments = splitTableRow(lines[start + 1]).map((cell) => {
    const left = cell.startsWith(':');
    const right = cell.endsWith(':');
    if (left && right) return 'center';
    if (right) return 'right';
    return null;
  });
  const alignClass = (column) => (alignments[column] ? ` class="align-${alignments[column]}"` : '');
  const head = header.map((cell, column) => `<th${alignClass(column)}>${renderInline(cell)}</th>`).join('');
  const rows = [];
  let index = start + 2;
  while (index < lines.length && !isBlank(lines[index]) && lines[index].includes('|')) {
    const cells = splitTableRow(lines[index]);
    const row = header.map((_, column) => `<td${alignClass(column)}>${renderInline(cells[column] ?? '')}</td>`);
    rows.push(`<tr>${row.join('')}</tr>`);
    index += 1;
  }
  html.push(`<div class="md-table-wrap"><table><thead><tr>${head}</tr></thead><tbody>${rows.join('')}</tbody></table></div>`);
  return index;
}

function indentWidth(text) {
  return text.replace(/\t/g, '    ').length;
}

function renderList(lines, start, html) {
  const first = lines[start].match(LIST_ITEM);
  const baseIndent = indentWidth(first[1]);
  const ordered = /\d/.test(first[2]);
  const items = [];
  let index = start;
  while (index < lines.length) {
    const line = lines[index];
    const item = line.match(LIST_ITEM);
    if (item && indentWidth(item[1]) <= baseIndent + 1) {
      if (/\d/.test(item[2]) !== ordered) break;
      items.push({ text: [item[3]], nested: [] });
      index += 1;
      continue;
    }
    if (isBlank(line)) {
      const next = lines.slice(index + 1).find((candidate) => !isBlank(candidate));
      const nextItem = next?.match(LIST_ITEM);
      const continues = next !== undefined && (indentWidth(next.match(/^\s*/)[0]) > baseIndent ||
        (nextItem && indentWidth(nextItem[1]) <= baseIndent + 1 && /\d/.test(nextItem[2]) === ordered));
      if (!continues) break;
      index += 1;
      continue;
    }
    const current = items[items.length - 1];
    if (indentWidth(line.match(/^\s*/)[0]) > baseIndent) {
      current.nested.push(line);
    } else if (current.nested.length === 0 && !startsBlock(lines, index)) {
      current.text.push(line.trim());
    } else {
      break;
    }
    index += 1;
  }
  const tag = ordered ? 'ol' : 'ul';
  const startNumber = ordered ? parseInt(first[2], 10) : 1;
  const startAttribute = ordered && startNumber !== 1 ? ` start="${startNumber}"` : '';
  const body = items.map((item) => {
    const nestedHtml = item.nested.length ? renderBlocks(dedent(item.nested)) : '';
    return `<li>${renderInline(item.text.join('\n'))}${nestedHtml}</li>`;
  });
  html.push(`<${tag}${startAttribute}>${body.join('')}</${tag}>`);
  return index;
}

function dedent(lines) {
  const widths = lines.filter((line) => !isBlank(line)).map((line) => indentWidth(line.match(/^\s*/)[0]));
  const common = Math.min(...widths);
  return lines.map((line) => line.replace(/\t/g, '    ').slice(common));
}

/** Renders inline Markdown (code, links, emphasis, breaks) of one block's text, escaped. */
export function renderInline(text) {
  const stashed = [];
  const stash = (html) => `\u0000${stashed.push(html) - 1}\u0000`;
  let working = String(text);

  working = working.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (_, __, code) =>
    stash(`<code>${escapeHtml(code.replace(/^ (.*) $/s, '$1'))}</code>`));
  working = working.replace(/\\([\\`*_{}[\]()#+\-.!|~<>])/g, (_, character) => stash(escapeHtml(character)));
  working = escapeHtml(working);

  working = working.replace(/!?\[([^\]\n]+)\]\(\s*([^()\s]+?)(?:\s+&quot;[^\n]*?&quot;)?\s*\)/g, (_, label, target) => {
    const href = safeLinkTarget(unescapeHtml(target));
    const labelHtml = renderEmphasis(label);
    return href ? stash(anchor(href, labelHtml)) : stash(labelHtml);
  });
  working = working.replace(/&lt;(https?:\/\/[^\s&]+)&gt;/gi, (match, target) => {
    const href = safeLinkTarget(target);
    return href ? stash(anchor(href, escapeHtml(target))) : match;
  });
  working = working.replace(/(^|[\s(])(https?:\/\/(?:[^\s&<\u0000]|&amp;)+)/gi, (match, before, found) => {
    const trailing = found.match(/(?:[.,;:!?)]|&#39;|&quot;)+$/)?.[0] ?? '';
    const urlText = found.slice(0, found.length - trailing.length);
    const href = safeLinkTarget(unescapeHtml(urlText));
    return href ? `${before}${stash(anchor(href, urlText))}${trailing}` : match;
  });

  working = renderEmphasis(working);
  working = working.replace(/ {2,}\n|\\\n/g, '<br>').replace(/\n/g, '<br>');

  while (/\u0000\d+\u0000/.test(working)) {
    working = working.replace(/\u0000(\d+)\u0000/g, (_, position) => stashed[Number(position)]);
  }
  return working;
}

function renderEmphasis(escapedText) {
  return escapedText
    .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^\w])__(?=\S)([\s\S]*?\S)__(?!\w)/g, '$1<strong>$2</strong>')
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '<del>$1</del>')
    .replace(/(^|[^*\w])\*(?=[^\s*])([^*\n]*?[^\s*])\*(?!\*)/g, '$1<em>$2</em>')
    .replace(/(^|[^_\w])_(?=[^\s_])([^_\n]*?[^\s_])_(?![_\w])/g, '$1<em>$2</em>');
}

function anchor(href, labelHtml) {
  return `<a href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer nofollow">${labelHtml}</a>`;
}

function unescapeHtml(text) {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (_, name) =>
    ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[name]);
}

// examples: the "Try asking" panel — questions the built-in knowledge-graph server and the offline
// planner answer out of the box (the six from the chat engine's acceptance list, and one about an
// object named without its type).

import { h } from '../../lib/dom.js';

export const EXAMPLE_QUESTIONS = [
  'What types of objects are in my knowledge base?',
  "What's the schema version?",
  'Show me the recent changes to the schema',
  'Tell me about the Document type',
  'What relationships can I create between Documents and Projects?',
  'Show me Projects related to the Product Roadmap document',
  'Which team owns the product roadmap?',
];

/** Renders the panel; `onAsk(question)` is called when one is chosen. */
export function renderTryAsking({ onAsk, compact = false }) {
  return h('section', { class: 'try-asking', 'aria-labelledby': 'try-asking-title' },
    h('h2', { id: 'try-asking-title', class: compact ? 'visually-hidden' : '', text: 'Try asking' }),
    h('ul', { class: 'example-list' }, EXAMPLE_QUESTIONS.map((question) =>
      h('li', {}, h('button', { type: 'button', class: 'example-question', text: question, onclick: () => onAsk(question) })))));
}

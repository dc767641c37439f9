// schema-form: turns an MCP elicitation `requested_schema` (a flat object of string, number,
// integer, boolean, single- and multi-select enum properties) into a labelled HTML form, and checks
// the answers against the schema before they are sent, with messages in plain words. The server
// validates again; this only saves a round trip.

import { h, uniqueId } from './dom.js';

/** Normalises the schema's properties into field descriptions the form and validator share. */
export function describeFields(schema) {
  const properties = schema?.properties && typeof schema.properties === 'object' ? schema.properties : {};
  const required = new Set(Array.isArray(schema?.required) ? schema.required : []);
  return Object.entries(properties).map(([name, property]) => describeField(name, property ?? {}, required.has(name)));
}

function describeField(name, property, required) {
  const base = {
    name,
    label: property.title || humanise(name),
    description: property.description || '',
    required,
    defaultValue: property.default,
  };
  const options = enumOptions(property);
  if (property.type === 'array') {
    return { ...base, kind: 'multiselect', options: enumOptions(property.items ?? {}), minItems: property.minItems, maxItems: property.maxItems };
  }
  if (options) return { ...base, kind: 'select', options };
  if (property.type === 'boolean') return { ...base, kind: 'boolean' };
  if (property.type === 'number' || property.type === 'integer') {
    return { ...base, kind: property.type, minimum: property.minimum, maximum: property.maximum };
  }
  const formats = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime' };
  return { ...base, kind: formats[property.format] ?? 'text', minLength: property.minLength, maxLength: property.maxLength, pattern: property.pattern };
}

function enumOptions(property) {
  if (Array.isArray(property.enum)) {
    const names = Array.isArray(property.enumNames) ? property.enumNames : [];
    return property.enum.map((value, index) => ({ value: String(value), label: String(names[index] ?? value) }));
  }
  const titled = property.oneOf ?? property.anyOf;
  if (Array.isArray(titled) && titled.every((option) => option && 'const' in option)) {
    return titled.map((option) => ({ value: String(option.const), label: String(option.title ?? option.const) }));
  }
  return null;
}

function humanise(name) {
  const spaced = String(name).replace(/[_-]+/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2');
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

/**
 * Checks raw form values (strings, booleans, string arrays) against the fields; returns
 * `{content, errors}` where content holds typed values and errors maps field name → message.
 */
export function validateElicitationValues(fields, rawValues) {
  const content = {};
  const errors = {};
  for (const field of fields) {
    const raw = rawValues[field.name];
    const empty = raw === undefined || raw === null || raw === '' || (Array.isArray(raw) && raw.length === 0);
    if (field.kind === 'boolean') {
      content[field.name] = Boolean(raw);
      continue;
    }
    if (empty) {
      if (field.required) errors[field.name] = `${field.label} is required.`;
      continue;
    }
    const error = checkValue(field, raw);
    if (error) errors[field.name] = error;
    else content[field.name] = typedValue(field, raw);
  }
  return { content, errors };
}

function checkValue(field, raw) {
  const text = String(raw);
  switch (field.kind) {
    case 'number':
    case 'integer': {
      const number = Number(text);
      if (text.trim() === '' || !Number.isFinite(number)) return `${field.label} must be a number.`;
      if (field.kind === 'integer' && !Number.isInteger(number)) return `${field.label} must be a whole number.`;
      if (field.minimum !== undefined && number < field.minimum) return `${field.label} must be at least ${field.minimum}.`;
      if (field.maximum !== undefined && number > field.maximum) return `${field.label} must be at most ${field.maximum}.`;
      return null;
    }
    case 'select':
      return field.options.some((option) => option.value === text) ? null : `Choose one of the options for ${field.label}.`;
    case 'multiselect': {
      const chosen = Array.isArray(raw) ? raw : [raw];
      if (chosen.some((value) => !field.options.some((option) => option.value === value))) return `Choose only listed options for ${field.label}.`;
      if (field.minItems !== undefined && chosen.length < field.minItems) return `Choose at least ${field.minItems} for ${field.label}.`;
      if (field.maxItems !== undefined && chosen.length > field.maxItems) return `Choose at most ${field.maxItems} for ${field.label}.`;
      return null;
    }
    case 'email':
      return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(text) ? null : `${field.label} must be an email address.`;
    case 'url':
      try {
        new URL(text);
        return null;
      } catch {
        return `${field.label} must be a full web address (https://…).`;
      }
    default:
      if (field.minLength !== undefined && text.length < field.minLength) return `${field.label} needs at least ${field.minLength} characters.`;
      if (field.maxLength !== undefined && text.length > field.maxLength) return `${field.label} allows at most ${field.maxLength} characters.`;
      if (field.pattern) {
        try {
          if (!new RegExp(field.pattern, 'u').test(text)) return `${field.label} is not in the expected format.`;
        } catch {
          return null;
        }
      }
      return null;
  }
}

function typedValue(field, raw) {
  if (field.kind === 'number' || field.kind === 'integer') return Number(raw);
  if (field.kind === 'multiselect') return Array.isArray(raw) ? raw : [raw];
  if (field.kind === 'datetime') {
    const date = new Date(raw);
    return Number.isNaN(date.getTime()) ? String(raw) : date.toISOString();
  }
  return String(raw);
}

/**
 * Renders the form. `onRespond(action, content)` is called with 'accept' (after validation),
 * 'decline' or 'cancel'; it may return a promise (buttons stay disabled until it settles).
 */
export function renderElicitationForm(schema, { onRespond, submitLabel = 'Send' } = {}) {
  const fields = describeFields(schema);
  const form = h('form', { class: 'schema-form', novalidate: true });
  const inputs = new Map();
  const errorSlots = new Map();
  for (const field of fields) {
    const { wrapper, read, errorSlot } = renderField(field);
    inputs.set(field.name, read);
    errorSlots.set(field.name, errorSlot);
    form.append(wrapper);
  }
  const buttons = h('div', { class: 'button-row' },
    h('button', { type: 'submit', class: 'button button-primary', text: submitLabel }),
    h('button', { type: 'button', class: 'button', text: 'Decline', onclick: () => respond('decline', undefined) }),
    h('button', { type: 'button', class: 'button button-quiet', text: 'Cancel', onclick: () => respond('cancel', undefined) }));
  form.append(buttons);

  async function respond(action, content) {
    const controls = form.querySelectorAll('button, input, select, textarea');
    controls.forEach((control) => { control.disabled = true; });
    try {
      await onRespond?.(action, content);
    } finally {
      controls.forEach((control) => { control.disabled = false; });
    }
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const rawValues = Object.fromEntries([...inputs].map(([name, read]) => [name, read()]));
    const { content, errors } = validateElicitationValues(fields, rawValues);
    for (const [name, slot] of errorSlots) {
      slot.textContent = errors[name] ?? '';
      slot.closest('.field')?.querySelector('input, select')?.setAttribute('aria-invalid', errors[name] ? 'true' : 'false');
    }
    const firstInvalid = fields.find((field) => errors[field.name]);
    if (firstInvalid) {
      form.querySelector(`[name="${CSS.escape(firstInvalid.name)}"]`)?.focus();
      return;
    }
    respond('accept', content);
  });
  return form;
}

function renderField(field) {
  const id = uniqueId('field');
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const errorSlot = h('p', { class: 'field-error', id: errorId, 'aria-live': 'polite' });
  const hint = field.description ? h('p', { class: 'field-hint', id: hintId, text: field.description }) : null;
  const describedBy = [hint ? hintId : null, errorId].filter(Boolean).join(' ');
  const labelText = [field.label, field.required ? h('span', { class: 'required-mark', 'aria-hidden': 'true', text: ' *' }) : null];
  let control;
  let read;
  if (field.kind === 'boolean') {
    control = h('input', { type: 'checkbox', id, name: field.name, checked: field.defaultValue === true, 'aria-describedby': describedBy });
    read = () => control.checked;
    const wrapper = h('div', { class: 'field field-checkbox' }, control, h('label', { for: id }, labelText), hint, errorSlot);
    return { wrapper, read, errorSlot };
  }
  if (field.kind === 'multiselect') {
    const boxes = field.options.map((option) => {
      const optionId = uniqueId('option');
      const box = h('input', { type: 'checkbox', id: optionId, name: field.name, value: option.value,
        checked: Array.isArray(field.defaultValue) && field.defaultValue.includes(option.value) });
      return h('div', { class: 'field-checkbox' }, box, h('label', { for: optionId, text: option.label }));
    });
    const fieldset = h('fieldset', { class: 'field', 'aria-describedby': describedBy }, h('legend', {}, labelText), hint, boxes, errorSlot);
    read = () => [...fieldset.querySelectorAll('input:checked')].map((box) => box.value);
    return { wrapper: fieldset, read, errorSlot };
  }
  if (field.kind === 'select') {
    control = h('select', { id, name: field.name, required: field.required, 'aria-describedby': describedBy },
      h('option', { value: '', text: field.required ? 'Choose…' : '(none)' }),
      field.options.map((option) => h('option', { value: option.value, text: option.label })));
    if (field.defaultValue !== undefined) control.value = String(field.defaultValue);
  } else {
    const types = { email: 'email', url: 'url', date: 'date', datetime: 'datetime-local', number: 'number', integer: 'number', text: 'text' };
    control = h('input', {
      type: types[field.kind] ?? 'text', id, name: field.name, required: field.required,
      min: field.minimum, max: field.maximum, step: field.kind === 'integer' ? '1' : field.kind === 'number' ? 'any' : undefined,
      minlength: field.minLength, maxlength: field.maxLength, 'aria-describedby': describedBy,
      value: field.defaultValue === undefined ? undefined : String(field.defaultValue),
    });
  }
  read = () => control.value;
  const wrapper = h('div', { class: 'field' }, h('label', { for: id }, labelText), hint, control, errorSlot);
  return { wrapper, read, errorSlot };
}

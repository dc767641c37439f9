// app-host-context: how the chat looks, told to an MCP App so it can look like part of it — the
// theme (`light`/`dark`, the system setting the UI follows) and the spec's host styles
// (`hostContext.styles.variables`, SEP-1865's CSS variable names such as
// `--color-background-primary`), read from the UI's own design tokens (base.css) as the browser
// resolves them now, so light and dark come out right. Only tokens we have are sent; the spec
// lets a host send any subset. `watchTheme` calls back when the system setting changes, for
// `ui/notifications/host-context-changed`.

/** The spec's variable → the UI's token it takes its value from. */
const SPEC_VARIABLES = {
  '--color-background-primary': '--surface',
  '--color-background-secondary': '--bg',
  '--color-background-tertiary': '--surface-sunken',
  '--color-background-inverse': '--text',
  '--color-background-info': '--accent-soft',
  '--color-background-danger': '--danger-soft',
  '--color-background-success': '--success-soft',
  '--color-background-warning': '--warning-soft',
  '--color-text-primary': '--text',
  '--color-text-secondary': '--text-muted',
  '--color-text-inverse': '--surface',
  '--color-text-info': '--accent',
  '--color-text-danger': '--danger',
  '--color-text-success': '--success',
  '--color-text-warning': '--warning',
  '--color-border-primary': '--border',
  '--color-border-secondary': '--border-strong',
  '--color-border-info': '--accent',
  '--color-border-danger': '--danger',
  '--color-border-success': '--success',
  '--color-border-warning': '--warning',
  '--color-ring-primary': '--focus',
  '--font-sans': '--font-sans',
  '--font-mono': '--font-mono',
  '--font-text-sm-size': '--text-small',
  '--font-text-md-size': '--text-base',
  '--font-text-lg-size': '--text-large',
  '--border-radius-sm': '--radius-small',
  '--border-radius-md': '--radius',
  '--shadow-sm': '--shadow',
};

const DARK = '(prefers-color-scheme: dark)';

/** `light` or `dark`, as the UI shows itself now. */
export function hostTheme() {
  return window.matchMedia?.(DARK).matches ? 'dark' : 'light';
}

/** The spec's `styles` (`{variables}`) from the UI's tokens as resolved now. */
export function hostStyles() {
  const computed = getComputedStyle(document.documentElement);
  const variables = {};
  for (const [name, token] of Object.entries(SPEC_VARIABLES)) {
    const value = computed.getPropertyValue(token).trim();
    if (value) variables[name] = value;
  }
  return { variables };
}

/** Calls `onChange({theme, styles})` when the system's light/dark setting changes; returns the stop. */
export function watchTheme(onChange) {
  const query = window.matchMedia?.(DARK);
  if (!query) return () => {};
  const listener = () => onChange({ theme: hostTheme(), styles: hostStyles() });
  query.addEventListener('change', listener);
  return () => query.removeEventListener('change', listener);
}

/** Light, dark, or as the system says; kept in localStorage. */
const KEY = 'ackcrawl.theme';
export type Theme = 'system' | 'light' | 'dark';
const ORDER: Theme[] = ['system', 'light', 'dark'];

export function storedTheme(): Theme {
  const value = localStorage.getItem(KEY);
  return value === 'light' || value === 'dark' ? value : 'system';
}

/** The theme in effect (system resolved through prefers-color-scheme). */
export function effectiveTheme(): 'light' | 'dark' {
  const theme = storedTheme();
  if (theme !== 'system') return theme;
  return window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

const listeners = new Set<() => void>();

/** Charts redraw their colours when the theme changes. */
export function onThemeChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function applyTheme(theme: Theme = storedTheme()): void {
  if (theme === 'system') {
    localStorage.removeItem(KEY);
    delete document.documentElement.dataset['theme'];
  } else {
    localStorage.setItem(KEY, theme);
    document.documentElement.dataset['theme'] = theme;
  }
  for (const listener of listeners) listener();
}

export function nextTheme(): Theme {
  const theme = ORDER[(ORDER.indexOf(storedTheme()) + 1) % ORDER.length] ?? 'system';
  applyTheme(theme);
  return theme;
}

export function watchSystemTheme(): void {
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
    if (storedTheme() === 'system') for (const listener of listeners) listener();
  });
}

/** The header (nav, live indicator, theme, logout) and the page slot under it. */
import { h } from './dom.js';
import type { Live, LiveStatus } from './live.js';
import { section, type Route } from './router.js';
import { nextTheme, storedTheme, type Theme } from './theme.js';

const NAV: [string, string, string][] = [
  ['overview', 'Overview', '#/'],
  ['jobs', 'Jobs', '#/jobs'],
  ['fleet', 'Fleet', '#/fleet'],
  ['alerts', 'Alerts', '#/alerts'],
];

const THEME_LABEL: Record<Theme, string> = { system: '◐ System', light: '☀ Light', dark: '☾ Dark' };

const STATUS_LABEL: Record<LiveStatus, string> = {
  connecting: 'connecting',
  live: 'live',
  reconnecting: 'reconnecting',
  unauthorized: 'signed out',
};

export interface Shell {
  el: HTMLElement;
  main: HTMLElement;
  setRoute(route: Route): void;
  dispose(): void;
}

export function createShell(live: Live, onLogout: () => void): Shell {
  const links = NAV.map(([id, label, target]) =>
    h('a', { href: target, 'data-testid': `nav-${id}`, 'data-section': id }, label),
  );
  const nav = h('nav', { class: 'nav', id: 'nav' }, ...links);
  const status = h('span', { class: 'live-status', 'data-testid': 'live-status', role: 'status' });
  const theme = h('button', { class: 'ghost', 'data-testid': 'theme-toggle', title: 'Theme' });
  const showTheme = (): void => {
    theme.textContent = THEME_LABEL[storedTheme()];
  };
  showTheme();
  theme.addEventListener('click', () => {
    nextTheme();
    showTheme();
  });
  const logout = h('button', { class: 'ghost', 'data-testid': 'logout', onclick: onLogout }, 'Log out');
  const header = h(
    'header',
    { class: 'top' },
    h('a', { class: 'brand', href: '#/' }, 'ackcrawl'),
    nav,
    h('div', { class: 'top-tools' }, status, theme, logout),
  );
  const main = h('main', { class: 'page' });
  const offStatus = live.onStatus((s) => {
    status.textContent = STATUS_LABEL[s];
    status.dataset['status'] = s;
  });
  return {
    el: h('div', { class: 'app' }, header, main),
    main,
    setRoute(route) {
      const current = section(route);
      for (const link of links) {
        if (link.dataset['section'] === current) link.setAttribute('aria-current', 'page');
        else link.removeAttribute('aria-current');
      }
    },
    dispose: offStatus,
  };
}

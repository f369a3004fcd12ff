/** The dashboard's entry: login or the app, and the page for the hash. */
import { clearToken, getToken, setUnauthorizedHandler } from './api.js';
import { h, replace } from './dom.js';
import { Live } from './live.js';
import { loginPage } from './login.js';
import { alertsPage } from './pages/alerts.js';
import { fleetPage } from './pages/fleet.js';
import { jobFormPage } from './pages/job-form.js';
import { jobPage } from './pages/job.js';
import { jobsPage } from './pages/jobs.js';
import { overviewPage } from './pages/overview.js';
import { runPage } from './pages/run.js';
import { parseRoute, type Page, type PageContext, type Route } from './router.js';
import { createShell, type Shell } from './shell.js';
import { applyTheme, watchSystemTheme } from './theme.js';

const root = document.getElementById('app') ?? document.body;
let shell: Shell | null = null;
let page: Page | null = null;
let live: Live | null = null;

function pageFor(route: Route, ctx: PageContext): Page {
  switch (route.name) {
    case 'overview':
      return overviewPage(ctx);
    case 'run':
      return runPage(ctx, route.id);
    case 'jobs':
      return jobsPage();
    case 'job-new':
      return jobFormPage(null);
    case 'job-edit':
      return jobFormPage(route.id);
    case 'job':
      return jobPage(route.id);
    case 'fleet':
      return fleetPage(ctx);
    case 'alerts':
      return alertsPage();
    case 'not-found':
      return {
        el: h('div', { class: 'card' }, h('h1', {}, 'Not found'), h('p', {}, `No page at ${route.path}.`)),
      };
  }
}

function render(): void {
  if (shell === null || live === null) return;
  page?.dispose?.();
  const route = parseRoute(location.hash);
  shell.setRoute(route);
  page = pageFor(route, { live });
  replace(shell.main, page.el);
  window.scrollTo(0, 0);
}

function showLogin(reason?: string): void {
  page?.dispose?.();
  page = null;
  shell?.dispose();
  shell = null;
  live?.stop();
  live = null;
  replace(root, loginPage(start, reason));
  document.querySelector<HTMLInputElement>('[data-testid="login-token"]')?.focus();
}

function start(): void {
  live = new Live(() => unauthorized());
  shell = createShell(live, () => {
    clearToken();
    showLogin();
  });
  replace(root, shell.el);
  live.start();
  render();
}

function unauthorized(): void {
  if (shell === null) return;
  clearToken();
  showLogin('UNAUTHORIZED: the API refused the token; sign in again.');
}

applyTheme();
watchSystemTheme();
setUnauthorizedHandler(unauthorized);
window.addEventListener('hashchange', render);
if (getToken() === null) showLogin();
else start();

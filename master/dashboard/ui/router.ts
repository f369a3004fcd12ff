/** Hash routing: `#/`, `#/runs/ID`, `#/jobs`, `#/jobs/new`, `#/jobs/ID`, `#/jobs/ID/edit`, `#/fleet`, `#/alerts`. */
import type { Live } from './live.js';

export interface PageContext {
  live: Live;
}

/** A page: its element, and what stops its timers and subscriptions when it is left. */
export interface Page {
  el: HTMLElement;
  dispose?: () => void;
}

export type Route =
  | { name: 'overview' }
  | { name: 'run'; id: string }
  | { name: 'jobs' }
  | { name: 'job-new' }
  | { name: 'job'; id: string }
  | { name: 'job-edit'; id: string }
  | { name: 'fleet' }
  | { name: 'alerts' }
  | { name: 'not-found'; path: string };

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '') || '/';
  const parts = path
    .split('/')
    .filter((p) => p !== '')
    .map(decodeURIComponent);
  const [first, second, third] = parts;
  if (parts.length === 0) return { name: 'overview' };
  if (first === 'runs' && second !== undefined && parts.length === 2) return { name: 'run', id: second };
  if (first === 'jobs' && parts.length === 1) return { name: 'jobs' };
  if (first === 'jobs' && second === 'new' && parts.length === 2) return { name: 'job-new' };
  if (first === 'jobs' && second !== undefined && parts.length === 2) return { name: 'job', id: second };
  if (first === 'jobs' && second !== undefined && third === 'edit') return { name: 'job-edit', id: second };
  if (first === 'fleet' && parts.length === 1) return { name: 'fleet' };
  if (first === 'alerts' && parts.length === 1) return { name: 'alerts' };
  return { name: 'not-found', path };
}

/** The nav section a route belongs to. */
export function section(route: Route): string {
  switch (route.name) {
    case 'overview':
    case 'run':
      return 'overview';
    case 'jobs':
    case 'job':
    case 'job-new':
    case 'job-edit':
      return 'jobs';
    default:
      return route.name;
  }
}

export function href(...parts: string[]): string {
  return `#/${parts.map(encodeURIComponent).join('/')}`;
}

/** How a run's state and counters are shown (overview rows, run page). */
import { h } from './dom.js';
import { dec, num } from './format.js';
import type { Counters, RunState } from './types.js';

export const ACTIVE: RunState[] = ['queued', 'running', 'paused'];

export function isActive(state: RunState): boolean {
  return ACTIVE.includes(state);
}

export function stateBadge(state: string, field = 'state'): HTMLElement {
  return h('span', { class: `badge state-${state}`, 'data-field': field }, state);
}

/** The counter fields and how each is written. */
export const COUNTERS: [keyof Counters, string, (c: Counters) => string][] = [
  ['done', 'Done', (c) => num(c.done)],
  ['queued', 'Queued', (c) => num(c.queued)],
  ['inFlight', 'In flight', (c) => num(c.inFlight)],
  ['failed', 'Failed', (c) => num(c.failed)],
  ['pagesPerSecond', 'Pages/s', (c) => dec(c.pagesPerSecond)],
];

/** Share of known work settled (done + failed + not modified, out of those plus queued and in flight). */
export function progress(c: Counters): number {
  const settled = c.done + c.failed + c.notModified;
  const total = settled + c.queued + c.inFlight;
  return total === 0 ? 0 : settled / total;
}

export function progressBar(): HTMLElement {
  return h(
    'div',
    { class: 'progress', role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': 100 },
    h('div', { class: 'bar' }),
  );
}

export function setProgress(el: HTMLElement, c: Counters, state: RunState): void {
  const value = state === 'succeeded' ? 1 : progress(c);
  const pct = Math.round(value * 100);
  el.setAttribute('aria-valuenow', String(pct));
  el.title = `${pct}%`;
  const bar = el.firstElementChild as HTMLElement | null;
  if (bar) {
    bar.style.width = `${pct}%`;
    bar.dataset['state'] = state;
  }
}

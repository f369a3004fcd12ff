import { h } from '../dom.js';
import type { Page } from '../router.js';
export function alertsPage(..._args: unknown[]): Page {
  return { el: h('p', {}, 'todo') };
}

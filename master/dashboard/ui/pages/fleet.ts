import { h } from '../dom.js';
import type { Page } from '../router.js';
export function fleetPage(..._args: unknown[]): Page {
  return { el: h('p', {}, 'todo') };
}

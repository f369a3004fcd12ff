import { h } from '../dom.js';
import type { Page } from '../router.js';
export function jobPage(..._args: unknown[]): Page {
  return { el: h('p', {}, 'todo') };
}

import { h } from '../dom.js';
import type { Page } from '../router.js';
export function jobFormPage(..._args: unknown[]): Page {
  return { el: h('p', {}, 'todo') };
}

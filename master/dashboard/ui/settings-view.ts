/** A settings object as a key/value list (objects and arrays as JSON). */
import { h } from './dom.js';

export function settingsList(settings: Record<string, unknown>, testid?: string): HTMLElement {
  const dl = h('dl', { class: 'kv', 'data-testid': testid });
  for (const [key, value] of Object.entries(settings)) {
    const text =
      Array.isArray(value) && value.length === 0
        ? '[] (none)'
        : typeof value === 'string'
          ? value
          : Array.isArray(value) && value.every((v) => typeof v === 'string')
            ? value.join('\n')
            : JSON.stringify(value, null, 2);
    const isBlock =
      typeof value === 'object' && value !== null && !(Array.isArray(value) && value.length === 0);
    dl.append(h('dt', {}, key), h('dd', { 'data-key': key }, isBlock ? h('pre', {}, text) : text));
  }
  return dl;
}

/** Building the page: every piece of data goes in as text, never as HTML. */
export type Child = Node | string | number | null | undefined | false;
type AttrValue = string | number | boolean | null | undefined | ((event: Event) => void);
export type Attrs = Record<string, AttrValue>;

/** Properties set after the children (a select's value needs its options first). */
const PROPS = new Set(['value', 'checked']);

/** `h('button', { class: 'x', onclick: f, 'data-testid': 'y' }, 'Text')`. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  const later: [string, AttrValue][] = [];
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(key.replace(/^on/, ''), value);
    else if (PROPS.has(key)) later.push([key, value]);
    else el.setAttribute(key === 'className' ? 'class' : key, value === true ? '' : String(value));
  }
  append(el, ...children);
  for (const [key, value] of later) (el as unknown as Record<string, unknown>)[key] = value;
  return el;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's content. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

/** A cell whose text is a value the tests read (`data-field`). */
export function field(name: string, text: string, tag: 'td' | 'span' | 'dd' = 'td'): HTMLElement {
  return h(tag, { 'data-field': name }, text);
}

/** A table inside a scrolling box (wide tables scroll inside their card, not the page). */
export function table(testid: string, headers: string[], rows: Node[], empty = 'Nothing yet.'): HTMLElement {
  const { wrap, body } = liveTable(testid, headers);
  body.append(...rows);
  if (rows.length === 0)
    body.append(h('tr', { class: 'empty' }, h('td', { colspan: headers.length }, empty)));
  labelCells(body);
  return wrap;
}

export function card(title: string | null, ...children: Child[]): HTMLElement {
  return h('section', { class: 'card' }, title === null ? null : h('h2', {}, title), ...children);
}

/** Sets the text of the `data-field` element inside `root`, if it changed. */
export function setField(root: Element, name: string, text: string): void {
  const el = root.querySelector(`[data-field="${name}"]`);
  if (el !== null && el.textContent !== text) el.textContent = text;
}

/**
 * Keeps a tbody's rows in step with `items` by key: rows are made once and updated in place, so
 * live updates do not replace what a person is about to click.
 */
export function syncRows<T>(
  tbody: HTMLElement,
  items: T[],
  key: (item: T) => string,
  create: (item: T) => HTMLElement,
  update: (row: HTMLElement, item: T) => void,
  empty: { text: string; colspan: number },
): void {
  const existing = new Map<string, HTMLElement>();
  for (const row of Array.from(tbody.children) as HTMLElement[]) {
    if (row.dataset['key'] !== undefined) existing.set(row.dataset['key'], row);
    else row.remove();
  }
  items.forEach((item, i) => {
    const k = key(item);
    let row = existing.get(k);
    if (row === undefined) {
      row = create(item);
      row.dataset['key'] = k;
    }
    existing.delete(k);
    update(row, item);
    if (tbody.children[i] !== row) tbody.insertBefore(row, tbody.children[i] ?? null);
  });
  for (const row of existing.values()) row.remove();
  if (items.length === 0)
    tbody.append(h('tr', { class: 'empty' }, h('td', { colspan: empty.colspan }, empty.text)));
  labelCells(tbody);
}

/** Each cell gets its column's header as `data-label`: on a phone the rows are stacked, each cell labelled. */
export function labelCells(tbody: HTMLElement): void {
  const head = tbody.parentElement?.querySelector('thead tr');
  if (!head) return;
  const labels = Array.from(head.children).map((th) => th.textContent ?? '');
  for (const row of Array.from(tbody.children)) {
    if (row.classList.contains('empty') || row.hasAttribute('data-labelled')) continue;
    Array.from(row.children).forEach((cell, i) => cell.setAttribute('data-label', labels[i] ?? ''));
    row.setAttribute('data-labelled', '');
  }
}

/** A table (in its scrolling box) whose body `syncRows` fills. */
export function liveTable(testid: string, headers: string[]): { wrap: HTMLElement; body: HTMLElement } {
  const body = h('tbody');
  const wrap = h(
    'div',
    { class: 'table-scroll' },
    h(
      'table',
      { 'data-testid': testid },
      h('thead', {}, h('tr', {}, ...headers.map((t) => h('th', {}, t)))),
      body,
    ),
  );
  return { wrap, body };
}

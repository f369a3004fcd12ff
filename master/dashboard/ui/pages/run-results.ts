/** The run page's results: what `ackcrawl extract` cleaned of its pages, and the run's export. */
import { download, enc, errorText, getFirst } from '../api.js';
import { h, liveTable, setField, syncRows } from '../dom.js';
import { toast } from '../feedback.js';
import { dateTime, num } from '../format.js';
import type { Result } from '../types.js';

const PAGE = 50;

const wordsOf = (result: Result): string => {
  const words = (result.data as { words?: unknown } | null)?.words;
  return typeof words === 'number' ? num(words) : '–';
};

export function resultsPart(runId: string): { el: HTMLElement; refresh(): Promise<void> } {
  const table = liveTable('results-table', ['Title', 'URL', 'Language', 'Published', 'Words']);
  const status = h('p', { class: 'muted' });
  let shown = PAGE;
  const more = h('button', { class: 'small', hidden: true }, 'Show more');
  more.addEventListener('click', () => {
    shown += PAGE;
    void refresh();
  });
  const exportButton = (format: 'jsonl' | 'csv', label: string): HTMLButtonElement => {
    const button = h('button', { class: 'small', 'data-testid': `results-export-${format}` }, label);
    button.addEventListener('click', () => {
      button.disabled = true;
      download(`/runs/${enc(runId)}/results/export?format=${format}`, `run-${runId}-results.${format}`)
        .catch((err: unknown) => toast(errorText(err), 'error'))
        .finally(() => (button.disabled = false));
    });
    return button;
  };
  const el = h(
    'div',
    {},
    h(
      'p',
      { class: 'muted' },
      'What ackcrawl extract cleaned of this run’s pages (title, author, language, text), in the order it wrote them. ',
      exportButton('jsonl', 'Download JSON Lines'),
      ' ',
      exportButton('csv', 'Download CSV'),
    ),
    table.wrap,
    status,
    more,
  );

  const create = (result: Result): HTMLElement =>
    h(
      'tr',
      { 'data-testid': 'result-row', 'data-capture-id': result.captureId },
      h('td', { class: 'wrap', 'data-field': 'title' }),
      h(
        'td',
        { class: 'wrap mono' },
        // A link only to what is a web page's address (the URL is the crawled site's, not ours).
        /^https?:\/\//i.test(result.url)
          ? h('a', { href: result.url, rel: 'noreferrer noopener', target: '_blank' }, result.url)
          : result.url,
      ),
      h('td', { 'data-field': 'language' }),
      h('td', { 'data-field': 'published' }),
      h('td', { 'data-field': 'words' }),
    );
  const update = (row: HTMLElement, result: Result): void => {
    setField(row, 'title', result.title ?? '(no title)');
    setField(row, 'language', result.language ?? '–');
    setField(row, 'published', result.publishedAt ? dateTime(result.publishedAt) : '–');
    setField(row, 'words', wordsOf(result));
  };

  async function refresh(): Promise<void> {
    try {
      const { items, more: hasMore } = await getFirst<Result>(`/runs/${enc(runId)}/results`, shown, PAGE);
      more.hidden = !hasMore;
      syncRows(table.body, items, (r) => r.captureId, create, update, {
        text: 'No results yet: run ackcrawl extract on the run’s pages (docs/extract.md).',
        colspan: 5,
      });
      status.textContent = '';
    } catch (err) {
      status.textContent = errorText(err);
    }
  }
  return { el, refresh };
}

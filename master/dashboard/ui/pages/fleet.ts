/** Fleet: each agent's host facts and crawler processes, live, with scale/stop/restart/drain/forget. */
import { del, enc, put, post } from '../api.js';
import { card, h, liveTable, replace, setField, syncRows } from '../dom.js';
import { actionButton, runAction } from '../feedback.js';
import { ago, bytes, dec, duration, num } from '../format.js';
import type { Page, PageContext } from '../router.js';
import type { Agent, CrawlerProcess } from '../types.js';

export function fleetPage({ live }: PageContext): Page {
  const list = h('div', { class: 'stack' }, h('p', { class: 'muted' }, 'Waiting for live data…'));
  const cards = new Map<string, { el: HTMLElement; update(agent: Agent): void }>();
  const el = h('div', { class: 'stack' }, h('h1', {}, 'Fleet'), list);

  const show = (agents: Agent[]): void => {
    if (agents.length === 0) {
      cards.clear();
      replace(list, card(null, h('p', { class: 'muted' }, 'No agents have registered.')));
      return;
    }
    if (cards.size === 0) replace(list);
    const seen = new Set<string>();
    agents.forEach((agent, i) => {
      seen.add(agent.id);
      let entry = cards.get(agent.id);
      if (entry === undefined) {
        entry = agentCard(agent);
        cards.set(agent.id, entry);
      }
      entry.update(agent);
      if (list.children[i] !== entry.el) list.insertBefore(entry.el, list.children[i] ?? null);
    });
    for (const [id, entry] of cards)
      if (!seen.has(id)) {
        entry.el.remove();
        cards.delete(id);
      }
  };
  const off = live.onSnapshot((s) => show(s.agents));
  if (live.latest) show(live.latest.agents);
  return { el, dispose: off };
}

function agentCard(first: Agent): { el: HTMLElement; update(agent: Agent): void } {
  const base = `/agents/${enc(first.id)}`;
  let agent = first;
  const title = h('h2', {});
  const state = h('span', { class: 'badge', 'data-field': 'state' });
  const facts = h('div', { class: 'facts' });
  const count = h('input', {
    type: 'number',
    min: 0,
    max: 64,
    step: 1,
    inputmode: 'numeric',
    'data-testid': 'agent-count',
    'aria-label': 'Crawler processes',
    value: String(first.desiredProcesses),
    class: 'count',
  });
  let countTouched = false;
  count.addEventListener('input', () => {
    countTouched = true;
  });
  const scale = actionButton(
    'Apply',
    { 'data-testid': 'agent-scale' },
    async () => {
      const n = Number(count.value);
      await put(`${base}/processes`, { count: n });
      countTouched = false;
      return n;
    },
    { done: (n) => `${agent.name}: ${String(n)} processes.` },
  );
  const drain = actionButton('Drain', { 'data-testid': 'agent-drain' }, () => post(`${base}/drain`), {
    confirm: `Drain ${first.name}? Every process stops taking work and stops; none starts until a count is set.`,
    done: 'Draining.',
  });
  const forget = actionButton('Forget', { class: 'danger', 'data-testid': 'agent-forget' }, () => del(base), {
    confirm: `Forget ${first.name}? It and its processes leave the fleet view.`,
    done: 'Agent forgotten.',
  });
  const procs = liveTable('processes-table', [
    'Slot',
    'PID',
    'State',
    'Uptime',
    'Restarts',
    'Pages',
    'Errors',
    'In flight',
    'CPU',
    'RSS',
    '',
  ]);
  const el = h(
    'section',
    { class: 'card agent-card', 'data-testid': 'agent-card', 'data-agent-id': first.id },
    h('header', {}, title, state, h('span', { class: 'muted', 'data-field': 'heartbeat' })),
    facts,
    h('div', { class: 'row' }, h('label', { class: 'check' }, 'Processes', count), scale, drain, forget),
    procs.wrap,
  );

  const createRow = (p: CrawlerProcess): HTMLElement => {
    const stop = h('button', { class: 'small', 'data-testid': 'process-stop' }, 'Stop');
    const restart = h('button', { class: 'small', 'data-testid': 'process-restart' }, 'Restart');
    stop.addEventListener(
      'click',
      () =>
        void runAction(stop, () => post(`${base}/processes/${p.slot}/stop`), {
          done: `Slot ${p.slot} stopping.`,
        }),
    );
    restart.addEventListener(
      'click',
      () =>
        void runAction(restart, () => post(`${base}/processes/${p.slot}/restart`), {
          done: `Slot ${p.slot} restarting.`,
        }),
    );
    return h(
      'tr',
      { 'data-testid': 'process-row', 'data-slot': p.slot },
      h('td', { 'data-field': 'slot' }, String(p.slot)),
      ...['pid', 'state', 'uptime', 'restarts', 'pages', 'errors', 'inFlight', 'cpu', 'rss'].map((f) =>
        h('td', { 'data-field': f }),
      ),
      h('td', {}, h('div', { class: 'row nowrap' }, stop, restart)),
    );
  };
  const updateRow = (row: HTMLElement, p: CrawlerProcess): void => {
    row.dataset['state'] = p.state;
    setField(row, 'pid', p.pid === null ? '–' : String(p.pid));
    setField(row, 'state', p.state);
    const stateCell = row.querySelector('[data-field="state"]');
    if (stateCell) stateCell.className = `state-${p.state}`;
    setField(row, 'uptime', p.uptimeSeconds === null ? '–' : duration(p.uptimeSeconds * 1000));
    setField(row, 'restarts', num(p.restarts));
    setField(row, 'pages', num(p.pagesDone));
    setField(row, 'errors', num(p.errors));
    setField(row, 'inFlight', num(p.inFlight));
    setField(row, 'cpu', `${dec(p.cpuSeconds)} s`);
    setField(row, 'rss', bytes(p.rssBytes));
    const lost = agent.state === 'lost' || agent.state === 'stopped';
    const stop = row.querySelector<HTMLButtonElement>('[data-testid="process-stop"]');
    const restart = row.querySelector<HTMLButtonElement>('[data-testid="process-restart"]');
    if (stop) stop.disabled = lost || p.state === 'stopped' || p.state === 'stopping';
    if (restart) restart.disabled = lost;
  };

  const fact = (label: string, value: string): HTMLElement => h('span', {}, `${label} `, h('b', {}, value));
  return {
    el,
    update(next) {
      agent = next;
      el.dataset['state'] = next.state;
      title.textContent = next.name;
      state.textContent = next.state === 'lost' ? 'LOST' : next.state;
      state.className = `badge state-${next.state}`;
      setField(el, 'heartbeat', `heartbeat ${ago(next.lastHeartbeatAt)}${next.drain ? ' · draining' : ''}`);
      const f = next.facts;
      replace(
        facts,
        fact('Host', next.hostname),
        fact('CPUs', num(f.cpus)),
        fact('Load', (f.loadAverage ?? []).map((l) => dec(l)).join(' ') || '–'),
        fact('Memory free', `${bytes(f.memoryFreeBytes)} of ${bytes(f.memoryTotalBytes)}`),
        fact(
          'Disk free',
          f.diskFreeBytes === null || f.diskFreeBytes === undefined
            ? '–'
            : `${bytes(f.diskFreeBytes)} of ${bytes(f.diskTotalBytes)}`,
        ),
        fact('Up', f.uptimeSeconds === undefined ? '–' : duration(f.uptimeSeconds * 1000)),
        fact('Node', f.nodeVersion ?? '–'),
      );
      if (!countTouched && document.activeElement !== count) count.value = String(next.desiredProcesses);
      const gone = next.state === 'lost' || next.state === 'stopped';
      forget.hidden = !gone;
      scale.disabled = gone;
      drain.disabled = gone || next.drain;
      count.disabled = gone;
      syncRows(
        procs.body,
        [...next.processes].sort((a, b) => a.slot - b.slot),
        (p) => String(p.slot),
        createRow,
        updateRow,
        {
          text: 'No crawler processes.',
          colspan: 11,
        },
      );
    },
  };
}

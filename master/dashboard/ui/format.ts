/** Numbers, sizes, durations and times as people read them. */
const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const decimal = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

export function num(n: number | null | undefined): string {
  return n === null || n === undefined || !Number.isFinite(n) ? '–' : integer.format(n);
}

export function dec(n: number | null | undefined): string {
  return n === null || n === undefined || !Number.isFinite(n) ? '–' : decimal.format(n);
}

export function rate(n: number | null | undefined): string {
  return n === null || n === undefined ? '–' : `${decimal.format(n)}/s`;
}

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? integer.format(value) : decimal.format(value)} ${units[unit]}`;
}

/** 45 s, 12 min 3 s, 3 h 5 min, 2 d 4 h. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '–';
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min${s % 60 ? ` ${s % 60} s` : ''}`;
  const hours = Math.floor(m / 60);
  if (hours < 24) return `${hours} h${m % 60 ? ` ${m % 60} min` : ''}`;
  const days = Math.floor(hours / 24);
  return `${days} d${hours % 24 ? ` ${hours % 24} h` : ''}`;
}

export function ms(n: number | null | undefined): string {
  if (n === null || n === undefined) return '–';
  return n < 1000 ? `${integer.format(n)} ms` : duration(n);
}

function toTime(at: string | number | null | undefined): number | null {
  if (at === null || at === undefined) return null;
  const t = typeof at === 'number' ? at : Date.parse(at);
  return Number.isNaN(t) ? null : t;
}

/** "3 min ago", "in 20 s". */
export function ago(at: string | number | null | undefined, now = Date.now()): string {
  const t = toTime(at);
  if (t === null) return '–';
  const diff = t - now;
  if (Math.abs(diff) < 1000) return 'now';
  return diff < 0 ? `${duration(-diff)} ago` : `in ${duration(diff)}`;
}

export function dateTime(at: string | number | null | undefined): string {
  const t = toTime(at);
  return t === null ? '–' : new Date(t).toLocaleString();
}

export function shortId(id: string): string {
  return id.length > 12 ? `${id.slice(0, 8)}…` : id;
}

/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for tests: what a
 * scraper would refuse, it throws on, with the line. (The one npm parser of the format,
 * parse-prometheus-text-format 1.1.1, accepts malformed lines and drops the labels, sum and count
 * of labelled histograms, so it could not tell a broken /metrics from a good one.)
 *
 * Checked: the line grammar (names, label sets with their escapes, float values, optional integer
 * timestamps), one HELP and one TYPE per family, each family's samples together and after its
 * TYPE, no sample twice, and for histograms: an `le` on every bucket, cumulative buckets ending
 * at +Inf, and `_count` equal to the +Inf bucket.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  /** The sample's own name (`x_bucket`, `x_sum` for a histogram `x`). */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help: string;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const TYPES = new Set<string>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

class FormatError extends Error {
  constructor(lineNo: number, line: string, why: string) {
    super(`line ${lineNo}: ${why}: ${JSON.stringify(line.slice(0, 200))}`);
  }
}

/** A float as Prometheus reads it (Go's ParseFloat: NaN and Inf in any case; prom-client writes `Nan`). */
function parseValue(text: string): number | null {
  const lower = text.toLowerCase();
  if (lower === 'nan') return NaN;
  if (lower === '+inf' || lower === 'inf') return Infinity;
  if (lower === '-inf') return -Infinity;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return null;
  return Number(text);
}

/** Reads `{a="x",b="y"}` from the start of `rest`; returns the labels and what follows. */
function parseLabels(rest: string, fail: (why: string) => never): [Record<string, string>, string] {
  const labels: Record<string, string> = {};
  let i = 1;
  const skipBlanks = (): void => {
    while (rest[i] === ' ' || rest[i] === '\t') i++;
  };
  for (;;) {
    skipBlanks();
    if (rest[i] === '}') return [labels, rest.slice(i + 1)];
    const name = LABEL_NAME.exec(rest.slice(i))?.[0];
    if (name === undefined) fail('a label name was expected');
    if (Object.hasOwn(labels, name)) fail(`label ${name} twice`);
    i += name.length;
    skipBlanks();
    if (rest[i] !== '=') fail('= was expected after a label name');
    i++;
    skipBlanks();
    if (rest[i] !== '"') fail('a quoted label value was expected');
    i++;
    let value = '';
    for (;;) {
      const c = rest[i];
      if (c === undefined) fail('unterminated label value');
      if (c === '"') break;
      if (c === '\\') {
        const e = rest[i + 1];
        if (e === 'n') value += '\n';
        else if (e === '\\' || e === '"') value += e;
        else fail('bad escape in a label value (only \\\\, \\" and \\n)');
        i += 2;
      } else {
        value += c;
        i++;
      }
    }
    i++;
    labels[name] = value;
    skipBlanks();
    if (rest[i] === ',') i++;
    else if (rest[i] !== '}') fail(', or } was expected after a label value');
  }
}

function familyOf(sampleName: string, declared: Map<string, Family>): Family | undefined {
  const exact = declared.get(sampleName);
  if (exact) return exact;
  const m = /^(.*)_(bucket|sum|count)$/.exec(sampleName);
  if (!m) return undefined;
  const base = declared.get(m[1] as string);
  if (!base) return undefined;
  if (base.type === 'histogram') return base;
  if (base.type === 'summary' && m[2] !== 'bucket') return base;
  return undefined;
}

const labelKey = (labels: Record<string, string>, omit?: string): string =>
  JSON.stringify(
    Object.entries(labels)
      .filter(([k]) => k !== omit)
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );

function checkHistogram(family: Family): void {
  const groups = new Map<string, { buckets: [number, number][]; count?: number; sum?: number }>();
  for (const s of family.samples) {
    const key = labelKey(s.labels, 'le');
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { buckets: [] }));
    if (s.name.endsWith('_bucket')) {
      const le = s.labels.le;
      const bound = le === undefined ? null : parseValue(le);
      if (bound === null) throw new Error(`${family.name}: a bucket without a valid le`);
      g.buckets.push([bound, s.value]);
    } else if (s.name.endsWith('_count')) g.count = s.value;
    else if (s.name.endsWith('_sum')) g.sum = s.value;
  }
  for (const [key, g] of groups) {
    const where = `${family.name}${key}`;
    if (g.buckets.length === 0 || g.count === undefined || g.sum === undefined)
      throw new Error(`${where}: a histogram needs buckets, _sum and _count`);
    g.buckets.sort((a, b) => a[0] - b[0]);
    const last = g.buckets.at(-1) as [number, number];
    if (last[0] !== Infinity) throw new Error(`${where}: no +Inf bucket`);
    for (let i = 1; i < g.buckets.length; i++)
      if ((g.buckets[i] as [number, number])[1] < (g.buckets[i - 1] as [number, number])[1])
        throw new Error(`${where}: buckets are not cumulative`);
    if (last[1] !== g.count) throw new Error(`${where}: _count is not the +Inf bucket`);
  }
}

/** The families of a /metrics answer, by name; throws on anything a scraper would refuse. */
export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const finished = new Set<string>();
  let current: Family | null = null;
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const declare = (name: string): Family => {
    let family = families.get(name);
    if (!family) families.set(name, (family = { name, type: 'untyped', help: '', samples: [] }));
    return family;
  };
  const seen = new Set<string>();
  lines.forEach((line, index) => {
    const fail: (why: string) => never = (why) => {
      throw new FormatError(index + 1, line, why);
    };
    if (line.trim() === '') return;
    if (line.startsWith('#')) {
      const m = /^#[ \t]+(HELP|TYPE)[ \t]+(\S+)(?:[ \t]+(.*))?$/.exec(line);
      if (!m) return; // a comment
      const [, kind, name = '', rest = ''] = m;
      if (METRIC_NAME.exec(name)?.[0] !== name) fail('bad metric name');
      if (finished.has(name)) fail(`${name} is declared again after other families`);
      const family = declare(name);
      if (family.samples.length > 0) fail(`${kind} of ${name} after its samples`);
      if (kind === 'TYPE') {
        if (!TYPES.has(rest)) fail(`unknown type ${rest}`);
        family.type = rest as MetricType;
      } else {
        family.help = rest.replace(/\\(n|\\)/g, (_, e: string) => (e === 'n' ? '\n' : '\\'));
      }
      if (current && current !== family) finished.add(current.name);
      current = family;
      return;
    }
    const name = METRIC_NAME.exec(line)?.[0];
    if (name === undefined) fail('a metric name was expected');
    let rest = line.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith('{')) [labels, rest] = parseLabels(rest, fail);
    const fields = rest.trim().split(/[ \t]+/);
    if (!/^[ \t]/.test(rest) || fields.length < 1 || fields.length > 2)
      fail('a value (and at most a timestamp) was expected');
    const value = parseValue(fields[0] as string);
    if (value === null) fail('the value is not a float');
    if (fields[1] !== undefined && !/^-?\d+$/.test(fields[1])) fail('the timestamp is not an integer');
    const family = familyOf(name, families) ?? declare(name);
    if (finished.has(family.name)) fail(`a sample of ${family.name} away from the rest of its family`);
    if (current && current !== family) finished.add(current.name);
    current = family;
    const key = `${name}${labelKey(labels)}`;
    if (seen.has(key)) fail('the same sample twice');
    seen.add(key);
    family.samples.push({ name, labels, value: value as number });
  });
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

/** The family `name`, which must be there with `type`. */
export function family(families: Map<string, Family>, name: string, type: MetricType): Family {
  const found = families.get(name);
  if (!found) throw new Error(`no ${name} in /metrics (have: ${[...families.keys()].join(', ')})`);
  if (found.type !== type) throw new Error(`${name} is a ${found.type}, not a ${type}`);
  return found;
}

/** The value of the sample `name` whose labels include `labels`; undefined when there is none. */
export function sampleValue(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const f of families.values())
    for (const s of f.samples)
      if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) return s.value;
  return undefined;
}

/** Every sample named `name` (a family's series). */
export function samplesOf(families: Map<string, Family>, name: string): Sample[] {
  return [...families.values()].flatMap((f) => f.samples.filter((s) => s.name === name));
}

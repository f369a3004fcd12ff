/** Time-series charts (uPlot, served by the master at /ui/vendor/, loaded when first needed). */
import type uPlot from 'uplot';
import { h } from './dom.js';
import { effectiveTheme, onThemeChange } from './theme.js';
import type { LivePoint } from './types.js';

type UPlotClass = typeof uPlot;
let loading: Promise<UPlotClass> | null = null;

function loadUPlot(): Promise<UPlotClass> {
  // A variable specifier: tsc leaves it alone and the browser loads the vendored file.
  const specifier: string = './vendor/uPlot.esm.js';
  loading ??= import(specifier).then((mod: { default: UPlotClass }) => mod.default);
  return loading;
}

const PALETTE = ['#2f7ed8', '#e4572e', '#17a673', '#f0a202', '#8e44ad', '#16a2b8', '#d6336c', '#6c757d'];

export interface Series {
  label: string;
  values: (number | null)[];
}

export interface ChartOptions {
  height?: number;
  /** How a y value is written (axis and legend). */
  format?: (value: number) => string;
  /** Filled areas (one series) instead of lines. */
  fill?: boolean;
}

/**
 * One chart in `container`. `update` may add or drop series (a new run, a new error code): the
 * chart is rebuilt then, and only given new data otherwise.
 */
export class TimeChart {
  private plot: uPlot | null = null;
  private labels = '';
  private xs: number[] = [];
  private series: Series[] = [];
  private readonly box: HTMLElement;
  private readonly resize: ResizeObserver;
  private readonly offTheme: () => void;
  private destroyed = false;

  constructor(
    container: HTMLElement,
    private readonly options: ChartOptions = {},
  ) {
    this.box = h('div', { class: 'chart-box' });
    container.append(this.box);
    this.resize = new ResizeObserver(() => this.plot?.setSize(this.size()));
    this.resize.observe(this.box);
    this.offTheme = onThemeChange(() => this.rebuild());
  }

  /** xs in ms since the epoch. */
  update(xs: number[], series: Series[]): void {
    this.xs = xs.map((t) => t / 1000);
    this.series = series;
    const labels = series.map((s) => s.label).join('\u0000');
    if (this.plot === null || labels !== this.labels) {
      this.labels = labels;
      this.rebuild();
    } else {
      this.plot.setData(this.data());
    }
  }

  destroy(): void {
    this.destroyed = true;
    this.resize.disconnect();
    this.offTheme();
    this.plot?.destroy();
    this.plot = null;
  }

  private size(): { width: number; height: number } {
    return { width: Math.max(200, this.box.clientWidth), height: this.options.height ?? 200 };
  }

  private data(): uPlot.AlignedData {
    return [this.xs, ...this.series.map((s) => s.values)] as uPlot.AlignedData;
  }

  private rebuild(): void {
    void loadUPlot().then((UPlot) => {
      if (this.destroyed) return;
      this.plot?.destroy();
      const dark = effectiveTheme() === 'dark';
      const ink = dark ? '#c9d1d9' : '#333';
      const grid = dark ? 'rgba(255,255,255,0.08)' : 'rgba(0,0,0,0.07)';
      const format = this.options.format ?? ((v: number) => String(v));
      const axis = { stroke: ink, grid: { stroke: grid }, ticks: { stroke: grid } };
      this.plot = new UPlot(
        {
          ...this.size(),
          cursor: { drag: { x: false, y: false } },
          legend: { show: true },
          scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
          axes: [axis, { ...axis, size: 60, values: (_u, splits) => splits.map(format) }],
          series: [
            {},
            ...this.series.map((s, i) => {
              const color = PALETTE[i % PALETTE.length] ?? '#888';
              return {
                label: s.label,
                stroke: color,
                width: 2,
                fill: this.options.fill ? `${color}33` : undefined,
                value: (_u: uPlot, v: number | null) => (v === null ? '–' : format(v)),
                points: { show: false },
              };
            }),
          ],
        },
        this.data(),
        this.box,
      );
    });
  }
}

/** The x values of the points (ms). */
export function times(points: LivePoint[]): number[] {
  return points.map((p) => p.t);
}

/** One series per error code seen in the points (0 where a code had none). */
export function errorSeries(points: LivePoint[]): Series[] {
  const codes = new Set<string>();
  for (const p of points) for (const code of Object.keys(p.errors)) codes.add(code);
  return [...codes].sort().map((code) => ({ label: code, values: points.map((p) => p.errors[code] ?? 0) }));
}

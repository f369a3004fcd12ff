/**
 * The live stream (GET /api/v1/live): read with fetch, since EventSource cannot send the token;
 * its server-sent-event frames parsed here; reconnected with backoff when it drops.
 */
import { API, authHeaders } from './api.js';
import type { LivePoint, LiveSnapshot } from './types.js';

export type LiveStatus = 'connecting' | 'live' | 'reconnecting' | 'unauthorized';

/** Points kept for the charts (the server sends 15 min of history). */
const MAX_POINTS = 60 * 60;

export interface SseFrame {
  event: string;
  data: string;
}

/** Splits a buffer into complete frames; returns the rest (an incomplete frame). */
export function parseFrames(buffer: string): { frames: SseFrame[]; rest: string } {
  const frames: SseFrame[] = [];
  const parts = buffer.replace(/\r\n?/g, '\n').split('\n\n');
  const rest = parts.pop() ?? '';
  for (const part of parts) {
    let event = 'message';
    const data: string[] = [];
    for (const line of part.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const name = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (name === 'event') event = value;
      else if (name === 'data') data.push(value);
    }
    if (data.length > 0) frames.push({ event, data: data.join('\n') });
  }
  return { frames, rest };
}

type Listener<T> = (value: T) => void;

export class Live {
  status: LiveStatus = 'connecting';
  latest: LiveSnapshot | null = null;
  points: LivePoint[] = [];
  private readonly snapshotListeners = new Set<Listener<LiveSnapshot>>();
  private readonly statusListeners = new Set<Listener<LiveStatus>>();
  private readonly historyListeners = new Set<Listener<LivePoint[]>>();
  private controller: AbortController | null = null;
  private retryMs = 1000;
  private timer: number | null = null;
  private running = false;

  constructor(private readonly onUnauthorized: () => void) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.connect();
  }

  stop(): void {
    this.running = false;
    this.controller?.abort();
    this.controller = null;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.latest = null;
    this.points = [];
  }

  onSnapshot(listener: Listener<LiveSnapshot>): () => void {
    this.snapshotListeners.add(listener);
    return () => this.snapshotListeners.delete(listener);
  }

  onHistory(listener: Listener<LivePoint[]>): () => void {
    this.historyListeners.add(listener);
    return () => this.historyListeners.delete(listener);
  }

  onStatus(listener: Listener<LiveStatus>): () => void {
    this.statusListeners.add(listener);
    listener(this.status);
    return () => this.statusListeners.delete(listener);
  }

  private setStatus(status: LiveStatus): void {
    this.status = status;
    for (const listener of this.statusListeners) listener(status);
  }

  private async connect(): Promise<void> {
    const controller = new AbortController();
    this.controller = controller;
    try {
      const res = await fetch(`${API}/live`, {
        headers: { accept: 'text/event-stream', ...authHeaders() },
        signal: controller.signal,
      });
      if (res.status === 401) {
        this.setStatus('unauthorized');
        this.running = false;
        this.onUnauthorized();
        return;
      }
      if (!res.ok || res.body === null) throw new Error(`HTTP ${res.status}`);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        const { frames, rest } = parseFrames(buffer);
        buffer = rest;
        for (const frame of frames) this.handle(frame);
      }
    } catch {
      // dropped or refused: reconnect below
    }
    if (!this.running || controller.signal.aborted) return;
    this.setStatus('reconnecting');
    this.timer = window.setTimeout(() => void this.connect(), this.retryMs);
    this.retryMs = Math.min(this.retryMs * 2, 30_000);
  }

  private handle(frame: SseFrame): void {
    let data: unknown;
    try {
      data = JSON.parse(frame.data);
    } catch {
      return;
    }
    if (frame.event === 'history') {
      this.points = ((data as { points?: LivePoint[] }).points ?? []).slice(-MAX_POINTS);
      this.retryMs = 1000;
      this.setStatus('live');
      for (const listener of this.historyListeners) listener(this.points);
    } else if (frame.event === 'snapshot') {
      const snapshot = data as LiveSnapshot;
      this.latest = snapshot;
      const last = this.points[this.points.length - 1];
      if (last === undefined || last.t < snapshot.point.t) this.points.push(snapshot.point);
      if (this.points.length > MAX_POINTS) this.points.splice(0, this.points.length - MAX_POINTS);
      if (this.status !== 'live') this.setStatus('live');
      this.retryMs = 1000;
      for (const listener of this.snapshotListeners) listener(snapshot);
    }
  }
}

import type { FetchSettings } from '../../../shared/protocol/messages.js';

/** The least a render is given, however long its document's fetch took. */
export const MIN_RENDER_MS = 1_000;

/**
 * The settings a render runs with once its document's fetch took `spentMs`: what is left of the
 * page's `totalTimeoutMs` (at least a second), so that fetch and render together stay within it,
 * as the scheduler expects of a task in flight. Kept apart from the renderer, so that a crawler
 * that never renders does not load the browser's driver.
 */
export function renderSettings(settings: FetchSettings, spentMs: number | undefined): FetchSettings {
  if (spentMs === undefined || spentMs <= 0) return settings;
  return { ...settings, totalTimeoutMs: Math.max(MIN_RENDER_MS, settings.totalTimeoutMs - spentMs) };
}

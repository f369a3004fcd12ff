/** How much the settler holds and hands over at once; the scheduler's config takes its defaults from here. */
export interface SettlerLimits {
  /** Outcomes waiting (besides the batch being committed) before `accepting` turns false. */
  maxBacklog: number;
  /** Bytes held (records and discovered URLs, waiting or being committed) before `accepting` turns false. */
  maxBacklogBytes: number;
  /** Bytes of records one commit hands to the sink at most; a larger record goes alone. */
  maxBatchBytes: number;
  /** A stall that lasts is logged again this often (never once per retry). */
  stallLogIntervalMs: number;
}

export const SETTLER_DEFAULTS: SettlerLimits = {
  maxBacklog: 4_000,
  maxBacklogBytes: 64 * 1024 * 1024,
  maxBatchBytes: 8 * 1024 * 1024,
  stallLogIntervalMs: 30_000,
};

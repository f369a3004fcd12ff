import type { Frontier } from '../../shared/ports/frontier.js';
import type { PageSink } from '../../shared/ports/page-sink.js';

/** The frontier and page sink a scheduler runs on, chosen by configuration. */
export interface Backend {
  frontier: Frontier;
  sink: PageSink;
  /** Where records go, for status reports. */
  output: string;
  close(): Promise<void>;
}

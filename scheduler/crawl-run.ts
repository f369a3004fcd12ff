import { TOP_LEVEL, type RunPriority } from '../shared/protocol/task-priority.js';
import { DEFAULT_RUN_ID } from '../shared/protocol/task.js';

/** The run this scheduler's one crawl is in the frontier (runs of many crawls come with the run registry). */
export const CRAWL_RUN_ID = DEFAULT_RUN_ID;

/** Its priority: breadth first, seeds and sitemaps on the top level, as before priority levels. */
export const CRAWL_PRIORITY: RunPriority = { priority: TOP_LEVEL, priorityRule: 'breadth-first' };

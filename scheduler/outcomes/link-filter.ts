import type { NewTask } from '../../shared/protocol/task.js';
import { taskLevel } from '../../shared/protocol/task-priority.js';
import { CRAWL_PRIORITY } from '../crawl-run.js';
import { hostOfNormalized } from '../../shared/url/host-of-normalized.js';

export interface LinkFilterOptions {
  /** True when a URL is inside the crawl's scope. */
  inScope: (url: string) => boolean;
  /** Deepest depth to crawl; 0 means no limit. */
  maxDepth: number;
  /** The task's priority level (see taskLevel), higher leased first. Replaceable: the business decides what matters. */
  priority?: (task: Omit<NewTask, 'priority'>) => number;
}

/** Breadth first by default: shallower pages first. */
export const defaultPriority = (task: Omit<NewTask, 'priority'>): number =>
  taskLevel(CRAWL_PRIORITY, task.depth);

/** Turns a page's followable links into frontier tasks: scope, depth and priority applied. */
export function createLinkFilter(options: LinkFilterOptions) {
  const priority = options.priority ?? defaultPriority;
  return (links: readonly string[], parent: { runId: string; url: string; depth: number }): NewTask[] => {
    const depth = parent.depth + 1;
    if (options.maxDepth > 0 && depth > options.maxDepth) return [];
    const tasks: NewTask[] = [];
    for (const url of links) {
      if (!options.inScope(url)) continue;
      const host = hostOfNormalized(url);
      if (host === null) continue;
      const base = { runId: parent.runId, url, host, depth, parentUrl: parent.url };
      tasks.push({
        runId: base.runId,
        url,
        host,
        depth,
        parentUrl: base.parentUrl,
        priority: priority(base),
      });
    }
    return tasks;
  };
}

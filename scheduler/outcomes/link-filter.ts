import type { NewTask } from '../../shared/protocol/task.js';

export interface LinkFilterOptions {
  /** True when a URL is inside the crawl's scope. */
  inScope: (url: string) => boolean;
  /** Deepest depth to crawl; 0 means no limit. */
  maxDepth: number;
  /** Higher runs first. Replaceable: the business decides what matters. */
  priority?: (task: Omit<NewTask, 'priority'>) => number;
}

/** Breadth first by default: shallower pages first. */
export const defaultPriority = (task: Omit<NewTask, 'priority'>): number => -task.depth;

/** Turns a page's followable links into frontier tasks: scope, depth and priority applied. */
export function createLinkFilter(options: LinkFilterOptions) {
  const priority = options.priority ?? defaultPriority;
  return (links: readonly string[], parent: { url: string; depth: number }): NewTask[] => {
    const depth = parent.depth + 1;
    if (options.maxDepth > 0 && depth > options.maxDepth) return [];
    const tasks: NewTask[] = [];
    for (const url of links) {
      if (!options.inScope(url)) continue;
      const host = hostKey(url);
      if (host === null) continue;
      const base = { url, host, depth, parentUrl: parent.url };
      tasks.push({ ...base, priority: priority(base) });
    }
    return tasks;
  };
}

/** `scheme://host[:port]` part's host with port, without parsing the whole URL again. */
export function hostKey(url: string): string | null {
  const start = url.indexOf('://');
  if (start < 0) return null;
  let end = url.length;
  for (let i = start + 3; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 47 /* / */ || c === 63 /* ? */ || c === 35 /* # */) {
      end = i;
      break;
    }
  }
  const authority = url.slice(start + 3, end);
  const at = authority.lastIndexOf('@');
  return at >= 0 ? authority.slice(at + 1) : authority;
}

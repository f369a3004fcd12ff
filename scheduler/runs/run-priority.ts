import { PRIORITY_MAX, type CrawlSettings } from '../../shared/crawl-settings/index.js';
import { TOP_LEVEL, type RunPriority } from '../../shared/protocol/task-priority.js';

/**
 * A run's priority in frontier levels: the job's `priority` (0..PRIORITY_MAX) spread over the
 * levels (0..TOP_LEVEL), so a higher job priority never lands on a lower level, with its rule.
 */
export function runPriorityOf(settings: Pick<CrawlSettings, 'priority' | 'priorityRule'>): RunPriority {
  return {
    priority: Math.round((settings.priority * TOP_LEVEL) / PRIORITY_MAX),
    priorityRule: settings.priorityRule,
  };
}

export { createMetricsRegistry, METRIC_PREFIX, type Registry } from './registry.js';
export { metricsRoute, METRICS_PATH } from './route.js';
export {
  createPublishTimers,
  PUBLISH_BUCKETS,
  secondsSince,
  type PublishResult,
  type PublishTimer,
} from './publish-latency.js';
export { errorCodeLabel, statusClass } from './labels.js';

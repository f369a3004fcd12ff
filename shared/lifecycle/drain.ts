/**
 * How long a stopping role lets work in flight finish (ACKCRAWL_DRAIN_TIMEOUT_MS): a crawler's
 * running tasks on SIGTERM, the scheduler's wait for in-flight outcomes. One setting for both, so
 * the scheduler never closes on crawlers that are still delivering.
 */
export const DEFAULT_DRAIN_TIMEOUT_MS = 15_000;

/** What the agent adds to the crawlers' drain deadline before it sends SIGKILL. */
export const KILL_AFTER_DRAIN_MS = 5_000;

/** What a stopping scheduler waits past the drain deadline for crawlers' last releases and byes. */
export const BYE_GRACE_MS = 2_000;

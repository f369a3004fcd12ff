import { AppError, StorageError } from '../../errors.js';
import type {
  AlertRepository,
  AlertRuleRepository,
  DeliveryRepository,
  WebhookRepository,
} from '../../ports/alert-store.js';
import type {
  ExtractFailureRepository,
  AgentRepository,
  JobRepository,
  LogRepository,
  MigrationReport,
  ResultRepository,
  RunRepository,
  ScheduleRepository,
  SeenRepository,
  SqlStore,
  TokenRepository,
} from '../../ports/sql-store.js';
import type { SqlDriver } from './driver.js';
import { migrate } from './migrate.js';
import type { Migration } from './migrations.js';
import { MIGRATIONS } from './migrations.js';
import type { StoreContext } from './repositories/context.js';
import { extractFailureRepository } from './repositories/extract-failures.js';
import { alertRuleRepository } from './repositories/alert-rules.js';
import { alertRepository } from './repositories/alerts.js';
import { deliveryRepository } from './repositories/deliveries.js';
import { agentRepository } from './repositories/agents.js';
import { jobRepository } from './repositories/jobs.js';
import { logRepository } from './repositories/logs.js';
import { resultRepository } from './repositories/results.js';
import { runRepository } from './repositories/runs.js';
import { scheduleRepository } from './repositories/schedules.js';
import { seenRepository } from './repositories/seen.js';
import { tokenRepository } from './repositories/tokens.js';
import { webhookRepository } from './repositories/webhooks.js';
import type { Statements } from './statements.js';

export interface DriverStoreOptions {
  now?: () => number;
  /** The schema history; tests pass longer ones. */
  migrations?: readonly Migration[];
}

/**
 * The SqlStore port over any driver: the repositories are written once (repositories/), the
 * dialects differ only in their statements and drivers. Every call after close() is SQL_CLOSED.
 */
export class DriverSqlStore implements SqlStore {
  readonly jobs: JobRepository;
  readonly runs: RunRepository;
  readonly logs: LogRepository;
  readonly results: ResultRepository;
  readonly extractFailures: ExtractFailureRepository;
  readonly tokens: TokenRepository;
  readonly alertRules: AlertRuleRepository;
  readonly alerts: AlertRepository;
  readonly webhooks: WebhookRepository;
  readonly deliveries: DeliveryRepository;
  readonly agents: AgentRepository;
  readonly schedules: ScheduleRepository;
  readonly seen: SeenRepository;
  private closing: Promise<void> | null = null;
  private readonly now: () => number;
  private readonly migrations: readonly Migration[];

  constructor(
    private readonly driver: SqlDriver,
    private readonly sql: Statements,
    options: DriverStoreOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.migrations = options.migrations ?? MIGRATIONS;
    const ctx: StoreContext = { driver, sql, guard: (op, fn) => this.guard(op, fn) };
    this.jobs = jobRepository(ctx);
    this.runs = runRepository(ctx);
    this.logs = logRepository(ctx);
    this.results = resultRepository(ctx);
    this.extractFailures = extractFailureRepository(ctx);
    this.tokens = tokenRepository(ctx);
    this.alertRules = alertRuleRepository(ctx);
    this.alerts = alertRepository(ctx);
    this.webhooks = webhookRepository(ctx);
    this.deliveries = deliveryRepository(ctx);
    this.agents = agentRepository(ctx);
    this.schedules = scheduleRepository(ctx);
    this.seen = seenRepository(ctx);
  }

  get dialect(): SqlDriver['dialect'] {
    return this.driver.dialect;
  }

  migrate(): Promise<MigrationReport> {
    return this.guard('migrate', () => migrate(this.driver, this.sql, this.now, this.migrations));
  }

  async ping(): Promise<boolean> {
    if (this.closing) return false;
    try {
      await this.driver.all(this.sql.ping);
      return true;
    } catch {
      return false;
    }
  }

  close(): Promise<void> {
    this.closing ??= this.driver.close();
    return this.closing;
  }

  private async guard<T>(op: string, fn: () => Promise<T>): Promise<T> {
    if (this.closing) {
      throw new StorageError('SQL_CLOSED', `sql store (${this.driver.dialect}) ${op}: the store is closed`);
    }
    try {
      return await fn();
    } catch (err) {
      throw err instanceof AppError ? err : this.driver.toError(err, op);
    }
  }
}

import { z } from 'zod';
import { field } from '../../shared/config/load.js';

/** Agent settings (ACKCRAWL_<KEY>). Crawler processes inherit the environment, plus their own ids. */
export const agentConfigSchema = z.object({
  /** The scheduler's token, for the crawlers; absent: the one in `<dataDir>/token`. */
  token: z.string().optional(),
  dataDir: z.string().min(1).default('./ackcrawl-data'),
  processes: field.int(0).default(2),
  /** Render-capable crawler processes (ACKCRAWL_CAN_RENDER) kept running besides `processes`. */
  renderProcesses: field.int(0).default(0),
  /** Restarts of one slot within a minute before the agent gives that slot a longer pause. */
  maxRestartsPerMinute: field.int(1).default(10),
  stopTimeoutMs: field.int(100).default(10_000),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type AgentConfig = z.infer<typeof agentConfigSchema>;

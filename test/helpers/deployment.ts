import type { PageRecord } from '../../shared/protocol/page-record.js';
import { startMasterRole, type ControlPlane } from './control-plane-env.js';
import { deleteTopic, tailTopic, type TopicTail } from './kafka-topic.js';
import { recordTags } from './records.js';
import { TestRole } from './role-process.js';
import type { masterApi } from './serve.js';

/** A whole distributed deployment of one test: master, scheduler and agent, and the records topic tailed. */
export interface Deployment {
  master: TestRole;
  scheduler: TestRole;
  agent: TestRole;
  api: ReturnType<typeof masterApi>;
  tail: TopicTail;
  /** The page records of one run read from the topic so far. */
  records(runId: string): PageRecord[];
  /** Stops the roles (SIGTERM: agent, scheduler, master), closes the tail and deletes the topic. */
  stop(): Promise<void>;
}

/**
 * Starts `ackcrawl master` (and waits for its API), `ackcrawl scheduler` and `ackcrawl agent` as
 * separate processes on the plane's environment (`schedulerEnv` over it for the scheduler), and
 * tails the plane's topic.
 */
export async function startDeployment(
  plane: ControlPlane,
  schedulerEnv: NodeJS.ProcessEnv = {},
): Promise<Deployment> {
  const { master, api } = await startMasterRole(plane);
  const scheduler = new TestRole('scheduler', { ...plane.env, ...schedulerEnv }).start();
  const agent = new TestRole('agent', plane.env).start();
  let tail: TopicTail;
  try {
    tail = await tailTopic(plane.topic);
  } catch (err) {
    for (const role of [agent, scheduler, master]) await role.stop('SIGTERM');
    throw err;
  }
  return {
    master,
    scheduler,
    agent,
    api,
    tail,
    records: (runId) =>
      tail.records
        .map((r) => JSON.parse(r.value.toString('utf8')) as PageRecord)
        .filter((r) => recordTags(r).runId === runId),
    async stop() {
      await agent.stop('SIGTERM');
      await scheduler.stop('SIGTERM');
      await master.stop('SIGTERM');
      await tail.close();
      await deleteTopic(plane.topic).catch(() => undefined);
    },
  };
}

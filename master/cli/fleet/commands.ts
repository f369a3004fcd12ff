import type { Command } from 'commander';
import { InvalidInputError } from '../../../shared/errors.js';
import { masterAction } from '../jobs/act.js';
import type { MasterClient, MasterClientEnv } from '../jobs/master-client.js';
import { agentDetails, agentsTable, type AgentAnswer } from './views.js';

interface Output {
  json?: boolean;
}

/** Every agent, following the API's pages (oldest registration first). */
export async function listAgents(client: MasterClient): Promise<AgentAnswer[]> {
  const agents: AgentAnswer[] = [];
  let after: string | null = null;
  do {
    const query: string = after === null ? '' : `&after=${encodeURIComponent(after)}`;
    const page = (await client.call('GET', `/agents?limit=500${query}`)) as {
      items: AgentAnswer[];
      next: string | null;
    };
    agents.push(...page.items);
    after = page.next;
  } while (after !== null);
  return agents;
}

function count(text: string, what: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n)) {
    throw new InvalidInputError('CLI_ARGUMENT_INVALID', `${what} is a whole number (0, 1, …), not '${text}'`);
  }
  return n;
}

/**
 * `ackcrawl fleet …`: the master's fleet routes (docs/fleet.md) from the command line. A change
 * (scale, stop, restart, drain) is the agent's desired state in the master; the agent takes it
 * with its next heartbeat, so the answer shows what is asked, and `show` later what happened.
 */
export function registerFleetCommands(
  program: Command,
  env: () => MasterClientEnv,
  fail: (err: unknown) => never,
  write: (text: string) => void = (text) => void process.stdout.write(text),
  now: () => number = Date.now,
): void {
  const act = masterAction(env, fail, write);
  const fleet = program
    .command('fleet')
    .description(
      "see and change the master's host agents and their crawler processes (ACKCRAWL_MASTER_URL; ACKCRAWL_TOKEN, or the admin-token file in ACKCRAWL_DATA_DIR)",
    );
  const agentPath = (id: string, rest = ''): string => `/agents/${encodeURIComponent(id)}${rest}`;
  const changed = (a: AgentAnswer, what: string) => ({
    json: a,
    text: `${what}\n\n${agentDetails(a, now())}`,
  });

  fleet
    .command('list')
    .description('the agents: state, host, processes running/wanted, last heartbeat, load, memory, disk')
    .option('--json', 'print the answer as JSON')
    .action(
      act(async (client, _options: Output) => {
        const items = await listAgents(client);
        return { json: { items }, text: agentsTable(items, now()) };
      }),
    );

  fleet
    .command('show')
    .description('one agent with each of its crawler processes')
    .argument('<agent>', 'the agent id')
    .option('--json', 'print the answer as JSON')
    .action(
      act(async (client, id: string, _options: Output) => {
        const agent = (await client.call('GET', agentPath(id))) as AgentAnswer;
        return { json: agent, text: agentDetails(agent, now()) };
      }),
    );

  fleet
    .command('scale')
    .description('set how many crawler processes the agent runs (ends a drain)')
    .argument('<agent>', 'the agent id')
    .argument('<count>', 'crawler processes wanted (slots 0 … count − 1)')
    .option('--json', 'print the answer as JSON')
    .action(
      act(async (client, id: string, wanted: string, _options: Output) => {
        const agent = (await client.call('PUT', agentPath(id, '/processes'), {
          count: count(wanted, 'the count'),
        })) as AgentAnswer;
        return changed(agent, `agent ${agent.id}: ${agent.desiredProcesses} crawler processes wanted`);
      }),
    );

  for (const [name, what] of [
    ['stop', 'stop one process: it drains (no new task; in-flight ones finish or go back) and stays stopped'],
    ['restart', 'restart one process (a stopped or crash-looping one too): it drains, then starts again'],
  ] as const) {
    fleet
      .command(name)
      .description(what)
      .argument('<agent>', 'the agent id')
      .argument('<slot>', 'the process slot (0, 1, …; SLOT in `fleet show`)')
      .option('--json', 'print the answer as JSON')
      .action(
        act(async (client, id: string, slotText: string, _options: Output) => {
          const slot = count(slotText, 'the slot');
          const agent = (await client.call(
            'POST',
            agentPath(id, `/processes/${slot}/${name}`),
          )) as AgentAnswer;
          return changed(agent, `agent ${agent.id}: process ${slot} to ${name}`);
        }),
      );
  }

  fleet
    .command('drain')
    .description('drain the agent: every process drains and stops; none starts until `fleet scale`')
    .argument('<agent>', 'the agent id')
    .option('--json', 'print the answer as JSON')
    .action(
      act(async (client, id: string, _options: Output) => {
        const agent = (await client.call('POST', agentPath(id, '/drain'))) as AgentAnswer;
        return changed(agent, `agent ${agent.id}: draining`);
      }),
    );

  fleet
    .command('forget')
    .description('forget a lost or stopped agent (a host gone for good) and its processes')
    .argument('<agent>', 'the agent id')
    .option('--json', 'print the answer as JSON')
    .action(
      act(async (client, id: string, _options: Output) => {
        await client.call('DELETE', agentPath(id, ''));
        return { json: { id, forgotten: true }, text: `agent ${id}: forgotten` };
      }),
    );
}

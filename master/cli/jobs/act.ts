import { createMasterClient, type MasterClient, type MasterClientEnv } from './master-client.js';

/** What a command prints: the API's answer for `--json`, a table or a sentence for people. */
export interface Printed {
  json: unknown;
  text: string;
}

/** Turns a command body into a commander action: a master client in, the answer out, errors to `fail`. */
export type Act = <A extends unknown[]>(
  body: (client: MasterClient, ...args: A) => Promise<Printed>,
) => (...args: A) => Promise<void>;

/**
 * The action maker every master command shares. Commander passes the options object second to
 * last (the command itself last): `--json` is read there.
 */
export function masterAction(
  env: () => MasterClientEnv,
  fail: (err: unknown) => never,
  write: (text: string) => void,
): Act {
  return (body) =>
    async (...args) => {
      const options = args.find((a, i) => i === args.length - 2 && typeof a === 'object') as
        { json?: boolean } | undefined;
      try {
        const { json, text } = await body(createMasterClient(env()), ...args);
        write(options?.json ? `${JSON.stringify(json, null, 2)}\n` : `${text}\n`);
      } catch (err) {
        fail(err);
      }
    };
}

import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('../../../scripts/services.sh', import.meta.url));

/** `scripts/services.sh up|down <service>`: for fault tests that stop a real broker. */
export async function serviceControl(
  action: 'up' | 'down',
  service: 'rabbitmq' | 'kafka' | 'minio',
): Promise<void> {
  await run('bash', [SCRIPT, action, service], { timeout: 300_000 });
}

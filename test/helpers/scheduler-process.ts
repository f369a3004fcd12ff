import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI } from './cli.js';
import { freePort } from './ports.js';
import { waitFor } from './wait-for.js';

export interface SchedulerProcess {
  child: ChildProcess;
  port: number;
  /** ws://127.0.0.1:port/crawlers */
  url: string;
  dir: string;
  outDir: string;
  dataDir: string;
  /** What it wrote to stderr so far (its log lines). */
  stderr(): string;
  /** Peak resident memory of the process so far (VmHWM), in bytes. */
  peakRss(): number;
  alive(): boolean;
  stop(): Promise<void>;
}

/**
 * `ackcrawl scheduler` as its own process on the embedded adapters (SQLite frontier, record files),
 * so it needs no service: for tests of its network face. `env` adds ACKCRAWL_* settings.
 */
export async function startSchedulerProcess(env: Record<string, string>): Promise<SchedulerProcess> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'scheduler-process-'));
  const outDir = join(dir, 'out');
  const dataDir = join(dir, 'data');
  let stderr = '';
  const child = spawn(process.execPath, [CLI, 'scheduler'], {
    env: {
      ...process.env,
      ACKCRAWL_FRONTIER: 'sqlite',
      ACKCRAWL_SINK: 'file',
      ACKCRAWL_OUT_DIR: outDir,
      ACKCRAWL_DATA_DIR: dataDir,
      ACKCRAWL_LISTEN_PORT: String(port),
      ACKCRAWL_LOG_LEVEL: 'info',
      ACKCRAWL_TOKEN: undefined,
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  await waitFor(
    async () => alive() && (await httpCall(port, 'GET', '/health').catch(() => null))?.status === 200,
    {
      timeoutMs: 30_000,
      message: `the scheduler answering /health (stderr: ${stderr.slice(-500)})`,
    },
  );
  return {
    child,
    port,
    url: `ws://127.0.0.1:${port}/crawlers`,
    dir,
    outDir,
    dataDir,
    stderr: () => stderr,
    peakRss: () => {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) * 1024;
    },
    alive,
    stop: async () => {
      if (alive()) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** One HTTP request to 127.0.0.1:port, with any headers (Host included) and local address. */
export function httpCall(
  port: number,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string; localAddress?: string } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: { host: `127.0.0.1:${port}`, ...options.headers },
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
        timeout: 10_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Established TCP connections whose local end is 127.0.0.1:port (as the scheduler sees them). */
export function establishedTo(port: number): number {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .filter((line) => {
      const cols = line.trim().split(/\s+/);
      return cols[1] === local && cols[3] === '01';
    }).length;
}

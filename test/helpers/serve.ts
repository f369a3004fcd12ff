import { spawn, type ChildProcess } from 'node:child_process';
import { CLI } from './cli.js';
import { descendants, isAlive } from './process-tree.js';
import { waitFor } from './wait-for.js';

export interface ServeRun {
  child: ChildProcess;
  /** What it printed on stdout so far. */
  stdout(): string;
  stderr(): string;
  /** The master's URL, once it said so. */
  masterUrl: Promise<string>;
  /** Every PID of the tree it started (itself first). */
  tree(): number[];
  exited: Promise<{ code: number | null; signal: string | null }>;
}

/** Starts `ackcrawl serve --data-dir <dir>` as a child process, as a user would. */
export function startServe(dataDir: string, env: NodeJS.ProcessEnv): ServeRun {
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', dataDir], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let announce!: (url: string) => void;
  const masterUrl = new Promise<string>((resolve) => (announce = resolve));
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
    const found = /master listening on (\S+)/.exec(out);
    if (found?.[1]) announce(found[1]);
  });
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    masterUrl,
    tree: () => [child.pid as number, ...descendants(child.pid as number).map((p) => p.pid)],
    exited,
  };
}

/** The admin token the master printed when it made it, if it did. */
export function printedAdminToken(stdout: string): string | null {
  return /admin token[^:]*: (\S+)/.exec(stdout)?.[1] ?? null;
}

/** kill -9 of every process of a serve tree (PIDs it started), and waits until they are gone. */
export async function killTree(run: ServeRun): Promise<void> {
  const pids = run.tree();
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  await waitFor(() => pids.every((pid) => !isAlive(pid)), { timeoutMs: 10_000, message: 'serve tree gone' });
}

/** SIGTERM to serve, and waits for it (it stops its roles); SIGKILL to the tree if it hangs. */
export async function stopServe(run: ServeRun, timeoutMs = 60_000): Promise<void> {
  if (run.child.exitCode !== null || run.child.signalCode !== null) return;
  run.child.kill('SIGTERM');
  const timer = setTimeout(() => void killTree(run), timeoutMs);
  await run.exited;
  clearTimeout(timer);
}

/** A JSON client of the master's API with a bearer token. */
export function masterApi(baseUrl: string, token: string) {
  return async <T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${baseUrl}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
  };
}

/**
 * The master's URL once serve listens (or an error with its stderr, if it exits first), and an
 * API client with the admin token it printed at its first start.
 */
export async function servedMaster(run: ServeRun) {
  const url = await Promise.race([
    run.masterUrl,
    run.exited.then((exit) => {
      throw new Error(`serve exited (${exit.code ?? exit.signal}): ${run.stderr()}`);
    }),
  ]);
  await waitFor(() => printedAdminToken(run.stdout()) !== null, { message: 'admin token printed' });
  return { url, api: masterApi(url, printedAdminToken(run.stdout()) as string) };
}

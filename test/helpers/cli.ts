import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The compiled CLI, as `npx ackcrawl` runs it. */
export const CLI = fileURLToPath(new URL('../../master/cli/main.js', import.meta.url));

export interface CliRun {
  child: ChildProcess;
  done: Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>;
}

/** Starts `ackcrawl <args>` as a child process (in `cwd`, else ours); `done` resolves when it exits. */
export function startCli(args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string): CliRun {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...env },
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>(
    (resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}

export async function runCli(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 120_000, cwd?: string) {
  const run = startCli(args, env, cwd);
  const timer = setTimeout(() => run.child.kill('SIGKILL'), timeoutMs);
  try {
    return await run.done;
  } finally {
    clearTimeout(timer);
  }
}

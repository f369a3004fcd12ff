/** Options a bench was given that it cannot run with: each problem on its own line. */
export class BenchOptionsError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid options:\n  ${problems.join('\n  ')}`);
    this.name = 'BenchOptionsError';
  }
}

/**
 * A bench's options, or the exit code to leave with: 0 after `--help` (the usage on stdout), 2
 * after options it cannot run with (what is wrong, then the usage, on stderr). `parseArgs`'s own
 * errors (an unknown option, a value missing) count as such options.
 */
export function optionsOrExit<T>(
  name: string,
  usage: string,
  argv: readonly string[],
  parse: () => T,
): { options: T } | { exitCode: number } {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${usage}\n`);
    return { exitCode: 0 };
  }
  try {
    return { options: parse() };
  } catch (err) {
    process.stderr.write(`${name}: ${err instanceof Error ? err.message : String(err)}\n\n${usage}\n`);
    return { exitCode: 2 };
  }
}

import { readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';

/**
 * A short name for a process of a measured tree, from its command line: the script it runs (with
 * its folder, `cli/main.js`, `bundles/crawler.js`) and the CLI's subcommand when there is one
 * (`cli/main.js scheduler`). Falls back to the executable's name; `?` once the process is gone.
 */
export function processLabel(pid: number): string {
  let argv: string[];
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((a) => a !== '');
  } catch {
    return '?';
  }
  return labelFromArgv(argv);
}

export function labelFromArgv(argv: readonly string[]): string {
  const at = argv.findIndex((a, i) => i > 0 && /\.[cm]?js$/.test(a));
  if (at < 0) return basename(argv[0] ?? '?');
  const script = argv[at] as string;
  const name = `${basename(dirname(script))}/${basename(script)}`;
  const command = argv[at + 1];
  return command !== undefined && /^[a-z][a-z-]*$/.test(command) ? `${name} ${command}` : name;
}

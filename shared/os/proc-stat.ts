import { readdirSync, readFileSync } from 'node:fs';
import { endianness } from 'node:os';

/** One line of /proc/<pid>/stat, the fields the agent and the benchmark need. Linux only. */
export interface ProcStat {
  pid: number;
  ppid: number;
  /** R, S, D, T (stopped), Z (a zombie: exited, not yet reaped), … */
  state: string;
  /** Start time in clock ticks since boot: with pid, it names a process even if the pid is reused. */
  startTicks: number;
  /** utime + stime of the process itself, in clock ticks. */
  cpuTicks: number;
  /** cutime + cstime: CPU of children this process has already waited for, in clock ticks. */
  reapedChildTicks: number;
  rssPages: number;
}

/** The kernel's types in the auxiliary vector (<elf.h>): the page size and the clock's ticks. */
const AT_PAGESZ = 6;
const AT_CLKTCK = 17;

/**
 * The values the kernel handed this process at exec, in its ELF auxiliary vector: what `getconf`
 * prints for PAGESIZE and CLK_TCK, read without starting a process (two `getconf`s took 20 ms of
 * every CLI's start). Pairs of native words, type then value, ended by type 0.
 */
export function readAuxv(bytes: Buffer, wordBytes: number, littleEndian: boolean): Map<number, number> {
  const read = (at: number): number => {
    if (wordBytes === 4) return littleEndian ? bytes.readUInt32LE(at) : bytes.readUInt32BE(at);
    return Number(littleEndian ? bytes.readBigUInt64LE(at) : bytes.readBigUInt64BE(at));
  };
  const values = new Map<number, number>();
  for (let at = 0; at + 2 * wordBytes <= bytes.length; at += 2 * wordBytes) {
    const type = read(at);
    if (type === 0) break;
    values.set(type, read(at + wordBytes));
  }
  return values;
}

/** Architectures whose native word, and so each auxv entry's half, is 8 bytes. */
const WORD_64 = new Set(['x64', 'arm64', 'ppc64', 's390x', 'riscv64', 'loong64', 'mips64el']);

function ownAuxv(): Map<number, number> {
  try {
    const wordBytes = WORD_64.has(process.arch) ? 8 : 4;
    return readAuxv(readFileSync('/proc/self/auxv'), wordBytes, endianness() === 'LE');
  } catch {
    return new Map(); // not Linux: the defaults below
  }
}

const auxv = ownAuxv();
const positive = (value: number | undefined, fallback: number): number =>
  value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;

export const clockTicksPerSecond = positive(auxv.get(AT_CLKTCK), 100);
export const pageSizeBytes = positive(auxv.get(AT_PAGESZ), 4096);

export function readProcStat(pid: number | 'self'): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined; // exited between listing and reading
  }
  // The command name (field 2) is in parentheses and may contain spaces: split after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const field = (n: number): number => Number(fields[n - 3]);
  return {
    pid: Number(text.slice(0, text.indexOf(' '))),
    ppid: field(4),
    state: fields[0] ?? '',
    startTicks: field(22),
    cpuTicks: field(14) + field(15),
    reapedChildTicks: field(16) + field(17),
    rssPages: field(24),
  };
}

export function readAllProcStats(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const name of readdirSync('/proc')) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    const stat = readProcStat(Number(name));
    if (stat) out.push(stat);
  }
  return out;
}

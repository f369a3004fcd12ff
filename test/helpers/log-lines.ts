import { Writable } from 'node:stream';
import { pino } from 'pino';

/** One structured (pino) log line, as the roles write them; the fields the tests read. */
export interface LogLine {
  level?: number;
  msg?: string;
  code?: string;
  module?: string;
  [field: string]: unknown;
}

/** The JSON lines of a role's log (stdout or stderr); other lines are left out, a broken one is `{}`. */
export function logLines(text: string): LogLine[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => {
      try {
        return JSON.parse(l) as LogLine;
      } catch {
        return {};
      }
    });
}

/** The messages of a role's log, in order. */
export const logMessages = (text: string): string[] => logLines(text).map((l) => l.msg ?? '');

/** A logger that keeps what it writes, for a test to read what an adapter reported. */
export function memoryLogger(level: pino.Level = 'info'): { logger: pino.Logger; lines: () => LogLine[] } {
  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { logger: pino({ level }, sink), lines: () => logLines(text) };
}

/**
 * Messages a role sends to the process that started it (node IPC), when there is one: the
 * embedded `ackcrawl crawl` follows its scheduler this way.
 */
export type RoleIpcMessage =
  | { type: 'listening'; url: string }
  | { type: 'progress'; progress: Record<string, number> }
  | { type: 'done'; summary: Record<string, number> }
  /** Sent by a scheduler stopped before its crawl was done, once it is closed: its frontier's counters. */
  | { type: 'stopped'; stats: Record<string, number> }
  | { type: 'fatal'; code: string; message: string };

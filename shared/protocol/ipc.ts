/**
 * Messages a role sends to the process that started it (node IPC), when there is one: the
 * embedded `ackcrawl crawl` follows its scheduler this way.
 */
export type RoleIpcMessage =
  | { type: 'listening'; url: string }
  | { type: 'progress'; progress: Record<string, number> }
  | { type: 'done'; summary: Record<string, number> }
  | { type: 'fatal'; code: string; message: string };

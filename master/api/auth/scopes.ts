import type { TokenScope } from '../../../shared/ports/sql-store.js';

/** Each scope includes the ones below it: admin may do what operate may, operate what read may. */
const RANK: Record<TokenScope, number> = { read: 0, operate: 1, admin: 2 };

export function scopeAllows(held: readonly TokenScope[], needed: TokenScope): boolean {
  return held.some((scope) => RANK[scope] >= RANK[needed]);
}

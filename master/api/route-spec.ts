import type { Context } from 'koa';
import type { z } from 'zod';
import type { TokenRow, TokenScope } from '../../shared/ports/sql-store.js';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface ResponseSpec {
  description: string;
  /** The body's schema; none for 204. */
  schema?: z.ZodType;
  /** A body that is not JSON (a file the route streams): its media types. */
  mediaTypes?: readonly string[];
}

/** What a handler gets: its inputs already validated by the route's schemas. */
export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** The caller's token; null on open routes and on the agents' own routes. */
  caller: TokenRow | null;
  ctx: Context;
}

export interface RouteResult {
  status: number;
  body?: unknown;
}

/**
 * One route of the API, declared once: the router is built from it and so is the OpenAPI document,
 * from the same zod schemas that validate its path, query and body.
 */
export interface RouteSpec<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
> {
  method: Method;
  /** Below /api/v1, in the router's syntax (`/jobs/:id`). */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  /**
   * The scope a person's token needs; `agent`: the agent credential (routes host agents call,
   * docs/fleet.md); null: open (health, the OpenAPI document).
   */
  scope: TokenScope | 'agent' | null;
  params?: P;
  query?: Q;
  body?: B;
  /** Success answers by status. Error answers (400, 401, 403, 404, 413, 415, …) are added from the rest. */
  responses: Record<number, ResponseSpec>;
  /** Error answers particular to the route (409, 503), by status. */
  errors?: Record<number, string>;
  /** True when the route answers 404 for an unknown id. */
  lookup?: boolean;
  handle(input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>): Promise<RouteResult>;
}

/** Keeps a route's types while it is declared, and erases them for the table. */
export function route<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(
  spec: RouteSpec<P, Q, B>,
): RouteSpec {
  return spec as unknown as RouteSpec;
}

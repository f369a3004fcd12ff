/** The API client: the token, one request function, and errors that keep the API's code. */
const TOKEN_KEY = 'ackcrawl.token';
export const API = '/api/v1';

export interface Problem {
  field: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }

  /** A 400's problems (`details.problems`), field by field. */
  get problems(): Problem[] {
    const problems = this.details?.['problems'];
    return Array.isArray(problems) ? (problems as Problem[]) : [];
  }

  /** "CODE: message", as every error is shown. */
  override toString(): string {
    return `${this.code}: ${this.message}`;
  }
}

export function getToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY) ?? localStorage.getItem(TOKEN_KEY);
}

export function setToken(token: string, remember: boolean): void {
  sessionStorage.setItem(TOKEN_KEY, token);
  if (remember) localStorage.setItem(TOKEN_KEY, token);
  else localStorage.removeItem(TOKEN_KEY);
}

export function clearToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
  localStorage.removeItem(TOKEN_KEY);
}

let onUnauthorized: () => void = () => undefined;

/** What happens when the API refuses the token (the login form comes back). */
export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler;
}

export function authHeaders(token = getToken()): Record<string, string> {
  return token === null ? {} : { authorization: `Bearer ${token}` };
}

async function toError(res: Response): Promise<ApiError> {
  let body: unknown = null;
  try {
    body = await res.json();
  } catch {
    // not JSON: the status says it
  }
  const error = (
    body as {
      error?: { code?: string; message?: string; details?: Record<string, unknown>; problems?: unknown };
    }
  )?.error;
  // A 400's problems are in `details.problems`; some answers carry them beside the message.
  const details =
    error?.details ?? (error?.problems === undefined ? undefined : { problems: error.problems });
  return new ApiError(
    res.status,
    error?.code ?? `HTTP_${res.status}`,
    error?.message ?? (res.statusText || 'request failed'),
    details,
  );
}

export interface RequestOptions {
  body?: unknown;
  /** Check a token without treating a 401 as "log out". */
  token?: string;
}

/** One call of the API; throws ApiError (code NETWORK when the master cannot be reached). */
export async function request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...authHeaders(options.token ?? getToken()),
  };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(`${API}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  } catch (err) {
    throw new ApiError(0, 'NETWORK', `the master did not answer (${(err as Error).message})`);
  }
  if (!res.ok) {
    const error = await toError(res);
    if (res.status === 401 && options.token === undefined) onUnauthorized();
    throw error;
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

export const get = <T>(path: string): Promise<T> => request<T>('GET', path);

/**
 * The first `count` items of a paged list (`?limit=&after=`), read `pageSize` at a time, and
 * whether there are more.
 */
export async function getFirst<T>(
  path: string,
  count: number,
  pageSize: number,
): Promise<{ items: T[]; more: boolean }> {
  const items: T[] = [];
  let after: string | null = null;
  const sep = path.includes('?') ? '&' : '?';
  do {
    const query: string = `limit=${pageSize}${after === null ? '' : `&after=${enc(after)}`}`;
    const page: { items: T[]; next: string | null } = await get(`${path}${sep}${query}`);
    items.push(...page.items);
    after = page.next;
  } while (after !== null && items.length < count);
  return { items: items.slice(0, count), more: after !== null || items.length > count };
}

/** Saves what a GET answers as a file named `filename` (the token goes in the header, as for every call). */
export async function download(path: string, filename: string): Promise<void> {
  let res: Response;
  try {
    res = await fetch(`${API}${path}`, { headers: authHeaders() });
  } catch (err) {
    throw new ApiError(0, 'NETWORK', `the master did not answer (${(err as Error).message})`);
  }
  if (!res.ok) {
    const error = await toError(res);
    if (res.status === 401) onUnauthorized();
    throw error;
  }
  const url = URL.createObjectURL(await res.blob());
  const link = Object.assign(document.createElement('a'), { href: url, download: filename });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
export const post = <T>(path: string, body?: unknown): Promise<T> => request<T>('POST', path, { body });
export const put = <T>(path: string, body?: unknown): Promise<T> => request<T>('PUT', path, { body });
export const patch = <T>(path: string, body?: unknown): Promise<T> => request<T>('PATCH', path, { body });
export const del = <T>(path: string): Promise<T> => request<T>('DELETE', path);

export function errorText(err: unknown): string {
  return err instanceof ApiError
    ? err.toString()
    : `ERROR: ${err instanceof Error ? err.message : String(err)}`;
}

/**
 * Whether an endpoint is missing on this master (an older one, or one without the part behind it),
 * or no scheduler can answer it now (503 NO_SCHEDULER). A 503 for a store that is away
 * (SQL_UNAVAILABLE) is an error to show, not a part that is missing.
 */
export function isUnavailable(err: unknown): boolean {
  return (
    err instanceof ApiError &&
    (err.status === 404 || err.status === 501 || (err.status === 503 && err.code === 'NO_SCHEDULER'))
  );
}

export const enc = encodeURIComponent;

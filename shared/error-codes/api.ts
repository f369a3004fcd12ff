/**
 * Codes an HTTP API answers with, in `{ error: { code, message } }`, each with its status. The
 * scheduler's crawl API, its crawler endpoint's upgrade and the master's management API use them;
 * an AppError with one of these codes and no status of its own is answered with the status given
 * here.
 */
export interface ApiErrorSpec {
  status: number;
  /** Sending the same request again later can succeed. */
  retriable: boolean;
  meaning: string;
}

export const API_ERROR_CODES = {
  BAD_REQUEST: { status: 400, retriable: false, meaning: 'the request is not valid HTTP/1.1' },
  BAD_JSON: { status: 400, retriable: false, meaning: 'the request body is not JSON' },
  BODY_ABORTED: { status: 400, retriable: true, meaning: 'the request body did not arrive whole' },
  INVALID_CRAWL: {
    status: 400,
    retriable: false,
    meaning: 'the crawl request does not validate; the message lists every problem by field',
  },
  INVALID_REQUEST: {
    status: 400,
    retriable: false,
    meaning: "a master API request's path, query or body does not validate; `problems` lists each field",
  },
  INVALID_SCHEDULE: {
    status: 400,
    retriable: false,
    meaning:
      'a schedule whose cron expression node-cron does not read, or whose time zone is not an IANA zone; `problems` lists each',
  },
  MISSING_URL: { status: 400, retriable: false, meaning: 'GET /why needs ?url=' },
  RUN_NOT_HOSTED: {
    status: 404,
    retriable: false,
    meaning: 'no run of that id is hosted by this scheduler (start it first; GET /runs lists them)',
  },
  URL_INVALID: { status: 400, retriable: false, meaning: 'the URL cannot be parsed' },
  URL_UNSUPPORTED_SCHEME: { status: 400, retriable: false, meaning: 'the URL is not http or https' },
  URL_TOO_LONG: { status: 400, retriable: false, meaning: 'the URL is longer than the limit' },
  UNAUTHORIZED: {
    status: 401,
    retriable: false,
    meaning: 'no valid bearer token (Authorization: Bearer <token>), on an API call or a crawler upgrade',
  },
  HOST_NOT_ALLOWED: {
    status: 403,
    retriable: false,
    meaning: 'the Host header is not one this listener answers (DNS-rebinding guard; ACKCRAWL_ALLOWED_HOSTS)',
  },
  CROSS_ORIGIN: {
    status: 403,
    retriable: false,
    meaning: 'a request made by a web page of another origin (Origin, Sec-Fetch-Site); browsers are refused',
  },
  FORBIDDEN: {
    status: 403,
    retriable: false,
    meaning:
      'the credentials are valid but not for this (a master API token without the scope the route needs)',
  },
  NOT_FOUND: { status: 404, retriable: false, meaning: 'no such route' },
  JOB_NOT_FOUND: { status: 404, retriable: false, meaning: 'no job with this id (or it was deleted)' },
  RUN_NOT_FOUND: { status: 404, retriable: false, meaning: 'no run with this id' },
  FAILURE_NOT_FOUND: { status: 404, retriable: false, meaning: 'no failure with this id in this run' },
  ALERT_RULE_NOT_FOUND: { status: 404, retriable: false, meaning: 'no alert rule with this id' },
  ALERT_NOT_FOUND: { status: 404, retriable: false, meaning: 'no alert with this id' },
  WEBHOOK_NOT_FOUND: { status: 404, retriable: false, meaning: 'no webhook endpoint with this id' },
  ALERT_RULE_NAME_TAKEN: {
    status: 409,
    retriable: false,
    meaning: 'another alert rule has this name; choose another',
  },
  WEBHOOK_URL_REFUSED: {
    status: 400,
    retriable: false,
    meaning:
      'the webhook URL is not http(s), carries credentials, or names a private or loopback address the master may not send to (ACKCRAWL_WEBHOOK_ALLOW_PRIVATE)',
  },
  SCHEDULE_NOT_FOUND: { status: 404, retriable: false, meaning: 'the job has no schedule (PUT one first)' },
  TOKEN_NOT_FOUND: {
    status: 404,
    retriable: false,
    meaning: 'no API token with this id that is not revoked',
  },
  AGENT_NOT_FOUND: {
    status: 404,
    retriable: false,
    meaning:
      'no agent with this id has registered with the master (an agent that hears this registers again)',
  },
  AGENT_SLOT_NOT_FOUND: {
    status: 404,
    retriable: false,
    meaning: "the agent has no process slot of this number (slots are 0 to the agent's count − 1)",
  },
  AGENT_ALIVE: {
    status: 409,
    retriable: false,
    meaning:
      'the agent is online or draining: only a lost or stopped agent can be forgotten (drain and stop it first)',
  },
  METHOD_NOT_ALLOWED: { status: 405, retriable: false, meaning: 'the route exists for other methods' },
  REQUEST_TIMEOUT: {
    status: 408,
    retriable: true,
    meaning: 'the request head or body did not arrive in time',
  },
  JOB_NAME_TAKEN: { status: 409, retriable: false, meaning: 'another job has this name' },
  JOB_HAS_ACTIVE_RUNS: {
    status: 409,
    retriable: true,
    meaning: 'a job with a queued, running or paused run cannot be deleted; cancel its runs first',
  },
  RUN_STATE_CONFLICT: {
    status: 409,
    retriable: false,
    meaning:
      "the run's state does not allow this change (resume a cancelled run, say); the message says its state",
  },
  FAILURE_NOT_FINAL: {
    status: 409,
    retriable: false,
    meaning:
      'only a final failure can be sent back to its run; this one was a retry the run makes itself (GET …/failures?final=true lists the final ones)',
  },
  SQL_BAD_CURSOR: {
    status: 400,
    retriable: false,
    meaning: 'a page cursor (`after`) that is not one this list handed out',
  },
  SQL_INVALID_VALUE: {
    status: 400,
    retriable: false,
    meaning:
      'a value the SQL store cannot hold (an id, name or code too long, an unknown run state or scope)',
  },
  SQL_CONFLICT: {
    status: 409,
    retriable: false,
    meaning: 'a row with that id, name or token hash exists already; `details.field` names which',
  },
  REQUEST_TOO_LARGE: { status: 413, retriable: false, meaning: 'the request body is over the limit (1 MiB)' },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    retriable: false,
    meaning: 'a request body that is not Content-Type: application/json',
  },
  TOO_MANY_CONNECTIONS_FROM_ADDRESS: {
    status: 429,
    retriable: true,
    meaning: 'this address holds as many connections as it may; try again after Retry-After',
  },
  HEADERS_TOO_LARGE: { status: 431, retriable: false, meaning: 'the request head is over 16 KiB' },
  INTERNAL: {
    status: 500,
    retriable: true,
    meaning: 'the server failed to answer; its log says why (the answer names no internals)',
  },
  NO_SCHEDULER: {
    status: 503,
    retriable: true,
    meaning:
      "the master reaches no scheduler to ask (why not yet?, a run's hosts); ACKCRAWL_SCHEDULER_APIS names them",
  },
  STORE_UNAVAILABLE: {
    status: 503,
    retriable: true,
    meaning: "the master's SQL store does not answer (GET /api/v1/health)",
  },
  TOO_MANY_CONNECTIONS: {
    status: 503,
    retriable: true,
    meaning: 'the listener holds as many connections as it may in all; try again after Retry-After',
  },
} as const satisfies Record<string, ApiErrorSpec>;

export type ApiErrorCode = keyof typeof API_ERROR_CODES;

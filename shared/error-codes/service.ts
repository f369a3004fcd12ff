/**
 * Codes of failures inside ackcrawl's own roles and the services they use: the frontier, the page
 * sink, the blob store, configuration. They reach logs, exit messages and (as RECORD_UNWRITABLE's
 * reason) records. `retriable`: the operation can succeed if tried again (the settler and the
 * roles do, with backoff); not retriable: something must be changed first.
 */
export interface ServiceErrorSpec {
  retriable: boolean;
  meaning: string;
}

export const SERVICE_ERROR_CODES = {
  CONFIG_INVALID: {
    retriable: false,
    meaning: "a role's configuration failed validation; every problem is listed",
  },
  CRAWL_OPTIONS_INVALID: {
    retriable: false,
    meaning: 'a command-line option of `ackcrawl crawl` is invalid',
  },
  TLS_UNTRUSTED: {
    retriable: false,
    meaning:
      "a TLS peer's certificate does not verify (unknown CA, wrong host name, expired); give its CA in ACKCRAWL_TLS_CA (docs/tls.md)",
  },
  CHROMIUM_MISSING: { retriable: false, meaning: 'rendering was asked for and no Chromium is installed' },
  BAD_HOST_RULE: { retriable: false, meaning: 'a --host-rule that cannot be parsed' },
  BAD_HEADER: {
    retriable: false,
    meaning:
      'a request header (--header, headers as text) that cannot be read, or that the crawler sets itself',
  },
  BAD_COOKIE: { retriable: false, meaning: 'a cookie (--cookie, cookies as text) that cannot be read' },
  SCOPE_NO_SEEDS: { retriable: false, meaning: 'a scope needs at least one seed' },
  SCOPE_MODE_INVALID: { retriable: false, meaning: 'a scope other than host, domain or any' },
  URL_PATTERN_INVALID: {
    retriable: false,
    meaning: 'an includeUrls or excludeUrls pattern that RE2 does not take (its message says why)',
  },
  SCHEDULER_EXITED: {
    retriable: true,
    meaning: 'the embedded scheduler stopped before the crawl completed; run it again to resume',
  },
  SCHEDULER_FAILED: { retriable: true, meaning: 'the scheduler failed at start; its message says why' },
  CRAWLERS_FAILED: {
    retriable: true,
    meaning: 'an embedded crawl could not take its crawler processes in hand at start; its message says why',
  },
  SCHEDULER_UNREACHABLE: {
    retriable: true,
    meaning: "crawl --cluster or why cannot reach the scheduler's API",
  },
  MASTER_UNREACHABLE: {
    retriable: true,
    meaning: "ackcrawl jobs, or an agent, cannot reach the master's API (ACKCRAWL_MASTER_URL)",
  },
  AGENT_REFUSED: {
    retriable: true,
    meaning:
      "the master refused an agent's register or heartbeat (a wrong agent credential, say); the agent keeps its processes and tries again",
  },
  AGENT_ID_IN_USE: {
    retriable: false,
    meaning:
      'another live agent runs with the same id on the same data dir; give each agent of a host its own ACKCRAWL_AGENT_ID (or ACKCRAWL_DATA_DIR)',
  },
  MASTER_REFUSED: {
    retriable: false,
    meaning: 'the master answered ackcrawl jobs with an error; the message gives its code and problems',
  },
  NO_MASTER_TOKEN: {
    retriable: false,
    meaning: 'ackcrawl jobs found no token: set ACKCRAWL_TOKEN, or ACKCRAWL_DATA_DIR to the master data dir',
  },
  WHY_NO_SOURCE: { retriable: false, meaning: 'ackcrawl why needs --out or --scheduler' },
  WHY_NO_CRAWL: { retriable: false, meaning: 'no crawl found where ackcrawl why looked' },
  CLI_ARGUMENT_INVALID: {
    retriable: false,
    meaning: 'an argument of ackcrawl fleet or status is not what it takes (a count, a slot, a limit)',
  },
  STATUS_NO_CRAWL: {
    retriable: false,
    meaning: 'ackcrawl status --out found no embedded crawl there (no scheduler running, no frontier.sqlite)',
  },
  RUN_CONTROL_UNAVAILABLE: {
    retriable: true,
    meaning:
      "the run-control broker cannot be reached or did not confirm a command (the command only wakes schedulers; SQL keeps the run's state)",
  },
  RUN_CONTROL_CLOSED: { retriable: false, meaning: 'run control was used after close()' },
  FRONTIER_UNAVAILABLE: { retriable: true, meaning: 'the broker cannot be reached, or its channel closed' },
  FRONTIER_TOPOLOGY: {
    retriable: false,
    meaning: 'the queues exist with other arguments than this version declares',
  },
  FRONTIER_UNROUTABLE: {
    retriable: true,
    meaning: 'the broker returned a message no queue took (a queue was deleted)',
  },
  FRONTIER_CLOSED: { retriable: false, meaning: 'the frontier was used after close()' },
  FRONTIER_SCHEMA: { retriable: false, meaning: 'the frontier file is of another kind or a newer version' },
  FRONTIER_CORRUPT: { retriable: false, meaning: 'the SQLite frontier file is damaged' },
  FRONTIER_IO: { retriable: true, meaning: 'the SQLite frontier could not read or write its file' },
  FRONTIER_ACCESS: {
    retriable: false,
    meaning: 'the SQLite frontier file cannot be opened (permissions, a missing or wrong path)',
  },
  FRONTIER_DISK_FULL: {
    retriable: true,
    meaning: "the frontier's disk is full; the crawl waits for space (the message names the path)",
  },
  FRONTIER_BAD_TASK: { retriable: false, meaning: 'a task to push is malformed (a bug in the caller)' },
  FRONTIER_BAD_SETTLEMENT: { retriable: false, meaning: 'a settlement is malformed (a bug in the caller)' },
  FRONTIER_BAD_LEASE_MS: { retriable: false, meaning: 'a lease time out of range' },
  FRONTIER_BAD_BUCKETS: {
    retriable: false,
    meaning: 'retry delay buckets that are not positive whole milliseconds',
  },
  FRONTIER_BAD_PREFETCH: { retriable: false, meaning: 'a prefetch out of range' },
  FRONTIER_BAD_SHARDS: { retriable: false, meaning: 'a shard count out of range (ACKCRAWL_SHARDS)' },
  FRONTIER_BAD_MEMBER_ID: { retriable: false, meaning: 'a scheduler id a sharded prefix cannot use' },
  FRONTIER_BAD_HEARTBEAT: { retriable: false, meaning: 'a shard heartbeat interval out of range' },
  FRONTIER_BAD_PREFIX: {
    retriable: false,
    meaning: 'a queue prefix with characters RabbitMQ names cannot hold',
  },
  FRONTIER_BAD_URL: {
    retriable: false,
    meaning: 'no broker URL, or one that is not amqp:// or amqps:// (a list names the nodes of one cluster)',
  },
  FRONTIER_BAD_CACHE_SIZE: { retriable: false, meaning: 'a ledger cache size out of range' },
  FRONTIER_BAD_RUN_ID: {
    retriable: false,
    meaning: 'a run id that is not 1-64 of [A-Za-z0-9_-] (it names broker queues)',
  },
  FRONTIER_RUN_CANCELLED: {
    retriable: false,
    meaning: 'a cancelled run cannot be paused or resumed',
  },
  FRONTIER_OLD_LAYOUT: {
    retriable: false,
    meaning:
      'the broker or ledger holds a frontier of the layout before runs and quorum queues; the message names what to remove',
  },
  SINK_UNAVAILABLE: { retriable: true, meaning: 'Kafka cannot be reached or did not answer in time' },
  SINK_TIMEOUT: { retriable: true, meaning: 'Kafka did not confirm a send within its deadline' },
  SINK_KAFKA: { retriable: true, meaning: 'any other Kafka write failure that may pass' },
  SINK_KAFKA_REJECTED: {
    retriable: false,
    meaning:
      'Kafka refused a write with an error it calls final; the settler keeps the batch and tries again with backoff',
  },
  SINK_AUTH: {
    retriable: false,
    meaning:
      'Kafka refused this client (ACLs, SASL); the crawl waits until it is fixed, retrying with backoff',
  },
  SINK_PRODUCER_STATE: {
    retriable: true,
    meaning: "Kafka lost this producer's sequence; a new producer takes over",
  },
  SINK_RECORD_TOO_LARGE: {
    retriable: false,
    meaning: 'a record too large for the sink even after the claim check',
  },
  SINK_IO: { retriable: true, meaning: 'the file sink could not write its segment' },
  SINK_DISK_FULL: {
    retriable: true,
    meaning: 'the output disk is full; the crawl waits for space (the message names the path)',
  },
  SINK_CLOSED: { retriable: false, meaning: 'the page sink was used after close()' },
  CLAIM_CHECK_MISMATCH: {
    retriable: false,
    meaning: 'a claim-checked blob does not have the hash its record names',
  },
  CLAIM_CHECK_ELSEWHERE: {
    retriable: false,
    meaning: 'a record points at a blob store other than the one configured',
  },
  EXTRACT_BAD_RECORD: {
    retriable: false,
    meaning: 'the cleaner read a record that is not JSON or not a page record; it is logged and skipped',
  },
  EXTRACT_BODY_MISSING: {
    retriable: false,
    meaning:
      "a record's claim-checked body is gone from the blob store or does not match its hash; logged and skipped",
  },
  EXTRACT_BINARY_BODY: {
    retriable: false,
    meaning: 'a page record whose body is bytes (base64), not decoded text; logged and skipped',
  },
  EXTRACT_NOT_HTML: {
    retriable: false,
    meaning: 'a page record whose body is text but not HTML (JSON, plain text, XML); logged and skipped',
  },
  EXTRACT_TOO_LARGE: {
    retriable: false,
    meaning: 'a page longer than the cleaner takes (ACKCRAWL_EXTRACT_MAX_HTML_CHARS); logged and skipped',
  },
  EXTRACT_FILE_UNREADABLE: {
    retriable: false,
    meaning: 'ackcrawl extract-file cannot read the file it was given',
  },
  EXTRACT_FAILED: {
    retriable: false,
    meaning:
      'the extractor gave up on a page (more elements than it parses, or a DOM it cannot build); logged and skipped',
  },
  BLOB_STORE_UNAVAILABLE: { retriable: true, meaning: 'S3/MinIO cannot be reached' },
  BLOB_STORE_TIMEOUT: { retriable: true, meaning: 'S3/MinIO did not answer in time' },
  BLOB_STORE_AUTH: {
    retriable: false,
    meaning: 'S3/MinIO refused the credentials; the crawl waits until they are fixed, retrying with backoff',
  },
  BLOB_STORE_NO_BUCKET: { retriable: true, meaning: 'the bucket does not exist and could not be created' },
  BLOB_STORE_CONFIG: { retriable: false, meaning: 'the S3 endpoint setting is not usable' },
  BLOB_STORE_IO: { retriable: true, meaning: 'any other S3/MinIO failure' },
  BLOB_STORE_CLOSED: { retriable: false, meaning: 'the blob store was used after close()' },
  BLOB_IO: { retriable: true, meaning: 'the local blob directory could not be read or written' },
  BLOB_ACCESS: {
    retriable: false,
    meaning: 'the local blob directory refuses access (permissions, read-only disk, a file in the way)',
  },
  BLOB_NOT_FOUND: { retriable: false, meaning: 'no blob under that key' },
  BLOB_BAD_KEY: { retriable: false, meaning: "a blob key outside the store's layout" },
  ARCHIVER_CLOSED: { retriable: false, meaning: 'the archiver was used after close()' },
  ARCHIVE_EMPTY_BATCH: {
    retriable: false,
    meaning: 'an archive batch with no records (a bug in the caller)',
  },
  ARCHIVE_NOT_ASSIGNED: {
    retriable: false,
    meaning: 'a partition is no longer assigned to this archiver (a rebalance)',
  },
  SQL_UNAVAILABLE: {
    retriable: true,
    meaning:
      'the SQL database cannot be reached or the connection was lost (or the SQLite file cannot be read or written); writes wait and retry',
  },
  SQL_BUSY: {
    retriable: true,
    meaning: 'the SQL database gave up on a lock (deadlock, serialization failure, lock timeout); try again',
  },
  SQL_AUTH: {
    retriable: false,
    meaning: 'the SQL database refused the login, or the database named in the URL does not exist',
  },
  SQL_URL_INVALID: {
    retriable: false,
    meaning: 'ACKCRAWL_SQL_URL is not a sqlite:, postgres:// or mssql:// URL this build can use',
  },
  SQL_MIGRATION_FAILED: {
    retriable: false,
    meaning: 'a schema migration failed and was rolled back; the message names its version',
  },
  SQL_SCHEMA_NEWER: {
    retriable: false,
    meaning: 'the database has a schema version newer than this build knows; run a newer build',
  },
  SQL_QUERY_FAILED: {
    retriable: false,
    meaning: 'the SQL database rejected a statement for another reason (a bug); the log has its driver code',
  },
  SQL_CORRUPT: {
    retriable: false,
    meaning: 'the SQLite store file is damaged or not a database; restore it from a backup or move it away',
  },
  SQL_CLOSED: { retriable: false, meaning: 'the SQL store was used after close()' },
} as const satisfies Record<string, ServiceErrorSpec>;

export type ServiceErrorCode = keyof typeof SERVICE_ERROR_CODES;

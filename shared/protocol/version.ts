/**
 * The scheduler⇄crawler WebSocket protocol version; a hello with another version is refused.
 * 3: the token moved from the hello to the upgrade request (`Authorization: Bearer …`); crawlers say
 *    which tasks they are `working` on, hand back unstarted ones (`release`) and drain on request;
 *    tasks carry `lastErrorCode`.
 * 4: many runs per scheduler: tasks carry `runId`, `jobId` and `captureId`; a `run` message gives
 *    the fetch settings of one run (the welcome's are the default run's).
 * 5: recrawls: tasks may carry the `validators` of the URL's last capture, outcomes may be
 *    `not-modified` (a 304 to them), and `ok` outcomes carry the response's `validators`.
 */
export const PROTOCOL_VERSION = 5;

/**
 * The scheduler⇄crawler WebSocket protocol version; a hello with another version is refused.
 * 3: the token moved from the hello to the upgrade request (`Authorization: Bearer …`); crawlers say
 *    which tasks they are `working` on, hand back unstarted ones (`release`) and drain on request;
 *    tasks carry `lastErrorCode`.
 */
export const PROTOCOL_VERSION = 3;

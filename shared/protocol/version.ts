/**
 * The scheduler⇄crawler WebSocket protocol version; a hello with another version is refused.
 * 3: the token moved from the hello to the upgrade request (`Authorization: Bearer …`).
 */
export const PROTOCOL_VERSION = 3;

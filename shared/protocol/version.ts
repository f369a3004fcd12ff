/** The scheduler⇄crawler WebSocket protocol version; a hello with another version is refused. */
export const PROTOCOL_VERSION = 2;

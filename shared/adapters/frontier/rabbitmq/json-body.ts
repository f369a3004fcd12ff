/** A message body's JSON object, or null when it is not valid JSON or not an object. */
export function jsonObjectOf(content: Buffer): Record<string, unknown> | null {
  let value: unknown;
  try {
    value = JSON.parse(content.toString('utf8'));
  } catch {
    return null;
  }
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
}

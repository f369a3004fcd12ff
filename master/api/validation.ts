import type { z } from 'zod';
import { InvalidInputError } from '../../shared/errors.js';
import type { Problem } from '../../shared/http/error-responses.js';

export type InputPart = 'path' | 'query' | 'body';

/** Every problem zod found, field by field; query and path fields are named `query.x`, `path.x`. */
export function problemsOf(error: z.ZodError, part: InputPart): Problem[] {
  const name = (path: readonly PropertyKey[]): string => {
    const dotted = path.map(String).join('.');
    if (part === 'body') return dotted || 'body';
    return dotted ? `${part}.${dotted}` : part;
  };
  return error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ field: name([...issue.path, key]), message: 'unknown field' }))
      : [{ field: name(issue.path), message: issue.message }],
  );
}

export function invalidRequest(problems: Problem[]): InvalidInputError {
  const summary = problems
    .slice(0, 5)
    .map((p) => `${p.field}: ${p.message}`)
    .join('; ');
  const more = problems.length > 5 ? ` (and ${problems.length - 5} more)` : '';
  return new InvalidInputError('INVALID_REQUEST', `the request does not validate: ${summary}${more}`, {
    details: { problems },
  });
}

/** `value` parsed by `schema`, or a 400 INVALID_REQUEST listing every problem. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, part: InputPart): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw invalidRequest(problemsOf(parsed.error, part));
}

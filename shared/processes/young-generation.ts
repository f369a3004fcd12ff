import { setFlagsFromString } from 'node:v8';

/**
 * Keeps a process's young generation at its start size (1 MiB semi-spaces): for a process whose
 * work is to wait, called before its modules load (ES modules load their whole static graph before
 * any of them runs, so the caller loads the rest with a dynamic import after this).
 *
 * Loading modules grows V8's young generation: the crawl CLI's to 16 MiB, about 10 MB of RSS it
 * then needs no more, since it only starts the roles and follows their progress. V8 gives that
 * back only in a full collection once its record of the last five seconds shows little
 * allocation, 6-8 s into a crawl (`idle-heap.ts` runs one; the agent still does), and the whole
 * tree's peak memory comes before that, while the roles start. The young generation's size cannot be set once a process runs, but
 * its growth factor can: at 1 it does not grow. Loading the CLI's modules then takes about 40 ms
 * more (more young collections), and its start-up RSS is 5-6 MB lower.
 *
 * A process that allocates much must not run so: a young generation of 2 MiB made a loop that
 * keeps 20,000 small objects alive 5-6 times slower. Commands that do real work call
 * {@link letYoungGenerationGrow} before they start it.
 */
export const V8_DEFAULT_GROWTH_FACTOR = 2;

/** From now on V8 does not grow the young generation. */
export function holdYoungGeneration(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
}

/** V8's own growth of the young generation again (its default factor). */
export function letYoungGenerationGrow(): void {
  setFlagsFromString(`--semi-space-growth-factor=${V8_DEFAULT_GROWTH_FACTOR}`);
}

/**
 * How ackcrawl starts the Node processes of its roles, measured with `npm run bench` (peak RSS of
 * the whole process tree, CPU seconds) on 20,000 pages, 2 crawler processes; docs/capacity.md has
 * the figures. The tree peaked at 515 MB before these three, at 389-404 MB with them.
 * - `--heap-growing-percent=50`: after a full collection the old generation may grow by half of
 *   what survived before the next one, instead of by V8's own factor (up to 4x when collections
 *   are fast next to allocation). A crawler's live heap is about 25 MB and stays so; with V8's
 *   factor its old generation swung between 25 and 80 MB and each crawler peaked at 155-165 MB
 *   RSS, with this flag at 110-116 MB. The scheduler: 136-140 MB before, 120 after. No CPU cost
 *   the bench could tell from its noise.
 * - `--max-semi-space-size`: semi-spaces of 8 MiB (crawlers) and 4 MiB (scheduler) instead of
 *   V8's 16 (the young generation is two of them). Crawlers allocate fast and briefly (bodies,
 *   records, frames): at 4 MiB they spent about a quarter more CPU per page. V8 rounds the size up
 *   to a power of two, so the 6 given here until 2026-12-04 was 8 already (a young generation of
 *   16 MiB, read from `v8.getHeapSpaceStatistics()`); the figure now says what it is. The
 *   scheduler at 4 MiB: 8 MB less, no CPU that showed.
 * - `MALLOC_ARENA_MAX=2` (unless set already): glibc gives each thread that allocates an arena
 *   of its own; V8's and libuv's threads leave them partly used. About 5 MB less per process.
 * - `MALLOC_MMAP_THRESHOLD_=1048576` (unless set already): glibc's own threshold moves up to the
 *   largest block it has freed (up to 32 MiB), and it then keeps up to twice that free at the top
 *   of its heap before giving any back; the scheduler's record batches are megabytes, and its heap
 *   stood at 34 MB. Fixed at 1 MiB, blocks that large are mapped and unmapped, smaller ones come
 *   from the heap as before. Tree 386-391 MB before, 377-380 after (20,000 pages; the scheduler
 *   and each crawler about 3-5 MB smaller); the first 20 s of a million pages 397-403 before,
 *   384-385 after; CPU within the noise (+1 %). At 128 KiB it was as small but cost 5 % more CPU.
 */
export interface RoleHeap {
  /** `--max-semi-space-size`: MiB of one of the young generation's two semi-spaces, at most. */
  semiSpaceMiB: number;
  /** `--heap-growing-percent`: how much the old generation may grow past what survived. */
  heapGrowingPercent: number;
}

export const CRAWLER_HEAP: RoleHeap = { semiSpaceMiB: 8, heapGrowingPercent: 50 };
export const SCHEDULER_HEAP: RoleHeap = { semiSpaceMiB: 4, heapGrowingPercent: 50 };

/**
 * The node flags that give a process ackcrawl starts its role's heap; a process the user started
 * (`ackcrawl scheduler`) takes them from inside (running-heap.ts).
 */
export function heapFlags(heap: RoleHeap): string[] {
  return [`--max-semi-space-size=${heap.semiSpaceMiB}`, `--heap-growing-percent=${heap.heapGrowingPercent}`];
}

export const CRAWLER_NODE_FLAGS: readonly string[] = heapFlags(CRAWLER_HEAP);
export const SCHEDULER_NODE_FLAGS: readonly string[] = heapFlags(SCHEDULER_HEAP);

/** glibc's tunables for a role, each applied unless the environment already sets it. */
const MALLOC_DEFAULTS: Readonly<Record<string, string>> = {
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: String(1024 * 1024),
};

/** The environment of a role's process: `env`, with glibc's arena limit and mmap threshold unless it sets them. */
export function roleProcessEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const added = Object.entries(MALLOC_DEFAULTS).filter(([name]) => env[name] === undefined);
  return added.length === 0 ? env : { ...env, ...Object.fromEntries(added) };
}

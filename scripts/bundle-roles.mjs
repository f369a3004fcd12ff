// One file per process role that ackcrawl starts often (scheduler, crawler), bundled from the
// compiled dist/ into dist/bundle/<same path>: a process then loads one file instead of some 300,
// and starts in about half the CPU time. Part of `npm run build`, after tsc;
// shared/processes/process-script.ts starts a bundle only when it is newer than its entry point.
// Native and optional packages stay outside (better-sqlite3, bufferutil, @node-rs/crc32), and so do the
// headless browser's driver (playwright-core), loaded only by render-capable crawlers, and RE2's
// WebAssembly build (re2-wasm reads its .wasm beside its own file), loaded only for URL patterns.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';

const ROLES = ['scheduler/main.js', 'client/crawler/main.js'];
const EXTERNAL = [
  'better-sqlite3',
  'bufferutil',
  'utf-8-validate',
  'playwright-core',
  '@node-rs/crc32',
  're2-wasm',
];
// Bundled CommonJS packages call require() for Node's own modules: ESM has none, so give it one.
const BANNER =
  "import { createRequire as __ackcrawlRequire } from 'node:module'; const require = __ackcrawlRequire(import.meta.url);";

rmSync('dist/bundle', { recursive: true, force: true });
for (const entry of ROLES) {
  const outdir = `dist/bundle/${entry.slice(0, entry.lastIndexOf('/'))}`;
  await build({
    entryPoints: [`dist/${entry}`],
    outdir,
    bundle: true,
    // Backends and the renderer are imported when configured: they stay chunks of their own.
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: EXTERNAL,
    banner: { js: BANNER },
    sourcemap: true,
    logLevel: 'warning',
  });
}

// Loaded with `node --import` (NODE_OPTIONS) into every process of a test crawl: see loopback-guard.ts.
import { installLoopbackGuard } from './loopback-guard.js';

installLoopbackGuard();

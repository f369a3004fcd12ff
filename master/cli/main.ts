#!/usr/bin/env node
// The `ackcrawl` command. Its young generation is held small before the program's modules load,
// and the commands that do real work let it grow again (shared/processes/young-generation.ts).
import { holdYoungGeneration } from '../../shared/processes/young-generation.js';

holdYoungGeneration();
await import('./program.js');

import { createLocalRunControl } from '../../shared/adapters/run-control/local-run-control.js';
import { silentLogger } from '../../shared/logger.js';
import { runControlContract } from './run-control.contract.js';

// One process: every publisher and subscriber holds the same in-process channel.
runControlContract('in-process', async () => {
  const control = createLocalRunControl(silentLogger());
  return { open: async () => control, cleanup: () => control.close() };
});

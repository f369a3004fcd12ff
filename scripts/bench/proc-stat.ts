// The benchmark reads processes the way the agent does: one reader, in shared/os.
export * from '../../shared/os/proc-stat.js';

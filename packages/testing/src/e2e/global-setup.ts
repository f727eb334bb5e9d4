import { stopEngine } from '../containers/engine.js';

/**
 * vitest globalSetup of the e2e projects: when the run ends, the Docker engine opkit started for
 * it (to run the kind mode) is stopped, unless another process (the test driver, another suite)
 * still uses it. An engine opkit did not start is never touched.
 */
export default function setup(): () => Promise<void> {
  return () => stopEngine();
}

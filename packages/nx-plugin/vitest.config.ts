import { projectConfig } from '../../tools/vitest/config.js';

// The workspace test generates an operator into a copy of the workspace and runs its targets there.
export default projectConfig(import.meta.dirname, { testTimeout: 40 * 60_000 });

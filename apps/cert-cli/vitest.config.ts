import { projectConfig } from '../../tools/vitest/config.js';

export default projectConfig(import.meta.dirname, { testTimeout: 180_000 });

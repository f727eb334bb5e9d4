import { projectConfig } from '../../tools/vitest/config.js';

export default projectConfig(import.meta.dirname, { testTimeout: 120_000, include: ['src/**/*.test.ts', 'examples/**/*.test.ts'] });

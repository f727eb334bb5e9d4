import { e2eGlobalSetup, projectConfig } from '../../tools/vitest/config.js';

// One spec file per operator, its steps in order: install, use, restart, upgrade, uninstall.
export default projectConfig(import.meta.dirname, {
  testTimeout: 300_000,
  hookTimeout: 30 * 60_000,
  include: ['src/**/*.e2e.ts'],
  globalSetup: [e2eGlobalSetup],
});

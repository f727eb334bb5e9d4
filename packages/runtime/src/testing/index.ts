export { testManager, scrape, metricValue } from './harness.js';
export { captureLogger, type CapturedLine } from './log-capture.js';

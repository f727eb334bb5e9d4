export { testManager, recordingManager, scrape, metricSeries, metricValue } from './harness.js';
export { captureLogger, type CapturedLine } from './log-capture.js';

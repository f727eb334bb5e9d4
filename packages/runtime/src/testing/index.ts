export { testManager, recordingManager, scrape, metricSeries, metricValue, localWebhooks } from './harness.js';
export { captureLogger, type CapturedLine } from './log-capture.js';

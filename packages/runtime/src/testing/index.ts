export { testManager, recordingManager, scrape, metricSeries, metricValue, localWebhooks } from './harness.js';
export { captureLogger, type CapturedLine } from './log-capture.js';
export { conversionRoundTrips, type LossyRoundTrip } from '../webhook/conversion.js';
export { FakeClock } from '../clock/clock.js';
export { untilAuthorizerSays, type Permission } from './authorizer.js';

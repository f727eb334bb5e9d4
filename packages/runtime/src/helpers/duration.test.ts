import { describe, expect, it } from 'vitest';
import { goDuration, parseDuration } from './duration.js';

describe("goDuration: Go's time.Duration.String()", () => {
  // Each row as Go prints it (fmt.Println(d) of the parsed input).
  it.each([
    ['2160h', '2160h0m0s'],
    ['720h', '720h0m0s'],
    ['1h30m', '1h30m0s'],
    ['90m', '1h30m0s'],
    ['90s', '1m30s'],
    ['45s', '45s'],
    ['1.5s', '1.5s'],
    ['1h0m0.5s', '1h0m0.5s'],
    ['500ms', '500ms'],
    ['1500us', '1.5ms'],
    ['1us', '1µs'],
    ['10ns', '10ns'],
    ['0s', '0s'],
    ['2562047h', '2562047h0m0s'],
  ])('%s is written %s', (input, go) => {
    expect(goDuration(parseDuration(input))).toBe(go);
    expect(parseDuration(goDuration(parseDuration(input)))).toBe(parseDuration(input));
  });
});

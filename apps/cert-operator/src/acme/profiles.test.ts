import { describe, expect, it } from 'vitest';
import { profileProblem } from './profiles.js';

describe('profileProblem', () => {
  const le = { classic: 'The same profile you are accustomed to', shortlived: 'Six-day certificates', tlsserver: '' };
  it.each<[string, string | undefined, Record<string, string> | undefined, RegExp | undefined]>([
    ['no profile asked for, from a CA without profiles', undefined, undefined, undefined],
    ['no profile asked for', undefined, le, undefined],
    ['an offered profile', 'shortlived', le, undefined],
    [
      'an unknown profile: the offered ones listed, sorted, with descriptions',
      'short',
      le,
      /^the ACME server offers no profile "short"; it offers: classic \(The same profile you are accustomed to\), shortlived \(Six-day certificates\), tlsserver$/,
    ],
    ['a profile, from a CA without profiles', 'shortlived', undefined, /^the ACME server offers no profiles/],
    ['a profile, from a CA with an empty list', 'shortlived', {}, /^the ACME server offers no profiles/],
  ])('%s', (_name, wanted, offered, want) => {
    const p = profileProblem(wanted, offered);
    if (want) expect(p).toMatch(want);
    else expect(p).toBeUndefined();
  });
});

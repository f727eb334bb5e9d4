import { describe, expect, it } from 'vitest';
import { parseSolverArgs } from './args.js';

describe('parseSolverArgs', () => {
  it('reads the flags a solver pod passes', () => {
    expect(parseSolverArgs(['--listen-port=8089', '--domain=shop.example.com', '--token=t', '--key=t.k'])).toEqual({
      help: false,
      port: 8089,
      solver: { domain: 'shop.example.com', token: 't', key: 't.k' },
    });
  });

  it('listens on 8089 unless told', () => {
    expect(parseSolverArgs(['--domain=a', '--token=t', '--key=k'])).toMatchObject({ port: 8089 });
  });

  it('answers --help without the other flags', () => {
    expect(parseSolverArgs(['--help'])).toEqual({ help: true });
  });

  it.each([
    ['a missing key', ['--domain=a', '--token=t'], /--domain, --token and --key are required/],
    ['a port that is not a number', ['--listen-port=eighty', '--domain=a', '--token=t', '--key=k'], /required/],
    ['an unknown flag', ['--domain=a', '--token=t', '--key=k', '--verbose'], /verbose/],
  ])('refuses %s', (_, args, message) => {
    expect(() => parseSolverArgs(args)).toThrow(message);
  });
});

import { describe, expect, it } from 'vitest';
import { noProxyMatches, parseConnectResponse, ProxyConfigError, ProxyTunnelError, proxyFor } from './proxy.js';

describe('proxyFor', () => {
  const api = new URL('https://api.cluster.example:6443');
  const cases: [string, URL, string | undefined, Record<string, string>, string | undefined][] = [
    ['none', api, undefined, {}, undefined],
    ["the kubeconfig's proxy-url wins", api, 'http://kc-proxy:3128', { HTTPS_PROXY: 'http://env:3128' }, 'http://kc-proxy:3128/'],
    ['proxy-url applies to loopback too', new URL('https://127.0.0.1:6443'), 'http://p:1', {}, 'http://p:1/'],
    ['HTTPS_PROXY for an https server', api, undefined, { HTTPS_PROXY: 'http://env:3128' }, 'http://env:3128/'],
    ['lower case too', api, undefined, { https_proxy: 'http://env:3128' }, 'http://env:3128/'],
    ['HTTP_PROXY is not for https', api, undefined, { HTTP_PROXY: 'http://env:3128' }, undefined],
    ['no scheme means http', api, undefined, { HTTPS_PROXY: 'env:3128' }, 'http://env:3128/'],
    ['never localhost from the environment', new URL('https://localhost:6443'), undefined, { HTTPS_PROXY: 'http://env:1' }, undefined],
    ['never loopback from the environment', new URL('https://127.0.0.1:6443'), undefined, { HTTPS_PROXY: 'http://env:1' }, undefined],
    ['NO_PROXY domain', api, undefined, { HTTPS_PROXY: 'http://env:1', NO_PROXY: 'example' }, undefined],
    ['NO_PROXY CIDR', new URL('https://10.96.0.1'), undefined, { HTTPS_PROXY: 'http://env:1', NO_PROXY: '10.96.0.0/12' }, undefined],
    ['NO_PROXY other CIDR', new URL('https://10.112.0.1'), undefined, { HTTPS_PROXY: 'http://env:1', NO_PROXY: '10.96.0.0/12' }, 'http://env:1/'],
  ];
  it.each(cases)('%s', (_, server, kc, env, want) => expect(proxyFor(server, kc, env)?.href).toBe(want));

  it('refuses what it cannot speak, naming where it came from', () => {
    expect(() => proxyFor(api, 'socks5://p:1080')).toThrow(ProxyConfigError);
    expect(() => proxyFor(api, 'socks5://p:1080')).toThrow(/proxy-url "socks5:\/\/p:1080": only http:\/\/ and https:\/\/ proxies/);
    expect(() => proxyFor(api, undefined, { HTTPS_PROXY: 'http://[bad' })).toThrow(/HTTPS_PROXY "http:\/\/\[bad" is not a URL/);
  });
});

describe('noProxyMatches', () => {
  it.each([
    ['*', 'anything', '443', true],
    ['example.com', 'example.com', '443', true],
    ['example.com', 'api.example.com', '443', true],
    ['.example.com', 'api.example.com', '443', true],
    ['example.com', 'badexample.com', '443', false],
    ['example.com:6443', 'example.com', '443', false],
    ['example.com:6443', 'example.com', '6443', true],
    ['10.0.0.1', '10.0.0.1', '443', true],
    ['10.0.0.0/8, fd00::/8', 'fd00::1', '443', true],
    ['10.0.0.0/8', '11.0.0.1', '443', false],
    ['', 'example.com', '443', false],
  ])('%s vs %s:%s → %s', (list, host, port, want) => expect(noProxyMatches(list, host, port)).toBe(want));
});

describe('parseConnectResponse', () => {
  const b = (s: string) => Buffer.from(s, 'latin1');
  it('waits for the end of the header, then gives the status and what follows', () => {
    expect(parseConnectResponse(b('HTTP/1.1 200 Connection established\r\n'))).toBeUndefined();
    const r = parseConnectResponse(b('HTTP/1.1 200 Connection established\r\nVia: x\r\n\r\n\x16\x03'))!;
    expect([r.status, r.reason, r.rest.toString('latin1')]).toEqual([200, 'Connection established', '\x16\x03']);
    expect(parseConnectResponse(b('HTTP/1.0 407 Proxy Authentication Required\r\n\r\n'))?.status).toBe(407);
  });
  it('refuses an answer that is not HTTP, or that does not end', () => {
    expect(() => parseConnectResponse(b('SSH-2.0-OpenSSH\r\n\r\n'))).toThrow(ProxyTunnelError);
    expect(() => parseConnectResponse(Buffer.alloc(20_000, 'a'))).toThrow(/exceeds 16384 bytes/);
  });
});

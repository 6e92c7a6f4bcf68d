import { describe, expect, it } from 'vitest';
import { isPrivateHost, privateUrls } from './urls.js';

describe('private addresses', () => {
  it('knows loopback, private, link-local and internal names from public hosts', () => {
    for (const h of [
      'localhost',
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '[::1]',
      'fd00::1',
      'fe80::1',
      'db.internal',
      'metadata.google.internal',
      '::ffff:10.0.0.1',
    ]) {
      expect([h, isPrivateHost(h)]).toEqual([h, true]);
    }
    for (const h of ['example.com', '8.8.8.8', '172.32.0.1', '172.15.0.1', '100.128.0.1', '2606:4700::1']) {
      expect([h, isPrivateHost(h)]).toEqual([h, false]);
    }
  });

  it('finds the private URLs in code', () => {
    const code =
      'await fetch(\'http://10.0.0.5:8080/admin\'); await fetch(`https://api.example.com/x`); fetch("http://localhost/")';
    expect(privateUrls(code)).toEqual(['http://10.0.0.5:8080/admin', 'http://localhost/']);
  });
});

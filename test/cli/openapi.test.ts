import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/index.js';
import { runCli, runMain } from '../helpers/cli.js';

/*
 * `partner-s2s-sdk openapi`: the document of the interface on stdout, for a team that generates a
 * client from it in another language; the same document as the package ships.
 */

describe('partner-s2s-sdk openapi', () => {
  it('prints the OpenAPI document on stdout, from the bin, as the package ships it', async () => {
    const printed = await runCli(['openapi']);
    expect(printed.stderr).toBe('');
    expect(printed.code).toBe(0);
    // The sources, bundled for the tests, have no version written in (the build writes it): all else is the same.
    const { info, ...rest } = openApiDocument();
    expect(JSON.parse(printed.stdout)).toEqual({
      ...rest,
      info: { ...info, version: expect.any(String), description: expect.any(String) },
    });
  }, 30_000);

  it('names a base URL as its server, prints one line with --compact, and refuses a base URL that is none', async () => {
    const compact = await runMain(['openapi', '--compact', '--base-url', 'https://partner.example.com']);
    expect(compact.code).toBe(0);
    expect(compact.stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(compact.stdout)).toEqual(openApiDocument({ baseUrl: 'https://partner.example.com' }));
    const wrong = await runMain(['openapi', '--base-url', 'partner.example.com']);
    expect(wrong.code).toBe(2);
    expect(wrong.stdout).toBe('');
    expect(wrong.stderr).toContain('--base-url must be an http or https URL');
    const help = await runMain(['openapi', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: partner-s2s-sdk openapi/);
  });
});

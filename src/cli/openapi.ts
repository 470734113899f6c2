import { ArgumentError, openApiDocument } from '../index.js';
import { EXIT, help, type Io, parseCommandLine, toJson, UsageError } from './common.js';

/*
 * `openapi`: the OpenAPI 3.1 document of the interface on stdout, for a team whose backend is not
 * JavaScript to generate a client from, or to load into a tool. The same document as the package's
 * `partner-s2s-sdk/openapi.json` and the simulator's `GET /openapi.json`.
 */

export const OPENAPI_USAGE = `usage: partner-s2s-sdk openapi [--base-url URL] [--compact]

Prints the OpenAPI 3.1 document of the Partner Service Interface (the token endpoint, /me, the
bridge endpoints, the error envelopes, the callback body as a webhook), generated from the SDK's
own schemas. The same document ships as partner-s2s-sdk/openapi.json, and the simulator serves it
at GET /openapi.json.
  --base-url URL  the service's base URL as the document's server (default: a variable, baseUrl)
  --compact       one line instead of indented JSON`;

/** `openapi`: the document, indented unless `--compact`. */
export async function openapi(args: string[], io: Io): Promise<number> {
  const { values } = parseCommandLine(args, { 'base-url': { type: 'string' }, compact: { type: 'boolean' } });
  if (values.help) return help(io, OPENAPI_USAGE);
  const baseUrl = values['base-url'];
  let document: ReturnType<typeof openApiDocument>;
  try {
    document = openApiDocument(baseUrl === undefined ? {} : { baseUrl });
  } catch (error) {
    if (error instanceof ArgumentError) throw new UsageError('--base-url must be an http or https URL');
    throw error;
  }
  io.out(toJson(document, values.compact ? undefined : 2));
  return EXIT.ok;
}

import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { OpenApiDocument } from '../../src/index.js';

// ajv-formats is CommonJS whose default export is the function itself.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

type Json = Record<string, unknown>;
type FetchFunction = (input: Request | URL | string, init?: RequestInit) => Promise<Response>;

const DOCUMENT_ID = 'https://partner-s2s-sdk.test/openapi.json';

/** A JSON pointer into the document, as ajv resolves it. */
const pointer = (...parts: (string | number)[]) =>
  `${DOCUMENT_ID}#/${parts.map((part) => String(part).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;

/**
 * Holds requests, answers and callback bodies against an OpenAPI document with a JSON Schema
 * 2020-12 validator (ajv, formats checked): each path and method must be in it, each request's
 * parameters and body, and each answer's body under the response its status selects (the status,
 * then `default`).
 */
export class OpenApiChecker {
  readonly #ajv = new Ajv2020({ strict: false, allErrors: true });
  readonly #document: OpenApiDocument;
  readonly #paths: { template: string; pattern: RegExp }[];
  /** What did not match the document, one line each. */
  readonly problems: string[] = [];
  /** How many answers and callback bodies were checked. */
  checked = 0;

  constructor(document: OpenApiDocument) {
    this.#document = document;
    addFormats(this.#ajv);
    this.#ajv.addSchema({ ...document, $id: DOCUMENT_ID });
    this.#paths = Object.keys(document.paths).map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '([^/]+)')}$`),
    }));
  }

  #validator(at: string): ValidateFunction {
    return this.#ajv.getSchema(at) ?? this.#ajv.compile({ $ref: at });
  }

  #check(where: string, at: string, value: unknown): void {
    const validate = this.#validator(at);
    if (!validate(value))
      this.problems.push(`${where}: ${this.#ajv.errorsText(validate.errors, { dataVar: 'body' })}`);
  }

  /** The operation serving `method` on `pathname`, or a problem. */
  #operation(method: string, pathname: string) {
    const found = this.#paths.find(({ pattern }) => pattern.test(pathname));
    const verb = method.toLowerCase();
    const operation = found && (this.#document.paths[found.template]?.[verb] as Json | undefined);
    if (!found || !operation) {
      this.problems.push(`${method} ${pathname}: not in the document`);
      return undefined;
    }
    return { template: found.template, verb, operation };
  }

  /** A request as the SDK sent it: its query and path parameters, and its body. */
  request(method: string, url: URL, contentType: string | null, body: string): void {
    const found = this.#operation(method, url.pathname);
    if (!found) return;
    const { template, verb, operation } = found;
    const where = `${method} ${template} request`;
    const parameters = (operation.parameters ?? []) as { name: string; in: string; schema: Json }[];
    const pathValues = url.pathname
      .match(this.#paths.find((p) => p.template === template)!.pattern)!
      .slice(1);
    let pathIndex = 0;
    parameters.forEach((parameter, index) => {
      const raw = parameter.in === 'path' ? pathValues[pathIndex++] : url.searchParams.get(parameter.name);
      if (raw === null || raw === undefined) return;
      // A query value is text: a number parameter is held as the number it writes.
      const numeric = ['number', 'integer'].includes(parameter.schema.type as string);
      const value = numeric ? Number(raw) : decodeURIComponent(raw);
      this.#check(
        `${where} ${parameter.name}`,
        pointer('paths', template, verb, 'parameters', index, 'schema'),
        value,
      );
    });
    for (const name of url.searchParams.keys())
      if (!parameters.some((parameter) => parameter.name === name && parameter.in === 'query'))
        this.problems.push(`${where}: query parameter ${name} is not in the document`);
    const content = (operation.requestBody as { content?: Json } | undefined)?.content;
    if (!content) return;
    const type = contentType?.split(';')[0]?.trim() ?? '';
    if (!(type in content)) {
      this.problems.push(`${where}: content type ${type} is not in the document`);
      return;
    }
    const value =
      type === 'application/json' ? JSON.parse(body) : Object.fromEntries(new URLSearchParams(body));
    this.#check(where, pointer('paths', template, verb, 'requestBody', 'content', type, 'schema'), value);
  }

  /** An answer's JSON body, under the response of its status (or `default`). */
  answer(method: string, url: URL, status: number, body: unknown): void {
    const found = this.#operation(method, url.pathname);
    if (!found) return;
    const { template, verb, operation } = found;
    const responses = operation.responses as Record<string, { $ref?: string }>;
    const key = String(status) in responses ? String(status) : 'default';
    const chosen = responses[key];
    if (!chosen) {
      this.problems.push(`${method} ${template} ${status}: no response for it in the document`);
      return;
    }
    // A shared response: its schema is in the components.
    const at = chosen.$ref
      ? pointer(
          'components',
          'responses',
          chosen.$ref.split('/').at(-1)!,
          'content',
          'application/json',
          'schema',
        )
      : pointer('paths', template, verb, 'responses', key, 'content', 'application/json', 'schema');
    this.checked++;
    this.#check(`${method} ${template} ${status}`, at, body);
  }

  /** A callback body, under the document's webhook. */
  callback(body: unknown): void {
    this.checked++;
    this.#check(
      'bridgeTransfer callback',
      pointer('webhooks', 'bridgeTransfer', 'post', 'requestBody', 'content', 'application/json', 'schema'),
      body,
    );
  }

  /** `fetch`, with every request it sends and every JSON answer it receives checked. */
  wrap(fetch: FetchFunction): FetchFunction {
    return async (input, init) => {
      const request = new Request(input, init);
      const url = new URL(request.url);
      this.request(request.method, url, request.headers.get('content-type'), await request.clone().text());
      const response = await fetch(request);
      if (response.headers.get('content-type')?.includes('application/json'))
        this.answer(request.method, url, response.status, await response.clone().json());
      return response;
    };
  }
}

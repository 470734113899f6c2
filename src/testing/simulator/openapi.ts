import { openApiDocument } from '../../resources/openapi.js';
import { HttpFailure, jsonResponse } from './envelope.js';
import type { Mount } from './http.js';

/*
 * The third mount: the OpenAPI document of the interface at the server's root, `GET /openapi.json`,
 * outside /api/v1/s2s (it is no path of the interface, and needs no token), with the simulator
 * itself as its server, so a tool that loads it calls the simulator.
 */

/** Where the document is served. */
export const OPENAPI_PATH = '/openapi.json';

export function openApiMount(): Mount {
  return {
    prefix: OPENAPI_PATH,
    handle: ({ method, path, host }) => {
      if (path !== '') throw new HttpFailure(404, 'NOT_FOUND', 'unknown path');
      if (method !== 'GET')
        throw new HttpFailure(
          405,
          'METHOD_NOT_ALLOWED',
          `${OPENAPI_PATH} takes GET, not ${method}`,
          {},
          {
            allow: 'GET',
          },
        );
      return jsonResponse(openApiDocument({ baseUrl: `http://${host}` }));
    },
  };
}

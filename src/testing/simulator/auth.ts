import { covers, expandScopes, intersect } from '../scopes.js';
import type { SimClock, SimRandom } from './common.js';
import { HttpFailure, jsonResponse, oauthError } from './envelope.js';

/*
 * Who may call: organisations and the scopes they hold, their credentials (secrets, rotation,
 * revocation), the token endpoint and the bearer check every other endpoint starts with.
 */

export interface Organisation {
  id: string;
  scopes: Set<string>;
  active: boolean;
}

export interface Credential {
  clientId: string;
  organisationId: string;
  secrets: { secret: string; validUntil: number }[];
  scopes: Set<string>;
  revoked: boolean;
}

interface IssuedToken {
  clientId: string;
  scopes: Set<string>;
  expiresAt: number;
}

/** The caller of an authenticated request: its organisation and the scopes its token holds now. */
export interface Caller {
  organisationId: string;
  scopes: Set<string>;
}

export class SimAuth {
  readonly organisations = new Map<string, Organisation>();
  readonly credentials = new Map<string, Credential>();
  readonly #tokens = new Map<string, IssuedToken>();

  constructor(
    private readonly clock: SimClock,
    private readonly random: SimRandom,
    private readonly tokenTtlSec = 3600,
  ) {}

  createOrganisation(scopes: string[], given?: string): string {
    const orgId = given ?? this.random.id('org');
    this.organisations.set(orgId, { id: orgId, scopes: new Set(scopes), active: true });
    return orgId;
  }

  createCredential(org: Organisation, scopes: string[]): { clientId: string; clientSecret: string } {
    const clientId = this.random.id('cli');
    const clientSecret = this.random.secret();
    this.credentials.set(clientId, {
      clientId,
      organisationId: org.id,
      secrets: [{ secret: clientSecret, validUntil: Number.POSITIVE_INFINITY }],
      scopes: new Set(scopes),
      revoked: false,
    });
    return { clientId, clientSecret };
  }

  rotateCredential(credential: Credential, graceMs: number): { clientSecret: string } {
    const until = this.clock.now() + graceMs;
    for (const secret of credential.secrets) secret.validUntil = Math.min(secret.validUntil, until);
    const clientSecret = this.random.secret();
    credential.secrets.push({ secret: clientSecret, validUntil: Number.POSITIVE_INFINITY });
    return { clientSecret };
  }

  /** `POST /auth/token`: the client-credentials grant, answered with OAuth bodies. */
  token(headers: Headers, body: string): Response {
    const type = headers.get('content-type') ?? '';
    let params: Record<string, string>;
    if (type.includes('application/json')) {
      try {
        const parsed = JSON.parse(body) as Record<string, unknown>;
        params = Object.fromEntries(
          Object.entries(parsed).filter(([, v]) => typeof v === 'string'),
        ) as Record<string, string>;
      } catch {
        return oauthError(400, 'invalid_request', 'the body is not JSON');
      }
    } else {
      params = Object.fromEntries(new URLSearchParams(body));
    }
    let clientId = params.client_id;
    let clientSecret = params.client_secret;
    const authorization = headers.get('authorization');
    if (authorization?.startsWith('Basic ')) {
      const decoded = Buffer.from(authorization.slice(6), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) return oauthError(400, 'invalid_request', 'malformed Basic credentials');
      const decode = (value: string) => decodeURIComponent(value.replace(/\+/g, ' '));
      try {
        clientId = decode(decoded.slice(0, colon));
        clientSecret = decode(decoded.slice(colon + 1));
      } catch {
        return oauthError(400, 'invalid_request', 'malformed Basic credentials');
      }
    }
    if (!params.grant_type) return oauthError(400, 'invalid_request', 'grant_type is required');
    if (params.grant_type !== 'client_credentials')
      return oauthError(400, 'unsupported_grant_type', 'only client_credentials');
    if (!clientId || !clientSecret)
      return oauthError(400, 'invalid_request', 'client_id and client_secret are required');
    const credential = this.credentials.get(clientId);
    const now = this.clock.now();
    const org = credential && this.organisations.get(credential.organisationId);
    const secretOk = credential?.secrets.some(
      (entry) => entry.secret === clientSecret && entry.validUntil > now,
    );
    if (!credential || !org || !secretOk || credential.revoked || !org.active) {
      return oauthError(401, 'invalid_client', 'client authentication failed', {
        'www-authenticate': 'Basic realm="partner"',
      });
    }
    const held = intersect(expandScopes(credential.scopes), expandScopes(org.scopes));
    let granted = held;
    if (params.scope !== undefined) {
      const requested = params.scope.split(' ').filter(Boolean);
      const holders = new Set(
        [...credential.scopes].filter((scope) => org.scopes.has(scope) || !scope.startsWith('all:')),
      );
      for (const scope of requested) {
        const ok = scope.startsWith('all:') ? holders.has(scope) && org.scopes.has(scope) : held.has(scope);
        if (!ok) return oauthError(400, 'invalid_scope', `the credential does not hold ${scope}`);
      }
      granted = intersect(expandScopes(requested), held);
    }
    const accessToken = `at_${this.random.bytes(24).toString('base64url')}`;
    const ttl = this.tokenTtlSec;
    this.#tokens.set(accessToken, { clientId, scopes: granted, expiresAt: now + ttl * 1000 });
    return jsonResponse(
      {
        access_token: accessToken,
        token_type: 'Bearer',
        expires_in: ttl,
        scope: [...granted].sort().join(' '),
      },
      200,
      { 'cache-control': 'no-store', pragma: 'no-cache' },
    );
  }

  /** The caller a bearer token names, checked against revocation and withdrawn scopes as of now. */
  authenticate(headers: Headers): Caller {
    const header = headers.get('authorization');
    if (!header)
      throw new HttpFailure(
        401,
        'UNAUTHORIZED',
        'missing access token',
        {},
        { 'www-authenticate': 'Bearer realm="partner"' },
      );
    const match = /^Bearer ([^\s]+)$/.exec(header);
    const rejected = (message: string) =>
      new HttpFailure(
        401,
        'UNAUTHORIZED',
        message,
        {},
        {
          'www-authenticate': `Bearer realm="partner", error="invalid_token", error_description="${message}"`,
        },
      );
    if (!match) throw rejected('malformed access token');
    const token = this.#tokens.get(match[1]!);
    if (!token || token.expiresAt <= this.clock.now())
      throw rejected('the access token is invalid or expired');
    const credential = this.credentials.get(token.clientId);
    const org = credential && this.organisations.get(credential.organisationId);
    if (!credential || !org || credential.revoked || !org.active)
      throw rejected('the access token was revoked');
    const scopes = intersect(
      intersect(token.scopes, expandScopes(credential.scopes)),
      expandScopes(org.scopes),
    );
    return { organisationId: org.id, scopes };
  }

  /** The 403 of a token that lacks any of `needed`. */
  require(caller: Caller, ...needed: string[]): void {
    const missing = needed.filter((scope) => !covers(caller.scopes, scope));
    if (missing.length > 0)
      throw new HttpFailure(403, 'FORBIDDEN', `the token lacks ${missing.join(' and ')}`);
  }
}

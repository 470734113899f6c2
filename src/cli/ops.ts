import {
  type BridgeRoute,
  PartnerClient,
  type TokenStore,
  TRANSFER_STATES,
  type TransferStatus,
} from '../index.js';
import type { StoredToken } from '../stores/index.js';
import { EXIT, help, type Io, integerFlag, line, parseCommandLine, toJson, UsageError } from './common.js';

/*
 * The operator commands: each reads the credential from the environment (never from a flag, where
 * it would sit in shell history and `ps`), runs one call of the public SDK and prints the answer.
 */

export const ENV_HELP = `environment:
  PARTNER_BASE_URL        the service's base URL
  PARTNER_CLIENT_ID       the credential's client id
  PARTNER_CLIENT_SECRET   the credential's secret (never printed)`;

export const TOKEN_USAGE = `usage: partner-s2s-sdk token [--show-token] [--json]

Fetches a token and prints the scopes it was granted and when it expires. The token itself is
printed only with --show-token.

${ENV_HELP}`;

export const ROUTES_USAGE = `usage: partner-s2s-sdk routes [--json]

Lists the bridge routes, one line each: the route id, the source token and chain → the destination
token and chain, the provider, and the amounts the route takes now (min–max, in the source token),
or "unreachable" when the bridge cannot be reached (quotes and constructs then fail).
  --json   the routes as the service returned them, with token addresses, decimals and the
           contracts a batch may call (what verify and sign take as --route)

${ENV_HELP}`;

export const TRANSFERS_USAGE = `usage: partner-s2s-sdk transfers list --user USER [--status S] [--limit N] [--json]
       partner-s2s-sdk transfers get --user USER --id TRANSFER [--json]

list: a user's transfers, newest first (--limit: how many, 1 to 1000, default 20).
get:  one transfer as the service holds it now.
statuses: ${TRANSFER_STATES.join(', ')}

${ENV_HELP}`;

/** Keeps the last token the client stored, so `token` can show its expiry without a second call. */
class CapturingStore implements TokenStore {
  last: StoredToken | undefined;
  async get(): Promise<StoredToken | undefined> {
    return undefined;
  }
  async set(_key: string, token: StoredToken): Promise<void> {
    this.last = token;
  }
  async delete(): Promise<void> {}
}

/** A client on the credential in the environment; a missing variable is a usage error naming it. */
export function clientFromEnv(io: Io, tokenStore?: TokenStore): PartnerClient {
  const {
    PARTNER_BASE_URL: baseUrl,
    PARTNER_CLIENT_ID: clientId,
    PARTNER_CLIENT_SECRET: clientSecret,
  } = io.env;
  const missing = [
    ['PARTNER_BASE_URL', baseUrl],
    ['PARTNER_CLIENT_ID', clientId],
    ['PARTNER_CLIENT_SECRET', clientSecret],
  ].filter(([, value]) => !value);
  if (missing.length > 0) throw new UsageError(`set ${missing.map(([name]) => name).join(', ')}`);
  return new PartnerClient({
    baseUrl: baseUrl!,
    clientId: clientId!,
    clientSecret: clientSecret!,
    ...(tokenStore ? { tokenStore } : {}),
  });
}

/** `token`: granted scopes and expiry; the token only when asked for by name. */
export async function token(args: string[], io: Io): Promise<number> {
  const { values } = parseCommandLine(args, { 'show-token': { type: 'boolean' }, json: { type: 'boolean' } });
  if (values.help) return help(io, TOKEN_USAGE);
  const store = new CapturingStore();
  const client = clientFromEnv(io, store);
  const scopes = await client.getScopes();
  const expiresAt = store.last ? new Date(store.last.expiresAt).toISOString() : null;
  const shown = values['show-token'] ? { accessToken: store.last?.accessToken ?? null } : {};
  if (values.json) {
    io.out(toJson({ scopes, expiresAt, ...shown }));
  } else {
    io.out(line`scopes      ${scopes.join(' ')}`);
    io.out(line`expires at  ${expiresAt ?? 'unknown'}`);
    if ('accessToken' in shown) io.out(line`token       ${shown.accessToken}`);
  }
  return EXIT.ok;
}

/** `routes`: every route, one line each (or JSON). */
export async function routes(args: string[], io: Io): Promise<number> {
  const { values } = parseCommandLine(args, { json: { type: 'boolean' } });
  if (values.help) return help(io, ROUTES_USAGE);
  const list = await clientFromEnv(io).bridge.routes();
  if (values.json) {
    io.out(toJson(list));
    return EXIT.ok;
  }
  for (const route of list) io.out(describeRoute(route));
  return EXIT.ok;
}

function describeRoute(route: BridgeRoute): string {
  const { from, to } = route;
  const limits = route.limits
    ? `${route.limits.minAmount}–${route.limits.maxAmount} ${from.symbol}`
    : 'unreachable';
  return line`${route.routeId}  ${from.symbol} on ${from.chain} → ${to.symbol} on ${to.chain}  ${route.provider}  ${limits}`;
}

/** `transfers list|get`. */
export async function transfers(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommandLine(
    args,
    {
      user: { type: 'string' },
      status: { type: 'string' },
      limit: { type: 'string' },
      id: { type: 'string' },
      json: { type: 'boolean' },
    },
    true,
  );
  if (values.help) return help(io, TRANSFERS_USAGE);
  const [action, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`unexpected ${extra.join(' ')}`);
  if (action !== 'list' && action !== 'get') throw new UsageError('say "transfers list" or "transfers get"');
  if (!values.user) throw new UsageError('--user is required');
  const client = clientFromEnv(io);
  if (action === 'get') {
    if (!values.id) throw new UsageError('--id is required');
    const transfer = await client.bridge.transfers.get({ userId: values.user, transferId: values.id });
    io.out(values.json ? toJson(transfer) : toJson(transfer, 2));
    return EXIT.ok;
  }
  const status = values.status;
  if (status !== undefined && !(TRANSFER_STATES as readonly string[]).includes(status))
    throw new UsageError(`--status must be one of ${TRANSFER_STATES.join(', ')}`);
  const limit = integerFlag('limit', values.limit, 1, 1000) ?? 20;
  const found = [];
  // Pages of at most 100 (the service's largest), until `limit` transfers are in hand.
  for await (const transfer of client.bridge.transfers.list({
    userId: values.user,
    limit: Math.min(limit, 100),
    ...(status ? { status: status as TransferStatus } : {}),
  })) {
    found.push(transfer);
    if (found.length >= limit) break;
  }
  if (values.json) {
    io.out(toJson(found));
  } else {
    for (const transfer of found)
      io.out(
        line`${transfer.transferId}  ${transfer.status.padEnd(16)}  ${transfer.routeId}  ${transfer.createdAt}`,
      );
  }
  return EXIT.ok;
}

import type { z } from 'zod';
import { parseArgs } from '../../core/args.js';
import { ArgumentError } from '../../errors/client-errors.js';
import { simulatorArgs } from './args.js';
import type { Credential, Organisation } from './auth.js';
import type { SimCore } from './core.js';
import type { RouteState } from './routes.js';
import type { TransferRecord } from './transfers.js';
import type { UserRecord } from './users.js';

/*
 * The administration of the simulator: every operation a test or the admin HTTP API
 * (admin-http.ts) may run, keyed by the same name as its argument schema in ../args.ts. `run` checks the arguments
 * (ids become what they name) before the operation sees them, so each caller gets the same rules.
 */

type Schemas = ReturnType<
  typeof simulatorArgs<Organisation, Credential, UserRecord, RouteState, TransferRecord>
>;
type Checked<K extends keyof Schemas> = z.output<Schemas[K]>;

/**
 * In chain mode the source chain's balances are the chain's: `fund` and `balance` would only
 * describe a ledger nothing reads.
 */
function onlyOffChain(chain: SimCore['chain'], method: 'fund' | 'balance'): void {
  if (!chain) return;
  const told =
    method === 'fund'
      ? 'fund the wallet on the chain instead (mint or transfer the token to it, and give it gas money if no paymaster sponsors it)'
      : "read the token's balanceOf on the chain instead";
  throw new ArgumentError({
    where: `PartnerSimulator.${method}`,
    issues: [
      {
        path: '',
        message: `the simulator follows the chain at ${chain.where}, whose balances are the chain's: ${told}`,
      },
    ],
  });
}

function operations({ clock, auth, users, transfers, callbacks, chain }: SimCore) {
  return {
    advanceClock: ({ ms }) => clock.advance(ms),
    createOrganisation: ({ params }) => auth.createOrganisation(params.scopes, params.id),
    withdrawOrganisationScope: ({ organisationId, scope }) => {
      organisationId.scopes.delete(scope);
    },
    setOrganisationActive: ({ organisationId, active }) => {
      organisationId.active = active;
    },
    createCredential: ({ params }) => auth.createCredential(params.organisationId, params.scopes),
    revokeCredential: ({ clientId }) => {
      clientId.revoked = true;
    },
    rotateCredential: ({ clientId, params }) => auth.rotateCredential(clientId, params.graceMs),
    createUser: ({ params }) => users.create(params.organisationId.id, params.wallet),
    fund: ({ userId, chainId, token, raw }) => {
      onlyOffChain(chain, 'fund');
      users.fund(userId, chainId, token, raw);
    },
    balance: ({ userId, chainId, token }) => {
      onlyOffChain(chain, 'balance');
      return users.balance(userId, chainId, token);
    },
    configureRoute: ({ routeId, change }) => {
      Object.assign(
        routeId,
        Object.fromEntries(Object.entries(change).filter(([, value]) => value !== undefined)),
      );
    },
    setCallbacks: ({ target }) => {
      callbacks.target = target;
    },
    transfer: ({ transferId }) => structuredClone(transferId.transfer),
    advance: ({ transferId: record, status, details }) => {
      transfers.enter(record, status, details);
      return structuredClone(record.transfer);
    },
  } satisfies { [K in keyof Schemas]?: (args: Checked<K>) => unknown };
}

type Operations = ReturnType<typeof operations>;

export class SimAdmin {
  readonly #schemas: Schemas;
  readonly #operations: Operations;

  constructor(core: SimCore) {
    const { auth, users, routes, transfers } = core;
    this.#schemas = simulatorArgs({
      organisation: (id) => auth.organisations.get(id),
      credential: (id) => auth.credentials.get(id),
      user: (id) => users.users.get(id),
      route: (id) => routes.routes.get(id),
      transfer: (id) => {
        const record = transfers.transfers.get(id);
        if (record) transfers.expireIfDue(record);
        return record;
      },
      transferState: (record) => ({ status: record.transfer.status, next: transfers.next(record) }),
    });
    this.#operations = operations(core);
  }

  /** Runs an operation on arguments named as its method's parameters, checked first. */
  run<K extends keyof Operations>(method: K, args: Record<string, unknown>): ReturnType<Operations[K]> {
    // TypeScript cannot pair a union of operations with the one its key names: the key does.
    const operation: (args: never) => unknown = this.#operations[method];
    return operation(this.check(method, args) as never) as ReturnType<Operations[K]>;
  }

  /** The arguments of a public method, checked by its schema in ../args.ts, ids resolved. */
  check<K extends keyof Schemas>(method: K, args: Record<string, unknown>): Checked<K> {
    return parseArgs(this.#schemas[method], args, `PartnerSimulator.${method}`) as Checked<K>;
  }
}

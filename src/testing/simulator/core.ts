import { SimAuth } from './auth.js';
import { type CallbackSigning, type CallbackTarget, SimCallbacks, WebhookSigner } from './callbacks.js';
import { type ChainOptions, SimChain } from './chain.js';
import { SimClock, SimRandom } from './common.js';
import { SimIntents } from './intents.js';
import { SimRoutes } from './routes.js';
import { type AutoAdvance, SimTransfers } from './transfers.js';
import { SimUsers } from './users.js';

/** What the concerns need of the simulator's options (checked already, by `simulatorOptionsArgs`). */
export interface CoreOptions {
  autoAdvance?: AutoAdvance;
  tokenTtlSec?: number;
  quoteTtlSec?: number;
  callbacks?: CallbackTarget;
  callbackHeaders?: Record<string, string>;
  callbackSigning?: CallbackSigning;
  /** Makes ids, secrets, keys and hashes a deterministic stream (tests and `simulate --seed`). */
  seed?: number;
  /** Chain mode: the simulator is the bundler on this node (chain.ts). */
  chain?: ChainOptions;
}

/** The simulator's state, one object per concern; the partner API and the admin operations share it. */
export interface SimCore {
  clock: SimClock;
  random: SimRandom;
  auth: SimAuth;
  users: SimUsers;
  routes: SimRoutes;
  transfers: SimTransfers;
  intents: SimIntents;
  callbacks: SimCallbacks;
  /** In chain mode, the chain: balances and nonces are its, and `fund` is refused. */
  chain: SimChain | undefined;
}

export function createCore(options: CoreOptions): SimCore {
  const clock = new SimClock();
  const random = new SimRandom(options.seed);
  const { callbackSigning: signing } = options;
  const signer = signing && new WebhookSigner(signing.secrets ?? [signing.secret!], () => random.id('msg'));
  const callbacks = new SimCallbacks(options.callbacks, options.callbackHeaders, undefined, signer);
  const users = new SimUsers(random);
  const routes = new SimRoutes(clock, options.quoteTtlSec);
  const transfers = new SimTransfers(clock, random, users, callbacks, options.autoAdvance);
  const chain = options.chain && new SimChain(options.chain);
  return {
    clock,
    random,
    auth: new SimAuth(clock, random, options.tokenTtlSec),
    users,
    routes,
    transfers,
    intents: new SimIntents(clock, random, users, routes, transfers, chain),
    callbacks,
    chain,
  };
}

/**
 * Shared by the examples: the embedded simulator by default, a real deployment when
 * PARTNER_BASE_URL is set (with PARTNER_CLIENT_ID, PARTNER_CLIENT_SECRET, PARTNER_USER_ID and
 * USER_PRIVATE_KEY).
 */

import { PartnerClient } from 'partner-s2s-sdk';
import {
  createPartnerSimulator,
  type PartnerSimulator,
  type SimulatorOptions,
} from 'partner-s2s-sdk/testing';
import { privateKeyToAccount } from 'viem/accounts';

export interface Connection {
  client: PartnerClient;
  userId: string;
  signer: ReturnType<typeof privateKeyToAccount>;
  /** Present when running on the embedded simulator. */
  sim: PartnerSimulator | undefined;
  close(): Promise<void>;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required when PARTNER_BASE_URL is set`);
  return value;
}

export async function connect(simulator: SimulatorOptions = {}): Promise<Connection> {
  const baseUrl = process.env.PARTNER_BASE_URL;
  if (baseUrl) {
    return {
      client: new PartnerClient({
        baseUrl,
        clientId: required('PARTNER_CLIENT_ID'),
        clientSecret: required('PARTNER_CLIENT_SECRET'),
      }),
      userId: required('PARTNER_USER_ID'),
      signer: privateKeyToAccount(required('USER_PRIVATE_KEY') as `0x${string}`),
      sim: undefined,
      close: async () => {},
    };
  }
  const sim = createPartnerSimulator(simulator);
  // A real HTTP server on 127.0.0.1, so the example goes over the wire as it would in production.
  const server = await sim.listen();
  return {
    client: new PartnerClient({ baseUrl: server.url, ...sim.demo.credentials }),
    userId: sim.demo.userId,
    signer: privateKeyToAccount(sim.demo.wallet.privateKey),
    sim,
    close: async () => {
      sim.close();
      await server.close();
    },
  };
}

export const say = (line = '') => console.log(line);

import { type BridgeTransfer, type CallbackStore, createCallbackRouter } from '../../src/index.js';

/**
 * Several routers sharing one store, as the processes of a fleet behind a load balancer: one
 * delivery reaches all of them at once. Answers how many dispatched it and what each answered.
 */
export async function deliverToFleet(store: CallbackStore, body: BridgeTransfer, size = 3) {
  const routers = Array.from({ length: size }, () => createCallbackRouter({ authenticate: 'none', store }));
  let dispatched = 0;
  for (const router of routers) {
    router.on('transfer', () => void dispatched++);
    router.on('error', () => {});
  }
  const request = () =>
    new Request('https://partner.example/callbacks', { method: 'POST', body: JSON.stringify(body) });
  const responses = await Promise.all(routers.map((router) => router.fetchHandler(request())));
  return { dispatched, statuses: responses.map((response) => response.status) };
}

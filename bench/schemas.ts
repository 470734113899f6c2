/**
 * The baselines' zod schemas: the specification's route and transfer, with the checks a careful
 * application would write (and the SDK applies): addresses, decimal and base-unit strings, ISO
 * times, non-negative integers, unknown fields kept. Written here against zod itself rather than
 * taken from the SDK's sources, so that the baselines depend on nothing but the public packages.
 */
import * as z from 'zod';

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);
const decimal = z.string().regex(/^\d+(\.\d+)?$/);
const raw = z.string().regex(/^\d+$/);
const time = z.iso.datetime({ offset: true });
const count = z.int().nonnegative();
const id = z.string().regex(/^[A-Za-z0-9_:.-]{1,128}$/);

const token = z.looseObject({
  symbol: z.string(),
  chain: z.string(),
  chainId: count,
  contractAddress: address,
  decimals: count,
});

export const routeSchema = z.looseObject({
  routeId: z.string(),
  provider: z.string(),
  from: token,
  to: token,
  limits: z
    .looseObject({
      minAmount: decimal,
      maxAmount: decimal,
      minAmountRaw: raw,
      maxAmountRaw: raw,
      fetchedAt: time,
    })
    .nullable(),
  targets: z.looseObject({ bridge: address, token: address, treasury: address }),
});

/** `GET /bridge/routes`: the routes in the `{ data }` envelope. */
export const routesSchema = z.looseObject({ data: z.array(routeSchema) });

const side = z.looseObject({
  chain: z.string(),
  chainId: count,
  token: z.string(),
  tokenAddress: address,
  decimals: count,
  amount: decimal,
  amountRaw: raw,
});

/** A transfer, as `GET /bridge/transfers/{id}` answers it and every bridge callback carries it. */
export const transferSchema = z.looseObject({
  transferId: id,
  userId: id,
  routeId: id,
  status: z.string(),
  provider: z.string(),
  providerRef: z.string(),
  source: side,
  destination: side,
  providerFee: decimal,
  providerFeeRaw: raw,
  gasFee: decimal,
  gasFeeRaw: raw,
  gasFeeToken: z.string(),
  srcTxHash: z.string(),
  dstTxHash: z.string().nullable(),
  refundTxHash: z.string().nullable(),
  failureReason: z.string().nullable(),
  createdAt: time,
  updatedAt: time,
});

/** A list page of transfers. */
export const transferPageSchema = z.looseObject({
  data: z.array(transferSchema),
  nextCursor: z.string().nullable(),
});

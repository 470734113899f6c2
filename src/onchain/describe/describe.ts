// describeBridgeBatch: what a verified batch does, as an approver reads it and a signer checks it.
// Only a batch `verifyBridgeBatch` returned can be described: a description of an unchecked (or
// hand-made) object would put the SDK's wording on facts nobody verified.
import { ArgumentError } from '../../errors/client-errors.js';
import { verifiedRecord } from '../verified.js';
import type { VerifiedBridgeBatch } from '../verify/types.js';
import { authorizationHash, canonicalDigest, erc191Digest, type JsonValue } from './digest.js';
import { machineOf } from './machine.js';
import { type DescribeOptions, readDescribeOptions } from './options.js';
import { linesOf, type TextContext, titleOf, warningsOf } from './text.js';
import type { BridgeBatchView } from './types.js';

export type { DescribeOptions } from './options.js';
export type {
  BridgeBatchBinding,
  BridgeBatchView,
  BridgeSummaryMachine,
  DescriptionWarning,
  DescriptionWarningCode,
  MachineField,
} from './types.js';
export { BRIDGE_SUMMARY_SCHEMA } from './types.js';

/**
 * Describes a verified bridge batch: a title and one fact a line for a person, warnings with
 * stable codes, a locale-free `machine` form in ERC-7730 field vocabulary, and the digests that
 * bind them to what is signed. Synchronous and pure: it loads nothing and sends nothing.
 *
 * Amounts are exact from base units; when `maxFractionDigits` cuts one, what is received is
 * truncated and what is paid rounded up. `machine` and `binding.summaryDigest` are the same for
 * every locale, time zone and clock: a signer-side policy recomputes `summaryDigest` from the
 * `machine` it was shown and `erc191Digest` from the hash it is asked to sign, and refuses on a
 * mismatch.
 *
 * @param verified What `verifyBridgeBatch` returned; anything else (a copy, a look-alike) is an
 * `ArgumentError`.
 * @param options The locale and time zone of the text and the time relative times count from.
 * @throws {ArgumentError} `verified` is not a verified batch, or an option is wrong (a locale the
 * runtime cannot format, an unknown time zone).
 *
 * @example
 * const verified = verifyBridgeBatch({ route, construct, wallet, amount: '25.5' });
 * const view = describeBridgeBatch(verified, { locale: 'de-DE', timeZone: 'Europe/Berlin' });
 * console.log(view.title); // Bridge 25,5 USDC from Base to BNB Chain
 * for (const line of view.lines) console.log(line);
 * for (const { code, text } of view.warnings) console.warn(code, text);
 * // Shown beside the approval, recomputed by the signer's policy:
 * view.binding.erc191Digest;  // what a KMS `Sign(MessageType: DIGEST)` receives
 * view.binding.summaryDigest; // keccak256 of the canonical JSON of view.machine
 */
export function describeBridgeBatch(
  verified: VerifiedBridgeBatch,
  options?: DescribeOptions,
): BridgeBatchView {
  const record = verifiedRecord(verified);
  if (!record) {
    throw new ArgumentError({
      where: 'describeBridgeBatch',
      issues: [
        {
          path: 'verified',
          message: 'must be a batch verifyBridgeBatch returned (a copy or a look-alike is not verified)',
        },
      ],
    });
  }
  const read = readDescribeOptions('describeBridgeBatch', options);
  const machine = machineOf(verified);
  const context: TextContext = { verified, options: read, erc191Digest: erc191Digest(record.userOpHash) };
  return {
    title: titleOf(context),
    lines: linesOf(context),
    warnings: warningsOf(
      machine.warnings.map(({ code }) => code),
      context,
    ),
    machine,
    binding: {
      userOpHash: record.userOpHash,
      erc191Digest: context.erc191Digest,
      authorizationHash: record.authorization ? authorizationHash(record.authorization) : null,
      bundleDigest: verified.digest,
      summaryDigest: canonicalDigest(machine as unknown as JsonValue),
    },
  };
}

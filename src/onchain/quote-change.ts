// How a rebuilt bridge batch differs from the baseline a person agreed to: the one shape that
// quote-aware `execute` decides on, `QuoteChangedError` carries and `describeQuoteChange` words.

/** One amount of the quote, before and after, in base units of its token. */
export interface AmountChange {
  baseline: { amount: string; amountRaw: bigint };
  next: { amount: string; amountRaw: bigint };
  /** `next − baseline`, in base units (negative when it fell). */
  deltaRaw: bigint;
  /**
   * The change in basis points, a whole number rounded towards refusing (away from zero for a
   * drop in what is received or a rise in a fee): of the baseline `amountOut` for `amountOut`,
   * of the bridged amount (`amountIn`, the fees' own token) for the fees.
   */
  deltaBps: number;
}

/** One time of the quote, before and after. */
export interface TimeChange {
  baseline: Date;
  next: Date;
}

/**
 * What moved between the baseline verified batch and the next one. Recipient, depositor, tokens
 * and chains cannot appear here: a difference in them is an error, never a question.
 */
export interface QuoteChange {
  amountOut: AmountChange;
  providerFee: AmountChange;
  gasFee: AmountChange;
  fillDeadline: TimeChange;
  quoteExpiresAt: TimeChange;
}

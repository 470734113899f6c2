/** One problem with a value: where it is and what is wrong. */
export interface Issue {
  /** Dotted path inside the value, e.g. `amount` or `authorization.r`; empty for the value itself. */
  path: string;
  message: string;
}

/** What zod's `safeParse` fails with, or a hand-written reader's equivalent. */
export interface IssueList {
  issues: readonly { path: readonly PropertyKey[]; message: string }[];
}

/**
 * The issues of a failed parse, with dotted paths.
 *
 * @example
 * const result = schema.safeParse(value);
 * if (!result.success) throw new ArgumentError({ where, issues: toIssues(result.error) });
 */
export function toIssues(error: IssueList): Issue[] {
  return error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));
}

/**
 * Issues as one line for an error message: `path: message`, joined by `; `, the first `most` of
 * them followed by `; …` when there are more.
 *
 * @example
 * formatIssues([{ path: 'amount', message: 'must be positive' }]); // 'amount: must be positive'
 */
export function formatIssues(issues: readonly Issue[], most = Number.POSITIVE_INFINITY): string {
  const list = issues
    .slice(0, most)
    .map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message))
    .join('; ');
  return issues.length > most ? `${list}; …` : list;
}

/** What replaces a secret in a server-supplied text. */
export const REDACTED = '[redacted]';

/** Masks the secrets it was made with in a text. */
export type Redact = (text: string) => string;

export const noRedaction: Redact = (text) => text;

/**
 * From this length a secret is masked wherever it appears, inside a word too: a substring that long
 * is the secret (or a form of it), not a coincidence.
 */
export const MASKED_ANYWHERE_FROM = 8;

/** A letter or digit: what glues a short secret to the text around it. */
const WORD_CHAR = /[\p{L}\p{N}]/u;

/**
 * A redaction of the exact `secrets` (empty ones skipped), the longest first so that a part never
 * leaves the rest of a longer one behind. Servers and gateways echo requests back
 * (an `error_description` quoting the body, a 500 quoting the headers): whatever they send is passed
 * through this before it becomes part of an error.
 *
 * A secret of {@link MASKED_ANYWHERE_FROM} characters or more is masked wherever it appears. A
 * shorter one is masked as a whole value or token only: where it is not glued to a letter or digit on
 * either side (the text's edge, a space, `=`, `&`, a quote, a percent-escape such as `%3D` count as
 * bounds), so that a secret `b` masks `client_secret=b` and `"b"` but leaves `bad port` readable. A
 * secret whose own first (last) character is not a letter or digit needs no bound on that side.
 * Each form of the secret the request carries (URL-encoded, the Basic credential and its base64) is
 * its own entry, so an echo of any of them is masked by the same rule.
 */
export function redactor(secrets: readonly string[]): Redact {
  const list = [...new Set(secrets.filter((secret) => secret.length > 0))].sort(
    (a, b) => b.length - a.length,
  );
  if (list.length === 0) return noRedaction;
  return (text) => {
    let out = text;
    for (const secret of list) {
      if (!out.includes(secret)) continue;
      out = secret.length >= MASKED_ANYWHERE_FROM ? out.split(secret).join(REDACTED) : maskWhole(out, secret);
    }
    return out;
  };
}

/** `text` with each occurrence of a short `secret` that stands as a whole token masked. */
function maskWhole(text: string, secret: string): string {
  const gluedStart = isWordChar(firstChar(secret));
  const gluedEnd = isWordChar(lastChar(secret));
  let out = '';
  let from = 0;
  for (let at = text.indexOf(secret); at !== -1; at = text.indexOf(secret, at + 1)) {
    if (at < from) continue;
    const end = at + secret.length;
    // Only the few characters before it are looked at: a text with many occurrences stays linear.
    const before = text.slice(Math.max(0, at - 3), at);
    const boundedBefore = !gluedStart || !isWordChar(lastChar(before)) || /%[0-9A-Fa-f]{2}$/.test(before);
    const boundedAfter = !gluedEnd || !isWordChar(firstChar(text.slice(end)));
    if (!boundedBefore || !boundedAfter) continue;
    out += text.slice(from, at) + REDACTED;
    from = end;
  }
  return out + text.slice(from);
}

const isWordChar = (char: string | undefined) => char !== undefined && WORD_CHAR.test(char);
const firstChar = (text: string) => (text === '' ? undefined : String.fromCodePoint(text.codePointAt(0)!));
const lastChar = (text: string) => [...text.slice(-2)].at(-1);

/** What replaces an object or array nested deeper than {@link MAX_DEPTH} in what an error keeps. */
export const TRUNCATED = '[truncated]';

/**
 * How deep an error keeps a server's body. Deeper, a value is replaced rather than kept: what is
 * kept unread could hold an echoed secret, and walking it could overflow the stack (JSON.parse
 * reads a body nested 100,000 levels deep; a recursive walk of it does not).
 */
export const MAX_DEPTH = 32;

/** Redacts every string in a parsed JSON value, keys included; past {@link MAX_DEPTH}, truncates. */
export function redactDeep(value: unknown, redact: Redact, depth = 0): unknown {
  if (typeof value === 'string') return redact(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return TRUNCATED;
  if (Array.isArray(value)) return value.map((item) => redactDeep(item, redact, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) out[redact(key)] = redactDeep(inner, redact, depth + 1);
  return out;
}

const BUILT_IN_ERRORS = [TypeError, RangeError, SyntaxError, ReferenceError, URIError, EvalError];

/**
 * A copy of a foreign error (what a custom `fetch` or the network layer threw) that keeps only its
 * name, redacted message, `code` and, a few levels deep, the same of its cause. The original may hold
 * the `Request`, whose headers carry the bearer token or the Basic credential.
 */
export function safeCause(error: unknown, redact: Redact, depth = 0): Error | undefined {
  if (error === undefined || error === null) return undefined;
  try {
    const source =
      typeof error === 'object' ? (error as Record<string, unknown>) : { message: String(error) };
    const message = typeof source.message === 'string' ? source.message : '';
    // The built-in class is kept, so `cause instanceof TypeError` checks still hold.
    const Class = BUILT_IN_ERRORS.find((Builtin) => error instanceof Builtin) ?? Error;
    const copy = new Class(redact(message)) as Error & { code?: string | number };
    copy.name = typeof source.name === 'string' ? redact(source.name) : 'Error';
    if (typeof source.code === 'string') copy.code = redact(source.code);
    else if (typeof source.code === 'number') copy.code = source.code;
    if (depth < 3 && source.cause !== undefined) {
      const cause = safeCause(source.cause, redact, depth + 1);
      if (cause) copy.cause = cause;
    }
    // Its own stack would only say where this copy was made.
    copy.stack = `${copy.name}: ${copy.message}`;
    return copy;
  } catch {
    // A cause whose reads throw (a Proxy) is not worth failing over.
    return new Error('unreadable cause');
  }
}

/** How long a foreign error's reason may be in a message: a first line, not a dump. */
export const MAX_REASON_LENGTH = 200;

/**
 * What an error message of code the SDK does not own (a signer, a driver, a runtime) may show of its
 * text, whose content nobody checked: the first line, with what could be a key or a credential
 * masked (a run of 40 or more hex digits, a `Bearer`/`Basic` credential, a JWT) and a double-quoted
 * excerpt (how `JSON.parse` and many libraries quote the input they refused) shown as `"…"`, then
 * capped at {@link MAX_REASON_LENGTH}. Masked before it is cut, so a cut never leaves part of a key.
 */
export function scrubForeign(text: string, max = MAX_REASON_LENGTH): string {
  const line = (text.split(/\r\n|\r|\n/, 1)[0] ?? '')
    .replace(/(?:0x)?[0-9a-fA-F]{40,}/g, REDACTED)
    .replace(/\b(Bearer|Basic)\s+[^\s,;'"()]+/gi, `$1 ${REDACTED}`)
    .replace(/\beyJ[\w-]*\.[\w-]+(?:\.[\w-]*)?/g, REDACTED)
    .replace(/"[^"]*"/g, '"…"')
    .trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

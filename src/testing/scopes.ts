import { KNOWN_SCOPES } from '../schemas/auth.js';

/** Individual permissions, the wildcards excluded: what a wildcard expands to. */
const INDIVIDUAL = KNOWN_SCOPES.filter((scope) => !scope.startsWith('all:'));

/** Expands `all:read` / `all:write` into the individual permissions they cover. */
export function expandScopes(scopes: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const scope of scopes) {
    if (scope === 'all:read') for (const s of INDIVIDUAL) if (s.endsWith(':read')) out.add(s);
    if (scope === 'all:write') for (const s of INDIVIDUAL) if (s.endsWith(':write')) out.add(s);
    if (!scope.startsWith('all:')) out.add(scope);
  }
  return out;
}

/** True when `held` (as granted, wildcards included) fully covers the requested scope. */
export function covers(held: ReadonlySet<string>, requested: string): boolean {
  const expandedHeld = expandScopes(held);
  if (requested.startsWith('all:')) {
    // A wildcard is its own grant: asking for it needs the wildcard itself.
    return held.has(requested);
  }
  return expandedHeld.has(requested);
}

export function intersect(a: ReadonlySet<string>, b: ReadonlySet<string>): Set<string> {
  return new Set([...a].filter((scope) => b.has(scope)));
}

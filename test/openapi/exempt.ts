/**
 * For the rare test whose answer does not come from one of our services: a stub upstream behind a real
 * gateway, to see what the proxy forwards. Marks that one request so the OpenAPI check (setup.ts) counts
 * it as exempt instead of checking it; say why.
 */
export const NOT_UNDER_CONTRACT = Symbol.for('bookstore.openapi.notUnderContract');

export function notUnderContract<T extends object>(test: T, why: string): T {
  (test as Record<symbol, string>)[NOT_UNDER_CONTRACT] = why;
  return test;
}

/**
 * How a section of the configuration reads its variables: trimmed, a blank one as unset, and a
 * value that cannot be used refused with a ConfigError that names the variable.
 */

export class ConfigError extends Error {}

export type Env = Record<string, string | undefined>;

export interface LoadOptions {
  /** The embedded default fills in what a lone service must be given explicitly. */
  embedded?: boolean;
}

export interface EnvReader {
  /** Whether this is the embedded default (`npm start`), which fills in what a lone service must be given. */
  readonly embedded: boolean;
  /** The trimmed value; undefined when unset or blank. */
  read(name: string): string | undefined;
  /** An integer of at least `min`, or `fallback` when unset. */
  int(name: string, fallback: number, min?: number): number;
  /** `true` or `false` in any case, or `fallback` when unset. */
  bool(name: string, fallback: boolean): boolean;
  /** A comma-separated list, its blank entries dropped; undefined when unset. */
  list(name: string): string[] | undefined;
}

export function envReader(env: Env, options: LoadOptions): EnvReader {
  const read = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  return {
    embedded: options.embedded ?? false,
    read,
    int(name, fallback, min = 0) {
      const raw = read(name);
      if (raw === undefined) return fallback;
      const value = Number(raw);
      if (!Number.isInteger(value) || value < min) {
        throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
      }
      return value;
    },
    bool(name, fallback) {
      const raw = read(name)?.toLowerCase();
      if (raw === undefined) return fallback;
      if (raw !== 'true' && raw !== 'false') throw new ConfigError(`${name} must be true or false, got "${raw}"`);
      return raw === 'true';
    },
    list(name) {
      return read(name)
        ?.split(',')
        .map((entry) => entry.trim())
        .filter(Boolean);
    },
  };
}

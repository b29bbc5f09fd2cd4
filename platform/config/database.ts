/** Where the services keep their data: the data folder (SQLite, keys, covers) or a MySQL/MariaDB server. */
import path from 'node:path';
import { ConfigError, type EnvReader } from './env';

export interface DatabaseConfig {
  dataDir: string;
  /** MySQL/MariaDB server URL without a database; each service uses `<dbPrefix><service>`. */
  dbUrl: string | undefined;
  dbPrefix: string;
}

export function readDatabase(env: EnvReader): DatabaseConfig {
  const dataDir = path.resolve(env.read('DATA_DIR') ?? 'data');
  const dbUrl = env.read('DB_URL');
  if (dbUrl !== undefined && !/^mysql:\/\//.test(dbUrl)) {
    throw new ConfigError(`DB_URL must be a mysql:// URL, got "${dbUrl}"`);
  }
  const dbPrefix = env.read('DB_PREFIX') ?? 'bookstore_';
  if (!/^[A-Za-z0-9_]{1,40}$/.test(dbPrefix)) {
    throw new ConfigError(`DB_PREFIX may hold only letters, digits and underscores, got "${dbPrefix}"`);
  }
  return { dataDir, dbUrl, dbPrefix };
}

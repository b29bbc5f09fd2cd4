/** Tests are quiet unless LOG_LEVEL asks otherwise. */
import 'reflect-metadata';
process.env.LOG_LEVEL ??= 'silent';

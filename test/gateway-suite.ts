/**
 * A test file's gateway: a stack of real services with the gateway in front, started before the
 * file's tests and stopped after them (jest's hooks, so for test files only).
 */
import request from 'supertest';
import type { Config } from '../platform/config';
import { startGateway, type GatewayOptions, type RunningGateway } from './gateway';
import { startStack, type Stack, type StackOptions } from './stack';

export interface GatewayOverStack {
  /** Set once the file's tests run. */
  stack: Stack;
  gateway: RunningGateway;
  /** A request to the gateway. */
  via: () => ReturnType<typeof request>;
  /** Another gateway over the same stack, with some settings changed; stopped after the file. */
  gatewayWith: (config: Partial<Config>, options?: GatewayOptions) => Promise<RunningGateway>;
}

export function gatewayOverStack(stackOptions: StackOptions, gatewayOptions: GatewayOptions = {}): GatewayOverStack {
  const extra: RunningGateway[] = [];
  const setup = {
    via: () => request(setup.gateway.url),
    gatewayWith: async (config: Partial<Config>, options: GatewayOptions = {}) => {
      const started = await startGateway({ ...setup.stack.config, ...config }, options);
      extra.push(started);
      return started;
    },
  } as GatewayOverStack;
  beforeAll(async () => {
    setup.stack = await startStack(stackOptions);
    setup.gateway = await startGateway(setup.stack.config, gatewayOptions);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([setup.gateway, ...extra].map((g) => g?.stop()));
    await setup.stack?.stop();
  });
  return setup;
}

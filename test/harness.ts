/** What test files import: the stack of real services, waiting, and the contract's error envelope. */
import type request from 'supertest';

export * from './stack';
export { waitFor } from './wait';
export { notUnderContract } from './openapi/exempt';

/** Asserts the contract's error envelope (CONTRACT §1.1). */
export function expectEnvelope(res: request.Response, status: number, message?: string | RegExp): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/application\/json/);
  expect(res.body).toEqual({
    timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/),
    status,
    error: expect.any(String),
    message: message === undefined ? expect.any(String) : typeof message === 'string' ? message : expect.stringMatching(message),
    path: expect.stringMatching(/^\//),
    validationErrors: status === 400 && res.body.message === 'Validation failed for one or more fields' ? expect.any(Array) : null,
  });
}

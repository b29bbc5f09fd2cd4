/**
 * Every service's factory, in start order: a service comes after those it calls at start-up
 * (the auth service creates the bootstrap admin's profile in the user service).
 */
import type { ServiceName } from '../platform/config';
import type { ProcessDeps } from '../platform/run';
import type { BookstoreService } from '../rest-compat/service';
import { createAnalyticsService } from './analytics';
import { createAuthService } from './auth';
import { createBookService } from './book';
import { createOrderService } from './order';
import { createPaymentService } from './payment';
import { createUserService } from './user';

export type ServiceFactory = (deps: ProcessDeps) => Promise<BookstoreService>;

export const SERVICE_FACTORIES: Partial<Record<ServiceName, ServiceFactory>> = {
  user: createUserService,
  auth: createAuthService,
  book: createBookService,
  order: createOrderService,
  payment: createPaymentService,
  analytics: createAnalyticsService,
};

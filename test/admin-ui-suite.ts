/**
 * A test file of the admin UI: the built app (dist/admin) served by a real gateway in front of real
 * services, driven in headless Chromium with the admin's session; started before the file's tests
 * (jest's hooks). Every page's script and console errors are collected for the file's last test,
 * and screenshots land in test-results/screenshots/.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import request from 'supertest';
import { graphqlHalf } from '../gateway/graphql';
import type { MountedGraphql } from '../gateway';
import { createLogger } from '../platform/logger';
import { ensureAdminBuilt, launchChromium, SCREENSHOTS_DIR, type Browser } from './admin-ui';
import { startGateway, type RunningGateway } from './gateway';
import { orderOf, paidPurchase, type Purchase } from './graphql';
import { adminSession, registeredUser, startStack, waitFor, type Stack } from './harness';

export type Buyer = Awaited<ReturnType<typeof registeredUser>>;
export type Dashboard = Record<'totalOrders' | 'paidOrders' | 'failedPayments' | 'totalRevenue' | 'averageOrderValue' | 'booksSold' | 'paymentSuccessRate', number>;

/** Evaluated in the page (this file is type-checked without the DOM library). */
export const STORED_REFRESH_TOKEN = "sessionStorage.getItem('bookstore-admin.refresh-token')";

export const today = () => new Date().toISOString().slice(0, 10);

export async function screenshot(target: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  await target.screenshot({ path: path.join(SCREENSHOTS_DIR, `${name}.png`), fullPage: true });
}

/** Polls a locator's text until it matches: the page renders after its GraphQL answer arrives. */
export async function textOf(locator: Locator, expected: string | RegExp): Promise<string> {
  return waitFor(
    async () => {
      const text = (await locator.textContent({ timeout: 1000 })) ?? '';
      return (typeof expected === 'string' ? text.includes(expected) : expected.test(text)) ? text : undefined;
    },
    { what: `text ${String(expected)}`, timeoutMs: 15_000 },
  );
}

export async function attribute(locator: Locator, name: string, changedFrom?: string): Promise<string> {
  return waitFor(
    async () => {
      const value = await locator.getAttribute(name, { timeout: 1000 });
      return value !== null && value !== changedFrom ? value : undefined;
    },
    { what: `attribute ${name}`, timeoutMs: 15_000 },
  );
}

/** What the file's tests drive, once started. */
export interface AdminUi {
  stack: Stack;
  gateway: RunningGateway;
  browser: Browser;
  admin: Awaited<ReturnType<typeof adminSession>>;
  /** The tab the tests share. */
  page: Page;
}

/** A real purchase, as the dashboard then shows it. */
export interface RealPurchase {
  buyer: Buyer;
  purchase: Purchase;
  orderId: string;
}

/** Starts the UI before the file's tests (the stack with `options.env`) and hands it to `started`; the helpers returned act on it. */
export function adminUiSuite(started: (ui: AdminUi) => void, options: { env?: Record<string, string> } = {}) {
  let ui: AdminUi;
  // Each kept as soon as it runs, so that a start failing halfway stops what it started.
  let stack: Stack | undefined;
  let gateway: RunningGateway | undefined;
  let browser: Browser | undefined;
  let graphql: MountedGraphql | undefined;
  const pageProblems: string[] = [];
  beforeAll(async () => {
    await ensureAdminBuilt();
    stack = await startStack({ services: ['book', 'order', 'payment', 'analytics'], env: options.env });
    const half = graphqlHalf({ config: stack.config, logger: createLogger(stack.config.logLevel), bus: stack.bus });
    gateway = await startGateway(stack.config, { mountGraphql: async (app, registry) => (graphql = await half(app, registry)) });
    const admin = await adminSession(stack);
    browser = await launchChromium();
    // Script errors and console errors (a CSP violation, a failed asset) of every page, checked at the end.
    browser.context.on('page', (opened) => {
      opened.on('pageerror', (error) => pageProblems.push(`${opened.url()}: ${error.message}`));
      opened.on('console', (message) => {
        if (message.type() === 'error') pageProblems.push(`${opened.url()}: ${message.text()}`);
      });
    });
    ui = { stack, gateway, browser, admin, page: await browser.context.newPage() };
    started(ui);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await stack?.stop();
  });

  const restAs = (bearer: string, target: string) => request(ui.gateway.url).get(target).set('Authorization', bearer);

  return {
    /** Script and console errors of every page so far, for the file's last test. */
    pageProblems,
    restAs,

    /** Ends the gateway's open subscription streams, as a gateway that stops does. */
    dropStreams(): void {
      graphql?.beforeClose?.();
    },

    async signIn(target: Page, email: string, password: string): Promise<void> {
      await target.goto(`${ui.gateway.url}/admin/`);
      await target.getByLabel('Email').fill(email);
      await target.getByLabel('Password').fill(password);
      await target.getByRole('button', { name: 'Sign in' }).click();
    },

    /**
     * Chromium logs every 4xx answer to a fetch as a console error; a test that provokes one on purpose
     * (a 409 the page shows) takes that one entry off the list the last test checks.
     */
    async expectFailedLoad(status: number): Promise<void> {
      const entry = await waitFor(() => pageProblems.find((problem) => problem.includes(`Failed to load resource: the server responded with a status of ${status}`)), {
        what: `the console entry of the ${status} answer`,
      });
      pageProblems.splice(pageProblems.indexOf(entry), 1);
    },

    /** Register, check out two books, the simulator pays, the order is made and analytics counts it. */
    async realPurchase(): Promise<RealPurchase> {
      const { stack, admin } = ui;
      const buyer = await registeredUser(stack, { firstName: 'Grace', lastName: `Hopper${Date.now() % 100_000}` });
      const purchase = await paidPurchase(stack, buyer.bearer, admin.bearer);
      const orderId = await orderOf(stack, buyer.bearer, purchase.paymentId);
      await waitFor(
        async () => {
          const res = await restAs(admin.bearer, '/analytics/dashboard');
          return res.status === 200 && res.body.paidOrders === 1 && res.body.totalOrders === 1;
        },
        { what: 'analytics to count the purchase' },
      );
      return { buyer, purchase, orderId };
    },
  };
}

/**
 * The stored operations, imported as text so the files that `npm run schema:check` validates are
 * exactly what the UI sends (each with the shared fragments it spreads), and the shapes of their
 * answers (Money is a decimal string).
 */
import BOOK from '../../operations/book.graphql?raw';
import DASHBOARD from '../../operations/dashboard.graphql?raw';
import DELETE_USER from '../../operations/delete-user.graphql?raw';
import END_USER_SESSIONS from '../../operations/end-user-sessions.graphql?raw';
import FRAGMENTS from '../../operations/fragments.graphql?raw';
import ORDERS from '../../operations/orders.graphql?raw';
import REPORTS from '../../operations/reports.graphql?raw';
import SEARCH_USERS from '../../operations/search-users.graphql?raw';
import UPDATE_ORDER_STATUS from '../../operations/update-order-status.graphql?raw';
import UPDATE_USER from '../../operations/update-user.graphql?raw';
import USER from '../../operations/user.graphql?raw';
import USERS from '../../operations/users.graphql?raw';
import { graphql } from './graphql';

/** fragments.graphql's definitions by name, each as its text from `fragment` to the next one. */
const SHARED_FRAGMENTS = new Map(
  FRAGMENTS.split(/^(?=fragment )/m).flatMap((text) => {
    const name = /^fragment (\w+)/.exec(text)?.[1];
    return name ? [[name, text.trim()] as const] : [];
  }),
);

/**
 * An operation as sent: its text and the shared fragments it spreads, directly or through another
 * (GraphQL refuses a document with a fragment it does not use).
 */
function withFragments(operation: string): string {
  const used = new Map<string, string>();
  const spreadsOf = (text: string) => {
    for (const [, name] of text.matchAll(/\.\.\.\s*(\w+)/g)) {
      const definition = SHARED_FRAGMENTS.get(name);
      if (definition === undefined || used.has(name)) continue;
      used.set(name, definition);
      spreadsOf(definition);
    }
  };
  spreadsOf(operation);
  return [operation.trimEnd(), ...used.values()].join('\n\n');
}

export type Money = string;
export type OrderStatus = 'CONFIRMED' | 'PROCESSING' | 'SHIPPED' | 'DELIVERED' | 'CANCELLED' | 'REFUNDED';
export const ORDER_STATUSES: OrderStatus[] = ['CONFIRMED', 'PROCESSING', 'SHIPPED', 'DELIVERED', 'CANCELLED', 'REFUNDED'];

export interface DashboardFigures {
  totalOrders: number;
  paidOrders: number;
  failedPayments: number;
  totalRevenue: Money;
  averageOrderValue: Money;
  booksSold: number;
  paymentSuccessRate: number;
}

export interface DashboardData {
  dashboard: DashboardFigures;
  paymentReport: { paidOrders: number; failedPayments: number; paymentSuccessRate: number; refundedPayments: number; refundedAmount: Money };
  bookReport: {
    booksSold: number;
    topBooks: { bookId: string; bookTitle: string; quantitySold: number; revenue: Money; book: { id: string; title: string } | null }[];
  };
}

export interface ReportsData {
  revenueReport: {
    totalRevenue: Money;
    daily: { date: string; revenue: Money; paidOrders: number }[];
    monthly: { month: string; revenue: Money; paidOrders: number; ordersCreated: number }[];
  };
  orderReport: { totalOrders: number; paidOrders: number; daily: { date: string; ordersCreated: number; paidOrders: number }[] };
}

export interface BookData {
  book: {
    id: string;
    title: string;
    authors: { id: string; firstName: string; lastName: string | null }[];
    category: { name: string } | null;
    publisher: { name: string } | null;
    coverImageUrl: string | null;
    isbn: string;
    price: Money;
    /** Null: the book's inventory is not tracked. */
    stock: number | null;
    language: string;
    publishedDate: string | null;
    description: string | null;
    sales: { quantitySold: number; revenue: Money };
  } | null;
}

export interface UserRow {
  userId: string;
  firstName: string;
  lastName: string;
  email: string;
  phoneNumber: string;
  createdAt: string;
}

export interface UserProfile extends UserRow {
  dateOfBirth: string;
  address: string;
  updatedAt: string;
}

export interface LineItem {
  bookId: string;
  bookTitle: string;
  quantity: number;
  price: Money;
}

export interface UserPayment {
  paymentId: string;
  orderId: string | null;
  amount: Money;
  currency: string;
  status: string;
  createdAt: string;
  items: LineItem[];
}

export interface UserOrder {
  orderId: string;
  paymentId: string;
  totalAmount: Money;
  status: OrderStatus;
  createdAt: string;
  items: LineItem[];
}

/** A device the user is signed in on. */
export interface UserSession {
  sessionId: string;
  deviceId: string;
  deviceName: string;
  createdAt: string;
  lastUsedAt: string;
}

export interface UserData {
  user: (UserProfile & { payments: UserPayment[]; orders: UserOrder[]; sessions: UserSession[] | null }) | null;
}

export interface UserInput {
  firstName: string;
  lastName: string;
  phoneNumber: string;
  dateOfBirth: string;
  address: string;
}

export interface OrderRow {
  orderId: string;
  userId: string;
  user: { email: string; firstName: string; lastName: string } | null;
  totalAmount: Money;
  status: OrderStatus;
  /** What an admin may move the order to, as the order service's transition table says. */
  allowedNextStatuses: OrderStatus[];
  createdAt: string;
  updatedAt: string;
  items: { bookTitle: string; quantity: number }[];
}

/** Every operation goes out with the shared fragments it spreads. */
const send = <T>(operation: string, variables?: Record<string, unknown>) => graphql<T>(withFragments(operation), variables);

export const api = {
  dashboard: () => send<DashboardData>(DASHBOARD),
  reports: (from: string, to: string) => send<ReportsData>(REPORTS, { from, to }),
  book: (id: string) => send<BookData>(BOOK, { id }),
  users: () => send<{ users: UserRow[] }>(USERS).then((data) => data.users),
  searchUsers: (keyword: string) => send<{ searchUsers: UserRow[] }>(SEARCH_USERS, { keyword }).then((data) => data.searchUsers),
  user: (userId: string) => send<UserData>(USER, { userId }).then((data) => data.user),
  updateUser: (userId: string, input: UserInput) => send<{ updateUser: UserProfile }>(UPDATE_USER, { userId, input }).then((data) => data.updateUser),
  deleteUser: (userId: string) => send<{ deleteUser: string }>(DELETE_USER, { userId }),
  endUserSessions: (userId: string) => send<{ endUserSessions: number }>(END_USER_SESSIONS, { userId }).then((data) => data.endUserSessions),
  orders: (status: OrderStatus | undefined, limit: number, offset: number) =>
    send<{ orders: OrderRow[] }>(ORDERS, { status: status ?? null, limit, offset }).then((data) => data.orders),
  updateOrderStatus: (orderId: string, status: OrderStatus) =>
    send<{ updateOrderStatus: Pick<OrderRow, 'orderId' | 'status' | 'allowedNextStatuses' | 'updatedAt'> }>(UPDATE_ORDER_STATUS, { orderId, status }).then(
      (data) => data.updateOrderStatus,
    ),
};

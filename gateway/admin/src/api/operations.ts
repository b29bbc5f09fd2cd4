/**
 * The stored operations, imported as text so the files that `npm run schema:check` validates are
 * exactly what the UI sends, and the shapes of their answers (Money is a decimal string).
 */
import BOOK from '../../operations/book.graphql?raw';
import DASHBOARD from '../../operations/dashboard.graphql?raw';
import DELETE_USER from '../../operations/delete-user.graphql?raw';
import ORDERS from '../../operations/orders.graphql?raw';
import REPORTS from '../../operations/reports.graphql?raw';
import SEARCH_USERS from '../../operations/search-users.graphql?raw';
import UPDATE_ORDER_STATUS from '../../operations/update-order-status.graphql?raw';
import UPDATE_USER from '../../operations/update-user.graphql?raw';
import USER from '../../operations/user.graphql?raw';
import USERS from '../../operations/users.graphql?raw';
import { graphql } from './graphql';

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
    authors: string[];
    isbn: string;
    price: Money;
    stock: number;
    language: string;
    publishedDate: string;
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

export interface UserData {
  user: (UserProfile & { payments: UserPayment[]; orders: UserOrder[] }) | null;
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
  createdAt: string;
  updatedAt: string;
  items: { bookTitle: string; quantity: number }[];
}

export const api = {
  dashboard: () => graphql<DashboardData>(DASHBOARD),
  reports: (from: string, to: string) => graphql<ReportsData>(REPORTS, { from, to }),
  book: (id: string) => graphql<BookData>(BOOK, { id }),
  users: () => graphql<{ users: UserRow[] }>(USERS).then((data) => data.users),
  searchUsers: (keyword: string) => graphql<{ searchUsers: UserRow[] }>(SEARCH_USERS, { keyword }).then((data) => data.searchUsers),
  user: (userId: string) => graphql<UserData>(USER, { userId }).then((data) => data.user),
  updateUser: (userId: string, input: UserInput) => graphql<{ updateUser: UserProfile }>(UPDATE_USER, { userId, input }).then((data) => data.updateUser),
  deleteUser: (userId: string) => graphql<{ deleteUser: string }>(DELETE_USER, { userId }),
  orders: (status: OrderStatus | undefined, limit: number, offset: number) =>
    graphql<{ orders: OrderRow[] }>(ORDERS, { status: status ?? null, limit, offset }).then((data) => data.orders),
  updateOrderStatus: (orderId: string, status: OrderStatus) =>
    graphql<{ updateOrderStatus: { orderId: string; status: OrderStatus; updatedAt: string } }>(UPDATE_ORDER_STATUS, { orderId, status }).then((data) => data.updateOrderStatus),
};

/** What an admin may move an order to (the order service enforces the same table). */
export const NEXT_STATUSES: Record<OrderStatus, OrderStatus[]> = {
  CONFIRMED: ['PROCESSING', 'CANCELLED'],
  PROCESSING: ['SHIPPED', 'CANCELLED'],
  SHIPPED: ['DELIVERED'],
  DELIVERED: [],
  CANCELLED: [],
  REFUNDED: [],
};

/**
 * The stored operations (gateway/admin/operations/*.graphql) as the UI calls them. Their documents and
 * the shapes of their answers are generated from those files against the supergraph's API schema
 * (generated/operations.ts, `npm run schema:codegen`): each document carries the shared fragments it
 * spreads, and `npm run schema:check` fails when the files and the generated types part. Money is a
 * decimal string.
 */
import {
  BookDocument,
  CreateWebhookEndpointDocument,
  DashboardDocument,
  DeleteUserDocument,
  EndUserSessionsDocument,
  LocalMailboxDocument,
  OrderDocument,
  OrdersDocument,
  RefundPaymentDocument,
  ReportsDocument,
  ResendWebhookDeliveryDocument,
  RotateWebhookSecretDocument,
  SearchBooksDocument,
  SchemaRegistryDocument,
  SearchUsersDocument,
  SendWebhookTestDocument,
  SetWebhookEndpointEnabledDocument,
  UpdateOrderStatusDocument,
  UpdateUserDocument,
  UserDocument,
  UsersDocument,
  WebhookDeliveriesDocument,
  WebhookEndpointsDocument,
  type OrderQuery,
  type SchemaRegistryQuery,
  type OrdersQuery,
  type RefundInput,
  type OrderStatus,
  type UserInput,
  type UserQuery,
} from './generated/operations';
import { graphql } from './graphql';

export type { OrderStatus, RefundInput, RefundReason, RefundRowFragment as RefundRow } from './generated/operations';
export type { WebhookDeliveryRowFragment as WebhookDeliveryRow, WebhookEndpointRowFragment as WebhookEndpointRow } from './generated/operations';
export type { DashboardQuery as DashboardData, ReportsQuery as ReportsData, UserQuery as UserData, UserProfileFragment as UserProfile } from './generated/operations';

/** Every status, in the order an order moves through them; a status the schema adds is a compile error here. */
const LIFECYCLE: Record<OrderStatus, true> = { CONFIRMED: true, PROCESSING: true, SHIPPED: true, DELIVERED: true, CANCELLED: true, REFUNDED: true };
export const ORDER_STATUSES = Object.keys(LIFECYCLE) as OrderStatus[];

type UserDetail = NonNullable<UserQuery['user']>;
export type UserPayment = UserDetail['payments'][number];
export type UserOrder = UserDetail['orders'][number];
/** A device the user is signed in on. */
export type UserSession = NonNullable<UserDetail['sessions']>[number];
export type LineItem = UserPayment['items'][number];
export type OrderRow = OrdersQuery['orders'][number];
export type OrderDetail = NonNullable<OrderQuery['order']>;
/** A coordinate of the schema with its usage (the Schema page). */
export type SchemaFieldRow = SchemaRegistryQuery['schemaUsage']['fields'][number];
/** What the profile form edits: the schema's UserInput but `email`, which may only be sent unchanged. */
export type ProfileFields = Omit<UserInput, 'email'>;

export const api = {
  dashboard: () => graphql(DashboardDocument),
  reports: (from: string, to: string) => graphql(ReportsDocument, { from, to }),
  book: (id: string) => graphql(BookDocument, { id }),
  users: () => graphql(UsersDocument).then((data) => data.users),
  searchBooks: (q: string, limit: number, offset: number) => graphql(SearchBooksDocument, { q, limit, offset }).then((data) => data.searchBooks),
  searchUsers: (keyword: string) => graphql(SearchUsersDocument, { keyword }).then((data) => data.searchUsers),
  user: (userId: string) => graphql(UserDocument, { userId }).then((data) => data.user),
  updateUser: (userId: string, input: ProfileFields) => graphql(UpdateUserDocument, { userId, input }).then((data) => data.updateUser),
  deleteUser: (userId: string) => graphql(DeleteUserDocument, { userId }),
  endUserSessions: (userId: string) => graphql(EndUserSessionsDocument, { userId }).then((data) => data.endUserSessions),
  orders: (status: OrderStatus | undefined, limit: number, offset: number) => graphql(OrdersDocument, { status: status ?? null, limit, offset }).then((data) => data.orders),
  order: (orderId: string) => graphql(OrderDocument, { orderId }).then((data) => data.order),
  refundPayment: (paymentId: string, input: RefundInput) => graphql(RefundPaymentDocument, { paymentId, input }).then((data) => data.refundPayment),
  updateOrderStatus: (orderId: string, status: OrderStatus) => graphql(UpdateOrderStatusDocument, { orderId, status }).then((data) => data.updateOrderStatus),
  localMailbox: (limit: number) => graphql(LocalMailboxDocument, { limit }).then((data) => data.localMailbox),
  webhookEndpoints: () => graphql(WebhookEndpointsDocument),
  webhookDeliveries: (endpointId: string, limit: number, offset: number) =>
    graphql(WebhookDeliveriesDocument, { endpointId, limit, offset }).then((data) => data.webhookDeliveries),
  createWebhookEndpoint: (url: string, events: string[], description: string | null) =>
    graphql(CreateWebhookEndpointDocument, { input: { url, events, description } }).then((data) => data.createWebhookEndpoint),
  setWebhookEndpointEnabled: (id: string, enabled: boolean) => graphql(SetWebhookEndpointEnabledDocument, { id, enabled }).then((data) => data.updateWebhookEndpoint),
  rotateWebhookSecret: (id: string) => graphql(RotateWebhookSecretDocument, { id }).then((data) => data.rotateWebhookSecret),
  sendWebhookTest: (endpointId: string) => graphql(SendWebhookTestDocument, { endpointId }).then((data) => data.sendWebhookTest),
  resendWebhookDelivery: (deliveryId: string) => graphql(ResendWebhookDeliveryDocument, { deliveryId }).then((data) => data.resendWebhookDelivery),
  schemaRegistry: (days: number) => graphql(SchemaRegistryDocument, { days }),
};

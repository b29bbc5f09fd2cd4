/** GraphQL fields of the outbound webhooks, as thin as routes.ts: parse, authorize, call the same service. */
import { requireAuth, type MapperCovers, type SubgraphContext } from '../../../platform/subgraph';
import { parseLimitOffsetArgs, parseUuid, validateBody } from '../../../platform/validation';
import type { OrderLoaders } from '../resolvers';
import type { MutationResolvers, QueryResolvers, WebhookDeliveryResolvers } from '../generated/resolvers-types';
import { assertRole } from '../../../platform/auth';
import { CreateEndpointRequest, RotateSecretRequest, UpdateEndpointRequest } from './dto';
import { SUBSCRIPTIONS } from './events';
import type { DeliveryResponse, EndpointWithSecret, WebhookService } from './service';

type Ctx = SubgraphContext<OrderLoaders>;

export type WebhookMappers = [MapperCovers<WebhookDeliveryResolvers, DeliveryResponse, 'payload'>];

const withSecret = ({ secret, ...endpoint }: EndpointWithSecret) => ({ endpoint, secret });

export function webhookResolvers(service: WebhookService): {
  Query: Pick<QueryResolvers<Ctx>, 'webhookEndpoints' | 'webhookSubscriptions' | 'webhookEndpoint' | 'webhookDeliveries'>;
  Mutation: Pick<
    MutationResolvers<Ctx>,
    'createWebhookEndpoint' | 'updateWebhookEndpoint' | 'deleteWebhookEndpoint' | 'rotateWebhookSecret' | 'sendWebhookTest' | 'resendWebhookDelivery'
  >;
  WebhookDelivery: WebhookDeliveryResolvers<Ctx>;
} {
  return {
    Query: {
      webhookEndpoints: (_, __, ctx) => service.list(requireAuth(ctx)),
      webhookSubscriptions: (_, __, ctx) => {
        assertRole(requireAuth(ctx), 'ADMIN');
        return [...SUBSCRIPTIONS];
      },
      webhookEndpoint: (_, args, ctx) => service.get(requireAuth(ctx), parseUuid(args.id, 'id')),
      webhookDeliveries: async (_, args, ctx) => {
        const principal = requireAuth(ctx);
        const page = parseLimitOffsetArgs(args, { limit: 50, maxLimit: 200 });
        return (await service.listDeliveries(principal, parseUuid(args.endpointId, 'endpointId'), { ...page, status: args.status ?? undefined })).deliveries;
      },
    },
    Mutation: {
      createWebhookEndpoint: async (_, args, ctx) => {
        const principal = requireAuth(ctx);
        return withSecret(await service.create(principal, await validateBody(CreateEndpointRequest, args.input)));
      },
      updateWebhookEndpoint: async (_, args, ctx) => {
        const principal = requireAuth(ctx);
        const input = Object.fromEntries(Object.entries(args.input).filter(([key, value]) => value !== null || key === 'description'));
        return service.update(principal, parseUuid(args.id, 'id'), await validateBody(UpdateEndpointRequest, input));
      },
      deleteWebhookEndpoint: async (_, args, ctx) => {
        await service.remove(requireAuth(ctx), parseUuid(args.id, 'id'));
        return true;
      },
      rotateWebhookSecret: async (_, args, ctx) => {
        const principal = requireAuth(ctx);
        const request = await validateBody(RotateSecretRequest, args.overlapSeconds === null || args.overlapSeconds === undefined ? {} : { overlapSeconds: args.overlapSeconds });
        return withSecret(await service.rotateSecret(principal, parseUuid(args.id, 'id'), request));
      },
      sendWebhookTest: (_, args, ctx) => service.sendTest(requireAuth(ctx), parseUuid(args.endpointId, 'endpointId')),
      resendWebhookDelivery: (_, args, ctx) => service.resend(requireAuth(ctx), parseUuid(args.deliveryId, 'deliveryId')),
    },
    WebhookDelivery: {
      payload: (delivery) => JSON.stringify(delivery.payload),
    },
  };
}

/** GraphQL fields of the schema registry, as thin as routes.ts: parse, authorize, call the same service. */
import { requireAuth, type MapperCovers } from '../../../platform/subgraph';
import { parseLimitOffsetArgs } from '../../../platform/validation';
import type { QueryResolvers, SchemaUsageReportResolvers } from '../generated/resolvers-types';
import { FIELDS_PAGE, parseDays, VERSIONS_PAGE } from './routes';
import { fieldsPage, type FieldUsageReport, type RegistryService } from './service';

/** The report's DTO (schema/codegen.ts) carries every field; `fields` pages it. */
export type RegistryMappers = [MapperCovers<SchemaUsageReportResolvers, FieldUsageReport, 'fields'>];

export function registryResolvers(registry: RegistryService): {
  Query: Pick<QueryResolvers, 'schemaVersions' | 'schemaUsage'>;
  SchemaUsageReport: SchemaUsageReportResolvers;
} {
  return {
    Query: {
      schemaVersions: (_, args, ctx) => registry.listVersions(requireAuth(ctx), parseLimitOffsetArgs({ limit: args.limit }, VERSIONS_PAGE).limit),
      schemaUsage: (_, args, ctx) => registry.fieldUsage(requireAuth(ctx), parseDays(args.days)),
    },
    SchemaUsageReport: {
      fields: (report, args) => fieldsPage(report.fields, parseLimitOffsetArgs(args, FIELDS_PAGE)),
    },
  };
}

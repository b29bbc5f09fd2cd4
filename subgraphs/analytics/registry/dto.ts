/** Request shapes of the registry's internal routes (CONTRACT §13), held to the limits of its columns. */
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsDefined, IsIn, IsInt, IsOptional, IsString, Matches, MaxLength, Min, ValidateNested } from 'class-validator';
import {
  CLIENT_NAME_MAX,
  CLIENT_VERSION_MAX,
  OPERATION_MAX_COORDINATES,
  REPORT_MAX_COUNTS,
  REPORT_MAX_OPERATIONS,
  type SchemaVersionReportDto,
  type SchemaVersionSource,
  type SubgraphSdlDto,
  type UsageCountDto,
  type UsageOperationDto,
  type UsageReportDto,
} from '../../../platform/contracts/schema-registry';

const HASH = /^[0-9a-f]{64}$/;
const HOUR = /^\d{4}-\d{2}-\d{2}T\d{2}:00:00Z$/;
const required = { message: 'must not be null' };
/** A supergraph or subgraph SDL: far above ours (27 kB), under MEDIUMTEXT and the 1 MB body. */
const SDL_MAX = 512 * 1024;

class OperationKey {
  @IsDefined(required)
  @Matches(HASH, { message: 'must be a sha256 hex digest' })
  hash!: string;

  @IsDefined(required)
  @IsString()
  @MaxLength(255)
  name!: string;
}

export class UsageOperationRequest extends OperationKey implements UsageOperationDto {
  @IsDefined(required)
  @IsIn(['query', 'mutation', 'subscription'])
  type!: UsageOperationDto['type'];

  @IsDefined(required)
  @IsArray()
  @ArrayMaxSize(OPERATION_MAX_COORDINATES)
  @IsString({ each: true })
  @MaxLength(255, { each: true })
  coordinates!: string[];
}

export class UsageCountRequest extends OperationKey implements UsageCountDto {
  @IsDefined(required)
  @Matches(HOUR, { message: 'must be an hour as yyyy-MM-ddTHH:00:00Z' })
  hour!: string;

  @IsDefined(required)
  @IsString()
  @MaxLength(CLIENT_NAME_MAX)
  client!: string;

  @IsDefined(required)
  @IsString()
  @MaxLength(CLIENT_VERSION_MAX)
  version!: string;

  @IsDefined(required)
  @IsInt()
  @Min(1)
  count!: number;
}

export class UsageReportRequest implements UsageReportDto {
  @IsDefined(required)
  @IsArray()
  @ArrayMaxSize(REPORT_MAX_OPERATIONS)
  @ValidateNested({ each: true })
  @Type(() => UsageOperationRequest)
  operations!: UsageOperationRequest[];

  @IsDefined(required)
  @IsArray()
  @ArrayMaxSize(REPORT_MAX_COUNTS)
  @ValidateNested({ each: true })
  @Type(() => UsageCountRequest)
  counts!: UsageCountRequest[];
}

export class SubgraphSdlRequest implements SubgraphSdlDto {
  @IsDefined(required)
  @IsString()
  @Matches(/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/, { message: 'must be a subgraph name of at most 64 letters, digits, _ or -' })
  name!: string;

  @IsOptional()
  @IsString()
  @MaxLength(2048)
  url?: string | null;

  @IsDefined(required)
  @IsString()
  @MaxLength(SDL_MAX)
  sdl!: string;
}

export class SchemaVersionRequest implements SchemaVersionReportDto {
  @IsDefined(required)
  @IsIn(['publish', 'gateway'])
  source!: SchemaVersionSource;

  @IsDefined(required)
  @IsString()
  @MaxLength(SDL_MAX)
  supergraphSdl!: string;

  @IsDefined(required)
  @IsArray()
  @ArrayMaxSize(64)
  @ValidateNested({ each: true })
  @Type(() => SubgraphSdlRequest)
  subgraphs!: SubgraphSdlRequest[];

  @IsOptional()
  @IsString()
  @MaxLength(64)
  commit?: string | null;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  publishedBy?: string | null;
}

/** Request shapes of the webhook routes (CONTRACT §11). */
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsDefined, IsIn, IsInt, IsOptional, IsString, MaxLength, Min, Max } from 'class-validator';
import { SUBSCRIPTIONS } from './events';

const eventsMessage = { each: true, message: `each must be one of: ${SUBSCRIPTIONS.join(', ')}` };

export class CreateEndpointRequest {
  @IsDefined({ message: 'must not be null' })
  @IsString()
  @MaxLength(2048)
  url!: string;

  @IsDefined({ message: 'must not be null' })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(20)
  @IsIn(SUBSCRIPTIONS, eventsMessage)
  events!: string[];

  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string | null;
}

/** Every field optional: what is given changes, the rest stays. `enabled: true` also clears a disabled endpoint's reason. */
export class UpdateEndpointRequest {
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  url?: string;

  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(20)
  @IsIn(SUBSCRIPTIONS, eventsMessage)
  events?: string[];

  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string | null;

  @IsOptional()
  @IsBoolean()
  enabled?: boolean;
}

export const MAX_OVERLAP_SECONDS = 7 * 24 * 3600;

export class RotateSecretRequest {
  /** How long the old secret keeps signing beside the new one (default 24 h; 0 ends it at once). */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_OVERLAP_SECONDS)
  overlapSeconds?: number;
}

/**
 * A quick yes for valid event payloads. class-validator looks up, filters and groups a class's
 * metadata and builds an error object per property on every call, which costs more than the checks
 * themselves when a consumer validates thousands of events a second. Here the metadata is read once
 * per class and the same constraint functions run directly on the instance. Only a pass is trusted:
 * anything else, and any class using a feature not handled here, goes through class-validator,
 * which makes the decision and writes the messages.
 */
import { ValidationTypes, getMetadataStorage, type ValidationArguments } from 'class-validator';

type Check = (object: object) => boolean;

interface Constraint {
  validate(value: unknown, args: ValidationArguments): unknown;
}

interface PropertyPlan {
  property: string;
  custom: { each: boolean; constraints: unknown[]; validators: Constraint[] }[];
  nested: boolean;
  /** `@IsOptional` / `@ValidateIf`: when one answers false, the property's other checks are skipped, as class-validator does. */
  conditions: ((object: object, value: unknown) => boolean)[];
}

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
const plans = new Map<Function, PropertyPlan[] | null>();

/** The properties' checks of `target`, or null when it uses something only class-validator handles. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
function planFor(target: Function): PropertyPlan[] | null {
  const known = plans.get(target);
  if (known !== undefined) return known;
  const storage = getMetadataStorage();
  const metadatas = storage.getTargetValidationMetadatas(target, '', false, false, undefined);
  const byProperty = new Map<string, PropertyPlan>();
  let plan: PropertyPlan[] | null = metadatas.length > 0 ? [] : null;
  for (const metadata of metadatas) {
    const conditional = metadata.type === ValidationTypes.CONDITIONAL_VALIDATION && typeof metadata.constraints?.[0] === 'function';
    const supported =
      (metadata.type === ValidationTypes.CUSTOM_VALIDATION || metadata.type === ValidationTypes.NESTED_VALIDATION || conditional) &&
      !metadata.validateIf &&
      !metadata.always &&
      !(metadata.groups && metadata.groups.length > 0);
    if (!supported) {
      plan = null;
      break;
    }
    let property = byProperty.get(metadata.propertyName);
    if (!property) {
      property = { property: metadata.propertyName, custom: [], nested: false, conditions: [] };
      byProperty.set(metadata.propertyName, property);
    }
    if (conditional) {
      property.conditions.push(metadata.constraints[0] as (object: object, value: unknown) => boolean);
      continue;
    }
    if (metadata.type === ValidationTypes.NESTED_VALIDATION) {
      property.nested = true;
      continue;
    }
    const constraints = storage.getTargetValidatorConstraints(metadata.constraintCls);
    if (constraints.some((constraint) => constraint.async)) {
      plan = null;
      break;
    }
    property.custom.push({ each: metadata.each, constraints: metadata.constraints, validators: constraints.map((constraint) => constraint.instance as Constraint) });
  }
  const result = plan && [...byProperty.values()];
  plans.set(target, result);
  return result;
}

function passes(validator: Constraint, value: unknown, args: ValidationArguments): boolean {
  const valid = validator.validate(value, args);
  // An asynchronous answer is class-validator's to wait for.
  return valid === true;
}

/** True when class-validator (with forbidUnknownValues) would find nothing wrong with `object`. */
export const passesQuickly: Check = (object) => {
  const plan = planFor(object.constructor);
  if (!plan) return false;
  const record = object as Record<string, unknown>;
  for (const { property, custom, nested, conditions } of plan) {
    const value = record[property];
    if (!conditions.every((condition) => condition(object, value))) continue;
    for (const { each, constraints, validators } of custom) {
      const args: ValidationArguments = { targetName: object.constructor.name, property, object, value, constraints };
      for (const validator of validators) {
        if (!each || !Array.isArray(value)) {
          if (each && (value instanceof Set || value instanceof Map)) return false;
          if (!passes(validator, value, args)) return false;
        } else if (!value.every((item) => passes(validator, item, args))) {
          return false;
        }
      }
    }
    if (nested && value !== undefined) {
      if (Array.isArray(value)) {
        if (!value.every((item: unknown) => item instanceof Object && passesQuickly(item))) return false;
      } else if (value instanceof Set || value instanceof Map || !(value instanceof Object) || !passesQuickly(value)) {
        return false;
      }
    }
  }
  return true;
};

/**
 * JSON Schemas of the operator kinds the manifests use, written here from each operator's API
 * reference (their CRDs are on none of the registries we reach): Strimzi 1.2's `kafka.strimzi.io/v1`
 * (Kafka, KafkaNodePool, KafkaTopic) and mariadb-operator's `k8s.mariadb.com/v1alpha1` (MariaDB,
 * Database, User, Grant). Each gives apiVersion, kind, the required fields and the types of the
 * fields we set; a field the reference does not list for that object is refused, so a misspelt one
 * (which the operator would ignore) fails here.
 */
import Ajv, { type ValidateFunction } from 'ajv';

type Schema = Record<string, unknown>;

const string: Schema = { type: 'string', minLength: 1 };
const integer = (minimum = 0): Schema => ({ type: 'integer', minimum });
const quantity: Schema = { anyOf: [{ type: 'string', pattern: '^[0-9.]+([KMGTPE]i?|m)?$' }, { type: 'number' }] };
const labels: Schema = { type: 'object', additionalProperties: { type: 'string' } };
const resources: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: { requests: { type: 'object', additionalProperties: quantity }, limits: { type: 'object', additionalProperties: quantity } },
};
const object = (properties: Record<string, Schema>, required: string[] = []): Schema => ({ type: 'object', additionalProperties: false, properties, required });
const labelSelector: Schema = { type: 'object', properties: { matchLabels: labels } };

/** An object of `apiVersion`/`kind` with metadata and the spec given. */
function resource(apiVersion: string, kind: string, spec: Schema, metadataLabels: Schema = labels): Schema {
  return {
    type: 'object',
    required: ['apiVersion', 'kind', 'metadata', 'spec'],
    properties: {
      apiVersion: { const: apiVersion },
      kind: { const: kind },
      metadata: {
        type: 'object',
        required: ['name'],
        properties: { name: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$', maxLength: 253 }, namespace: string, labels: metadataLabels },
      },
      spec,
    },
  };
}

/** Labels that must name the Kafka cluster the object belongs to (Strimzi's `strimzi.io/cluster`). */
const strimziLabels: Schema = { ...labels, properties: { 'strimzi.io/cluster': string }, required: ['strimzi.io/cluster'] };

// Strimzi 1.2 API reference: KafkaNodePoolSpec (replicas, storage, roles required), JbodStorage,
// PersistentClaimStorage.
const persistentClaim = object(
  { id: integer(), type: { enum: ['persistent-claim', 'ephemeral'] }, size: quantity, class: string, deleteClaim: { type: 'boolean' }, kraftMetadata: { enum: ['shared'] } },
  ['type'],
);
const kafkaNodePool = resource(
  'kafka.strimzi.io/v1',
  'KafkaNodePool',
  object(
    {
      replicas: integer(),
      roles: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: ['controller', 'broker'] } },
      storage: object({ type: { enum: ['jbod', 'persistent-claim', 'ephemeral'] }, volumes: { type: 'array', minItems: 1, items: persistentClaim }, size: quantity }, ['type']),
      resources,
      jvmOptions: { type: 'object' },
      template: { type: 'object' },
    },
    ['replicas', 'storage', 'roles'],
  ),
  strimziLabels,
);

// KafkaSpec (kafka required; zookeeper, replicas and storage gone in v1), KafkaClusterSpec (listeners
// required), GenericKafkaListener (name, port, type, tls required), EntityOperatorSpec.
const listener = object(
  {
    name: { type: 'string', pattern: '^[a-z0-9]{1,11}$' },
    port: integer(9092),
    type: { enum: ['internal', 'route', 'loadbalancer', 'nodeport', 'ingress', 'cluster-ip'] },
    tls: { type: 'boolean' },
    authentication: { type: 'object' },
    configuration: { type: 'object' },
    networkPolicyPeers: { type: 'array', items: object({ podSelector: labelSelector, namespaceSelector: labelSelector, ipBlock: { type: 'object' } }) },
  },
  ['name', 'port', 'type', 'tls'],
);
const kafka = resource(
  'kafka.strimzi.io/v1',
  'Kafka',
  object(
    {
      kafka: object(
        {
          version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+$' },
          metadataVersion: string,
          listeners: { type: 'array', minItems: 1, items: listener },
          config: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } },
          authorization: { type: 'object' },
          resources,
          template: { type: 'object' },
        },
        ['listeners'],
      ),
      entityOperator: object({ topicOperator: { type: 'object' }, userOperator: { type: 'object' } }),
      kafkaExporter: { type: 'object' },
      cruiseControl: { type: 'object' },
    },
    ['kafka'],
  ),
);

// KafkaTopicSpec: nothing required; partitions at least 1, replicas 1 to 32767.
const kafkaTopic = resource(
  'kafka.strimzi.io/v1',
  'KafkaTopic',
  object({
    topicName: string,
    partitions: integer(1),
    replicas: { type: 'integer', minimum: 1, maximum: 32767 },
    config: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } },
  }),
  strimziLabels,
);

// mariadb-operator API reference: MariaDBRef, SecretKeySelector (key required), GeneratedSecretKeyRef.
const mariaDbRef = object({ name: string, namespace: string, kind: string, waitForIt: { type: 'boolean' } }, ['name']);
const secretKeyRef = object({ name: string, key: string }, ['name', 'key']);
const generatedSecretKeyRef = object({ name: string, key: string, generate: { type: 'boolean' } }, ['name', 'key']);
const cleanupPolicy = { enum: ['Skip', 'Delete'] };

// MariaDBSpec: nothing required; Storage, Replication (enabled, primary, replica), PodDisruptionBudget.
const mariaDb = resource(
  'k8s.mariadb.com/v1alpha1',
  'MariaDB',
  object({
    image: { type: 'string', pattern: '^[^:]+:[^:]+$' },
    rootPasswordSecretKeyRef: generatedSecretKeyRef,
    port: integer(1),
    replicas: integer(1),
    storage: object({ size: quantity, storageClassName: string, resizeInUseVolumes: { type: 'boolean' } }),
    myCnf: { type: 'string' },
    resources,
    replication: object({
      enabled: { type: 'boolean' },
      primary: object({ automaticFailover: { type: 'boolean' }, podIndex: integer() }),
      replica: object({ replPasswordSecretKeyRef: generatedSecretKeyRef }),
      gtidStrictMode: { type: 'boolean' },
    }),
    podDisruptionBudget: object({ maxUnavailable: { type: ['integer', 'string'] }, minAvailable: { type: ['integer', 'string'] } }),
    metrics: { type: 'object' },
  }),
);

// DatabaseSpec (mariaDbRef required), UserSpec (mariaDbRef required), GrantSpec (mariaDbRef,
// privileges with at least one item, and username required).
const database = resource(
  'k8s.mariadb.com/v1alpha1',
  'Database',
  object({ mariaDbRef, name: { type: 'string', maxLength: 80 }, characterSet: string, collate: string, cleanupPolicy }, ['mariaDbRef']),
);
const user = resource(
  'k8s.mariadb.com/v1alpha1',
  'User',
  object(
    {
      mariaDbRef,
      name: { type: 'string', maxLength: 80 },
      host: { type: 'string', maxLength: 255 },
      passwordSecretKeyRef: secretKeyRef,
      maxUserConnections: integer(1),
      cleanupPolicy,
    },
    ['mariaDbRef'],
  ),
);
const grant = resource(
  'k8s.mariadb.com/v1alpha1',
  'Grant',
  object(
    {
      mariaDbRef,
      privileges: { type: 'array', minItems: 1, items: string },
      database: string,
      table: string,
      username: string,
      host: string,
      grantOption: { type: 'boolean' },
      cleanupPolicy,
    },
    ['mariaDbRef', 'privileges', 'username'],
  ),
);

const SCHEMAS: Record<string, Schema> = {
  'kafka.strimzi.io/v1 Kafka': kafka,
  'kafka.strimzi.io/v1 KafkaNodePool': kafkaNodePool,
  'kafka.strimzi.io/v1 KafkaTopic': kafkaTopic,
  'k8s.mariadb.com/v1alpha1 MariaDB': mariaDb,
  'k8s.mariadb.com/v1alpha1 Database': database,
  'k8s.mariadb.com/v1alpha1 User': user,
  'k8s.mariadb.com/v1alpha1 Grant': grant,
};

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
const validators = new Map<string, ValidateFunction>(Object.entries(SCHEMAS).map(([key, schema]) => [key, ajv.compile(schema)]));

/** The validator of an operator's kind, or undefined for a kind these schemas do not cover. */
export function operatorValidator(apiVersion: string, kind: string): ((object: unknown) => string[]) | undefined {
  const validate = validators.get(`${apiVersion} ${kind}`);
  if (!validate) return undefined;
  return (object) => (validate(object) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? ''} ${JSON.stringify(error.params)}`));
}

/**
 * GraphQL Code Generator's configuration for its CLI (`npm run schema:codegen`): the settings are
 * schema/codegen.ts's, over the committed schemas (run `npm run schema:compose` first after an SDL change).
 */
import { codegenConfig, committedSources } from './schema/codegen';

export default codegenConfig(committedSources(__dirname));

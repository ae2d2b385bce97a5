// The migration adapters (spec doc 2, "Migration adapters"), selected by the source product's name.
import type { Adapter } from './adapter.ts';
import { keycloakAdapter } from './keycloak.ts';
import { supertokensAdapter } from './supertokens.ts';
import { zitadelAdapter } from './zitadel.ts';

export { type Adapter, AdapterError, type Conversion, type ConversionOptions } from './adapter.ts';
export {
  type Built,
  buildDocuments,
  conversionReport,
  type DocumentOptions,
  defaultMapping as defaultMappingOf,
  type Expected,
  IMPORT_FORMAT,
  type KnownOrganization,
  MAPPING_FORMAT,
  type Mapping,
  mappingTemplate,
  type OrganizationPlan,
  planOrganizations,
  REPORT_FORMAT,
  readMapping,
} from './plan.ts';

export const ADAPTERS: readonly Adapter[] = [keycloakAdapter, zitadelAdapter, supertokensAdapter];
export const adapterNamed = (name: string): Adapter | undefined => ADAPTERS.find((a) => a.name === name);

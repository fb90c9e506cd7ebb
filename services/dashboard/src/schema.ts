/**
 * The partner API's shapes as libs/sdk generates them from docs/openapi/partner.json: a page
 * names the API's own type instead of writing it again, and a change to the API shows here at
 * type-check time. Types only: nothing of the SDK is in the bundle.
 */
import type { components } from '../../../libs/sdk/src/schema';

export type Schemas = components['schemas'];

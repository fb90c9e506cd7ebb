/**
 * Compares two OpenAPI 3.1 documents (the committed snapshot in docs/openapi/ and the one the
 * route declarations generate now) and classifies every change to the interface as breaking or
 * not, from a client's side (docs/decisions.md, "A record of API changes"):
 *
 * - what a client sends (parameters, request bodies) may only widen: a removed input, a new
 *   required one, a narrowed type, enum, bound or format is breaking;
 * - what a client receives (responses; webhook payloads, which the partner receives) may only
 *   narrow: a removed field, a field that may now be absent, a widened type or bound, a new enum
 *   value is breaking. New fields are not, since partners ignore fields they do not know
 *   (docs/api.md, "Versioning"), and neither are new error codes or statuses.
 *
 * Wording, descriptions and examples are not classified: the snapshot test still sees them as a
 * difference to record.
 */

export type Severity = 'breaking' | 'non-breaking';

export interface ApiChange {
  severity: Severity;
  /** Where, e.g. `GET /farmers/{id} 200 response .data.name`. */
  where: string;
  what: string;
}

type Direction = 'request' | 'response';
type Node = Record<string, unknown>;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;

const isNode = (value: unknown): value is Node =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const nodeAt = (value: unknown, key: string): Node => {
  const child = isNode(value) ? value[key] : undefined;
  return isNode(child) ? child : {};
};
const show = (value: unknown) => JSON.stringify(value);

interface Context {
  oldDoc: Node;
  newDoc: Node;
  changes: ApiChange[];
  /**
   * Pairs of named schemas being compared further up: a recursive schema ends here. (Not every
   * pair ever compared: a schema used by several operations is reported at each.)
   */
  comparing: Set<string>;
}

function add(ctx: Context, severity: Severity, where: string, what: string): void {
  ctx.changes.push({ severity, where, what });
}

/** Follows local `$ref`s (`#/components/schemas/Farmer`); returns the schema and the last ref. */
function resolve(doc: Node, schema: unknown): { schema: unknown; ref?: string } {
  let current = schema;
  let ref: string | undefined;
  for (let hops = 0; isNode(current) && typeof current.$ref === 'string' && hops < 32; hops++) {
    ref = current.$ref;
    if (!ref.startsWith('#/')) break;
    current = ref
      .slice(2)
      .split('/')
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((at, part) => (isNode(at) ? at[part] : undefined), doc);
  }
  return { schema: current, ref };
}

/**
 * One change in the allowed direction or against it: `wider` says the new schema admits more
 * than the old did. Requests may widen, responses may narrow.
 */
function variance(ctx: Context, direction: Direction, wider: boolean, where: string, what: string): void {
  const safe = direction === 'request' ? wider : !wider;
  add(ctx, safe ? 'non-breaking' : 'breaking', where, what);
}

const typesOf = (schema: Node): string[] | undefined =>
  typeof schema.type === 'string'
    ? [schema.type]
    : Array.isArray(schema.type)
      ? schema.type.map(String)
      : undefined;

/** Whether a schema with these types admits values of type `type` (integers are numbers). */
const admits = (types: string[], type: string) =>
  types.includes(type) || (type === 'integer' && types.includes('number'));

const valuesOf = (schema: Node): unknown[] | undefined =>
  Array.isArray(schema.enum) ? schema.enum : 'const' in schema ? [schema.const] : undefined;

const COMPOSITIONS = ['anyOf', 'oneOf', 'allOf'] as const;
const isComposed = (schema: Node) => COMPOSITIONS.some((key) => Array.isArray(schema[key]));

/** Bounds where a larger value admits more (upper) or fewer (lower) values. */
const UPPER = ['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties'] as const;
const LOWER = ['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties'] as const;

function compareSchema(
  ctx: Context,
  oldSchema: unknown,
  newSchema: unknown,
  direction: Direction,
  where: string,
  isError: boolean,
): void {
  const before = resolve(ctx.oldDoc, oldSchema);
  const after = resolve(ctx.newDoc, newSchema);
  const key = before.ref && after.ref ? `${before.ref}|${after.ref}` : undefined;
  if (key) {
    if (ctx.comparing.has(key)) return;
    ctx.comparing.add(key);
  }
  try {
    compareResolved(ctx, before.schema, after.schema, direction, where, isError);
  } finally {
    if (key) ctx.comparing.delete(key);
  }
}

function compareResolved(
  ctx: Context,
  a: unknown,
  b: unknown,
  direction: Direction,
  where: string,
  isError: boolean,
): void {
  if (!isNode(a) || !isNode(b)) {
    if (show(a) !== show(b)) add(ctx, 'breaking', where, `schema changed from ${show(a)} to ${show(b)}`);
    return;
  }

  compareTypes(ctx, a, b, direction, where);
  compareValues(ctx, a, b, direction, where, isError);
  compareBounds(ctx, a, b, direction, where);
  compareProperties(ctx, a, b, direction, where, isError);
  if (isNode(a.items) && isNode(b.items))
    compareSchema(ctx, a.items, b.items, direction, `${where}[]`, isError);
  compareCompositions(ctx, a, b, direction, where, isError);
}

function compareTypes(ctx: Context, a: Node, b: Node, direction: Direction, where: string): void {
  const before = typesOf(a);
  const after = typesOf(b);
  if (before && after) {
    // Nothing in common: a different type, whichever the direction.
    if (!before.some((t) => admits(after, t)) && !after.some((t) => admits(before, t))) {
      add(ctx, 'breaking', where, `type changed from ${before.join(' | ')} to ${after.join(' | ')}`);
      return;
    }
    for (const type of before.filter((t) => !admits(after, t)))
      variance(ctx, direction, false, where, `no longer of type ${type}`);
    for (const type of after.filter((t) => !admits(before, t)))
      variance(ctx, direction, true, where, `may now be of type ${type}`);
  } else if (before || after) {
    // One side is typed, the other a composition (a different shape) or unconstrained.
    if (isComposed(a) || isComposed(b))
      add(ctx, 'breaking', where, `shape changed from ${before ?? 'a union'} to ${after ?? 'a union'}`);
    else variance(ctx, direction, !after, where, after ? `now restricted to type ${after}` : 'any type now');
  }
}

function compareValues(
  ctx: Context,
  a: Node,
  b: Node,
  direction: Direction,
  where: string,
  isError: boolean,
) {
  const before = valuesOf(a);
  const after = valuesOf(b);
  if (!before && !after) return;
  if (!before || !after) {
    variance(
      ctx,
      direction,
      !after,
      where,
      after ? `now limited to ${show(after)}` : 'no longer an enumeration',
    );
    return;
  }
  const known = new Set(before.map(show));
  const now = new Set(after.map(show));
  for (const value of before.filter((v) => !now.has(show(v))))
    variance(ctx, direction, false, where, `value ${show(value)} removed`);
  for (const value of after.filter((v) => !known.has(show(v)))) {
    // A new error code for a new situation is allowed within a major version (docs/api.md, "Versioning").
    if (direction === 'response' && isError)
      add(ctx, 'non-breaking', where, `new error value ${show(value)}`);
    else variance(ctx, direction, true, where, `value ${show(value)} added`);
  }
}

function compareBounds(ctx: Context, a: Node, b: Node, direction: Direction, where: string): void {
  for (const [keys, upper] of [
    [UPPER, true],
    [LOWER, false],
  ] as const) {
    for (const key of keys) {
      const before = typeof a[key] === 'number' ? (a[key] as number) : undefined;
      const after = typeof b[key] === 'number' ? (b[key] as number) : undefined;
      if (before === after) continue;
      // No bound admits everything; a larger upper bound or a smaller lower bound admits more.
      const wider =
        after === undefined ? true : before === undefined ? false : upper ? after > before : after < before;
      variance(ctx, direction, wider, where, `${key} ${before ?? 'none'} → ${after ?? 'none'}`);
    }
  }
  for (const key of ['pattern', 'format', 'multipleOf']) {
    if (show(a[key]) === show(b[key])) continue;
    // Dropping a pattern or format admits more; adding or changing one cannot be compared.
    if (b[key] === undefined) variance(ctx, direction, true, where, `${key} ${show(a[key])} removed`);
    else if (a[key] === undefined) variance(ctx, direction, false, where, `${key} ${show(b[key])} added`);
    else add(ctx, 'breaking', where, `${key} ${show(a[key])} → ${show(b[key])}`);
  }
}

function compareProperties(
  ctx: Context,
  a: Node,
  b: Node,
  direction: Direction,
  where: string,
  isError: boolean,
): void {
  const before = nodeAt(a, 'properties');
  const after = nodeAt(b, 'properties');
  const requiredBefore = new Set(Array.isArray(a.required) ? a.required.map(String) : []);
  const requiredAfter = new Set(Array.isArray(b.required) ? b.required.map(String) : []);
  for (const name of Object.keys(before)) {
    const at = `${where}.${name}`;
    if (!(name in after)) {
      if (direction === 'response') add(ctx, 'breaking', at, 'field removed');
      // A closed request object answers an unknown field with 400: a removed input breaks senders.
      else if (b.additionalProperties === false) add(ctx, 'breaking', at, 'input removed');
      else add(ctx, 'non-breaking', at, 'input removed (now ignored)');
      continue;
    }
    const wasRequired = requiredBefore.has(name);
    const isRequired = requiredAfter.has(name);
    if (wasRequired !== isRequired)
      variance(ctx, direction, wasRequired, at, isRequired ? 'now required' : 'now optional');
    compareSchema(ctx, before[name], after[name], direction, at, isError);
  }
  for (const name of Object.keys(after).filter((n) => !(n in before))) {
    const at = `${where}.${name}`;
    if (direction === 'response') add(ctx, 'non-breaking', at, 'new field');
    else if (requiredAfter.has(name)) add(ctx, 'breaking', at, 'new required input');
    else add(ctx, 'non-breaking', at, 'new optional input');
  }
  const closedBefore = a.additionalProperties === false;
  const closedAfter = b.additionalProperties === false;
  // Only requests: partners ignore response fields they do not know.
  if (direction === 'request' && closedBefore !== closedAfter)
    variance(
      ctx,
      direction,
      closedBefore,
      where,
      closedAfter ? 'unknown fields now refused' : 'unknown fields now accepted',
    );
}

function compareCompositions(
  ctx: Context,
  a: Node,
  b: Node,
  direction: Direction,
  where: string,
  isError: boolean,
): void {
  for (const key of COMPOSITIONS) {
    const before = Array.isArray(a[key]) ? (a[key] as unknown[]) : undefined;
    const after = Array.isArray(b[key]) ? (b[key] as unknown[]) : undefined;
    if (!before || !after) {
      if ((before || after) && (typesOf(a) ?? typesOf(b)) === undefined)
        add(ctx, 'breaking', where, `${key} ${before ? 'removed' : 'added'}`);
      continue;
    }
    if (before.length === after.length) {
      before.forEach((variant, i) => {
        compareSchema(ctx, variant, after[i], direction, `${where} (${key} ${i + 1})`, isError);
      });
      continue;
    }
    if (key === 'allOf') {
      add(ctx, 'breaking', where, `allOf ${before.length} → ${after.length} parts`);
      continue;
    }
    // Variants matched by their text: one that went narrows, one that came widens.
    const oldText = new Set(before.map(show));
    const newText = new Set(after.map(show));
    for (const variant of before.filter((v) => !newText.has(show(v))))
      variance(ctx, direction, false, where, `${key} variant removed: ${show(variant)}`);
    for (const variant of after.filter((v) => !oldText.has(show(v))))
      variance(ctx, direction, true, where, `${key} variant added: ${show(variant)}`);
  }
}

const parameterKey = (parameter: Node) =>
  `${String(parameter.in)} ${parameter.in === 'header' ? String(parameter.name).toLowerCase() : String(parameter.name)}`;

function parametersOf(doc: Node, pathItem: Node, operation: Node): Map<string, Node> {
  const all = [
    ...(Array.isArray(pathItem.parameters) ? pathItem.parameters : []),
    ...(Array.isArray(operation.parameters) ? operation.parameters : []),
  ];
  const byKey = new Map<string, Node>();
  for (const raw of all) {
    const parameter = resolve(doc, raw).schema;
    if (isNode(parameter)) byKey.set(parameterKey(parameter), parameter);
  }
  return byKey;
}

function compareParameters(ctx: Context, a: Map<string, Node>, b: Map<string, Node>, where: string): void {
  for (const [key, before] of a) {
    const after = b.get(key);
    const at = `${where} ${key} parameter`;
    if (!after) {
      // Undeclared query parameters are refused (docs/api.md): a removed one breaks its senders.
      add(ctx, 'breaking', at, 'removed');
      continue;
    }
    if (Boolean(before.required) !== Boolean(after.required))
      variance(ctx, 'request', !after.required, at, after.required ? 'now required' : 'now optional');
    compareSchema(ctx, before.schema, after.schema, 'request', at, false);
  }
  for (const [key, after] of b) {
    if (a.has(key)) continue;
    const at = `${where} ${key} parameter`;
    if (after.required) add(ctx, 'breaking', at, 'new required input');
    else add(ctx, 'non-breaking', at, 'new optional input');
  }
}

/** Content (media type → schema) of a request body or a response, compared type by type. */
function compareContent(
  ctx: Context,
  a: Node,
  b: Node,
  direction: Direction,
  where: string,
  isError: boolean,
  removedIsBreaking: boolean,
): void {
  for (const [type, media] of Object.entries(a)) {
    if (!(type in b)) {
      add(
        ctx,
        removedIsBreaking ? 'breaking' : 'non-breaking',
        where,
        `${type} no longer ${direction === 'request' ? 'accepted' : 'returned'}`,
      );
      continue;
    }
    compareSchema(ctx, nodeAt(media, 'schema'), nodeAt(b[type], 'schema'), direction, where, isError);
  }
  for (const type of Object.keys(b).filter((t) => !(t in a)))
    add(
      ctx,
      direction === 'request' ? 'non-breaking' : 'breaking',
      where,
      `${type} now ${direction === 'request' ? 'accepted' : 'returned'}`,
    );
}

function compareRequestBody(ctx: Context, a: Node, b: Node, direction: Direction, where: string): void {
  const before = resolve(ctx.oldDoc, a.requestBody).schema;
  const after = resolve(ctx.newDoc, b.requestBody).schema;
  const at = `${where} ${direction === 'request' ? 'request body' : 'payload'}`;
  if (!isNode(before) && !isNode(after)) return;
  if (!isNode(after)) {
    add(ctx, 'breaking', at, 'removed');
    return;
  }
  if (!isNode(before)) {
    add(
      ctx,
      after.required ? 'breaking' : 'non-breaking',
      at,
      after.required ? 'new required body' : 'new optional body',
    );
    return;
  }
  if (direction === 'request' && Boolean(before.required) !== Boolean(after.required))
    variance(ctx, 'request', !after.required, at, after.required ? 'now required' : 'now optional');
  compareContent(ctx, nodeAt(before, 'content'), nodeAt(after, 'content'), direction, at, false, true);
}

function compareResponses(ctx: Context, a: Node, b: Node, where: string): void {
  const before = nodeAt(a, 'responses');
  const after = nodeAt(b, 'responses');
  for (const [status, raw] of Object.entries(before)) {
    const isError = /^[45]/.test(status);
    const at = `${where} ${status} response`;
    if (!(status in after)) {
      // A success a client handles that no longer comes breaks it; an error that no longer
      // comes does not.
      add(ctx, isError ? 'non-breaking' : 'breaking', at, 'no longer returned');
      continue;
    }
    const old = nodeAt({ r: resolve(ctx.oldDoc, raw).schema }, 'r');
    const now = nodeAt({ r: resolve(ctx.newDoc, after[status]).schema }, 'r');
    compareContent(ctx, nodeAt(old, 'content'), nodeAt(now, 'content'), 'response', at, isError, !isError);
    const oldHeaders = nodeAt(old, 'headers');
    const newHeaders = nodeAt(now, 'headers');
    for (const name of Object.keys(oldHeaders)) {
      if (!(name in newHeaders))
        add(ctx, isError ? 'non-breaking' : 'breaking', `${at} header ${name}`, 'removed');
      else
        compareSchema(
          ctx,
          nodeAt(oldHeaders[name], 'schema'),
          nodeAt(newHeaders[name], 'schema'),
          'response',
          `${at} header ${name}`,
          isError,
        );
    }
    for (const name of Object.keys(newHeaders).filter((n) => !(n in oldHeaders)))
      add(ctx, 'non-breaking', `${at} header ${name}`, 'new header');
  }
  for (const status of Object.keys(after).filter((s) => !(s in before)))
    add(ctx, 'non-breaking', `${where} ${status} response`, 'new response');
}

function compareSecurity(ctx: Context, a: Node, b: Node, oldDoc: Node, newDoc: Node, where: string): void {
  const of = (doc: Node, operation: Node): string[] | undefined => {
    const security = Array.isArray(operation.security) ? operation.security : doc.security;
    return Array.isArray(security) ? security.map(show) : undefined;
  };
  const before = of(oldDoc, a) ?? [];
  const after = of(newDoc, b) ?? [];
  // No requirement at all means anyone may call.
  const open = (list: string[]) => list.length === 0 || list.includes('{}');
  if (open(before) && !open(after)) add(ctx, 'breaking', where, 'now needs credentials');
  else if (!open(before) && open(after)) add(ctx, 'non-breaking', where, 'no longer needs credentials');
  else {
    for (const requirement of before.filter((r) => !after.includes(r)))
      add(ctx, 'breaking', where, `credentials ${requirement} no longer accepted`);
    for (const requirement of after.filter((r) => !before.includes(r)))
      add(ctx, 'non-breaking', where, `credentials ${requirement} now accepted`);
  }
}

function compareOperations(ctx: Context, section: 'paths' | 'webhooks'): void {
  const before = nodeAt(ctx.oldDoc, section);
  const after = nodeAt(ctx.newDoc, section);
  const label = (path: string, method: string) =>
    section === 'paths' ? `${method.toUpperCase()} ${path}` : `webhook ${path} (${method.toUpperCase()})`;
  for (const [path, rawItem] of Object.entries(before)) {
    const oldItem = nodeAt({ i: rawItem }, 'i');
    const newItem = nodeAt(after, path);
    for (const method of METHODS) {
      if (!isNode(oldItem[method])) continue;
      const where = label(path, method);
      const a = oldItem[method];
      const b = newItem[method];
      if (!isNode(b)) {
        add(ctx, 'breaking', where, 'removed');
        continue;
      }
      if (section === 'webhooks') {
        // The partner receives the payload: it may only narrow, as a response may.
        compareRequestBody(ctx, a, b, 'response', where);
        continue;
      }
      compareSecurity(ctx, a, b, ctx.oldDoc, ctx.newDoc, where);
      compareParameters(
        ctx,
        parametersOf(ctx.oldDoc, oldItem, a),
        parametersOf(ctx.newDoc, newItem, b),
        where,
      );
      compareRequestBody(ctx, a, b, 'request', where);
      compareResponses(ctx, a, b, where);
    }
  }
  for (const [path, rawItem] of Object.entries(after)) {
    const newItem = nodeAt({ i: rawItem }, 'i');
    const oldItem = nodeAt(before, path);
    for (const method of METHODS)
      if (isNode(newItem[method]) && !isNode(oldItem[method]))
        add(ctx, 'non-breaking', label(path, method), 'added');
  }
}

/** Every change to the interface from `before` to `after`, each classified. */
export function classifyChanges(before: object, after: object): ApiChange[] {
  const ctx: Context = { oldDoc: before as Node, newDoc: after as Node, changes: [], comparing: new Set() };
  const oldServers = show(ctx.oldDoc.servers);
  const newServers = show(ctx.newDoc.servers);
  if (oldServers !== newServers) add(ctx, 'breaking', 'servers', `${oldServers} → ${newServers}`);
  compareOperations(ctx, 'paths');
  compareOperations(ctx, 'webhooks');
  return ctx.changes;
}

const majorOf = (version: unknown) => Number.parseInt(String(version).split('.')[0] ?? '', 10);
const versionOf = (doc: object) => String(nodeAt(doc, 'info').version);

/** The `## [x.y.z]` headings of a Keep a Changelog file. */
export const changelogVersions = (changelog: string): string[] =>
  [...changelog.matchAll(/^## \[(\d+\.\d+\.\d+[^\]]*)\]/gm)].map((m) => m[1] as string);

export interface SnapshotVerdict {
  changes: ApiChange[];
  breaking: ApiChange[];
  /** Why the current document may not replace the snapshot; empty when it may. */
  problems: string[];
}

/**
 * Whether `current` may replace `snapshot`: a breaking change needs a new major `info.version`,
 * and the current version needs its entry in CHANGELOG.md (docs/decisions.md, "A record of API
 * changes").
 */
export function judgeSnapshot(
  name: string,
  snapshot: object,
  current: object,
  changelog: string,
): SnapshotVerdict {
  const changes = classifyChanges(snapshot, current);
  const breaking = changes.filter((c) => c.severity === 'breaking');
  const problems: string[] = [];
  const before = versionOf(snapshot);
  const after = versionOf(current);
  if (breaking.length > 0 && !(majorOf(after) > majorOf(before)))
    problems.push(
      `${name}: ${breaking.length} breaking change(s) while info.version stays ${after} (snapshot ${before}). ` +
        'A breaking change needs a new major version: set API_VERSION in libs/contracts/src/documents.ts to ' +
        `${majorOf(before) + 1}.0.0, add its "## [${majorOf(before) + 1}.0.0]" entry to CHANGELOG.md naming them, ` +
        'then run `npm run openapi:snapshot`; or make the change additive (docs/api.md, "Versioning").',
    );
  if (!changelogVersions(changelog).includes(after))
    problems.push(
      `${name}: CHANGELOG.md has no "## [${after}]" entry for the current version (info.version).`,
    );
  return { changes, breaking, problems };
}

/** Changes as lines for a person: breaking ones first. */
export function formatChanges(changes: readonly ApiChange[]): string {
  return [...changes]
    .sort((x, y) => (x.severity === y.severity ? 0 : x.severity === 'breaking' ? -1 : 1))
    .map((c) => `  ${c.severity === 'breaking' ? 'BREAKING    ' : 'non-breaking'} ${c.where}: ${c.what}`)
    .join('\n');
}

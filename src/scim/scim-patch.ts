// SCIM PATCH (RFC 7644 §3.5.2) applied to a resource's JSON form; the caller then stores the
// result as it would a PUT. Accepts what Entra ID and Okta send: operation names in any case,
// `value` objects without a path whose keys are themselves paths ("name.givenName", extension
// URNs), booleans as the strings "True"/"False", and filtered paths to values not present yet.
import { ScimError } from './scim-error.ts';
import { type AttrPath, type Filter, parsePatchPath } from './scim-filter.ts';
import { containerOf, matches } from './scim-filter-eval.ts';
import { PATCH_SCHEMA } from './scim-schemas.ts';
import { type JsonObject, memberOf } from './scim-user-resource.ts';

/** Spec doc 2, Limits: SCIM: a PATCH carries 1..100 operations. */
export const MAX_PATCH_OPERATIONS = 100;

export interface PatchOperation {
  op: 'add' | 'replace' | 'remove';
  path: string | null;
  value: unknown;
}

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);
const invalidValue = (detail: string) => new ScimError(400, 'invalidValue', detail);

export function decodePatch(body: unknown): PatchOperation[] {
  if (!isObject(body)) throw new ScimError(400, 'invalidSyntax', 'the body must be a JSON object');
  const schemas = memberOf(body, 'schemas');
  if (!Array.isArray(schemas) || !schemas.includes(PATCH_SCHEMA))
    throw new ScimError(400, 'invalidSyntax', `schemas must name ${PATCH_SCHEMA}`);
  const ops = memberOf(body, 'Operations');
  if (!Array.isArray(ops) || ops.length < 1 || ops.length > MAX_PATCH_OPERATIONS)
    throw invalidValue(`Operations must hold 1 to ${MAX_PATCH_OPERATIONS} operations`);
  return ops.map((o) => {
    if (!isObject(o)) throw invalidValue('each operation must be an object');
    const op = String(memberOf(o, 'op') ?? '').toLowerCase();
    if (op !== 'add' && op !== 'replace' && op !== 'remove')
      throw invalidValue('op must be add, replace or remove');
    const path = memberOf(o, 'path');
    if (path !== undefined && typeof path !== 'string')
      throw new ScimError(400, 'invalidPath', 'path must be a string');
    const value = memberOf(o, 'value');
    if (op !== 'remove' && value === undefined) throw invalidValue(`${op} needs a value`);
    if (op === 'remove' && path === undefined && value === undefined)
      throw new ScimError(400, 'noTarget', 'remove needs a path');
    return { op, path: path ?? null, value };
  });
}

const READ_ONLY = new Set(['id', 'meta', 'schemas']);

function keyIn(obj: JsonObject, name: string): string {
  const lower = name.toLowerCase();
  return Object.keys(obj).find((k) => k.toLowerCase() === lower) ?? name;
}

/** The object a path's attribute lives in, created when an add or replace needs it. */
function holder(resource: JsonObject, path: AttrPath, create: boolean): JsonObject | null {
  const c = containerOf(resource, path);
  if (isObject(c)) return c;
  if (!create || path.schema === null) return null;
  const made: JsonObject = {};
  resource[keyIn(resource, path.schema)] = made;
  return made;
}

const sameValue = (a: unknown, b: unknown) =>
  isObject(a) && isObject(b) ? memberOf(a, 'value') === memberOf(b, 'value') : a === b;

/** An element a simple filter describes (`type eq "work"`), for an add or replace that finds none. */
function elementFrom(filter: Filter): JsonObject | null {
  if (filter.op === 'eq' && filter.path.sub === null && filter.path.schema === null)
    return { [filter.path.attr]: filter.value };
  if (filter.op === 'and') {
    const l = elementFrom(filter.left);
    const r = elementFrom(filter.right);
    return l && r ? { ...l, ...r } : null;
  }
  return null;
}

function setAt(resource: JsonObject, path: AttrPath, op: 'add' | 'replace', value: unknown): void {
  const attrName = path.attr.toLowerCase();
  if (path.schema === null && READ_ONLY.has(attrName))
    throw new ScimError(400, 'mutability', `${path.attr} is read-only`);
  const h = holder(resource, path, true) as JsonObject;
  const key = keyIn(h, path.attr);
  if (path.sub !== null) {
    const inner = isObject(h[key]) ? (h[key] as JsonObject) : {};
    inner[keyIn(inner, path.sub)] = value;
    h[key] = inner;
    return;
  }
  const current = h[key];
  if (op === 'add' && Array.isArray(current)) {
    const added = Array.isArray(value) ? value : [value];
    h[key] = [...current, ...added.filter((v) => !current.some((c) => sameValue(c, v)))];
  } else if (op === 'add' && isObject(current) && isObject(value)) {
    h[key] = { ...current, ...value };
  } else {
    h[key] = value;
  }
}

function removeAt(resource: JsonObject, path: AttrPath, value: unknown): void {
  if (path.schema === null && READ_ONLY.has(path.attr.toLowerCase()))
    throw new ScimError(400, 'mutability', `${path.attr} is read-only`);
  const h = holder(resource, path, false);
  if (!h) return;
  const key = keyIn(h, path.attr);
  if (path.sub !== null) {
    if (isObject(h[key])) delete (h[key] as JsonObject)[keyIn(h[key] as JsonObject, path.sub)];
    return;
  }
  // Entra ID removes members by listing them as the value, without a filter.
  if (Array.isArray(h[key]) && Array.isArray(value)) {
    h[key] = (h[key] as unknown[]).filter((c) => !value.some((v) => sameValue(c, v)));
    return;
  }
  delete h[key];
}

function applyFiltered(
  resource: JsonObject,
  op: PatchOperation,
  path: AttrPath,
  filter: Filter,
  sub: string | null,
) {
  const h = holder(resource, path, op.op !== 'remove');
  if (!h) return;
  const key = keyIn(h, path.attr);
  const list = Array.isArray(h[key]) ? (h[key] as unknown[]) : [];
  const hit = (v: unknown) => isObject(v) && matches(v, filter);
  if (op.op === 'remove') {
    h[key] =
      sub === null
        ? list.filter((v) => !hit(v))
        : list.map((v) => (hit(v) ? dropKey(v as JsonObject, sub) : v));
    return;
  }
  if (!list.some(hit)) {
    const made = elementFrom(filter);
    if (!made) throw new ScimError(400, 'noTarget', `no value of ${path.attr} matches the path's filter`);
    h[key] = [
      ...list,
      sub === null ? { ...made, ...(isObject(op.value) ? op.value : {}) } : { ...made, [sub]: op.value },
    ];
    return;
  }
  h[key] = list.map((v) => {
    if (!hit(v)) return v;
    if (sub !== null) return { ...(v as JsonObject), [keyIn(v as JsonObject, sub)]: op.value };
    if (!isObject(op.value)) throw invalidValue(`the value for a filtered ${path.attr} must be an object`);
    return op.op === 'add' ? { ...(v as JsonObject), ...op.value } : op.value;
  });
}

function dropKey(obj: JsonObject, name: string): JsonObject {
  const copy = { ...obj };
  delete copy[keyIn(copy, name)];
  return copy;
}

/** Applies the operations in order to a copy of `resource`. */
export function applyPatch(resource: JsonObject, ops: readonly PatchOperation[]): JsonObject {
  const doc = structuredClone(resource);
  for (const op of ops) {
    if (op.path === null) {
      if (!isObject(op.value)) throw invalidValue('an operation without a path needs an object value');
      for (const [k, v] of Object.entries(op.value)) {
        // Okta repeats the resource's id (and some clients its schemas) in a replace value.
        const lower = k.toLowerCase();
        if (lower === 'schemas' || (lower === 'id' && v === doc.id)) continue;
        if (/^urn:\S*:(User|Group)$/i.test(k) && isObject(v)) {
          // An extension object: each of its attributes is set in the extension.
          for (const [sk, sv] of Object.entries(v))
            setAt(doc, { schema: k, attr: sk, sub: null }, 'replace', sv);
          continue;
        }
        const p = parsePatchPath(k);
        if (p.filter) throw new ScimError(400, 'invalidPath', 'a key of a value object cannot filter');
        if (op.op === 'remove') removeAt(doc, p.path, v);
        else setAt(doc, p.path, op.op, v);
      }
      continue;
    }
    const p = parsePatchPath(op.path);
    if (p.filter) applyFiltered(doc, op, p.path, p.filter, p.sub);
    else if (op.op === 'remove') removeAt(doc, p.path, op.value);
    else setAt(doc, p.path, op.op, op.value);
  }
  return doc;
}

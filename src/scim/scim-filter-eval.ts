// Evaluating a parsed filter against a SCIM resource (RFC 7644 §3.4.2.2). Attribute names are
// case-insensitive; string comparison ignores case except for the case-exact attributes (id,
// externalId, meta.version: RFC 7643 §3.1); a multi-valued attribute matches when any value does.
import { ScimError } from './scim-error.ts';
import type { AttrPath, CompareOp, Filter, ScimValue } from './scim-filter.ts';

type Json = unknown;
const CASE_EXACT = new Set(['id', 'externalid', 'version']);

function member(obj: Json, name: string): Json {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return undefined;
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(obj)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

/** The object a path starts in: the resource, or the extension object its schema URN names. */
export function containerOf(resource: Json, path: AttrPath): Json {
  return path.schema === null || isCoreSchema(path.schema) ? resource : member(resource, path.schema);
}

const isCoreSchema = (urn: string) => /^urn:ietf:params:scim:schemas:core:2\.0:(User|Group)$/i.test(urn);

/** Every value a path names (a multi-valued attribute contributes each element). */
function valuesAt(resource: Json, path: AttrPath): Json[] {
  const top = member(containerOf(resource, path), path.attr);
  const list = Array.isArray(top) ? top : top === undefined ? [] : [top];
  if (path.sub === null) return list;
  return list.map((v) => member(v, path.sub as string)).filter((v) => v !== undefined);
}

function compare(op: CompareOp, actual: Json, expected: ScimValue, exact: boolean): boolean {
  if (actual === null || actual === undefined)
    return op === 'ne' ? expected !== null : expected === null && op === 'eq';
  if (typeof actual === 'object') {
    // A complex value compares through its `value` sub-attribute.
    return compare(op, member(actual, 'value'), expected, exact);
  }
  if (typeof expected === 'boolean' || typeof actual === 'boolean') {
    if (op !== 'eq' && op !== 'ne')
      throw new ScimError(400, 'invalidFilter', `${op} does not apply to booleans`);
    return (actual === expected) === (op === 'eq');
  }
  if (expected === null) return op === 'ne';
  const norm = (v: string | number) => (typeof v === 'string' && !exact ? v.toLowerCase() : v);
  const a = norm(actual as string | number);
  const e = norm(expected);
  switch (op) {
    case 'eq':
      return a === e;
    case 'ne':
      return a !== e;
    case 'co':
      return String(a).includes(String(e));
    case 'sw':
      return String(a).startsWith(String(e));
    case 'ew':
      return String(a).endsWith(String(e));
    case 'gt':
      return a > e;
    case 'ge':
      return a >= e;
    case 'lt':
      return a < e;
    case 'le':
      return a <= e;
  }
}

const present = (v: Json) =>
  v !== null && v !== undefined && v !== '' && !(Array.isArray(v) && v.length === 0);

export function matches(resource: Json, f: Filter): boolean {
  switch (f.op) {
    case 'and':
      return matches(resource, f.left) && matches(resource, f.right);
    case 'or':
      return matches(resource, f.left) || matches(resource, f.right);
    case 'not':
      return !matches(resource, f.filter);
    case 'pr':
      return valuesAt(resource, f.path).some(present);
    case 'valuePath': {
      const top = member(containerOf(resource, f.path), f.path.attr);
      const list = Array.isArray(top) ? top : top === undefined ? [] : [top];
      return list.some((v) => matches(v, f.filter));
    }
    default: {
      const exact = CASE_EXACT.has((f.path.sub ?? f.path.attr).toLowerCase());
      const values = valuesAt(resource, f.path);
      if (values.length === 0) return compare(f.op, undefined, f.value, exact);
      return f.op === 'ne'
        ? values.every((v) => compare('ne', v, f.value, exact))
        : values.some((v) => compare(f.op as CompareOp, v, f.value, exact));
    }
  }
}

/**
 * Checks a parsed request body against a TypeBox schema from schemas.ts.
 *
 * Accept path: the schema is compiled once (TypeBox JIT, cached per schema) and a valid body
 * costs one compiled check. Failure path only: the same schema — plain JSON Schema — is walked
 * alongside the value to produce zod-style messages (external-api.md §7, CONTRACT.md §3):
 *
 *   Invalid JSON: 0.name: Required, 0.componentInstances.2.width: Number must be less than or equal to 100
 *
 * Rules of the walk:
 * - Exactly one message per failing field; a field of the wrong type (including a nested
 *   object or array) gets one message at its own path and nothing below it.
 * - Order: array elements by index; within an object, fields in schema declaration order
 *   (the order of the field tables in external-api.md), which is also zod's order.
 * - Only fields declared in the schema are visited. Unknown fields (however deeply nested)
 *   are never read, so hostile nesting cannot exhaust the stack: recursion depth is bounded
 *   by the depth of the schema, for the compiled check and for this walk alike.
 * - The walk stops after MAX_REPORTED_ISSUES + 1 failures, so the failure path is linear in
 *   the part of the body it had to look at and the message stays bounded.
 * - A field required in either of two spellings (schemas.ts oneOfSpellingsRequired), neither
 *   sent, is `Required` at its first spelling, in that spelling's place.
 * - A wordedByWrite schema's rule is not explained here: its value's type (and an array's
 *   items) is checked, and a body that breaks only such rules is returned for the write step to refuse in its own words.
 */
import type { Static, TSchema } from 'typebox';
import { Compile, type Validator } from 'typebox/compile';

/**
 * At most this many failures are listed; when there are more, the message ends with `, ...`.
 * A 100,000-element bad body thus produces a message of about a hundred entries.
 */
export const MAX_REPORTED_ISSUES = 100;

/** Longest received enum string echoed back in a message; longer ones are cut with `…`. */
const MAX_ECHOED_STRING = 100;

/** A schema-validation failure of a request body: HTTP 400, `message` is the whole `error` text. */
export class SchemaError extends Error {
  readonly status = 400;
  constructor(message: string) {
    super(message);
    this.name = 'SchemaError';
  }
}

const validators = new WeakMap<TSchema, Validator>();

function validatorFor(schema: TSchema): Validator {
  let validator = validators.get(schema);
  if (validator === undefined) {
    validator = Compile(schema) as Validator;
    validators.set(schema, validator);
  }
  return validator;
}

/**
 * Returns `body`, typed, when it matches `schema`; otherwise throws a SchemaError whose
 * message lists every failure (up to MAX_REPORTED_ISSUES). The body is not modified:
 * unknown fields stay in place and are simply not part of the static type.
 */
export function checkBody<S extends TSchema>(schema: S, body: unknown): Static<S> {
  if (validatorFor(schema).Check(body)) return body as Static<S>;
  const walk = new Walk();
  walk.node(schema as Node, body);
  // Failing only rules the write step words itself: the write step refuses the body, in its words.
  if (walk.issues.length === 0 && walk.leftToWrite) return body as Static<S>;
  throw new SchemaError(formatIssues(walk));
}

/**
 * Marks a scalar or array schema (its rule beyond its JSON type and its items is a `pattern`, a
 * `not`, a `minItems` and the like; an object's fields would go unchecked) whose rule the write
 * step applies and words itself: a client's id (current-form/schemas.ts clientId;
 * write/current.ts checkNewId refuses it with the texts of docs/api.md §13), a draft's or a
 * version's name, a webhook's url and events. The schema states the rule, for the OpenAPI
 * document; checkBody refuses a value of the wrong type (or an array's item) as usual, but a body
 * that fails only such rules passes on, so that its refusal reads as the write step words it.
 */
const WORDED_BY_WRITE = Symbol('c4store.wordedByWrite');

export function wordedByWrite<S extends TSchema>(schema: S): S {
  (schema as S & { [WORDED_BY_WRITE]?: true })[WORDED_BY_WRITE] = true;
  return schema;
}

/** The `Invalid JSON: …` text for a body that fails `schema` (exported for tests and tooling). */
export function formatSchemaErrors(schema: TSchema, body: unknown): string {
  const walk = new Walk();
  walk.node(schema as Node, body);
  return formatIssues(walk);
}

function formatIssues(walk: Walk): string {
  const shown = walk.issues.slice(0, MAX_REPORTED_ISSUES);
  // Only reachable if a schema used a keyword this walker does not explain.
  if (shown.length === 0) shown.push('Invalid input');
  const more = walk.issues.length > MAX_REPORTED_ISSUES ? ', ...' : '';
  return `Invalid JSON: ${shown.join(', ')}${more}`;
}

// ---------------------------------------------------------------------------------------
// The walk
// ---------------------------------------------------------------------------------------

/** The JSON Schema subset used by schemas.ts (TypeBox schemas are JSON Schema objects). */
interface Node {
  type?: string;
  properties?: Record<string, Node>;
  required?: string[];
  items?: Node;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Node[];
  /** On an object: oneOfSpellingsRequired groups (schemas.ts), `{anyOf: [{required: [a]}, {required: [b]}]}`. */
  allOf?: Node[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
}

class Walk {
  readonly issues: string[] = [];
  /** A value failed a wordedByWrite schema's rule (its type was right): the write step's to refuse. */
  leftToWrite = false;
  private readonly path: (string | number)[] = [];

  get full(): boolean {
    return this.issues.length > MAX_REPORTED_ISSUES;
  }

  private fail(message: string): void {
    this.issues.push(this.path.length === 0 ? message : `${this.path.join('.')}: ${message}`);
  }

  node(schema: Node, value: unknown): void {
    if ((schema as { [WORDED_BY_WRITE]?: true })[WORDED_BY_WRITE]) return this.worded(schema, value);
    if (schema.anyOf !== undefined) return this.anyOf(schema.anyOf, value);
    if (schema.enum !== undefined) return this.enum(schema.enum, value);
    if (schema.const !== undefined) return this.enum([schema.const], value);
    switch (schema.type) {
      case 'object':
        return this.object(schema, value);
      case 'array':
        return this.array(schema, value);
      case 'integer':
      case 'number':
        return this.number(schema, value);
      case 'string':
        return this.string(schema, value);
      case 'boolean':
      case 'null':
        if (received(value) !== schema.type) this.fail(`Expected ${schema.type}, received ${received(value)}`);
        return;
      default:
        return; // `{}`: anything goes (e.g. the read-only diagram `url`)
    }
  }

  /** Its JSON type (and an array's items) is checked here; the rest of its rule, if the value breaks it, is left to the write step. */
  private worded(schema: Node, value: unknown): void {
    const before = this.issues.length;
    this.node({ type: schema.type, items: schema.items }, value);
    if (this.issues.length === before && !validatorFor(schema as TSchema).Check(value)) this.leftToWrite = true;
  }

  private object(schema: Node, value: unknown): void {
    if (received(value) !== 'object') return this.fail(`Expected object, received ${received(value)}`);
    const record = value as Record<string, unknown>;
    const required = schema.required ?? [];
    // A field required in either spelling is missing, like a required one, at its first spelling's place.
    const spellings = new Map((schema.allOf ?? []).flatMap((group) => spellingsOf(group)).map((names) => [names[0]!, names]));
    const missing = (key: string) => required.includes(key) || (spellings.get(key)?.every((name) => record[name] === undefined) ?? false);
    for (const [key, child] of Object.entries(schema.properties ?? {})) {
      if (this.full) return;
      const field = record[key];
      this.path.push(key);
      if (field === undefined) {
        if (missing(key)) this.fail('Required');
      } else {
        this.node(child, field);
      }
      this.path.pop();
    }
  }

  private array(schema: Node, value: unknown): void {
    if (!Array.isArray(value)) return this.fail(`Expected array, received ${received(value)}`);
    if (schema.items === undefined) return;
    for (let index = 0; index < value.length && !this.full; index++) {
      this.path.push(index);
      this.node(schema.items, value[index]);
      this.path.pop();
    }
  }

  private number(schema: Node, value: unknown): void {
    const kind = received(value);
    if (kind !== 'number') return this.fail(`Expected ${schema.type}, received ${kind}`);
    const n = value as number;
    if (schema.type === 'integer' && !Number.isInteger(n)) return this.fail('Expected integer, received float');
    if (schema.minimum !== undefined && n < schema.minimum) {
      return this.fail(`Number must be greater than or equal to ${schema.minimum}`);
    }
    if (schema.maximum !== undefined && n > schema.maximum) {
      return this.fail(`Number must be less than or equal to ${schema.maximum}`);
    }
  }

  /** TypeBox counts a string's length in code points, as JSON Schema does; so do these messages. */
  private string(schema: Node, value: unknown): void {
    if (typeof value !== 'string') return this.fail(`Expected string, received ${received(value)}`);
    if (schema.minLength !== undefined && codePoints(value, schema.minLength) < schema.minLength) {
      return this.fail(`String must contain at least ${schema.minLength} character(s)`);
    }
    if (schema.maxLength !== undefined && codePoints(value, schema.maxLength + 1) > schema.maxLength) {
      return this.fail(`String must contain at most ${schema.maxLength} character(s)`);
    }
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) {
      this.fail(`String must match the pattern ${schema.pattern}`);
    }
  }

  private enum(values: unknown[], value: unknown): void {
    const expected = values.map(literal).join(' | ');
    if (typeof value !== 'string') {
      if (!values.includes(value)) this.fail(`Expected ${expected}, received ${received(value)}`);
    } else if (!values.includes(value)) {
      this.fail(`Invalid enum value. Expected ${expected}, received ${literal(value)}`);
    }
  }

  /**
   * A union gives one message. `T | null` (a nullable field) is explained as T: the value is
   * not null here, so T's own message applies (`Expected string, received number`). Other
   * unions list their branches: `Expected string | number | boolean | null, received object`.
   */
  private anyOf(branches: Node[], value: unknown): void {
    if (branches.some((branch) => matches(branch, value))) return;
    // A union of literals (TypeBox's Union of Literal) is an enum.
    const literals = branches.every((branch) => branch.const !== undefined);
    if (literals)
      return this.enum(
        branches.map((branch) => branch.const),
        value,
      );
    const nonNull = branches.filter((branch) => branch.type !== 'null');
    if (nonNull.length === 1 && value !== null) return this.node(nonNull[0]!, value);
    this.fail(`Expected ${branches.map(describe).join(' | ')}, received ${received(value)}`);
  }
}

/**
 * The spellings of a oneOfSpellingsRequired group (schemas.ts), the first one first; none for
 * anything else in an `allOf`, which this walk does not explain (its failure would read `Invalid input`).
 */
function spellingsOf(group: Node): string[][] {
  const names = (group.anyOf ?? []).map((branch) => branch.required);
  if (names.length === 0 || names.some((required) => required?.length !== 1)) return [];
  return [names.map((required) => required![0]!)];
}

/** Whether `value` satisfies `schema` (a fresh walk that finds nothing). */
function matches(schema: Node, value: unknown): boolean {
  const walk = new Walk();
  walk.node(schema, value);
  return walk.issues.length === 0;
}

/** How a union branch is named in `Expected a | b, …`. */
function describe(schema: Node): string {
  if (schema.enum !== undefined) return schema.enum.map(literal).join(' | ');
  if (schema.const !== undefined) return literal(schema.const);
  if (schema.anyOf !== undefined) return schema.anyOf.map(describe).join(' | ');
  return schema.type ?? 'any';
}

/**
 * The received-type name of a value, as in zod: string, number, boolean, null, array, object.
 * Non-finite numbers (possible from YAML `.nan`, `.inf`, `-.inf`; never from JSON) are not
 * numbers for any schema: NaN is `nan`, ±Infinity is `infinity`. The values of YAML 1.1's own
 * types that a `%YAML 1.1` body may carry (`2026-01-02`, `!!binary`, `!!set`, `!!omap`) are
 * named by their type, not taken for objects. Anything else exotic is named by `typeof`
 * (bigint, undefined, …).
 */
function received(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return 'nan';
    if (!Number.isFinite(value)) return 'infinity';
  }
  if (typeof value === 'object') {
    if (value instanceof Date) return 'timestamp';
    if (value instanceof Uint8Array) return 'binary';
    if (value instanceof Set) return 'set';
    if (value instanceof Map) return 'omap';
  }
  return typeof value;
}

/** Code points of `text`, counted only as far as `enough` (the failure path may meet a 10 MB string). */
function codePoints(text: string, enough: number): number {
  let count = 0;
  for (const _ of text) if (++count >= enough) break;
  return count;
}

function literal(value: unknown): string {
  if (typeof value !== 'string') return String(value);
  const shown = value.length > MAX_ECHOED_STRING ? `${value.slice(0, MAX_ECHOED_STRING)}…` : value;
  return `'${shown}'`;
}

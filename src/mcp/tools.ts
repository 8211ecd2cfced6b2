import type { Context } from 'koa';
import { type Static, type TSchema, Type } from 'typebox';
import { drawingOf } from '../drawing/drawings.js';
import { ApiError } from '../errors.js';
import { pageStart, pathsOfResourceNamed, readHistory } from '../history/log.js';
import { answeredDiff } from '../drafts/conflict-shape.js';
import { Drafts, draftTip, writeToDraft } from '../drafts/drafts.js';
import { describeChanges } from '../drafts/words.js';
import { apiContextOf, authorOf, state } from '../http/resource.js';
import { newId } from '../model/ids.js';
import { TemplateBody } from '../model/current-form/schemas.js';
import { writeCurrent } from '../model/write/current.js';
import { checkBody } from '../model/check-body.js';
import { presentCurrent } from '../model/current-form/present.js';
import { byIdOrRef } from '../model/draft.js';
import { collectionOf, DIRECTORIES, kindOfId, type StoredKind } from '../model/files.js';
import type { Model } from '../model/types.js';
import type { Snapshot } from '../service/org.js';
import { ignoredFields } from '../model/ignored-fields.js';
import { draftRef } from '../store/branches.js';
import { MAIN_REF } from '../store/refs.js';
import { pngInTurn, pngOf } from '../viewer/svg-response.js';
import { diagramPath } from '../viewer/pages.js';
import { searchComponents, searchDependencies, searchDiagrams, SearchError } from '../search/search.js';
import { resolveCommitName } from '../service/commit-names.js';
import { emitYaml, type Plain } from '../yaml/format.js';
import { ANSWER_CHARS, fitted } from './fit.js';

/**
 * The tools an agent is given (CONTRACT.md §10): what each does, its input as a TypeBox schema
 * (the JSON Schema the agent sees and the check its arguments pass, one declaration), whether it
 * only reads, and how it runs against the model of the request's organization. Every answer is
 * text an agent reads well plus the same as `structuredContent` (one that is no JSON, its facts
 * after it: ToolAnswer.facts), and stays prompt-sized.
 */

export interface ToolContext {
  /** The HTTP request that carries the call: its key and organization (http/resource.ts `state`). */
  ctx: Context;
  publicUrl: string;
  /** The MCP client's name, from its `initialize`: named in the `Agent:` trailer of its commits. */
  clientName: string;
  /**
   * What the call's answer must also say: that `main`'s newest commit is no valid model and an
   * older one was read (the API says it in a `Warning` header, which an agent never sees).
   */
  warnings: string[];
}

export interface ToolAnswer {
  text: string;
  /** The same data as the text, as JSON: the answer's `structuredContent`. */
  structured?: Record<string, unknown>;
  /** A picture after the text (render_diagram's PNG). */
  image?: { data: string; mimeType: string };
  /**
   * What an answer that is no JSON (a page of YAML, a drawing) tells of itself, as JSON in a text
   * after it. Such an answer has no `structuredContent`: some clients (Claude Code, Cursor) show
   * the model only the `structuredContent` of an answer that has one, which would hide the YAML
   * or the drawing behind what is said of it.
   */
  facts?: Record<string, unknown>;
}

export interface Tool<S extends TSchema = TSchema> {
  name: string;
  title: string;
  description: string;
  input: S;
  readOnly: boolean;
  run(args: Static<S>, context: ToolContext): Promise<ToolAnswer>;
}

function tool<S extends TSchema>(definition: Tool<S>): Tool {
  return definition as unknown as Tool;
}

const Id = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });
const Revision = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });

/** Room kept in an answer for the sentence before its JSON, or for the facts after a page of YAML or a drawing. */
const HEADING_CHARS = 500;
/** What the facts of an answer that is no JSON may take (ToolAnswer.facts): a diagram's name may be long. */
export const FACTS_CHARS = HEADING_CHARS;
/** What an answer's JSON (or YAML page) may take: the answer's size less that room. */
const BODY_CHARS = ANSWER_CHARS - HEADING_CHARS;

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/**
 * An answer of JSON fitted to the answer size (mcp/fit.ts): pretty when it fits so, else
 * compact, and shortened, with a note, when it does not fit at all.
 */
function jsonAnswer(
  value: Record<string, unknown>,
  heading = '',
  whenCut = 'lists shortened, their lengths beside them as <name>Total',
): ToolAnswer {
  const pretty = json(value);
  if (pretty.length <= BODY_CHARS) return { text: heading + pretty, structured: value };
  const fit = fitted(value, BODY_CHARS);
  return { text: `${heading}${fit.cut ? `(cut: ${whenCut})\n` : ''}${JSON.stringify(fit.value)}`, structured: fit.value };
}

/** `line` in at most `chars` characters, `…` ending one cut short. */
function short(line: string, chars: number): string {
  return line.length <= chars ? line : `${line.slice(0, chars - 1)}…`;
}

/**
 * The sentence(s) before an answer's JSON, within the room kept for them (HEADING_CHARS):
 * `lines` as many as fit, each cut short when long, then `last` (cut to what is left), and a
 * note saying where the rest is when lines were left out.
 */
function heading(lines: readonly string[], last: readonly string[], rest: string): string {
  const tail = last.map((line) => short(line, 200));
  const note = `… (${rest})`;
  let room = HEADING_CHARS - tail.reduce((sum, line) => sum + line.length + 1, 0) - note.length - 1;
  const kept: string[] = [];
  for (const line of lines) {
    const cut = short(line, 160);
    if (cut.length + 1 > room) break;
    kept.push(cut);
    room -= cut.length + 1;
  }
  return `${[...kept, ...(kept.length < lines.length ? [note] : []), ...tail].join('\n')}\n`;
}

/** What a list answer counts, and its name when there is one of it ("1 commit", not "1 commits"). */
const ONE_OF = { components: 'component', diagrams: 'diagram', dependencies: 'dependency', commits: 'commit' } as const;

/** A list answer cut to the answer size: as many items as fit, and how many there were. */
function listAnswer(items: readonly unknown[], noun: keyof typeof ONE_OF): ToolAnswer {
  const { value: shown, cut } = fitted([...items], BODY_CHARS);
  // Every item shown, one shortened inside (a commit of many files): there is no rest to send the agent after.
  const note = !cut
    ? ''
    : shown.length < items.length
      ? ` (the first ${shown.length} shown; narrow the search for the rest)`
      : ' (cut: lists inside them shortened, their lengths beside them as <name>Total)';
  const pretty = json(shown);
  const counted = items.length === 1 ? ONE_OF[noun] : noun;
  return {
    text: `${items.length} ${counted}${note}:\n${pretty.length <= BODY_CHARS ? pretty : JSON.stringify(shown)}`,
    structured: { total: items.length, items: shown },
  };
}

/** The id of the resource of any kind that `name` names by id, else by ref; else `name` itself (a resource deleted since). */
function resourceIdOf(model: Model, name: string): string {
  if (kindOfId(model, name) !== undefined) return name;
  for (const kind of Object.keys(DIRECTORIES) as StoredKind[]) {
    const found = byIdOrRef<{ id: string }>(collectionOf(model, kind) as ReadonlyMap<string, { id: string }>, name);
    if (found) return found.id;
  }
  return name;
}

/** A diagram's `url` as the draft has it: without ?draft= the page shows main's. Other items as they are. */
function inDraft<T>(item: T, draft: string | undefined): T {
  const url = (item as { url?: unknown } | null)?.url;
  if (draft === undefined || typeof url !== 'string') return item;
  return { ...item, url: `${url}?draft=${encodeURIComponent(draft)}` };
}

function diagramsShowing(model: Model, componentId: string) {
  return [...model.diagrams.values()]
    .filter((d) => d.componentInstances.some((i) => i.component === componentId))
    .map((d) => ({ id: d.id, name: d.name, level: d.level }));
}

const ReadDraft = Type.Optional(
  Type.String({
    description: "Read a draft's model instead of main's (the draft's name): what it proposes, before anyone merges it.",
  }),
);

const SearchInput = Type.Object({
  kind: Type.Union([Type.Literal('components'), Type.Literal('diagrams'), Type.Literal('dependencies')], {
    description: 'What to search: components, diagrams, or the dependencies (relations) of one component.',
  }),
  name: Type.Optional(Type.String({ description: 'Case-insensitive part of the name (components, diagrams).' })),
  typeId: Type.Optional(Type.String({ description: 'Components of this type id.' })),
  tagId: Type.Optional(Type.String({ description: 'Components or diagrams with this tag id.' })),
  attributeId: Type.Optional(Type.String({ description: 'Components with a value for this attribute id.' })),
  attributeValue: Type.Optional(Type.String({ description: 'With attributeId: components whose value is this.' })),
  state: Type.Optional(Type.String({ description: 'DRAFT, ACTIVE or ARCHIVED.' })),
  componentId: Type.Optional(Type.String({ description: 'Diagrams showing this component; for dependencies, required.' })),
  level: Type.Optional(Type.String({ description: 'Diagrams of this C4 level: C1, C2, C3 or C4.' })),
  draft: ReadDraft,
});

const GetById = (what: string) => Type.Object({ id: Id(`The ${what}'s id, or else its ref.`), draft: ReadDraft });

const RenderInput = Type.Object({
  id: Id("The diagram's id, or else its ref."),
  draft: ReadDraft,
  compare: Type.Optional(
    Type.Literal('main', {
      description:
        "With draft: the draft's visual diff against main, drawn on the draft's layout; what the draft adds, removes (faded) and changes is marked (SVG groups with class c4-added, c4-removed, c4-changed). A diagram the draft deleted is drawn as main had it, every element marked removed.",
    }),
  ),
  format: Type.Optional(
    Type.Union([Type.Literal('svg'), Type.Literal('png')], { description: 'svg (default): the drawing as text; png: a picture.' }),
  ),
});

/** The largest PNG a tool answer carries (base64 grows it by a third); a larger one is left to its address. */
const MAX_PNG_BYTES = 1_500_000;

const ModelInput = Type.Object({
  draft: ReadDraft,
  offset: Type.Optional(
    Type.Integer({ minimum: 0, description: 'Where to go on in the YAML (characters), as the previous answer named it.' }),
  ),
});

const HistoryInput = Type.Object({
  resource: Type.Optional(Id('Only the commits that changed this resource (any kind): its id, or else its ref.')),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Commits, newest first (default 20).' })),
  before: Type.Optional(Revision('Go on after this commit (paging).')),
  draft: Type.Optional(
    Type.String({
      description: "A draft's history instead of main's (the draft's name): its own commits, then main's from where it began.",
    }),
  ),
});

const DiffInput = Type.Object({
  from: Revision('A commit id (full or abbreviated) or version name to compare from.'),
  to: Type.Optional(Revision('What to compare to (default: main).')),
});

/** The whole model as YAML, in the current form's shapes: get_model and the model resource. */
export function modelYaml(m: Model, publicUrl: string): string {
  return emitYaml({
    types: [...m.types.values()],
    tags: [...m.tags.values()],
    attributes: [...m.attributes.values()],
    components: [...m.components.values()].map((c) => presentCurrent.component(c, m)),
    diagrams: [...m.diagrams.values()].map((d) => presentCurrent.diagram(d, m, publicUrl)),
  } as unknown as { [key: string]: Plain });
}

/**
 * The page of the model's YAML (modelYaml) that starts at `offset`: within an answer's bound with
 * the line that ends it, `# … <n> more characters: <onward(next)>`, which says how to read on
 * (`next`: where the next page starts, null after the last). Pages end at a line's end. An offset
 * past the end is refused (400), as get_model's argument.
 */
export function modelPage(yaml: string, offset: number, onward: (next: number) => string): { text: string; next: number | null } {
  if (offset > 0 && offset >= yaml.length) {
    throw new ApiError(400, `offset ${offset} is past the end of the model's YAML (${yaml.length} characters): start again at 0.`);
  }
  // Room kept for the line that says where to go on: the whole answer stays within the bound.
  const end = Math.min(yaml.length, offset + BODY_CHARS);
  const cut = yaml.lastIndexOf('\n', end) > offset && end < yaml.length ? yaml.lastIndexOf('\n', end) + 1 : end;
  const next = cut < yaml.length ? cut : null;
  const text = yaml.slice(offset, cut) + (next === null ? '' : `\n# … ${yaml.length - cut} more characters: ${onward(next)}\n`);
  return { text, next };
}

/**
 * The model as main has it, or as the draft `draft` has it: by a tool's arguments alone. Not the
 * API's readSnapshot, which takes ?at= and ?draft= from the request: a query on /mcp's address
 * is no argument of any tool, and must not turn every read of main into one of a draft. While
 * main is broken, its last valid commit, said in `warnings` (the API says it in a header).
 */
export async function snapshotOf(ctx: Context, draft?: string, warnings?: string[]): Promise<Snapshot> {
  const { org } = state(ctx);
  if (draft !== undefined) return draftTip(org, draft);
  const { snapshot, warning } = await org.readable();
  if (warning !== undefined) warnings?.push(warning);
  return snapshot;
}

async function model(context: ToolContext, draft: string | undefined) {
  return (await snapshotOf(context.ctx, draft, context.warnings)).model;
}

function search(model: Model, args: Static<typeof SearchInput>, publicUrl: string): unknown[] {
  const { kind, draft: _, ...filters } = args;
  try {
    if (kind === 'components') return searchComponents(model, filters);
    if (kind === 'diagrams') return searchDiagrams(model, filters, publicUrl);
    // The dependencies of one component (as the API's /components/<id>/dependencies), not a filter:
    // a name that is no component's must not read as a component that has none.
    const { componentId } = filters;
    if (componentId !== undefined && !byIdOrRef(model.components, componentId)) {
      throw new ApiError(404, `Component with id '${componentId}' does not exist.`);
    }
    return searchDependencies(model, filters);
  } catch (err) {
    if (err instanceof SearchError) throw new ApiError(400, err.message);
    throw err;
  }
}

export const READ_TOOLS: readonly Tool[] = [
  tool({
    name: 'search',
    title: 'Search the architecture',
    description:
      'Finds components (by name, type, tag, attribute, state), diagrams (by name, component shown, tag, level, state) or the dependencies of one component. Search before creating anything, to reuse what exists.',
    input: SearchInput,
    readOnly: true,
    async run(args, context) {
      const found = search(await model(context, args.draft), args, context.publicUrl);
      return listAnswer(
        found.map((item) => inDraft(item, args.draft)),
        args.kind,
      );
    },
  }),
  tool({
    name: 'get_component',
    title: 'Read a component',
    description: 'One component with its type, attributes, tags and links, and the diagrams it appears on.',
    input: GetById('component'),
    readOnly: true,
    async run({ id, draft }, context) {
      const m = await model(context, draft);
      const component = byIdOrRef(m.components, id);
      if (!component) throw new ApiError(404, `Component with id '${id}' does not exist.`);
      return jsonAnswer({ ...presentCurrent.component(component, m), diagrams: diagramsShowing(m, component.id) });
    },
  }),
  tool({
    name: 'get_diagram',
    title: 'Read a diagram',
    description: 'One diagram: its component instances (with positions), containers, text areas and relations.',
    input: GetById('diagram'),
    readOnly: true,
    async run({ id, draft }, context) {
      const m = await model(context, draft);
      const diagram = byIdOrRef(m.diagrams, id);
      if (!diagram) throw new ApiError(404, `Diagram with id '${id}' does not exist.`);
      return jsonAnswer(
        inDraft(presentCurrent.diagram(diagram, m, context.publicUrl), draft) as Record<string, unknown>,
        '',
        'the diagram is larger than an answer: its lists are shortened, their lengths beside them as <name>Total; the API has it whole',
      );
    },
  }),
  tool({
    name: 'render_diagram',
    title: 'Draw a diagram',
    description:
      'The drawing of one diagram as the viewer shows it: SVG text (default) or a PNG picture (format png), and the address where a person sees it.',
    input: RenderInput,
    readOnly: true,
    async run({ id, format = 'svg', draft, compare }, context) {
      if (compare !== undefined && draft === undefined) throw new ApiError(400, 'compare needs draft: the draft to compare with main.');
      const { org } = state(context.ctx);
      const snapshot = await snapshotOf(context.ctx, draft, context.warnings);
      const found = byIdOrRef(snapshot.model.diagrams, id);
      const deleted = found === undefined && draft !== undefined ? await new Drafts(org).deletedDiagram(draft, id) : undefined;
      const diagram = found ?? deleted;
      if (!diagram) throw new ApiError(404, `Diagram with id '${id}' does not exist.`);
      if (deleted && compare === undefined) {
        throw new ApiError(
          404,
          `Draft '${draft}' deleted diagram '${diagram.name}' (id '${diagram.id}'): render_diagram with compare "main" draws it as main had it, every element marked removed.`,
        );
      }
      // The page and the drawings, as the draft has them when one was named.
      const path = `${context.publicUrl}${diagramPath(org.slug, diagram.id)}`;
      const query = draft === undefined ? '' : `?draft=${encodeURIComponent(draft)}${compare === undefined ? '' : '&compare=main'}`;
      // A diagram the draft deleted has no page in the draft (its review page tells of the deletion);
      // its drawings with compare=main are its visual diff, as here.
      const url = deleted ? draftPage(context, draft!) : path + query;
      const about = {
        id: diagram.id,
        name: diagram.name,
        url,
        ...(draft === undefined ? {} : { draft }),
        ...(deleted ? { deleted: true } : {}),
      };
      // A deleted one is drawn only as its visual diff (refused above without compare).
      const drawn = compare === undefined || draft === undefined ? undefined : await new Drafts(org).comparison(draft, diagram.id);
      const drawSvg = () => (drawn ? drawingOf(drawn.diagram, drawn.model, { marks: drawn.marks }) : drawingOf(diagram, snapshot.model));
      const svgAddress = `${path}.svg${query}`;
      const what = deleted
        ? `'${diagram.name}' (deleted by draft '${draft}': as main had it, every element marked removed)`
        : `'${diagram.name}'`;
      if (format === 'png') {
        const png = drawn ? await pngInTurn(snapshot.model.organization.slug, await drawSvg(), 1) : await pngOf(snapshot, diagram, 1);
        // The viewer's PNG of a visual diff is its SVG rasterized, marks and all, as this one.
        const address = `${path}.png${query}`;
        const facts = { ...about, png: address, mediaType: 'image/png', bytes: png.length };
        if (png.length > MAX_PNG_BYTES) {
          return { text: `The PNG of ${what} is ${png.length} bytes, too large for an answer: it is at ${address}.`, facts };
        }
        return {
          text: `${what} drawn as PNG (${png.length} bytes); a person sees ${deleted ? 'the draft' : 'it'} at ${url}.`,
          facts,
          image: { data: png.toString('base64'), mimeType: 'image/png' },
        };
      }
      const svg = await drawSvg();
      const facts = { ...about, svg: svgAddress, mediaType: 'image/svg+xml', bytes: Buffer.byteLength(svg) };
      // Room kept for the facts after it: the whole answer stays within the bound.
      if (svg.length > BODY_CHARS) {
        return {
          text: `The SVG of ${what} is ${svg.length} characters, too large for an answer: it is at ${svgAddress}, and format png gives it as a picture.`,
          facts,
        };
      }
      return { text: svg, facts };
    },
  }),
  tool({
    name: 'get_model',
    title: 'Read the whole model as YAML',
    description: `The organization's whole model (types, tags, attributes, components, diagrams) as YAML, ${ANSWER_CHARS.toLocaleString('en')} characters at a time: call again with the offset the answer names for the rest.`,
    input: ModelInput,
    readOnly: true,
    async run({ offset = 0, draft }, context) {
      const m = await model(context, draft);
      const yaml = modelYaml(m, context.publicUrl);
      const { text, next } = modelPage(yaml, offset, (at) => `call get_model with offset ${at}`);
      return {
        text,
        facts: { offset, nextOffset: next, totalChars: yaml.length, components: m.components.size, diagrams: m.diagrams.size },
      };
    },
  }),
  tool({
    name: 'history',
    title: 'Read the history',
    description:
      'Commits of the model, newest first: who changed what and when, with the resources each touched. Give a resource id for the history of that one resource.',
    input: HistoryInput,
    readOnly: true,
    async run({ resource, limit = 20, before, draft }, context) {
      const { org } = state(context.ctx);
      const snapshot = await snapshotOf(context.ctx, draft, context.warnings);
      const paths = resource === undefined ? undefined : pathsOfResourceNamed(resourceIdOf(snapshot.model, resource), snapshot.model);
      const tip = draft === undefined ? MAIN_REF : snapshot.commit;
      const entries = await readHistory(org.repo.gitdir, {
        limit,
        before: before === undefined ? undefined : await pageStart(org.repo, before, tip, draft === undefined ? MAIN_REF : draftRef(draft)),
        tip: draft === undefined ? undefined : snapshot.commit,
        paths,
      });
      return listAnswer(entries, 'commits');
    },
  }),
  tool({
    name: 'diff',
    title: 'Compare two states of the model',
    description:
      "What changed between two revisions (full or abbreviated commit ids, version names, 'main'): resources added, removed and changed, field by field.",
    input: DiffInput,
    readOnly: true,
    async run({ from, to = 'main' }, context) {
      const { org } = state(context.ctx);
      const [fromCommit, toCommit] = await Promise.all([resolveCommitName(org.repo, from), resolveCommitName(org.repo, to)]);
      const [before, after] = await Promise.all([org.at(fromCommit), org.at(toCommit)]);
      const answer = { from: fromCommit, to: toCommit, ...answeredDiff(before.model, after.model, context.publicUrl) };
      return jsonAnswer(
        answer,
        '',
        'lists shortened, their lengths beside them as <name>Total; compare nearer revisions for the whole of it',
      );
    },
  }),
];

/**
 * Arguments checked by the tool's own schema, with the REST API's error texts. One the tool does not
 * take is refused first, naming those it takes: ignored, a misspelt `drafts` would read main, a
 * `component` list would write nothing, and the agent would take either for what it asked.
 */
export function checkArguments(definition: Tool, args: unknown): unknown {
  const takes = Object.keys((definition.input as { properties?: Record<string, unknown> }).properties ?? {});
  const unknown = args !== null && typeof args === 'object' ? Object.keys(args).filter((name) => !takes.includes(name)) : [];
  if (unknown.length > 0) {
    const named = unknown.map((name) => `'${name}'`).join(', ');
    throw new ApiError(
      400,
      `${definition.name} takes no argument${unknown.length === 1 ? '' : 's'} ${named}: it takes ${takes.join(', ')}.`,
    );
  }
  return checkBody(definition.input, args ?? {});
}

// No `pattern`: the drafts' own check answers a bad name with the API's text, which says what to use.
const DraftName = Type.String({
  description: "The draft's name: lowercase letters, digits, '.', '_' and '-' (as in drafts/<name>).",
});

const CreateDraftInput = Type.Object({
  name: DraftName,
  from: Type.Optional(Revision("Where on main the draft begins (a commit id or version name); default main's tip.")),
  title: Type.Optional(Type.String({ maxLength: 200, description: 'A title people read in the review.' })),
  desc: Type.Optional(Type.String({ maxLength: 10_000, description: 'What the change is for.' })),
});

const WriteModelInput = Type.Object({
  draft: DraftName,
  head: Type.Optional(
    Type.String({
      minLength: 4,
      maxLength: 40,
      description:
        "The draft's head commit as you last read it (the commit of your last write_model, create_draft or draft_diff answer; its first 12 characters will do): the write is refused if the draft has moved since, so that another agent's work is not written over.",
    }),
  ),
  components: Type.Optional({
    ...TemplateBody.properties.components,
    description:
      'Components in the current form (name, typeId or typeSlug, desc, state, tags, attributes, linksTo). Give each a ref: writing the same ref again updates it instead of creating a second one. An id or stored ref updates that component partially.',
  }),
  diagrams: Type.Optional({
    ...TemplateBody.properties.diagrams,
    description:
      "Diagrams in the current form (name, level C1–C4, componentInstances with componentId or a component ref, parentId for containers, relations with fromRef/toRef and a label). Positions may be left out: the service lays them out. An id or stored ref updates that diagram: fields left out keep their values, but a componentInstances, relations or textareas list that is sent REPLACES the stored one. To add a box to an existing diagram, send every instance it keeps (get_diagram gives them with their ids and refs) plus the new one, and every relation it keeps; the answer's changes say what was removed.",
  }),
});

const DraftDiffInput = Type.Object({ draft: DraftName });

function draftPage(context: ToolContext, name: string): string {
  return `${context.publicUrl}/orgs/${state(context.ctx).org.slug}/drafts/${name}`;
}

/** The tools that change the model: every change goes into a draft, for people to review and merge. */
export const DRAFT_TOOLS: readonly Tool[] = [
  tool({
    name: 'create_draft',
    title: 'Open a draft',
    description:
      'Opens a draft: a proposed change, kept apart from the live model (main) until a person merges it. Write into it with write_model; show the person draft_diff. Drafts are the only way an agent changes the architecture.',
    input: CreateDraftInput,
    readOnly: false,
    async run(args, context) {
      const draft = await new Drafts(state(context.ctx).org).open(args, authorOf(context.ctx));
      const answer = { ...draft, review: draftPage(context, draft.name) };
      return {
        text: `Opened draft '${draft.name}' at ${draft.head.slice(0, 12)}; review it at ${answer.review}.\n${json(answer)}`,
        structured: answer,
      };
    },
  }),
  tool({
    name: 'write_model',
    title: 'Write components and diagrams into a draft',
    description:
      'Creates or updates components and diagrams in a draft, in one commit, checked by every rule of the model (a refusal changes nothing and says why). Writing the same body again changes nothing: refs keep identity across calls. main is never touched.',
    input: WriteModelInput,
    readOnly: false,
    async run({ draft, head, components = [], diagrams = [] }, context) {
      const { ctx } = context;
      const { org } = state(ctx);
      let before: Model | undefined;
      const { snapshot, result } = await writeToDraft(org, draft, async (ref) =>
        org.write(
          {
            ref,
            // As the answers print it (abbreviated), or whole.
            ...(head === undefined ? {} : { ifMatch: [await resolveCommitName(org.repo, head).catch(() => head)] }),
            author: authorOf(ctx),
            title: `MCP write_model into draft '${draft}'`,
            // Not the API's writeOptions, which takes ?layout= from /mcp's address: no argument of the tool.
            options: { apiContext: apiContextOf(new Date()), newId: () => newId(), layout: 'keep' },
            trailers: [`Agent: ${context.clientName}`],
          },
          (d) => {
            before = d.base;
            return writeCurrent(d, { components, diagrams }, 'upsert', 'template');
          },
        ),
      );
      const changes = before === undefined ? [] : describeChanges(answeredDiff(before, snapshot.model, context.publicUrl));
      // What the schema does not know was not written: a misspelt `descr` must not pass for a description.
      const ignored = ignoredFields(WriteModelInput, { draft, head, components, diagrams });
      const answer = {
        draft,
        commit: snapshot.commit,
        changes,
        ...(ignored.paths.length === 0 ? {} : { ignoredFields: ignored.paths }),
        components: result.components.map((c) => presentCurrent.component(c, snapshot.model)),
        diagrams: result.diagrams.map((d) => inDraft(presentCurrent.diagram(d, snapshot.model, context.publicUrl), draft)),
        review: draftPage(context, draft),
      };
      const first =
        changes.length === 0
          ? `Nothing changed: draft '${draft}' already holds what was sent (head ${snapshot.commit.slice(0, 12)}).`
          : `Wrote into draft '${draft}' (commit ${snapshot.commit.slice(0, 12)}):`;
      const last =
        ignored.paths.length === 0
          ? []
          : [`Ignored, not fields of write_model (nothing was written for them): ${ignored.paths.join(', ')}${ignored.more ? ', …' : ''}`];
      const summary = heading([first, ...changes.map((line) => `- ${line}`)], last, "the answer's changes list has every one");
      return jsonAnswer(answer, summary);
    },
  }),
  tool({
    name: 'draft_diff',
    title: "Read a draft's changes",
    description:
      'What a draft changes against main where it began (a merged draft: what its merge brought into main), in words and field by field, with its state and the address of the review page where people see each changed diagram drawn as as-is / changes / to-be, and merge or close it.',
    input: DraftDiffInput,
    readOnly: true,
    async run({ draft }, context) {
      const org = state(context.ctx).org;
      const { details } = await new Drafts(org).review(draft, context.publicUrl);
      const { changes: diff, state: draftState, head, behind, conflicts, problem } = details;
      const words = describeChanges(diff);
      const slug = state(context.ctx).org.slug;
      // Each diagram it adds or changes, then each it deletes: the visual diff draws those as main had them.
      const diagrams = [
        ...[...diff.added, ...diff.changed].filter((r) => r.kind === 'diagram').map((r) => ({ r, deleted: false })),
        ...diff.removed.filter((r) => r.kind === 'diagram').map((r) => ({ r, deleted: true })),
      ].map(({ r, deleted }) => ({
        id: r.id,
        name: r.name,
        drawing: `${context.publicUrl}/orgs/${slug}/diagrams/${r.id}.svg?draft=${draft}&compare=main`,
        ...(deleted ? { deleted: true } : {}),
      }));
      const answer = {
        draft,
        state: draftState,
        head,
        behind,
        conflicts,
        ...(problem === undefined ? {} : { problem }),
        review: draftPage(context, draft),
        summary: words,
        diagrams,
        diff,
      };
      const nothing = {
        open: 'No changes yet.',
        closed: 'No changes (the draft is closed).',
        merged: 'Its merge brought nothing into main.',
      };
      const heading = draftState === 'merged' && words.length > 0 ? 'Merged; what its merge brought into main:\n' : '';
      const drawable = [
        ...(diagrams.some((d) => !d.deleted) ? ['a changed diagram with its changes marked'] : []),
        ...(diff.removed.some((r) => r.kind === 'diagram') ? ['a diagram it deleted as main had it, every element marked removed'] : []),
      ];
      // Whether it can be merged as it stands: an agent hands over a draft people can merge.
      const standing = [
        ...(behind > 0 ? [`main has ${behind} commit${behind === 1 ? '' : 's'} the draft does not.`] : []),
        ...(conflicts.length > 0
          ? [
              `A merge now conflicts on ${conflicts.length} field${conflicts.length === 1 ? '' : 's'} (conflicts lists them): ${conflicts
                .slice(0, 5)
                .map((c) => `${c.kind} '${c.name ?? c.id}' ${c.field}`)
                .join(', ')}${conflicts.length > 5 ? ', …' : ''}.`,
            ]
          : []),
        ...(problem === undefined ? [] : [`A merge now would be refused: ${problem}`]),
        ...(drawable.length > 0 ? [`render_diagram with draft and compare "main" draws ${drawable.join(', and ')}.`] : []),
      ]
        .map((line) => short(line, 300))
        .join('\n');
      const review = `${standing === '' ? '' : `\n${standing}`}\nReview: ${answer.review}`;
      const lines = words.length === 0 ? nothing[draftState] : words.map((w) => `- ${w}`).join('\n');
      const room = BODY_CHARS - heading.length - review.length;
      // Cut at a line's end where one is near enough (a single line may be longer than the room: a 5 MB name).
      const cutAt = lines.lastIndexOf('\n', room) > 0 ? lines.lastIndexOf('\n', room) : room;
      const text = `${heading}${lines.length <= room ? lines : `${lines.slice(0, cutAt)}\n… (cut: the review page has every change)`}${review}`;
      return { text, structured: fitted(answer, ANSWER_CHARS).value };
    },
  }),
];

/** Every tool: a reader key is given only those that read. */
export const MCP_TOOLS: readonly Tool[] = [...READ_TOOLS, ...DRAFT_TOOLS];

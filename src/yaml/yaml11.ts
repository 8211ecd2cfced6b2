import type { Tags } from 'yaml';

/**
 * Request bodies that start with `%YAML 1.1` are read with the `yaml` package's YAML 1.1 schema,
 * corrected where that schema reads more as numbers or booleans than YAML 1.1 clients mean:
 * PyYAML's `safe_dump` (and Psych, SnakeYAML) write the strings `1e3` and `y` plain, because
 * for them a float needs a dot and a signed exponent, and `y`/`n` are not booleans. The package
 * reads `1e3` as 1000 and `y` as true. Here floats follow the YAML 1.1 float pattern as PyYAML
 * implements it, and booleans are yes/no/true/false/on/off only. Bodies without the directive
 * stay YAML 1.2.
 */

const FLOAT = 'tag:yaml.org,2002:float';
const BOOL = 'tag:yaml.org,2002:bool';
const TIMESTAMP = 'tag:yaml.org,2002:timestamp';
/** The mantissa of a YAML 1.1 float: digits with a dot, or a dot and digits. */
const MANTISSA = '[-+]?(?:[0-9][0-9_]*\\.[0-9_]*|\\.[0-9][0-9_]*)';
const FLOAT_EXP = new RegExp(`^${MANTISSA}[eE][-+][0-9]+$`);
const FLOAT_PLAIN = new RegExp(`^${MANTISSA}$`);
const TRUE = /^(?:[Yy]es|YES|[Tt]rue|TRUE|[Oo]n|ON)$/;
const FALSE = /^(?:[Nn]o|NO|[Ff]alse|FALSE|[Oo]ff|OFF)$/;

type Tag = Tags[number];

function corrected(tag: Tag): Tag {
  if (typeof tag !== 'object' || !('test' in tag) || !tag.test) return tag;
  if (tag.tag === FLOAT && tag.format === 'EXP') return { ...tag, test: FLOAT_EXP };
  // The plain float (1.5, .5); not the .inf/.nan one nor the sexagesimal one (format TIME).
  if (tag.tag === FLOAT && tag.format === undefined && tag.test.test('1.5')) return { ...tag, test: FLOAT_PLAIN };
  if (tag.tag === BOOL) return { ...tag, test: tag.test.test('true') ? TRUE : FALSE };
  return tag;
}

/** `customTags` for the yaml package: changes only the YAML 1.1 schema (the one with timestamps). */
export function yaml11AsClientsMeanIt(tags: Tags): Tags {
  const isYaml11 = tags.some((tag) => typeof tag === 'object' && tag.tag === TIMESTAMP);
  return isYaml11 ? tags.map(corrected) : tags;
}

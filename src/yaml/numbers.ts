/**
 * Number literals that a double cannot hold as written. JSON.parse and the `yaml` package read
 * every literal as the nearest double, silently: 9007199254740993 becomes 9007199254740992,
 * 1e-400 zero. A JSON or YAML request body, a pushed model file and a folder `c4store check`
 * reads are all held to this one rule, each saying where in its own words.
 */

/** The most characters of a number literal a refusal quotes. */
const QUOTED_NUMBER_CHARS = 40;

/** Why a number literal cannot be taken as written: `the number <shown> <problem>`. */
export interface InexactNumber {
  /** The literal as a message quotes it (shortened). */
  shown: string;
  /** `has more digits than a number value holds: it would become <n>` or `is too close to 0 to be held: it would become 0`. */
  problem: string;
  /** Whether the literal was meant exactly (an integer written as one): a string keeps it so. */
  keepAsString: boolean;
}

/** A number's decimal value in one spelling (`-123e4` for -1230000, `1.5e+3`, `1500`), for comparing two. */
function canonicalDecimal(literal: string): string {
  const negative = literal.startsWith('-');
  const [mantissa = '', exponent = '0'] = literal.replace(/^[-+]/, '').toLowerCase().split('e');
  const [whole = '', fraction = ''] = mantissa.split('.');
  let digits = whole + fraction;
  let scale = Number(exponent) - fraction.length;
  digits = digits.replace(/^0+/, '');
  const trailing = digits.length - digits.replace(/0+$/, '').length;
  digits = digits.slice(0, digits.length - trailing);
  scale += trailing;
  return digits === '' ? '0' : `${negative ? '-' : ''}${digits}e${scale}`;
}

function shownNumber(literal: string): string {
  return literal.length > QUOTED_NUMBER_CHARS ? `${literal.slice(0, QUOTED_NUMBER_CHARS)}…` : literal;
}

/**
 * Why the decimal literal `literal` (JSON's number syntax) cannot be taken as written, or
 * undefined. An integer written without fraction or exponent is refused when the number read
 * would be written back as another: it is written to mean exactly that number (an account, a
 * count) and would be read back as another. A nonzero literal that would become 0 is refused
 * too. A fraction with more digits than a double holds (3.14159265358979323846) is rounded, as
 * everyone expects of decimals; a literal beyond the doubles (1e400) is Infinity, which a schema
 * refuses where a number is expected (`received infinity`).
 */
export function inexactNumber(literal: string): InexactNumber | undefined {
  const value = Number(literal);
  if (!Number.isFinite(value)) return undefined;
  if (value === 0) {
    const mantissa = literal.split(/[eE]/)[0] ?? '';
    if (!/[1-9]/.test(mantissa)) return undefined;
    return { shown: shownNumber(literal), problem: 'is too close to 0 to be held: it would become 0', keepAsString: false };
  }
  if (Number.isSafeInteger(value) || /[.eE]/.test(literal)) return undefined;
  // An integer beyond 2^53: exact when it is written back as it came (JSON.stringify's own digits, the usual case).
  const back = String(value);
  if (back === literal || canonicalDecimal(back) === canonicalDecimal(literal)) return undefined;
  return { shown: shownNumber(literal), problem: `has more digits than a number value holds: it would become ${back}`, keepAsString: true };
}

/** A request body's refusal of a number: `the number 9007199254740993 has more digits …; send it as a string`. */
export function numberProblem(literal: string): string | undefined {
  const inexact = inexactNumber(literal);
  if (inexact === undefined) return undefined;
  return `the number ${inexact.shown} ${inexact.problem}${inexact.keepAsString ? '; send it as a string' : ''}`;
}

/** A number scalar as YAML writes it in decimal (YAML 1.1 also allows `_` between digits); not `.inf`, `0x1f`, `1:30`. */
const YAML_DECIMAL = /^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$/;

/** inexactNumber of a YAML number scalar's source text, or undefined when it is exact or not written in decimal. */
export function inexactYamlNumber(source: string): InexactNumber | undefined {
  const literal = source.includes('_') ? source.replace(/_/g, '') : source;
  if (!YAML_DECIMAL.test(literal)) return undefined;
  return inexactNumber(literal.startsWith('+') ? literal.slice(1) : literal);
}

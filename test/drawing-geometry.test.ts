/**
 * The crossing count of test/support/drawing-geometry.ts (the yardstick of the browser test
 * against Graphviz dot) on lines whose answer is known: every real crossing counts once, lines
 * drawn on top of each other count only if they come out on other sides than they went in.
 */
import test from 'ava';
import { countCrossings } from './support/drawing-geometry.js';

type Line = Array<[number, number]>;

/** The line sampled every `step` px, like getPointAtLength does (end included). */
function sampled(points: Line, step = 2): Line {
  const out: Line = [];
  for (let i = 1; i < points.length; i++) {
    const [x0, y0] = points[i - 1]!;
    const [x1, y1] = points[i]!;
    const len = Math.hypot(x1 - x0, y1 - y0);
    for (let s = 0; s < len; s += step) out.push([x0 + ((x1 - x0) * s) / len, y0 + ((y1 - y0) * s) / len]);
  }
  out.push(points[points.length - 1]!);
  return out;
}

/**
 * An orthogonal route as the drawing draws it (src/drawing/svg.ts: corners rounded with radius
 * up to 8), sampled every 2 px from `offset` on.
 */
function drawn(route: Line, offset = 0): Line {
  const pieces: Array<(t: number) => [number, number]> = [];
  const lengths: number[] = [];
  let at = route[0]!;
  const line = (to: [number, number]) => {
    const from = at;
    pieces.push((t) => [from[0] + (to[0] - from[0]) * t, from[1] + (to[1] - from[1]) * t]);
    lengths.push(Math.hypot(to[0] - from[0], to[1] - from[1]));
    at = to;
  };
  const quad = (c: [number, number], to: [number, number]) => {
    const from = at;
    const f = (t: number): [number, number] => [
      (1 - t) ** 2 * from[0] + 2 * (1 - t) * t * c[0] + t * t * to[0],
      (1 - t) ** 2 * from[1] + 2 * (1 - t) * t * c[1] + t * t * to[1],
    ];
    pieces.push(f);
    lengths.push(Math.hypot(c[0] - from[0], c[1] - from[1]) + Math.hypot(to[0] - c[0], to[1] - c[1]));
    at = to;
  };
  for (let i = 1; i < route.length; i++) {
    const p = route[i]!;
    if (i === route.length - 1) {
      line(p);
      break;
    }
    const prev = route[i - 1]!;
    const next = route[i + 1]!;
    const r = Math.min(
      8,
      (Math.abs(p[0] - prev[0]) + Math.abs(p[1] - prev[1])) / 2,
      (Math.abs(next[0] - p[0]) + Math.abs(next[1] - p[1])) / 2,
    );
    const dIn = [Math.sign(p[0] - prev[0]), Math.sign(p[1] - prev[1])];
    const dOut = [Math.sign(next[0] - p[0]), Math.sign(next[1] - p[1])];
    line([p[0] - dIn[0]! * r, p[1] - dIn[1]! * r]);
    quad(p, [p[0] + dOut[0]! * r, p[1] + dOut[1]! * r]);
  }
  const total = lengths.reduce((s, l) => s + l, 0);
  const point = (s: number): [number, number] => {
    for (let i = 0; i < pieces.length; i++) {
      if (s <= lengths[i]! || i === pieces.length - 1) return pieces[i]!(lengths[i]! === 0 ? 1 : Math.min(1, s / lengths[i]!));
      s -= lengths[i]!;
    }
    return at;
  };
  const out: Line = [];
  for (let s = offset; s < total; s += 2) out.push(point(s));
  out.push(point(total));
  return out;
}

test('crossings: one for each place where a line goes over to the other side of another', (t) => {
  t.is(
    countCrossings([
      [
        [0, 50],
        [100, 50],
      ],
      [
        [50, 0],
        [50, 100],
      ],
    ]),
    1,
    'a plain cross',
  );
  t.is(
    countCrossings([
      sampled([
        [0, 50],
        [100, 50],
      ]),
      sampled([
        [50, 0],
        [50, 100],
      ]),
    ]),
    1,
    'the same, sampled',
  );
  t.is(
    countCrossings([
      [
        [0, 50],
        [200, 50],
      ],
      [
        [50, 0],
        [50, 100],
        [150, 100],
        [150, 0],
      ],
    ]),
    2,
    'two places, two crossings',
  );
  t.is(
    countCrossings([
      [
        [0, 0],
        [200, 0],
      ],
      [
        [0, 20],
        [200, -15],
      ],
    ]),
    1,
    'a shallow angle (10°)',
  );
});

test('crossings: touching at an end, passing beyond an end or side by side is none', (t) => {
  t.is(
    countCrossings([
      [
        [0, 50],
        [100, 50],
      ],
      [
        [50, 0],
        [50, 50],
      ],
    ]),
    0,
    'a T: one line ends on the other',
  );
  t.is(
    countCrossings([
      [
        [0, 50],
        [100, 50],
      ],
      [
        [120, 0],
        [120, 100],
      ],
    ]),
    0,
    'beyond the end',
  );
  t.is(
    countCrossings([
      sampled([
        [0, 50],
        [100, 50],
      ]),
      sampled([
        [0, 53],
        [100, 53],
      ]),
    ]),
    0,
    'parallel, 3 px apart',
  );
});

test('crossings: lines drawn on top of each other cross only if they come out on the other sides', (t) => {
  // Down into the channel y = 100, along it, out downwards at x = 300.
  const a = drawn([
    [20, 0],
    [20, 100],
    [300, 100],
    [300, 200],
  ]);
  // Down into it right of a, out downwards right of a: nested, no crossing.
  const b = drawn([
    [60, 0],
    [60, 100],
    [350, 100],
    [350, 200],
  ]);
  t.is(countCrossings([a, b]), 0, 'in right of a, out right of a');
  // Down into it right of a, out downwards left of a's way down: it crossed a once.
  const b2 = drawn([
    [60, 0],
    [60, 100],
    [250, 100],
    [250, 200],
  ]);
  t.is(countCrossings([a, b2]), 1, 'in right of a, out left of it');
  // Up into it from below, out upwards: it crossed a once.
  const c = drawn([
    [60, 200],
    [60, 100],
    [250, 100],
    [250, 0],
  ]);
  t.is(countCrossings([a, c]), 1, 'in from below, out upwards');
  // Up into it from below and back down: an arch under a, touching it, no crossing.
  const arch = drawn([
    [60, 200],
    [60, 100],
    [250, 100],
    [250, 200],
  ]);
  t.is(countCrossings([a, arch]), 0, 'in from below, out downwards');
  // One route drawn twice, sampled from different offsets: its points zigzag across each other.
  const route: Line = [
    [0, 0],
    [0, 100],
    [400, 100],
    [400, 300],
  ];
  t.is(countCrossings([drawn(route), drawn(route, 1)]), 0, 'one route drawn twice');
});

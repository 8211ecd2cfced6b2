import type { Middleware } from 'koa';

/**
 * `Accept: text/x-plantuml; charset=utf-8` asks for PlantUML: a media range's parameters other
 * than its weight (`q`) say nothing the service could honour differently (every text it answers is
 * UTF-8), but content negotiation matches them exactly, so such a client got JSON. They are
 * dropped from the header before anything negotiates.
 */
export const ignoreAcceptParameters: Middleware = (ctx, next) => {
  const accept = ctx.req.headers.accept;
  if (accept?.includes(';')) ctx.req.headers.accept = withoutParameters(accept);
  return next();
};

export function withoutParameters(accept: string): string {
  return accept
    .split(',')
    .map((range) => {
      const [type, ...parameters] = range.split(';');
      const weight = parameters.map((p) => p.trim()).filter((p) => /^q=/i.test(p));
      return [type!.trim(), ...weight].join(';');
    })
    .join(', ');
}

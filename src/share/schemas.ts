/** What the API takes and answers about share links (src/http/routes/share-links.ts), for the handlers and the OpenAPI document. */
import Type from 'typebox';

export const MAX_LABEL_LENGTH = 200;
/**
 * The longest lifetime a link may be given, in days. A link given none never ends by itself (a
 * link in a wiki, a README or Backstage is meant to last): revoking it ends it.
 */
export const MAX_EXPIRY_DAYS = 365;

export const ShareLinkBody = Type.Object({
  label: Type.Optional(Type.String({ maxLength: MAX_LABEL_LENGTH, description: 'Where the link is used, to tell links apart in lists.' })),
  expiresInDays: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_EXPIRY_DAYS,
      description:
        'Days until the link stops opening the diagram (it then answers as a revoked one); without it the link lasts until it is revoked.',
    }),
  ),
});

/** A link as lists show it: never its token (only its hash is kept). */
export const ShareLinkResponse = Type.Object({
  id: Type.String({ description: 'Names the link for listing and revoking; not its token.' }),
  diagramId: Type.String(),
  label: Type.String(),
  created: Type.String({ description: 'ISO 8601 time' }),
  createdBy: Type.String({ description: 'The label of the key that made it' }),
  expires: Type.Union([Type.String(), Type.Null()], {
    description: 'ISO 8601 time from which the link opens nothing; null for a link made without a lifetime (it lasts until revoked)',
  }),
});

/** The answer to making a link: the only time its addresses (which carry the token) are shown. */
export const ShareLinkCreatedResponse = Type.Object({
  ...ShareLinkResponse.properties,
  url: Type.String({ description: '`<public url>/share/<token>`: the diagram page, read only' }),
  svgUrl: Type.String({ description: 'The drawing as SVG' }),
  pngUrl: Type.String({ description: 'The drawing as PNG (`?scale=` 0.25–4)' }),
});

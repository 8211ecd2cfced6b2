/** Request and response schemas of the change feed and webhooks (the OpenAPI table reads them too). */
import Type from 'typebox';
import { wordedByWrite } from '../model/check-body.js';
import { MAX_URL_LENGTH, WEBHOOK_URL_START } from './targets.js';
import { EVENT_TYPES } from './webhook-store.js';

const Commit = Type.String({ description: 'A full commit id.' });
const Text = Type.Union([Type.String(), Type.Null()]);

export const ChangeResponse = Type.Object({
  id: Commit,
  time: Type.String({ description: 'ISO 8601.' }),
  author: Type.Object({ name: Type.String(), email: Type.String() }),
  title: Type.String({ description: "The commit's first line." }),
  apiContext: Text,
  resources: Type.Array(
    Type.Object({
      kind: Type.String(),
      id: Type.String(),
      name: Text,
      action: Type.Enum(['create', 'update', 'delete']),
    }),
  ),
});

export const ChangesResponse = Type.Object({
  changes: Type.Array(ChangeResponse),
  next: Type.Union([Commit, Type.Null()], { description: 'The `after` of the next page; null when this page reaches the tip.' }),
});

const EventType = Type.Enum([...EVENT_TYPES]);

/** A subscription's body. Its rules are checkTargetUrl's and the route's, which word their refusals; stated here for the OpenAPI document. */
export const WebhookBody = Type.Object({
  url: wordedByWrite(
    Type.String({
      pattern: WEBHOOK_URL_START.source,
      maxLength: MAX_URL_LENGTH,
      description:
        `Where events are POSTed: \`http://\` or \`https://\` (in any case) and the rest of a URL, at most ${MAX_URL_LENGTH} characters. ` +
        'Its host must resolve, and to no private or loopback address unless the server allows them (`serve --webhook-allow-private`); ' +
        'a url that is no URL (`http://`) or whose host does not resolve is 400.',
    }),
  ),
  events: Type.Optional(
    wordedByWrite(Type.Array(EventType, { minItems: 1, description: 'Event types to receive, at least one (default: all).' })),
  ),
});

export const ReplayBody = Type.Object({
  after: Type.String({ description: 'Deliver every change of `main` after this commit again, in order.' }),
});

export const WebhookResponse = Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(EventType),
  created: Type.String(),
  status: Type.Enum(['active', 'disabled']),
  disabledReason: Text,
  delivered: Type.String({ description: 'The last commit delivered (or the starting point).' }),
  pendingAttempts: Type.Integer({ description: 'Failed attempts of the next event so far.' }),
});

/** A subscription whose files cannot be read: listed (and removable) so that its damage is seen. */
export const DamagedWebhookResponse = Type.Object({
  id: Type.String(),
  status: Type.Literal('damaged'),
  disabledReason: Type.String({ description: 'Which file cannot be read, and why.' }),
});

/** What the list and a removal answer: a subscription, or a damaged one. */
export const ListedWebhookResponse = Type.Union([WebhookResponse, DamagedWebhookResponse]);

export const CreatedWebhookResponse = Type.Object({
  ...WebhookResponse.properties,
  secret: Type.String({ description: '`whsec_…`: shown once, signs every delivery.' }),
});

export const DeliveryResponse = Type.Object({
  id: Type.String(),
  webhookId: Type.String(),
  commit: Commit,
  attempt: Type.Integer(),
  at: Type.String(),
  status: Type.Union([Type.Integer(), Type.Null()]),
  outcome: Type.Enum(['delivered', 'retrying', 'failed', 'disabled']),
  error: Type.Optional(Type.String()),
  ms: Type.Integer(),
});

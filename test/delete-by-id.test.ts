/**
 * DELETE names a resource by its id only (issue 24, point 11): a retried DELETE must answer 404
 * and touch nothing, never fall back to a ref and delete another resource.
 */
import test from 'ava';
import { withServer } from './support/server.js';
import { API, no, ok } from './support/current.js';

test('a retried DELETE answers 404 and leaves the resource whose ref is that id alone', (t) =>
  withServer(async (s) => {
    // `first` is an id; once it is deleted, `second` takes `first` as its ref (while `first`
    // existed, that ref was refused: an id or a ref names one resource of a kind).
    await ok(t, s, 'POST', `${API}/components`, { id: 'first', name: 'First' }, { status: 201 });
    const second = await ok(t, s, 'POST', `${API}/component`, [{ ref: 'first-ref', name: 'Second' }]);
    const secondId = second[0].id;
    await ok(t, s, 'DELETE', `${API}/components/first`, undefined);
    await ok(t, s, 'PATCH', `${API}/components/${secondId}`, { ref: 'first' });
    t.is((await s.get(`${API}/components/${secondId}`)).body.ref, 'first');

    // The retry of the DELETE.
    for (const path of [`${API}/components/first`, `${API}/component/first`]) {
      await no(t, s, 'DELETE', path, undefined, 404, "Component with id 'first' does not exist.");
    }
    t.is((await s.get(`${API}/components/${secondId}`)).status, 200);
  }));

test('DELETE by a ref is 404 for every kind: refs name resources on reads only', (t) =>
  withServer(async (s) => {
    await ok(t, s, 'POST', `${API}/component`, [{ ref: 'svc', name: 'Service' }]);
    await no(t, s, 'DELETE', `${API}/components/svc`, undefined, 404, "Component with id 'svc' does not exist.");
    await ok(t, s, 'POST', `${API}/diagram`, [{ ref: 'ctx', name: 'Context', level: 'C1' }]);
    await no(t, s, 'DELETE', `${API}/diagrams/ctx`, undefined, 404, "Diagram with id 'ctx' does not exist.");
  }));

import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import axios from 'axios';

/**
 * The clients of the client matrix (issue 20): Node's fetch, curl, Python requests and axios,
 * each sending the same cases to a real server. A case's body is described, not given, so
 * that every client builds it its own way (a length, a stream without one, gzip).
 */

const exec = promisify(execFile);

export type BodyKind = 'none' | 'json' | 'declared' | 'chunked' | 'gzip';

export interface Case {
  name: string;
  method: string;
  path: string;
  key: string;
  contentType?: string;
  body: BodyKind;
}

export interface Outcome {
  status: number;
  body: string;
  /** The client's local port: the same port twice in a row means the connection was reused. */
  port?: number;
}

/** What a try ended with: an answer, or the error the client threw. */
export type Try = Outcome | { error: string };

export interface Bodies {
  json: Buffer;
  /** More than the body limit, sent with Content-Length. */
  declared: Buffer;
  /** More than the body limit, sent in chunks without a length. */
  chunked: Buffer;
  gzip: Buffer;
  /** The same bodies as files, for curl and Python. */
  files: Record<Exclude<BodyKind, 'none'>, string>;
}

/** The bodies of the cases; `json` is the small valid one. Written to files in `dir` too. */
export async function makeBodies(json: unknown, bodyLimit: number, dir: string): Promise<Bodies> {
  const text = Buffer.from(JSON.stringify(json));
  const large = Buffer.alloc(bodyLimit + 16 * 1024, 0x20);
  const bodies = { json: text, declared: large, chunked: large, gzip: gzipSync(text) };
  const files = {} as Bodies['files'];
  for (const [kind, bytes] of Object.entries(bodies) as Array<[keyof typeof files, Buffer]>) {
    files[kind] = join(dir, `${kind}.body`);
    await writeFile(files[kind], bytes);
  }
  return { ...bodies, files };
}

function headersOf(c: Case): Record<string, string> {
  const headers: Record<string, string> = { authorization: `Bearer ${c.key}` };
  if (c.body !== 'none') headers['content-type'] = c.contentType ?? 'application/json';
  if (c.body === 'gzip') headers['content-encoding'] = 'gzip';
  return headers;
}

function* pieces(bytes: Buffer, size = 8 * 1024): Generator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

export interface Client {
  name: string;
  /** Runs `c` `times` times, one after another, each try's outcome in order. */
  run(url: string, c: Case, bodies: Bodies, times: number): Promise<Try[]>;
}

async function repeat(times: number, once: () => Promise<Outcome>): Promise<Try[]> {
  const tries: Try[] = [];
  for (let i = 0; i < times; i++) {
    try {
      tries.push(await once());
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      tries.push({ error: `${(err as Error).message}${cause ? ` (${cause.code ?? cause.message})` : ''}` });
    }
  }
  return tries;
}

export const nodeFetch: Client = {
  name: 'fetch',
  run: (url, c, bodies, times) =>
    repeat(times, async () => {
      let body: RequestInit['body'];
      if (c.body === 'chunked') {
        const chunks = pieces(bodies.chunked);
        body = new ReadableStream({
          pull(controller) {
            const next = chunks.next();
            if (next.done) controller.close();
            else controller.enqueue(new Uint8Array(next.value));
          },
        });
      } else if (c.body !== 'none') {
        body = bodies[c.body];
      }
      const response = await fetch(url + c.path, { method: c.method, headers: headersOf(c), body, duplex: 'half' } as RequestInit);
      return { status: response.status, body: await response.text() };
    }),
};

const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });

export const axiosClient: Client = {
  name: 'axios',
  run: (url, c, bodies, times) =>
    repeat(times, async () => {
      const data = c.body === 'none' ? undefined : c.body === 'chunked' ? Readable.from(pieces(bodies.chunked)) : bodies[c.body];
      const response = await axios.request({
        url: url + c.path,
        method: c.method,
        headers: headersOf(c),
        data,
        httpAgent: keepAlive,
        responseType: 'text',
        transformResponse: (text: string) => text,
        validateStatus: () => true,
        maxRedirects: 0,
      });
      return { status: response.status, body: response.data as string, port: response.request?.socket?.localPort };
    }),
};

/** curl: one process per case, its tries chained with `--next` (so curl reuses its connection where it may). */
export const curl: Client = {
  name: 'curl',
  run: async (url, c, bodies, times) => {
    const args: string[] = [];
    for (let i = 0; i < times; i++) {
      if (i > 0) args.push('--next');
      args.push('-s', '-X', c.method, '-w', '\n%{http_code} %{local_port}\n');
      for (const [name, value] of Object.entries(headersOf(c))) args.push('-H', `${name}: ${value}`);
      if (c.body === 'chunked') args.push('-H', 'Transfer-Encoding: chunked');
      if (c.body !== 'none') args.push('--data-binary', `@${bodies.files[c.body]}`);
      args.push(url + c.path);
    }
    const { stdout } = await exec('curl', args, { maxBuffer: 16 * 1024 * 1024 });
    const tries: Try[] = [];
    const lines = stdout.split('\n');
    for (let i = 0; i + 1 < lines.length; i += 2) {
      const [status, port] = lines[i + 1]!.split(' ');
      tries.push({ status: Number(status), body: lines[i]!, port: Number(port) });
    }
    return tries;
  },
};

const PYTHON_CLIENT = `
import json, sys, requests
spec = json.load(sys.stdin)
session = requests.Session()
def pieces(data):
    for at in range(0, len(data), 8192):
        yield data[at:at + 8192]
results = []
for _ in range(spec['times']):
    c = spec['case']
    data = None
    if c['body'] != 'none':
        with open(spec['files'][c['body']], 'rb') as f:
            data = f.read()
        if c['body'] == 'chunked':
            data = pieces(data)
    try:
        r = session.request(c['method'], spec['url'] + c['path'], headers=spec['headers'], data=data, timeout=30, stream=True)
        port = r.raw._connection.sock.getsockname()[1] if r.raw._connection and r.raw._connection.sock else None
        results.append({'status': r.status_code, 'body': r.text, 'port': port})
        r.close()
    except Exception as e:
        results.append({'error': repr(e)})
print(json.dumps(results))
`;

/** Python's requests, one Session (which keeps connections alive) per case. */
export function pythonRequests(python: string): Client {
  return {
    name: 'python requests',
    run: async (url, c, bodies, times) => {
      const child = execFile(python, ['-c', PYTHON_CLIENT], { maxBuffer: 16 * 1024 * 1024 });
      const output = new Promise<string>((resolve, reject) => {
        let stdout = '';
        let stderr = '';
        child.stdout!.on('data', (chunk) => (stdout += chunk));
        child.stderr!.on('data', (chunk) => (stderr += chunk));
        child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`python exited ${code}: ${stderr}`))));
      });
      child.stdin!.end(JSON.stringify({ url, case: c, times, files: bodies.files, headers: headersOf(c) }));
      return JSON.parse(await output) as Try[];
    },
  };
}

/**
 * A Python with `requests`: the first of `python3` and Debian's `/usr/bin/python3` that imports
 * it; else Debian's python3-requests is installed with apt-get. Undefined only where that fails.
 */
export async function findPythonWithRequests(log: (line: string) => void): Promise<string | undefined> {
  const imports = async (python: string) => {
    try {
      await exec(python, ['-c', 'import requests']);
      return true;
    } catch {
      return false;
    }
  };
  for (const python of ['python3', '/usr/bin/python3']) if (await imports(python)) return python;
  try {
    await exec('apt-get', ['-o', 'DPkg::Lock::Timeout=300', 'install', '-y', 'python3-requests'], { timeout: 400_000 });
  } catch (err) {
    log(`apt-get install python3-requests failed: ${(err as Error).message}`);
  }
  return (await imports('/usr/bin/python3')) ? '/usr/bin/python3' : undefined;
}

/**
 * A worker thread that reads loose blobs for loose-reader.ts: in the order asked, in batches,
 * each batch's contents packed into one transferred buffer.
 */
import { parentPort } from 'node:worker_threads';
import { readLooseObject } from './object-storage.js';

export interface ReadRequest {
  objectsDir: string;
  oids: string[];
  batchSize: number;
}

/** `oids[i]` is at `offsets[i]..offsets[i + 1]` of `bytes`; `absent`: not loose, not a blob, or unreadable here. */
export interface ReadBatch {
  oids: string[];
  offsets: number[];
  bytes: ArrayBuffer;
  absent: string[];
}

parentPort!.once('message', ({ objectsDir, oids, batchSize }: ReadRequest) => {
  for (let start = 0; start < oids.length; start += batchSize) {
    const found: string[] = [];
    const contents: Buffer[] = [];
    const absent: string[] = [];
    for (const oid of oids.slice(start, start + batchSize)) {
      let object = null;
      try {
        object = readLooseObject(objectsDir, oid);
      } catch {
        // The main thread reads it again and reports the error in its own words.
      }
      if (object?.type === 'blob') {
        found.push(oid);
        contents.push(object.content);
      } else {
        absent.push(oid);
      }
    }
    const offsets = [0];
    for (const content of contents) offsets.push(offsets[offsets.length - 1]! + content.length);
    const packed = Buffer.concat(contents);
    const bytes = packed.buffer.slice(packed.byteOffset, packed.byteOffset + packed.length);
    const batch: ReadBatch = { oids: found, offsets, bytes, absent };
    parentPort!.postMessage(batch, [bytes]);
  }
  parentPort!.close();
});

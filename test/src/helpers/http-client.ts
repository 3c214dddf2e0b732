/**
 * @module http-client
 * Minimal raw HTTP/1.1 client for protocol-edge tests (exact headers, chunked bodies, closed connections).
 */
import { request } from 'node:http';

/** A raw response. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

/**
 * POSTs `body` to `url`. With `chunked`, the body is sent in 64 KiB chunks without a Content-Length (the way
 * the OTel JS HTTP exporters send). Resolves with the response even if the server closes mid-upload.
 */
export function post(
  url: string,
  body: Uint8Array,
  headers: Record<string, string>,
  options: { chunked?: boolean } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      headers: options.chunked ? headers : { ...headers, 'content-length': String(body.length) },
      agent: false,
    });
    let responded = false;
    req.on('response', (res) => {
      responded = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    // The server may answer 413 and close before the upload ends (the behaviour under test): a write error
    // then races the response, so give the response a moment before failing the request.
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') return reject(error);
      setTimeout(() => {
        if (!responded) reject(error);
      }, 200);
    });
    if (!options.chunked) {
      req.end(body);
      return;
    }
    let offset = 0;
    const pump = (): void => {
      while (offset < body.length) {
        const chunk = body.subarray(offset, offset + 65536);
        offset += chunk.length;
        if (!req.write(chunk)) {
          req.once('drain', pump);
          return;
        }
      }
      req.end();
    };
    pump();
  });
}

/** Reads google.rpc.Status.message (field 2) from a protobuf error body. */
export function rpcStatusMessage(body: Buffer): string {
  let i = 0;
  while (i < body.length) {
    const key = body[i++]!;
    const wire = key & 7;
    if (wire === 0) {
      while (body[i++]! & 0x80);
      continue;
    }
    if (wire !== 2) return '';
    let len = 0;
    let shift = 0;
    let b: number;
    do {
      b = body[i++]!;
      len |= (b & 0x7f) << shift;
      shift += 7;
    } while (b & 0x80);
    if (key >> 3 === 2) return body.subarray(i, i + len).toString('utf8');
    i += len;
  }
  return '';
}

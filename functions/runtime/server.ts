/**
 * The HTTP server of a registered function: the Functions Framework's own Express app behind a
 * guard that refuses a body over the limit (body-limit.ts) before the framework's parsers read
 * any of it. A refused request never reaches the app, so it gets exactly one answer.
 */
import type { IncomingMessage, RequestListener, Server, ServerResponse } from "node:http";
import { refuseByHeaders, refuseReceived, type Refusal } from "./body-limit.ts";
import { Drain } from "./drain.ts";

function refuse(res: ServerResponse, { status, error }: Refusal): void {
  // Connection: close makes Node close the socket after the answer instead of reading the rest of
  // the body to keep the connection for another request.
  const body = JSON.stringify({ error });
  res
    .writeHead(status, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      connection: "close",
    })
    .end(body);
}

/**
 * A body without Content-Length (chunked) is read here, counting, and refused as soon as the count
 * passes the limit; within it, it is put back into the request (a documented use of unshift) for
 * the framework's parsers, which then read it as if the guard had not been there.
 */
function readWithin(req: IncomingMessage, res: ServerResponse, limit: number, app: RequestListener): void {
  const chunks: Buffer[] = [];
  let received = 0;
  const onReadable = () => {
    for (let chunk: Buffer | null; (chunk = req.read() as Buffer | null) !== null;) {
      received += chunk.length;
      const refusal = refuseReceived(received, limit);
      if (refusal) {
        // Without a reader the request stops pulling from the socket, which closes after the answer.
        req.off("readable", onReadable);
        return refuse(res, refusal);
      }
      chunks.push(chunk);
    }
    // `complete` turns true before the end of the stream is signalled, so this is the last call.
    if (!req.complete) return;
    req.off("readable", onReadable);
    // Put back before the end is emitted: the stream then ends only after the app has read it all.
    if (received > 0) req.unshift(Buffer.concat(chunks, received));
    app(req, res);
  };
  req.on("readable", onReadable);
}

function guard(app: RequestListener, limit: number): RequestListener {
  return (req, res) => {
    const refusal = refuseByHeaders(req.headers, limit);
    if (refusal) return refuse(res, refusal);
    // HTTP/1.1: without Content-Length or Transfer-Encoding a request has no body.
    if (req.headers["content-length"] !== undefined || req.headers["transfer-encoding"] === undefined)
      return app(req, res);
    readWithin(req, res, limit, app);
  };
}

/** The copy of the Functions Framework a function registered with (main.ts), as far as serving it goes. */
export interface Framework {
  getTestServer(target: string): Server;
}

/**
 * The server for the function registered as `target`. getTestServer is the framework's public way
 * to the server its own main builds (getServer with the options our deployments use: no timeout,
 * no execution ids, the default ignored routes); its one 'request' listener is the app. `drain`
 * sees every request, so that it can stop the server taking new ones (drain.ts).
 */
export function functionServer(target: string, limit: number, framework: Framework, drain = new Drain()): Server {
  const server = framework.getTestServer(target);
  const listeners = server.listeners("request") as RequestListener[];
  if (listeners.length !== 1)
    throw new Error(`the Functions Framework's server has ${listeners.length} request listeners, expected its one app`);
  const guarded = drain.admit(guard(listeners[0]!, limit));
  server.removeAllListeners("request");
  server.on("request", guarded);
  // Expect: 100-continue: refuse on the headers before the client is told to send the body.
  server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => {
    if (!refuseByHeaders(req.headers, limit)) res.writeContinue();
    guarded(req, res);
  });
  return server;
}

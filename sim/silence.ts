// A loopback proxy in front of the simulated API server that can go silent, for the timeout drills and the
// fault soak: while a rule matches, the proxy accepts a request and never answers it (what a hung API
// server or a dead middlebox looks like to a client), and `silenceAll` also stops every stream already
// open (watches stop receiving anything, without being closed). Everything else is forwarded unchanged,
// watch streams included. A controller reaches the API server through it with `proxy.kubeConfig()`.
//
//   const proxy = await startSilenceProxy(sim.cluster);
//   proxy.silence((r) => r.method === 'PATCH' && r.path.endsWith('/status'));
//   ... every matching request hangs until its client gives up ...
//   proxy.speak();
//   await proxy.close();
import {
  request as httpRequest,
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import { kubeConfigFor, type SimEndpoint } from './kubeconfig.ts';

/** What a rule sees of a request. */
interface ProxiedRequest {
  readonly method: string;
  /** Path and query, as sent. */
  readonly path: string;
}

type SilenceRule = (r: ProxiedRequest) => boolean;

export interface SilenceProxy {
  readonly url: string;
  /** A kubeconfig that reaches the API server through the proxy (the upstream's token). */
  kubeConfig(): KubeConfig;
  /** From now on, requests matching the rule are accepted and never answered. */
  silence(rule: SilenceRule): void;
  /** Every new request hangs, and every open stream (watches) stops carrying anything. */
  silenceAll(): void;
  /** Forwards everything again (requests already held stay unanswered until their clients give up). */
  speak(): void;
  /** Requests held unanswered so far, in order. */
  held(): readonly ProxiedRequest[];
  close(): Promise<void>;
}

interface Exchange {
  readonly res: ServerResponse;
  readonly upstream: IncomingMessage;
}

/** What the proxy holds while it runs: the rule, the requests held, and the exchanges still open. */
interface ProxyState {
  readonly upstream: SimEndpoint;
  readonly target: URL;
  rule: SilenceRule | undefined;
  /** silenceAll: answers still on their way from upstream are swallowed too. */
  quiet: boolean;
  readonly held: ProxiedRequest[];
  /** Responses the proxy will never answer (destroyed on close). */
  readonly holding: Set<ServerResponse>;
  readonly open: Set<Exchange>;
}

/** Accepts the request and never answers it. */
function hold(st: ProxyState, r: ProxiedRequest, req: IncomingMessage, res: ServerResponse): void {
  st.held.push(r);
  req.resume();
  st.holding.add(res);
  res.on('close', () => st.holding.delete(res));
}

/** Carries upstream's answer to the client, unless the proxy went quiet meanwhile. */
function answer(st: ProxyState, up: IncomingMessage, res: ServerResponse): void {
  if (st.quiet) {
    up.destroy();
    st.holding.add(res);
    return;
  }
  res.writeHead(up.statusCode ?? 502, up.headers);
  const x = { res, upstream: up };
  st.open.add(x);
  up.pipe(res);
  const done = (): void => {
    st.open.delete(x);
  };
  up.on('close', done);
  res.on('close', () => {
    done();
    up.destroy();
  });
}

/** Sends the request on to the API server; a failure to reach it is a 502 naming the error. */
function forward(st: ProxyState, req: IncomingMessage, res: ServerResponse): void {
  const { target, upstream } = st;
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const out = send(
    {
      protocol: target.protocol,
      hostname: target.hostname,
      port: target.port,
      method: req.method,
      path: req.url,
      headers: { ...req.headers, host: target.host },
      ...(upstream.ca !== undefined ? { ca: upstream.ca } : {}),
    },
    (up) => answer(st, up, res),
  );
  out.on('error', (err) => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`silence proxy: upstream failed: ${err.message}`);
  });
  req.pipe(out);
}

/** Every new request hangs; open streams go quiet: nothing more reaches their clients, the connection stays open. */
function silenceAll(st: ProxyState): void {
  st.rule = () => true;
  st.quiet = true;
  for (const x of [...st.open]) {
    x.upstream.unpipe(x.res);
    x.upstream.destroy();
    st.holding.add(x.res);
  }
}

function closeProxy(st: ProxyState, server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    for (const res of st.holding) res.destroy();
    for (const x of st.open) x.upstream.destroy();
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

export async function startSilenceProxy(upstream: SimEndpoint): Promise<SilenceProxy> {
  const st: ProxyState = {
    upstream,
    target: new URL(upstream.url),
    rule: undefined,
    quiet: false,
    held: [],
    holding: new Set(),
    open: new Set(),
  };
  const server = createServer((req, res) => {
    const r = { method: req.method ?? 'GET', path: req.url ?? '/' };
    if (st.rule?.(r)) hold(st, r, req, res);
    else forward(st, req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    kubeConfig: () => kubeConfigFor({ url, token: upstream.token }),
    silence(r) {
      st.rule = r;
    },
    silenceAll: () => silenceAll(st),
    speak() {
      st.rule = undefined;
      st.quiet = false;
    },
    held: () => st.held,
    close: () => closeProxy(st, server),
  };
}

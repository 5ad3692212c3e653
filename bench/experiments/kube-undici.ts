// undici as the transport (bench/experiments/kube-variants.ts): an Agent with allowH2, or a
// ProxyAgent where HTTP_PROXY/HTTPS_PROXY apply (read as the product reads them, so the comparison
// is of the transports). A module of its own, so that a bundle loads undici only when it connects.
import { Agent, ProxyAgent } from "undici";
import { proxyFromEnv } from "../../shared/kube/proxy-env.ts";
import { installUndiciSend, type Env, type Loaded, type UndiciConnection } from "./kube-variants.ts";

export function undiciTransport(l: Loaded, env: Env): UndiciConnection {
  installUndiciSend();
  const server = new URL(l.server);
  // Which proxy: the same NO_PROXY reading as the product's, so the comparison is of the transports.
  const proxy = proxyFromEnv(server, env);
  const connect = { ...l.tls } as Record<string, unknown>;
  const dispatcher = proxy
    ? new ProxyAgent({ uri: proxy, requestTls: connect, allowH2: true })
    : new Agent({ allowH2: true, connect });
  return { server: l.server, httpsOptions: () => Promise.resolve({}), dispatcher, headers: l.headers };
}

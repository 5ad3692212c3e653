/**
 * Which proxy, if any, carries requests to the API server when the kubeconfig names none: the
 * HTTPS_PROXY/HTTP_PROXY/NO_PROXY convention as kubectl (Go's net/http) reads it, so a function
 * reaches the API server the way the cluster's own Go clients do. Loopback is never proxied.
 */
import { BlockList, isIP } from "node:net";

const pick = (env: Record<string, string | undefined>, name: string) => env[name] || env[name.toLowerCase()] || undefined;

export function proxyFromEnv(target: URL, env: Record<string, string | undefined>): string | undefined {
  const proxy = pick(env, target.protocol === "https:" ? "HTTPS_PROXY" : "HTTP_PROXY");
  if (!proxy) return undefined;
  return bypassed(target, pick(env, "NO_PROXY") ?? "") ? undefined : proxy;
}

function bypassed(target: URL, noProxy: string): boolean {
  const host = target.hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  const port = target.port || (target.protocol === "https:" ? "443" : "80");
  if (host === "localhost" || isLoopback(host)) return true;
  return noProxy
    .split(",")
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean)
    .some((entry) => entry === "*" || matches(host, port, entry));
}

function matches(host: string, port: string, entry: string): boolean {
  if (entry.includes("/")) return inCidr(host, entry);
  const { name, entryPort } = splitEntry(entry);
  if (entryPort !== undefined && entryPort !== port) return false;
  if (isIP(name)) return name === host;
  // "example.com" and ".example.com" both match example.com's subdomains; only the first matches itself.
  const domain = name.startsWith(".") ? name.slice(1) : name;
  return host.endsWith(`.${domain}`) || (!name.startsWith(".") && host === domain);
}

function splitEntry(entry: string): { name: string; entryPort?: string } {
  const v6 = /^\[(.*)\](?::(\d+))?$/.exec(entry);
  if (v6) return { name: v6[1]!, ...(v6[2] ? { entryPort: v6[2] } : {}) };
  const colon = entry.lastIndexOf(":");
  if (colon > 0 && entry.indexOf(":") === colon && /^\d+$/.test(entry.slice(colon + 1))) {
    return { name: entry.slice(0, colon), entryPort: entry.slice(colon + 1) };
  }
  return { name: entry };
}

function inCidr(host: string, cidr: string): boolean {
  const family = isIP(host);
  const [net, bits] = cidr.split("/");
  if (!family || !net || isIP(net) !== family || !/^\d+$/.test(bits ?? "")) return false;
  const type = family === 4 ? "ipv4" : "ipv6";
  const list = new BlockList();
  try {
    list.addSubnet(net, Number(bits), type);
  } catch {
    return false;
  }
  return list.check(host, type);
}

function isLoopback(host: string): boolean {
  if (isIP(host) === 4) return host.startsWith("127.");
  return host === "::1";
}

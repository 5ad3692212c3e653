/**
 * Which proxy, if any, carries requests to the API server when the kubeconfig names none: the
 * HTTPS_PROXY/HTTP_PROXY/NO_PROXY convention as kubectl (Go's net/http) reads it, so a function
 * reaches the API server the way the cluster's own Go clients do. Loopback is never proxied.
 */
import { BlockList, isIP } from "node:net";

const pick = (env: Record<string, string | undefined>, name: string) =>
  env[name] || env[name.toLowerCase()] || undefined;

export function proxyFromEnv(target: URL, env: Record<string, string | undefined>): string | undefined {
  const proxy = pick(env, target.protocol === "https:" ? "HTTPS_PROXY" : "HTTP_PROXY");
  return bypassed(target, pick(env, "NO_PROXY")) ? undefined : proxy;
}

function bypassed(target: URL, noProxy: string | undefined): boolean {
  // An IPv6 hostname is the only one in brackets, and always whole: "[fd00::1]".
  const host = (target.hostname.startsWith("[") ? target.hostname.slice(1, -1) : target.hostname).toLowerCase();
  const port = target.port || (target.protocol === "https:" ? "443" : "80");
  if (host === "localhost" || isLoopback(host)) return true;
  return (
    noProxy
      ?.split(",")
      .map((e) => e.trim().toLowerCase())
      .filter(Boolean)
      .some((entry) => entry === "*" || matches(host, port, entry)) ?? false
  );
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
  // Go's net.SplitHostPort: brackets only with a port ("[fd00::1]:443"), one colon otherwise. A port
  // that is no number matches no request, so it needs no check.
  const v6 = /^\[(.*)\]:(\d+)$/.exec(entry);
  if (v6) return { name: v6[1]!, entryPort: v6[2]! };
  const colon = entry.lastIndexOf(":");
  if (colon > 0 && entry.indexOf(":") === colon) {
    return { name: entry.slice(0, colon), entryPort: entry.slice(colon + 1) };
  }
  return { name: entry };
}

function inCidr(host: string, cidr: string): boolean {
  const family = isIP(host);
  const slash = cidr.indexOf("/");
  const net = cidr.slice(0, slash);
  const bits = cidr.slice(slash + 1);
  // As Go's net.ParseCIDR: an address of the host's family, a decimal prefix no longer than the address.
  if (!family || isIP(net) !== family || !/^\d+$/.test(bits) || Number(bits) > (family === 4 ? 32 : 128)) return false;
  const type = family === 4 ? "ipv4" : "ipv6";
  const list = new BlockList();
  list.addSubnet(net, Number(bits), type);
  return list.check(host, type);
}

function isLoopback(host: string): boolean {
  if (isIP(host) === 4) return host.startsWith("127.");
  return host === "::1";
}

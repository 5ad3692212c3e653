import { describe, expect, it } from "vitest";
import { proxyFromEnv } from "./proxy-env.ts";

const P = "http://proxy.corp:3128";

describe("proxyFromEnv reads the proxy variables as Go's net/http does", () => {
  it.each<{ server: string; env: Record<string, string>; want: string | undefined }>([
    { server: "https://api.corp:6443", env: { HTTPS_PROXY: P }, want: P },
    { server: "https://api.corp:6443", env: { https_proxy: P }, want: P },
    { server: "https://api.corp:6443", env: { HTTP_PROXY: P }, want: undefined },
    { server: "http://api.corp:8001", env: { HTTP_PROXY: P }, want: P },
    { server: "http://api.corp:8001", env: { HTTPS_PROXY: P }, want: undefined },
    { server: "https://api.corp:6443", env: {}, want: undefined },
    { server: "https://127.0.0.1:6443", env: { HTTPS_PROXY: P }, want: undefined },
    { server: "https://localhost:6443", env: { HTTPS_PROXY: P }, want: undefined },
    { server: "https://[::1]:6443", env: { HTTPS_PROXY: P }, want: undefined },
    { server: "https://api.corp:6443", env: { HTTPS_PROXY: P, NO_PROXY: "*" }, want: undefined },
    { server: "https://api.corp:6443", env: { HTTPS_PROXY: P, NO_PROXY: "other.corp, api.corp" }, want: undefined },
    { server: "https://api.corp:6443", env: { HTTPS_PROXY: P, no_proxy: "corp" }, want: undefined },
    { server: "https://api.corp:6443", env: { HTTPS_PROXY: P, NO_PROXY: ".corp" }, want: undefined },
    { server: "https://corp:6443", env: { HTTPS_PROXY: P, NO_PROXY: ".corp" }, want: P },
    { server: "https://corp:6443", env: { HTTPS_PROXY: P, NO_PROXY: "corp" }, want: undefined },
    { server: "https://notcorp:6443", env: { HTTPS_PROXY: P, NO_PROXY: "corp" }, want: P },
    { server: "https://api.corp:6443", env: { HTTPS_PROXY: P, NO_PROXY: "api.corp:443" }, want: P },
    { server: "https://api.corp:6443", env: { HTTPS_PROXY: P, NO_PROXY: "api.corp:6443" }, want: undefined },
    { server: "https://api.corp", env: { HTTPS_PROXY: P, NO_PROXY: "api.corp:443" }, want: undefined },
    { server: "https://10.96.0.1:443", env: { HTTPS_PROXY: P, NO_PROXY: "10.0.0.0/8" }, want: undefined },
    { server: "https://11.96.0.1:443", env: { HTTPS_PROXY: P, NO_PROXY: "10.0.0.0/8" }, want: P },
    { server: "https://10.96.0.1:443", env: { HTTPS_PROXY: P, NO_PROXY: "10.96.0.1" }, want: undefined },
    { server: "https://10.96.0.2:443", env: { HTTPS_PROXY: P, NO_PROXY: "10.96.0.1" }, want: P },
    { server: "https://[fd00::1]:443", env: { HTTPS_PROXY: P, NO_PROXY: "fd00::/8" }, want: undefined },
    { server: "https://[fd00::1]:443", env: { HTTPS_PROXY: P, NO_PROXY: "[fd00::1]:443" }, want: undefined },
    { server: "https://api.corp:6443", env: { HTTPS_PROXY: P, NO_PROXY: "10.0.0.0/8" }, want: P },
  ])("$server with $env -> $want", ({ server, env, want }) => {
    expect(proxyFromEnv(new URL(server), env)).toBe(want);
  });
});
